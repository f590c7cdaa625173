"""The viewer's cost (issue 37): the overview's render time and the idle footprint.

1. Idle footprint: a real `memd run` over N projects (make_corpus), with the
   viewer off ([ui] enabled = false) and then on with no client: resident
   memory (VmRSS) and CPU seconds over an idle window. Targets: RSS grows
   <= 15 MiB, idle CPU stays 0 with the viewer on (the same as off).
2. Server render time of the overview of N projects: GET / through the real
   viewer (cookie from the token swap), N runs; baseline in the same run: GET
   of /static/ui.css (the HTTP round trip alone). Target: < 300 ms.
3. Live: a save to a project's MEMORY.md, until an open `/events` stream
   names that project, and until its page (fetched then, as ui.js does) has
   the saved line. Target: < 2 s.
4. After a visit (--after-visit): RSS once Starlette and uvicorn are loaded,
   and idle CPU again once uvicorn has stopped for want of a client.

Usage: python bench/bench_ui.py [--projects 200] [--files 10] [--idle 20] [--runs 20]
"""

from __future__ import annotations

import argparse
import http.client
import os
import statistics
import sys
import tempfile
import time
from urllib.parse import urlsplit

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_daemon import Daemon, _environment
from make_corpus import make_corpus


def _viewer(env: dict[str, str]) -> tuple[str, int, str]:
    """Host, port and token from the daemon's ui.json."""
    import json

    path = os.path.join(env["XDG_RUNTIME_DIR"], "memd", "ui.json")
    for _ in range(100):
        if os.path.exists(path):
            break
        time.sleep(0.05)
    with open(path, encoding="utf-8") as handle:
        record = json.load(handle)
    split = urlsplit(record["url"])
    assert split.hostname is not None
    assert split.port is not None
    return split.hostname, split.port, record["token"]


def _get(host: str, port: int, path: str, cookie: str = "") -> tuple[int, dict, bytes]:
    connection = http.client.HTTPConnection(host, port, timeout=60)
    try:
        connection.request("GET", path, headers={"Cookie": cookie} if cookie else {})
        response = connection.getresponse()
        body = response.read()
        return response.status, dict(response.getheaders()), body
    finally:
        connection.close()


def _live(
    host: str, port: int, cookie: str, memory_dir: str, saves: int
) -> tuple[list[float], list[float]]:
    """Seconds from each save to its SSE event, and to its page showing the save."""
    import hashlib

    project = hashlib.sha256(memory_dir.encode()).hexdigest()[:16]
    stream = http.client.HTTPConnection(host, port, timeout=30)
    stream.request("GET", "/events", headers={"Cookie": cookie})
    response = stream.getresponse()
    assert response.status == 200, response.status
    response.readline()  # event: hello
    to_event, to_page = [], []
    index = os.path.join(memory_dir, "MEMORY.md")
    for number in range(saves):
        marker = f"live save {number}"
        _drain(stream)  # the last save's second event (after its history record)
        started = time.perf_counter()
        with open(index, "a", encoding="utf-8") as handle:
            handle.write(f"- [Live {number}](live_{number}.md) — {marker}\n")
        while True:
            line = response.readline().decode()
            if line.strip() == f"data: {project}":
                break
        to_event.append(time.perf_counter() - started)
        while (
            marker.encode() not in _get(host, port, f"/project?id={project}", cookie)[2]
        ):
            pass
        to_page.append(time.perf_counter() - started)
        time.sleep(0.3)  # let the batch settle before the next save
    stream.close()
    return to_event, to_page


def _drain(stream: http.client.HTTPConnection) -> None:
    """Read what the event stream already holds, so a stale event is not timed."""
    assert stream.sock is not None
    stream.sock.settimeout(0.3)
    try:
        while stream.sock.recv(65536):
            pass
    except TimeoutError:
        pass
    stream.sock.settimeout(30)


