"""The secret scan over what a push sends: N and 4N bytes of adversarial text, same run.

`find_secrets_in_bytes` runs every rule whose keyword is in the text, over
the text whole. For each hostile unit (runs of rule prefixes, of the
characters the rules' classes take, of assignment signs, and the same in
UTF-16, which adds the UTF-16/32 readings) it times a scan of N bytes and
of 4N bytes. Linear: each ratio near 4; the target is under 6 for every one.
Also printed: the time per MiB of the slowest unit, which bounds a push's
scan of a file at the 8 MiB cap.

Usage: python bench/bench_secret_scan.py [--size 262144]
"""

from __future__ import annotations

import argparse
import time

from memd.lint.secrets import find_secrets_in_bytes

UNITS = [
    "ghp_", "sk-", "sk-ant-", "eyJ", "AIza", "://", "a:b@", "sk_live_", "xoxb-",
    "-----BEGIN ", "password=", "token: ", "glpat-", "npm_", "AKIA", "a", "aB3",
    "a" * 63 + " ", "=", "\\", "ey", "postgres://u:", "https://x:y@", "hvs.",
]  # fmt: skip


def timed(data: bytes) -> float:
    start = time.perf_counter()
    find_secrets_in_bytes(data)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=256 * 1024)
    args = parser.parse_args()
    find_secrets_in_bytes(b"ghp_ warm up: load and compile the rules")
    worst_ratio, worst_rate = 0.0, 0.0
    for encoding in ("utf-8", "utf-16-le"):
        for unit in UNITS:
            text = unit * (args.size // len(unit) + 1)
            small = text[: args.size].encode(encoding)
            large = (text * 4)[: 4 * args.size].encode(encoding)
            t_small, t_large = timed(small), timed(large)
            ratio = t_large / max(t_small, 1e-9)
            rate = t_large / (len(large) / 2**20)
            worst_ratio, worst_rate = max(worst_ratio, ratio), max(worst_rate, rate)
            print(
                f"{encoding:9} {unit[:16]!r:20} {t_small * 1000:8.1f} ms"
                f" {t_large * 1000:8.1f} ms  ratio {ratio:4.1f}"
            )
    print(f"worst ratio 4N/N: {worst_ratio:.1f} (target < 6; linear is 4)")
    print(
        f"slowest: {worst_rate * 1000:.0f} ms per MiB"
        f" (an 8 MiB file: {worst_rate * 8:.1f} s)"
    )


if __name__ == "__main__":
    main()
