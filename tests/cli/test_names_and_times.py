"""What a person reads names projects by their folder and times as they read them.

Fresh HOME, projects under `~/code`, real `memd` subprocesses (the daemon on a
real pty), output read as a person reads it: `~/code/...` names, local short
times, no ISO stamp with microseconds, every printed time one `--at` accepts.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from memd.claude_code.paths import auto_mem_path
from memd.history.store import History
from tests.cli.test_terminal import Terminal
from tests.conftest import Home, make_git_repo
from tests.daemon.conftest import wait_for

MEMD = str(Path(sys.executable).parent / "memd")
TIMEOUT = 30.0
MICROSECOND_STAMP = re.compile(r"\d{2}:\d{2}:\d{2}\.\d{4,}")
RAW_ISO = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d")  # 2026-12-06T23:03


def topic(name: str) -> str:
    return (
        f"---\nname: {name}\ndescription: A memory about {name} for this test\n"
        f"type: feedback\n---\nAbout {name}, at length.\n" + "Detail.\n" * 20
    )


def project(home: Home, name: str, topics: int = 5) -> tuple[Path, Path]:
    """A git project under ~/code with `topics` memories; (root, memory dir)."""
    (home.home / "code").mkdir(exist_ok=True)
    root = make_git_repo(home.home / "code" / name)
    memory = Path(auto_mem_path(str(root)))
    memory.mkdir(parents=True)
    index = []
    for i in range(topics):
        (memory / f"feedback_t{i}.md").write_text(topic(f"t{i}"))
        index.append(f"- [T{i}](feedback_t{i}.md) — about t{i}\n")
    (memory / "MEMORY.md").write_text("".join(index))
    then = time.time() - 60
    for item in (memory, *memory.rglob("*")):
        os.utime(item, (then, then))
    return root, memory


def changes(home: Home, memory: Path) -> list[object]:
    state = home.state / "memd"
    if not (state / "history").exists():
        return []
    with History.open(str(state)) as history:
        return list(history.changes(str(memory)))


def run_memd(
    *argv: str,
    cwd: Path | None = None,
    stdin: str = "",
    codes: tuple[int, ...] = (0, 3),
) -> str:
    """Run the real `memd`; its stdout (exit status one of `codes`: status says 3
    without a daemon)."""
    done = subprocess.run(
        [MEMD, *argv],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=TIMEOUT,
        check=False,
    )
    assert done.returncode in codes, done.stderr
    return done.stdout


def memd(*argv: str, cwd: Path | None = None) -> str:
    return run_memd(*argv, cwd=cwd)


def session_start(root: Path) -> str:
    """What the agent's SessionStart hook tells a session starting in `root`."""
    payload = {"session_id": "s1", "cwd": str(root), "hook_event_name": "SessionStart"}
    said = json.loads(
        run_memd("hook", "session-start", cwd=root, stdin=json.dumps(payload))
    )["hookSpecificOutput"]["additionalContext"]
    assert isinstance(said, str)
    return said


def on_path() -> dict[str, str]:
    """The environment with this memd first on PATH, as after `memd setup`."""
    return {
        **os.environ,
        "PATH": f"{Path(MEMD).parent}{os.pathsep}{os.environ['PATH']}",
    }


def assert_reads_as_a_person(text: str) -> None:
    assert MICROSECOND_STAMP.search(text) is None, text
    assert RAW_ISO.search(text) is None, text


