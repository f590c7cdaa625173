"""`memd mcp` start-up: time from spawn to the `tools/list` answer, vs bare Python.

What a client waits on before it can offer memd's tools (Claude Code 2.1.112
gives a server 5 s in print mode; 2.1.332 offers the tools once listed). For
each opening, a fresh installed `memd mcp` (found with `shutil.which`, or
next to this interpreter) is started in a throwaway git repository, the
opening is written, and the clock stops at the line that answers
`tools/list`:

- `handshake`: initialize, initialized, tools/list (2025-06-18, Claude Code 2.1.112);
- `modern`: server/discover, subscriptions/listen, tools/list with the
  2026-07-28 envelope (Claude Code 2.1.332).

The baseline, in turn with each run: the same interpreter starting, reading
one line and answering it (`python -c`). Also printed: the time to the
answer of a first tool call (`memory_lint`), which loads the `mcp` SDK.
Target: tools/list within 2x of the baseline's start-up plus one line, far
under the 5 s the client allows, under load as when idle.

Usage: python bench/bench_mcp_startup.py [--runs 20]
"""

from __future__ import annotations

import argparse
import json
import os
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


def _line(message: dict[str, object]) -> bytes:
    return json.dumps(message).encode() + b"\n"


OPENINGS = {
    "handshake": b"".join(
        [
            _line(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": "2025-06-18",
                        "capabilities": {},
                        "clientInfo": {"name": "bench", "version": "1"},
                    },
                }
            ),
            _line({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            _line({"jsonrpc": "2.0", "id": "list", "method": "tools/list"}),
        ]
    ),
    "modern": b"".join(
        [
            _line(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "server/discover",
                    "params": {"_meta": ENVELOPE},
                }
            ),
            _line(
                {
                    "jsonrpc": "2.0",
                    "id": "listen",
                    "method": "subscriptions/listen",
                    "params": {
                        "_meta": ENVELOPE,
                        "notifications": {"toolsListChanged": True},
                    },
                }
            ),
            _line(
                {
                    "jsonrpc": "2.0",
                    "id": "list",
                    "method": "tools/list",
                    "params": {"_meta": ENVELOPE},
                }
            ),
        ]
    ),
}
CALL = _line(
    {
        "jsonrpc": "2.0",
        "id": "call",
        "method": "tools/call",
        "params": {"name": "memory_lint", "arguments": {}},
    }
)
BASELINE = (
    "import sys; sys.stdin.buffer.readline(); "
    'sys.stdout.write(\'{"id": "list"}\\n\'); sys.stdout.flush(); sys.stdin.read()'
)


def time_to(
    argv: list[str], data: bytes, wanted: str, cwd: str, env: dict[str, str]
) -> float:
    """Seconds from spawn until a reply line with id `wanted` is read."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        argv, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    assert proc.stdin is not None
    assert proc.stdout is not None
    proc.stdin.write(data)
    proc.stdin.flush()
    buffer = b""
    try:
        while True:
            ready, _, _ = select.select([proc.stdout], [], [], 60)
            if not ready:
                raise SystemExit(f"no answer to {wanted!r} in 60 s: {argv}")
            chunk = os.read(proc.stdout.fileno(), 65536)
            if not chunk:
                raise SystemExit(f"closed before answering {wanted!r}: {argv}")
            *lines, buffer = (buffer + chunk).split(b"\n")
            for line in lines:
                if line.strip() and json.loads(line).get("id") == wanted:
                    return time.perf_counter() - start
    finally:
        proc.kill()
        proc.wait()
        proc.stdin.close()
        proc.stdout.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    memd = shutil.which("memd") or os.path.join(os.path.dirname(sys.executable), "memd")
    with tempfile.TemporaryDirectory(prefix="memd-bench-mcp-") as root:
        repo = os.path.join(root, "repo")
        home = os.path.join(root, "home")
        os.makedirs(home)
        subprocess.run(["git", "init", "-q", repo], check=True)
        env = {
            "PATH": os.environ.get("PATH", ""),
            "HOME": home,
            "XDG_CACHE_HOME": os.path.join(root, "cache"),
            "XDG_CONFIG_HOME": os.path.join(root, "config"),
            "XDG_STATE_HOME": os.path.join(root, "state"),
        }
        times: dict[str, list[float]] = {"baseline": [], "handshake": [], "modern": []}
        first_call: list[float] = []
        for _ in range(args.runs):
            times["baseline"].append(
                time_to([sys.executable, "-c", BASELINE], b"x\n", "list", repo, env)
            )
            for name, opening in OPENINGS.items():
                times[name].append(time_to([memd, "mcp"], opening, "list", repo, env))
            first_call.append(
                time_to([memd, "mcp"], OPENINGS["handshake"] + CALL, "call", repo, env)
            )
    base = statistics.median(times["baseline"])
    print(f"runs: {args.runs}  load: {os.getloadavg()[0]:.1f}  memd: {memd}")
    print(f"python start-up + one line   median {base * 1000:7.1f} ms")
    for name in ("handshake", "modern"):
        median = statistics.median(times[name])
        print(
            f"memd mcp -> tools/list ({name:9}) median {median * 1000:7.1f} ms"
            f"  max {max(times[name]) * 1000:7.1f} ms  ratio {median / base:4.2f}x"
        )
    call = statistics.median(first_call)
    print(
        f"memd mcp -> first tool call       median {call * 1000:7.1f} ms"
        "  (loads the SDK)"
    )


if __name__ == "__main__":
    main()
