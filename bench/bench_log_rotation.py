"""Time memd's own log-file rotation check against plain logging to the same file.

Under a unit without journald, memd's stderr is `memd.log` and every log line
is followed by an fstat/lstat size check (memd.logconfig.rotate_log_file).
This logs N structlog JSON lines to a file opened with O_APPEND, as systemd's
`StandardOutput=append:` opens it, once plain (baseline) and once with
rotation on, each in a fresh subprocess, and prints both and the ratio.
Target: <= 1.3x. A third run with a small limit shows the rotations happen.

    python bench/bench_log_rotation.py            # --lines 50000 --repeat 3
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

CHILD = """\
import sys, time, memd.logconfig as lc
path, rotate = sys.argv[1], sys.argv[2] == "1"
lines, limit = int(sys.argv[3]), int(sys.argv[4])
lc.LOG_FILE_MAX_BYTES = limit
lc.configure_logging("json", "info", rotate_file=path if rotate else None)
log = lc.get_logger(component="bench")
start = time.perf_counter()
for n in range(lines):
    log.info("memory_file_linted", file="/home/ada/.claude/projects/x/memory/a.md", n=n)
print(time.perf_counter() - start)
"""


def run_once(directory: str, rotate: bool, lines: int, limit: int) -> float:
    path = os.path.join(directory, "memd.log")
    for name in (path, path + ".1"):
        if os.path.exists(name):
            os.unlink(name)
    with open(path, "ab") as stderr:
        result = subprocess.run(
            [
                sys.executable,
                "-c",
                CHILD,
                path,
                str(int(rotate)),
                str(lines),
                str(limit),
            ],
            stderr=stderr,
            stdout=subprocess.PIPE,
            text=True,
            check=True,
        )
    return float(result.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=50_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        big = 1 << 40  # rotation checked on every line, never triggered
        plain = min(
            run_once(directory, False, args.lines, big) for _ in range(args.repeat)
        )
        checked = min(
            run_once(directory, True, args.lines, big) for _ in range(args.repeat)
        )
        rotating = run_once(directory, True, args.lines, 1 << 20)
        sizes = [
            os.path.getsize(os.path.join(directory, name))
            for name in ("memd.log", "memd.log.1")
        ]
    per_line = 1e6 / args.lines
    print(f"lines logged:              {args.lines}")
    print(f"plain file (baseline):     {plain:.3f} s  ({plain * per_line:.1f} us)")
    print(f"with rotation check:       {checked:.3f} s  ({checked * per_line:.1f} us)")
    print(f"ratio:                     {checked / plain:.2f}x  (target <= 1.3x)")
    print(f"rotating at 1 MiB:         {rotating:.3f} s")
    print(f"  then memd.log {sizes[0]} B, memd.log.1 {sizes[1]} B")


if __name__ == "__main__":
    main()