class TestTheDaemonsTerminal:
    def test_a_loss_names_the_project_and_the_command_that_brings_it_back(
        self, isolated_home: Home
    ) -> None:
        root, memory = project(isolated_home, "webshop")
        before = {p.name: p.read_bytes() for p in memory.iterdir() if p.is_file()}
        daemon = Terminal("run")
        try:
            first = daemon.read_until("Ctrl-C stops it")
            wait_for(lambda: changes(isolated_home, memory), what="the first record")
            time.sleep(1.1)  # the restore time falls between the two changes
            for i in range(4):
                (memory / f"feedback_t{i}.md").unlink()
            seen = daemon.read_until("brings them back")
            status = memd("status")
            told = session_start(root)
        finally:
            daemon.proc.send_signal(signal.SIGINT)
            daemon.finish()

        assert "(~/.claude/projects)" in first, first
        assert "memory_loss" not in seen, seen
        assert "warning" not in seen, seen
        assert "memd: in ~/code/webshop, 4 memory files were deleted at " in seen, seen
        assert " (by an edit); `memd restore --loss " in seen, seen  # not "(edit)"
        found = re.search(r"`(memd restore --loss \d+)` brings them back", seen)
        assert found is not None, seen
        assert_reads_as_a_person(seen)
        # the command works as printed, from anywhere
        done = subprocess.run(
            ["bash", "-c", found.group(1)],
            env=on_path(),
            cwd=isolated_home.root,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        after = {p.name: p.read_bytes() for p in memory.iterdir() if p.is_file()}
        assert after == before
        # status names the project by its folder, the memory dir as detail
        assert "\n  ~/code/webshop  errors 0" in status, status
        assert "telemetry dropped" not in status, status  # a healthy watcher's zeros
        assert ".sock" not in status, status  # the hooks' socket: --format json
        assert "\n    memory: ~/.claude/projects/" in status, status
        assert "\n  ~/code/webshop:\n    4 memory files were deleted" in status, status
        assert status.rstrip().endswith(")"), status  # "times are local (UTC)"
        assert_reads_as_a_person(status)
        # the next session in the project is told once, by the project's name
        assert "memd: in ~/code/webshop, 4 memory files were deleted at " in told
        assert_reads_as_a_person(told)


class TestHistory:
    def test_a_listed_time_pasted_into_restore_brings_back_that_version(
        self, isolated_home: Home
    ) -> None:
        root, memory = project(isolated_home, "webshop", topics=1)
        state = str(isolated_home.state / "memd")
        now = time.time()
        with History.open(state) as history:
            (memory / "feedback_t0.md").write_text(topic("first"))
            history.record(str(memory), cause="edit", at=now - 120.7)
            (memory / "feedback_t0.md").write_text(topic("second"))
            history.record(str(memory), cause="edit", at=now - 60.3)
        (memory / "feedback_t0.md").write_text(topic("third"))

        listed = memd("history", cwd=root)
        everything = memd("history", "--all", cwd=root)

        assert listed.startswith("history of ~/code/webshop (~/.claude/projects/"), (
            listed
        )
        assert "  ~/code/webshop\n" in everything, everything
        assert_reads_as_a_person(listed + everything)
        heads = re.findall(
            r"^rev (\d+)  ((?:today|yesterday) \d\d:\d\d:\d\d)  ", listed, re.M
        )
        assert len(heads) == 2, listed
        as_json = json.loads(memd("history", "--format", "json", cwd=root))
        assert [c["project"] for c in as_json] == ["~/code/webshop"] * 2
        assert all(
            re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d", c["time"])
            for c in as_json
        ), as_json
        oldest = heads[-1][1]  # as a person copies it from the list
        run_memd("restore", "feedback_t0.md", "--at", oldest, cwd=root)
        assert (memory / "feedback_t0.md").read_text() == topic("first")

    def test_each_change_says_why_in_words_not_memds_cause_names(
        self, isolated_home: Home
    ) -> None:
        """`stopped`, `fix`, `edit` are memd's keys; a person reads why."""
        root, memory = project(isolated_home, "webshop", topics=1)
        state = str(isolated_home.state / "memd")
        now = time.time()
        with History.open(state) as history:
            history.record(str(memory), cause="stopped", at=now - 120)
            (memory / "feedback_t0.md").write_text(topic("second"))
            history.record(str(memory), cause="fix", at=now - 60)

        listed = memd("history", cwd=root)

        causes = re.findall(r"^rev \d+  \S+ \d\d:\d\d:\d\d  (.+?)  [+]", listed, re.M)
        assert causes == ["by memd fix", "while memd was stopped"], listed


class TestStats:
    def test_each_project_by_its_folder_against_the_agents_limits(
        self, isolated_home: Home
    ) -> None:
        root, memory = project(isolated_home, "webshop", topics=3)
        memd("prompt", cwd=root)  # memd builds the prompt: one telemetry event
        transcripts = isolated_home.claude / "projects" / "-sessions-of-webshop"
        transcripts.mkdir()
        for session in ("one", "two"):
            (transcripts / f"{session}.jsonl").write_text(
                f'{{"type":"user","cwd":"{root}/src","sessionId":"{session}"}}\n'
            )
        (root / "src").mkdir()

        out = memd("stats")

        assert out.startswith(
            "~/code/webshop\n  memory prompt (MEMORY.md): 3 of 200 lines, "
        ), out
        assert " of 25,000 characters (" in out, out
        assert "  loaded by the agent's sessions: 2 times (2 in the last 7 days)" in out
        assert (
            f"  memory directory: ~/.claude/projects/{memory.parent.name}/memory\n"
            in out
        )
        for internal in ("renders", "units", "access mode", "prompt variant"):
            assert internal not in out, out
        assert_reads_as_a_person(out)

    def test_before_anything_is_measured_it_says_so_in_words(
        self, isolated_home: Home
    ) -> None:
        out = memd("stats")

        assert out.startswith("nothing measured yet: "), out
        assert "telemetry" not in out, out


class TestDoctor:
    def test_an_over_budget_index_is_named_by_its_project(
        self, isolated_home: Home
    ) -> None:
        root, memory = project(isolated_home, "webshop", topics=1)
        (memory / "MEMORY.md").write_text(
            "".join(f"- [T{i}](feedback_t0.md) — entry {i}\n" for i in range(250))
        )

        out = run_memd("doctor", cwd=root, codes=(0, 1, 2, 3))

        line = next(x for x in out.splitlines() if "index budgets" in x)
        assert line.endswith(
            "over budget: the agent drops the rest (~/code/webshop)"
        ), out
        assert "1 index over budget" in line, out  # not "index(es)"
        assert_reads_as_a_person(out)


class TestFix:
    def test_what_it_fixed_is_named_as_the_agent_names_it_in_its_project(
        self, isolated_home: Home
    ) -> None:
        root, memory = project(isolated_home, "webshop", topics=1)
        (memory / "MEMORY.md").write_text(
            "".join(f"- [T{i}](feedback_t0.md) — entry {i}\n" for i in range(3))
        )

        out = memd("fix", cwd=root)

        assert out.startswith("fixed MEMORY.md in ~/code/webshop: "), out
        assert out.endswith("\n1 file fixed\n"), out
        assert str(memory) not in out, out

    def test_its_undo_names_the_project_and_the_file_as_the_agent_does(
        self, isolated_home: Home
    ) -> None:
        root, memory = project(isolated_home, "webshop", topics=1)
        (memory / "MEMORY.md").write_text("- [T0](feedback_t0.md) — t0\n" * 2)
        memd("fix", cwd=root)
        (memory / "MEMORY.md").write_text("- [T0](feedback_t0.md) — edited since\n")

        done = subprocess.run(
            [MEMD, "fix", "--undo"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=False,
        )

        assert done.returncode == 1, done
        assert done.stderr == (
            "memd: in ~/code/webshop, not undone: MEMORY.md changed since"
            " memd fix wrote it\n"
        ), done.stderr


class TestEveryCommandsText:
    def test_no_raw_stamp_and_the_project_by_its_folder(
        self, isolated_home: Home
    ) -> None:
        """A dream and its undo, recall, sync status: what a person reads."""
        root, memory = project(isolated_home, "webshop", topics=2)
        run_memd("log", "#ops the pager rotates weekly", cwd=root)

        said = {
            "dream": run_memd("dream", "--now", cwd=root),
            "undo": run_memd("dream", "undo", cwd=root),
            "recall": run_memd("recall", "t0", cwd=root),
            "sync": run_memd("sync", "status", cwd=root, codes=(0, 1, 2)),
        }

        assert said["dream"].startswith("~/code/webshop: ok, 1 entries"), said
        assert "generation" not in said["dream"], said  # memd's word for a dream
        assert said["undo"].rstrip().endswith(" files)"), said  # not "file(s)"
        assert said["undo"].startswith("~/code/webshop: undid dream 1 of today "), said
        assert (
            said["recall"]
            .rstrip()
            .endswith(
                f"in ~/code/webshop (~/.claude/projects/{memory.parent.name}/memory)"
            )
        ), said
        for text in said.values():
            assert_reads_as_a_person(text)
            assert str(memory) not in text

    def test_a_dream_not_due_names_the_project_by_its_folder(
        self, isolated_home: Home
    ) -> None:
        """`memd dream` alone, before any dream: not a munged memory dir path."""
        root, memory = project(isolated_home, "webshop", topics=1)

        said = run_memd("dream", cwd=root)

        assert said.startswith("~/code/webshop: "), said
        assert "`memd dream --now` runs it now" in said, said
        assert str(memory.parent) not in said, said
        assert memory.parent.name not in said, said  # -tmp-...-code-webshop
        assert_reads_as_a_person(said)


class TestLint:
    def test_each_file_is_named_as_the_agent_names_it_in_its_project(
        self, isolated_home: Home
    ) -> None:
        """`--all`, a project, a bare name: never the memory dir's munged path."""
        root, memory = project(isolated_home, "webshop", topics=1)
        (memory / "feedback_t0.md").write_text("no frontmatter\n")

        said = {
            "all": run_memd("lint", "--all", codes=(1,)),
            "here": run_memd("lint", cwd=root, codes=(1,)),
            "file": run_memd("lint", "feedback_t0.md", cwd=root, codes=(1,)),
        }

        for text in said.values():
            assert text.startswith("feedback_t0.md in ~/code/webshop\n"), said
            assert memory.parent.name not in text, said


class TestHelp:
    def test_the_command_list_and_each_commands_help_use_a_persons_words(
        self, isolated_home: Home
    ) -> None:
        """What a newcomer reads first: no telemetry event, index or codename."""
        commands = ("stats", "recall", "status", "prompt", "log", "lint", "fix")
        said = {"memd": memd("--help")}
        said.update({name: memd(name, "--help") for name in commands})

        internal = ("memdir_loaded", "telemetry", "BM25", "FTS5", "KAIROS")
        for name, text in said.items():
            for word in (*internal, "<base>/projects", "served warm"):
                assert word not in text, (name, word, text)
        assert "how big each project's memory prompt is" in said["stats"], said
