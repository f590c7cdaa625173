"""The installed `memd hook …` vs a bare `python -c pass` from the same interpreter.

Sets up a throwaway HOME with one git project and a memory directory of
`--files` topic files (mtimes moved a minute into the past, as memory written
earlier), runs SessionStart once to build the snapshot and record the session,
then times, alternating with the baseline in the same run:

- post-tool-use on a Bash payload that touches no memory (target <= 1.3x);
- post-tool-use right after a real, clean rewrite of one topic file, with a
  live `memd run` linting for the hook (target <= 2x), and with no daemon, the
  hook linting by itself (reported; it pays for the lint engine's imports);
- session-start served from the warm snapshot, a new session each time
  (target <= 1.5x);
- session-start in Codex CLI and in Gemini CLI (`--agent codex|gemini`):
  Claude Code's index for the project, served from the resolution record,
  as cheap as Claude Code's own session-start (target <= 1.5x).

Checks every hook printed what it should (nothing, for clean memory) and that
the snapshot was not rebuilt while SessionStart was timed.

Usage: python bench/bench_hooks.py [--runs 30] [--files 30]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_warm_prompt import imports_re, interpreter_of
from make_corpus import isolated_env, make_memory_dir

TOPIC = (
    "---\nname: Release train\ndescription: Releases leave every second Tuesday "
    "from main, after the freeze\ntype: project\n---\nRelease on Tuesdays{}.\n\n"
    "**Why:** the team asked.\n**How to apply:** plan merges for Monday.\n"
)


def age(directory: str, seconds: int = 60) -> None:
    """Move every mtime under `directory` into the past."""
    when = time.time() - seconds
    for parent, dirs, files in os.walk(directory):
        for name in dirs + files:
            os.utime(os.path.join(parent, name), (when, when), follow_symlinks=False)
    os.utime(directory, (when, when))


def hook(
    memd: str,
    name: str,
    payload: dict[str, object],
    env: dict[str, str],
    *args: str,
) -> tuple[float, bytes]:
    """Run `memd hook NAME [ARGS]` with `payload` on stdin: (seconds, stdout)."""
    data = json.dumps(payload).encode()
    start = time.perf_counter()
    done = subprocess.run(
        [memd, "hook", name, *args],
        input=data,
        env=env,
        capture_output=True,
        check=True,
    )
    return time.perf_counter() - start, done.stdout


def baseline(python: str, env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run([python, "-c", "pass"], env=env, check=True)
    return time.perf_counter() - start


@contextlib.contextmanager
def running_daemon(memd: str, env: dict[str, str], memory_dir: str) -> Iterator[None]:
    """Run `memd run` until it lints `memory_dir` for the hooks; stop it after."""
    from memd.hook_lint import lint_by_daemon

    daemon = subprocess.Popen(
        [memd, "run"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 30
        while lint_by_daemon(memory_dir, None, env) is None:
            if daemon.poll() is not None or time.monotonic() > deadline:
                sys.exit("bench_hooks: memd run did not start linting for the hooks")
            time.sleep(0.05)
        time.sleep(1.0)  # let its first rebuild finish
        yield
    finally:
        daemon.terminate()
        daemon.wait()


def memd_package() -> str:
    """The memd package the installed script imports (its __init__.py)."""
    import memd

    return memd.__file__ or ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--files", type=int, default=30)
    args = parser.parse_args()
    memd = shutil.which("memd")
    if memd is None:
        sys.exit("bench_hooks: no `memd` on PATH; install memd first")
    python = interpreter_of(memd)
    # pip compiles bytecode at install time; an editable install under
    # PYTHONDONTWRITEBYTECODE would instead time the compiler on every run.
    subprocess.run(
        [python, "-m", "compileall", "-q", os.path.dirname(memd_package())], check=True
    )
    with tempfile.TemporaryDirectory(prefix="memd-bench-") as root:
        env = isolated_env(root)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        project = os.path.join(root, "home", "src", "app")
        os.makedirs(project)
        subprocess.run(["git", "init", "-q", project], env=env, check=True)
        from memd.claude_code.paths import auto_mem_path

        memory_dir = auto_mem_path(project, env=env)
        make_memory_dir(memory_dir, args.files)
        target = os.path.join(memory_dir, "project_release.md")
        with open(target, "w", encoding="utf-8") as f:
            f.write(TOPIC.format(""))
        with open(os.path.join(memory_dir, "MEMORY.md"), "a", encoding="utf-8") as f:
            f.write("- [Release train](project_release.md) — every second Tuesday\n")
        age(memory_dir)
        age(project)  # the .git the resolution record stats must not be racy either

        def payload(event: str, session: str, **extra: object) -> dict[str, object]:
            return {
                "session_id": session,
                "transcript_path": os.path.join(root, "t.jsonl"),
                "cwd": project,
                "hook_event_name": event,
                **extra,
            }

        _, said = hook(memd, "session-start", payload("SessionStart", "s0"), env)
        if said:
            sys.exit(f"bench_hooks: the corpus is not clean: {said[:300]!r}")
        bash = payload(
            "PostToolUse",
            "s0",
            tool_name="Bash",
            tool_input={"command": "pytest -q", "description": "run tests"},
            tool_response={"stdout": "ok", "stderr": "", "interrupted": False},
        )
        prompt_link = os.path.join(
            env["XDG_CACHE_HOME"], "memd", "snapshots"
        )  # the snapshot store; its listing changes if SessionStart re-renders
        snapshots_before = sorted(
            os.path.join(p, n) for p, ds, fs in os.walk(prompt_link) for n in ds + fs
        )
        timings: dict[str, list[float]] = {
            "baseline": [],
            "no-memory": [],
            "after-write, daemon": [],
            "after-write, no daemon": [],
            "session-start": [],
            "session-start, codex": [],
            "session-start, gemini": [],
        }
        for run in range(args.runs):
            timings["baseline"].append(baseline(python, env))
            seconds, out = hook(memd, "post-tool-use", bash, env)
            timings["no-memory"].append(seconds)
            if out:
                sys.exit(f"bench_hooks: no-memory call printed {out[:200]!r}")
            start = payload("SessionStart", f"warm-{run}", source="startup")
            seconds, out = hook(memd, "session-start", start, env)
            timings["session-start"].append(seconds)
            if out:
                sys.exit(f"bench_hooks: session-start printed {out[:200]!r}")
            for agent in ("codex", "gemini"):
                start = payload("SessionStart", f"{agent}-{run}", source="startup")
                seconds, out = hook(memd, "session-start", start, env, "--agent", agent)
                timings[f"session-start, {agent}"].append(seconds)
                if b"Claude Code's memory of" not in out:
                    sys.exit(f"bench_hooks: {agent} got no index: {out[:200]!r}")
        snapshots_after = sorted(
            os.path.join(p, n) for p, ds, fs in os.walk(prompt_link) for n in ds + fs
        )

        def write_and_hook(run: int) -> float:
            content = TOPIC.format("!" * (run % 2))
            with open(target, "w", encoding="utf-8") as f:
                f.write(content)
            write = payload(
                "PostToolUse",
                "s0",
                tool_name="Write",
                tool_input={"file_path": target, "content": content},
                tool_response={
                    "type": "update",
                    "filePath": target,
                    "content": content,
                    "structuredPatch": [],
                    "originalFile": TOPIC.format("!" * (1 - run % 2)),
                },
            )
            seconds, out = hook(memd, "post-tool-use", write, env)
            if out:
                sys.exit(f"bench_hooks: a clean write printed {out[:200]!r}")
            return seconds

        for run in range(args.runs):
            timings["baseline"].append(baseline(python, env))
            timings["after-write, no daemon"].append(write_and_hook(run))
        with running_daemon(memd, env, memory_dir):
            for run in range(args.runs):
                timings["baseline"].append(baseline(python, env))
                timings["after-write, daemon"].append(write_and_hook(run))
    base_ms = statistics.median(timings["baseline"]) * 1000
    print(f"memd script: {memd} (interpreter {python})")
    print(f"{args.files + 1} topic files, {args.runs} runs per case")
    print(f"baseline python -c pass:         median {base_ms:.1f} ms")
    for label, target_ratio in (
        ("no-memory", 1.3),
        ("after-write, daemon", 2.0),
        ("after-write, no daemon", None),
        ("session-start", 1.5),
        ("session-start, codex", 1.5),
        ("session-start, gemini", 1.5),
    ):
        ms = statistics.median(timings[label]) * 1000
        target_text = "reported" if target_ratio is None else f"<= {target_ratio:.2f}x"
        print(
            f"{label + ':':<32} median {ms:.1f} ms, ratio {ms / base_ms:.2f}x "
            f"(target {target_text})"
        )
    if imports_re(memd):
        print("WARNING: this memd script imports `re`; reinstall with pip>=25.2")
    if snapshots_after != snapshots_before:
        print("WARNING: the snapshot was rebuilt while SessionStart was timed")


if __name__ == "__main__":
    main()