def _idle(daemon: Daemon, seconds: float) -> tuple[float, float]:
    time.sleep(2.0)  # the racy re-stamps of freshly written files
    before = daemon.cpu_seconds()
    time.sleep(seconds)
    return daemon.cpu_seconds() - before, daemon.rss_mib()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--projects", type=int, default=200)
    parser.add_argument("--files", type=int, default=10)
    parser.add_argument("--idle", type=float, default=20.0)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--after-visit", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="memd-bench-ui-") as root:
        env = _environment(root)
        # The stat sweep (every 30 s) is the daemon's own idle work: out of the way,
        # so the idle windows show what the viewer adds and nothing else.
        env["MEMD_SWEEP_SECONDS"] = "3600"
        os.makedirs(env["XDG_RUNTIME_DIR"], mode=0o700, exist_ok=True)
        make_corpus(
            os.path.join(env["HOME"], ".claude"),
            projects=args.projects,
            files=args.files,
        )
        off = Daemon({**env, "MEMD_UI_ENABLED": "false"})
        try:
            cpu_off, rss_off = _idle(off, args.idle)
        finally:
            off.stop()
        on = Daemon({**env, "MEMD_UI_ENABLED": "true"})
        try:
            cpu_on, rss_on = _idle(on, args.idle)
            threads = on.threads()
            host, port, token = _viewer(env)
            status, headers, _ = _get(host, port, f"/?token={token}")
            assert status == 200, status
            cookie = headers["set-cookie"].split(";", 1)[0]
            _get(host, port, "/", cookie)  # the first request loads the app
            pages, assets = [], []
            for _ in range(args.runs):
                started = time.perf_counter()
                status, _, body = _get(host, port, "/", cookie)
                pages.append(time.perf_counter() - started)
                assert status == 200, status
                assert body.count(b'class="project') >= args.projects
                started = time.perf_counter()
                _get(host, port, "/static/ui.css", cookie)
                assets.append(time.perf_counter() - started)
            memory_dir = os.path.join(
                env["HOME"], ".claude", "projects", "-home-dev-src-project000", "memory"
            )
            to_event, to_page = _live(host, port, cookie, memory_dir, args.runs)
            rss_visited = on.rss_mib()
            if args.after_visit:
                time.sleep(35.0)  # memd.ui.server.IDLE_SECONDS, and a margin
                cpu_after, _ = _idle(on, args.idle)
                threads_after = on.threads()
        finally:
            on.stop()
    grew = rss_on - rss_off
    print(f"viewer, {args.projects} projects x {args.files} files:")
    print(
        f"  idle, viewer off: RSS {rss_off:.1f} MiB, CPU {cpu_off:.3f} s"
        f" over {args.idle:.0f} s"
    )
    print(
        f"  idle, viewer on, no client: RSS {rss_on:.1f} MiB (+{grew:.1f} MiB,"
        f" target <= 15), CPU {cpu_on:.3f} s over {args.idle:.0f} s (target 0),"
        f" threads {threads}"
    )
    median, worst = statistics.median(pages), max(pages)
    base = statistics.median(assets)
    print(
        f"  overview of {args.projects} projects: median {median * 1000:.1f} ms,"
        f" max {worst * 1000:.1f} ms (target < 300); the CSS round trip"
        f" {base * 1000:.1f} ms; ratio {median / base:.1f}x"
    )
    print(
        f"  live, save to SSE event: median {statistics.median(to_event) * 1e3:.0f} ms,"
        f" max {max(to_event) * 1000:.0f} ms; save to the page showing it: median"
        f" {statistics.median(to_page) * 1000:.0f} ms, max"
        f" {max(to_page) * 1000:.0f} ms (target < 2000)"
    )
    print(f"  after a visit: RSS {rss_visited:.1f} MiB (+{rss_visited - rss_off:.1f})")
    if args.after_visit:
        print(
            f"  idle once uvicorn stopped: CPU {cpu_after:.3f} s / {args.idle:.0f} s,"
            f" threads {threads_after}"
        )


if __name__ == "__main__":
    main()
