"""`memd recall`: ranked memories for a project or all of them, refreshed by stat."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memd.claude_code.paths import resolve_memory_location
from memd.cli.main import main
from tests.conftest import Home, run_without_site

MEMD = os.path.join(os.path.dirname(sys.executable), "memd")


def topic(memory: Path, relpath: str, name: str, description: str, kind: str) -> None:
    memory.mkdir(parents=True, exist_ok=True)
    (memory / relpath).write_text(
        f"---\nname: {name}\ndescription: {description}\ntype: {kind}\n---\nBody.\n"
    )


def memory_of(project: Path) -> Path:
    return Path(resolve_memory_location(str(project)).memory_dir)


def recall_json(*argv: str, cwd: Path) -> list[dict[str, object]]:
    result = subprocess.run(
        [MEMD, "recall", "--format", "json", *argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    )
    found: list[dict[str, object]] = json.loads(result.stdout)
    return found


class TestRecall:
    def test_text_output(
        self, git_repo: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """Each result shows type, name, relpath, description and a marked snippet."""
        memory = memory_of(git_repo)
        topic(
            memory, "user_go.md", "Go style", "The user wants tabs in Go files", "user"
        )

        code = main(["recall", "--project", str(git_repo), "tabs", "or", "spaces"])

        assert 0 == code
        assert (
            "1. [user] Go style  (user_go.md)\n"
            "   The user wants tabs in Go files\n"
            "   > The user wants [tabs] in Go files\n"
            # the project by its folder, the memory dir as detail (#42)
            f"in {git_repo.resolve()} (~/{memory.relative_to(Path.home())})\n"
        ) == capsys.readouterr().out

    def test_saved_and_deleted_files_with_the_installed_script(
        self, git_repo: Path
    ) -> None:
        """Without a daemon, a new file is found and a deleted one never returned."""
        memory = memory_of(git_repo)
        topic(memory, "user_a.md", "Editor", "The user edits in Helix, not Vim", "user")
        first = recall_json("which", "editor", cwd=git_repo)
        topic(
            memory,
            "user_b.md",
            "Shell",
            "The user's shell is fish, with an editor",
            "user",
        )
        second = recall_json("which", "editor", cwd=git_repo)
        (memory / "user_a.md").unlink()
        third = recall_json("which", "editor", cwd=git_repo)

        assert ["user_a.md"] == [h["relpath"] for h in first]
        assert {"user_a.md", "user_b.md"} == {h["relpath"] for h in second}
        assert ["user_b.md"] == [h["relpath"] for h in third]

    def test_all_projects_and_type(self, git_repo: Path, tmp_path: Path) -> None:
        """--all searches every project's memory; --type keeps one type."""
        other = tmp_path / "other"
        other.mkdir()
        topic(
            memory_of(git_repo),
            "project_a.md",
            "Freeze",
            "Release freeze starts Friday",
            "project",
        )
        topic(
            memory_of(other),
            "reference_b.md",
            "Board",
            "Release board lives in Linear",
            "reference",
        )

        everything = recall_json("--all", "release", cwd=tmp_path)
        references = recall_json(
            "--all", "--type", "reference", "release", cwd=tmp_path
        )

        assert {"project_a.md", "reference_b.md"} == {h["relpath"] for h in everything}
        assert ["reference_b.md"] == [h["relpath"] for h in references]

    def test_all_uses_the_cache_dir_config_sets(
        self, git_repo: Path, tmp_path: Path, isolated_home: Home
    ) -> None:
        """With a config.toml, --all reads it: the index lives where it says."""
        topic(memory_of(git_repo), "user_a.md", "Editor", "Edits in Helix", "user")
        elsewhere = tmp_path / "elsewhere"
        config = isolated_home.config / "memd" / "config.toml"
        config.parent.mkdir(parents=True)
        config.write_text(f'[paths]\ncache_dir = "{elsewhere}"\n')

        found = recall_json("--all", "helix", cwd=tmp_path)

        assert ["user_a.md"] == [h["relpath"] for h in found]
        assert (elsewhere / "recall.sqlite3").is_file()
        assert not (isolated_home.cache / "memd" / "recall.sqlite3").exists()

    def test_no_match_exits_zero_with_a_note(self, git_repo: Path) -> None:
        """Nothing found is not an error: exit 0, a note on stderr, no stdout."""
        result = subprocess.run(
            [MEMD, "recall", "zebra"],
            cwd=git_repo,
            capture_output=True,
            text=True,
            check=False,
        )

        assert (0, "", "no matching memories\n") == (
            result.returncode,
            result.stdout,
            result.stderr,
        )

    @pytest.mark.parametrize(
        "argv",
        [
            ["--limit", "0", "x"],
            ["--type", "opinion", "x"],
            ["--all", "--project", ".", "x"],
            [],
        ],
    )
    def test_usage_errors(self, git_repo: Path, argv: list[str]) -> None:
        """A usage mistake is exit 2 and no traceback."""
        result = subprocess.run(
            [MEMD, "recall", *argv],
            cwd=git_repo,
            capture_output=True,
            text=True,
            check=False,
        )

        assert 2 == result.returncode
        assert "Traceback" not in result.stderr

    def test_disabled_memory(self, git_repo: Path) -> None:
        """With auto memory off, recall says so and exits 1."""
        env = {**os.environ, "CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1"}
        result = subprocess.run(
            [MEMD, "recall", "x"],
            cwd=git_repo,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )

        assert 1 == result.returncode
        assert "disabled" in result.stderr

    def test_corrupt_index_is_rebuilt(self, git_repo: Path) -> None:
        """A garbage database in the cache is replaced; recall still answers."""
        topic(
            memory_of(git_repo),
            "user_a.md",
            "Editor",
            "The user edits in Helix",
            "user",
        )
        cache = Path(os.environ["XDG_CACHE_HOME"]) / "memd"
        cache.mkdir(parents=True, exist_ok=True)
        (cache / "recall.sqlite3").write_bytes(b"\x00garbage" * 1000)

        found = recall_json("helix", cwd=git_repo)

        assert ["user_a.md"] == [h["relpath"] for h in found]


class TestProcessExit:
    """The installed script leaves without the interpreter's teardown."""

    def test_long_output_is_written_whole(self, git_repo: Path) -> None:
        """Every byte printed before the early exit reaches the pipe."""
        memory = memory_of(git_repo)
        for number in range(60):
            topic(memory, f"k{number:02d}.md", f"K{number}", "kafka lag notes", "user")

        found = recall_json("--limit", "60", "kafka", cwd=git_repo)

        assert [f"k{n:02d}.md" for n in range(60)] == sorted(
            str(h["relpath"]) for h in found
        )

    def test_a_closed_pipe_is_quiet(self, git_repo: Path) -> None:
        """`memd recall ... | head` with the reader gone: exit 0, nothing on stderr."""
        topic(memory_of(git_repo), "k.md", "K", "kafka lag notes", "user")
        process = subprocess.Popen(
            [MEMD, "recall", "kafka"],
            cwd=git_repo,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert process.stdout is not None
        process.stdout.close()  # gone before memd has started to answer
        _, errors = process.communicate(timeout=60)

        assert (0, b"") == (process.returncode, errors)

    def test_a_full_disk_is_an_error(self, git_repo: Path) -> None:
        """Output that cannot be written is one line on stderr and exit 2."""
        topic(memory_of(git_repo), "k.md", "K", "kafka lag notes", "user")
        with open("/dev/full", "w") as full:
            result = subprocess.run(
                [MEMD, "recall", "kafka"],
                cwd=git_repo,
                stdout=full,
                stderr=subprocess.PIPE,
                text=True,
                check=False,
            )

        assert (2, "memd: No space left on device\n") == (
            result.returncode,
            result.stderr,
        )


class TestParseSimple:
    @pytest.mark.parametrize(
        "argv",
        [
            ["tabs", "or", "spaces"],
            ["--all", "--limit", "3", "deploy"],
            ["--project", "/tmp", "--type", "user", "--format", "json", "who"],
            ["--", "--all", "literal"],
        ],
    )
    def test_same_namespace_as_argparse(self, argv: list[str]) -> None:
        """The argparse-free shapes parse exactly as argparse parses them."""
        import argparse

        from memd.cli.commands import recall as recall_command

        parser = argparse.ArgumentParser(prog="memd recall")
        recall_command.add_arguments(parser)
        expected = vars(parser.parse_args(argv))
        simple = vars(recall_command.parse_simple(argv))

        assert expected == {k: simple[k] for k in expected}

    @pytest.mark.parametrize(
        "argv",
        [
            [],
            ["-h"],
            ["--limit", "0", "x"],
            ["--limit", "x"],
            ["--type", "opinion", "x"],
            ["--all", "--project", ".", "x"],
            ["--format=json", "x"],
        ],
    )
    def test_anything_else_goes_to_argparse(self, argv: list[str]) -> None:
        """Help, mistakes and unusual spellings are left to argparse."""
        from memd.cli.commands.recall import parse_simple

        assert None is parse_simple(argv)


# What the warm `memd recall` must not load: each costs a real share of the 2x
# budget against a bare interpreter (the date adapters of the `sqlite3`
# package; parsers; config; the logging and wiring libraries). `_sqlite3`
# itself loads `functools`, `collections` and `types`.
RECALL_FORBIDDEN = (
    "argparse",
    "datetime",
    "importlib",
    "json",
    "re",
    "sqlite3",
    "structlog",
    "tomllib",
    "yaml",
    "memd.config",
    "memd.memory.reader",
)


@pytest.mark.parametrize("where", ["--project", "--all"])
def test_warm_recall_imports_nothing_heavy(git_repo: Path, where: str) -> None:
    """A warm `memd recall` through memd.cli.main loads none of RECALL_FORBIDDEN."""
    memory = memory_of(git_repo)
    topic(memory, "user_go.md", "Go style", "Tabs in Go files", "user")
    time.sleep(1.1)  # out of the racy window (ctimes too): the first run records
    argv = ["recall", "--all"] if where == "--all" else ["recall", where, str(git_repo)]
    subprocess.run([MEMD, *argv, "tabs"], check=True, capture_output=True)
    probe = (
        "import sys\n"
        "before = set(sys.modules)\n"
        "from memd.cli.main import main\n"
        f"code = main({[*argv, 'tabs']!r})\n"
        "sys.stdout.flush()\n"
        "new = sorted(set(sys.modules) - before)\n"
        "sys.stderr.write('CODE %d\\nNEW %s\\n' % (code, ' '.join(new)))\n"
    )

    result = run_without_site(probe)
    report = result.stderr.splitlines()
    new = set(report[-1].removeprefix("NEW ").split())

    assert "CODE 0" == report[-2]
    assert "Go style" in result.stdout
    assert set() == new & set(RECALL_FORBIDDEN)


def cache_of() -> Path:
    return Path(os.environ["XDG_CACHE_HOME"]) / "memd"


def recall_run(
    *argv: str, cwd: Path, prefix: tuple[str, ...] = ()
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*prefix, MEMD, "recall", "--format", "json", *argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


class TestHostileCache:
    """The index only costs speed: recall answers whatever state its cache is in."""

    def test_a_locked_index_still_answers(self, git_repo: Path) -> None:
        """Another process holds BEGIN IMMEDIATE: recall reads the memory afresh,
        says so in one line, exits 0, and no traceback."""
        memory = memory_of(git_repo)
        topic(memory, "user_a.md", "Editor", "The user edits in Helix", "user")
        recall_json("helix", cwd=git_repo)  # the index exists, in WAL mode
        topic(memory, "user_b.md", "Shell", "The user's shell is fish", "user")
        holder = subprocess.Popen(
            [
                sys.executable,
                "-c",
                "import sqlite3, sys\n"
                f"c = sqlite3.connect({str(cache_of() / 'recall.sqlite3')!r},"
                " isolation_level=None)\n"
                "c.execute('BEGIN IMMEDIATE')\n"
                "print('held', flush=True)\n"
                "sys.stdin.read()\n",
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert holder.stdout is not None
            assert "held\n" == holder.stdout.readline()

            result = recall_run("fish", cwd=git_repo)
        finally:
            holder.communicate("")

        assert (0, ["user_b.md"]) == (
            result.returncode,
            [h["relpath"] for h in json.loads(result.stdout)],
        )
        assert "busy" in result.stderr
        assert "Traceback" not in result.stderr
        assert 1 == len(result.stderr.splitlines())

    @pytest.mark.parametrize("has_index", [False, True])
    def test_a_read_only_cache_still_answers(
        self, git_repo: Path, has_index: bool
    ) -> None:
        """The cache on a read-only mount (a bind mount in a mount namespace):
        recall searches without persisting and exits 0."""
        memory = memory_of(git_repo)
        topic(memory, "user_a.md", "Editor", "The user edits in Helix", "user")
        cache = cache_of()
        cache.mkdir(parents=True, exist_ok=True)
        if has_index:
            recall_json("helix", cwd=git_repo)
        topic(memory, "user_b.md", "Shell", "The user's shell is fish", "user")
        script = (
            'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" "$0" && '
            'touch "$0/probe" 2>/dev/null && exit 99; exec "$@"'
        )
        prefix = ("unshare", "-m", "sh", "-c", script, str(cache))

        result = recall_run("fish", cwd=git_repo, prefix=prefix)

        assert (0, ["user_b.md"]) == (
            result.returncode,
            [h["relpath"] for h in json.loads(result.stdout)],
        ), result.stderr
        assert "Traceback" not in result.stderr
        assert "index not used" in result.stderr

    @pytest.mark.parametrize("suffix", ["", "-wal", "-shm", "-journal"])
    @pytest.mark.parametrize("target", ["empty", "missing", "text"])
    def test_an_index_file_that_is_a_link_is_never_opened(
        self, git_repo: Path, tmp_path: Path, suffix: str, target: str
    ) -> None:
        """A symlink at the index's name or a side file's is removed, its target
        never created or written; recall answers."""
        memory = memory_of(git_repo)
        topic(memory, "user_a.md", "Editor", "The user edits Helix", "user")
        cache = cache_of()
        cache.mkdir(parents=True, exist_ok=True)
        if suffix:  # a database in WAL mode already, so the side files are opened
            recall_json("helix", cwd=git_repo)
            topic(memory, "user_b.md", "Shell", "The user's shell is fish", "user")
        precious = tmp_path / "precious"
        content = {"empty": b"", "text": b"the user's own file\n"}.get(target)
        if content is not None:
            precious.write_bytes(content)
        link = cache / f"recall.sqlite3{suffix}"
        link.unlink(missing_ok=True)
        link.symlink_to(precious)

        found = recall_json("helix", cwd=git_repo)

        assert ["user_a.md"] == [h["relpath"] for h in found]
        assert content == (precious.read_bytes() if precious.exists() else None)
        assert not link.is_symlink()

    def test_a_fifo_beside_the_index_does_not_hang(self, git_repo: Path) -> None:
        """A FIFO at the WAL's name is refused: recall answers from memory."""
        topic(
            memory_of(git_repo), "user_a.md", "Editor", "The user edits Helix", "user"
        )
        cache = cache_of()
        cache.mkdir(parents=True, exist_ok=True)
        os.mkfifo(cache / "recall.sqlite3-wal")

        result = recall_run("helix", cwd=git_repo)

        assert (0, ["user_a.md"]) == (
            result.returncode,
            [h["relpath"] for h in json.loads(result.stdout)],
        )
        assert "not a regular file" in result.stderr


class TestWhatTheAgentReads:
    def test_a_symlinked_memory_dir_is_searched(
        self, git_repo: Path, tmp_path: Path
    ) -> None:
        """The memory dir itself a link (a supported setup): recall follows it."""
        real = tmp_path / "real-memory"
        topic(real, "user_a.md", "Editor", "The user edits in Helix", "user")
        memory = memory_of(git_repo)
        memory.parent.mkdir(parents=True, exist_ok=True)
        memory.symlink_to(real, target_is_directory=True)

        found = recall_json("helix", cwd=git_repo)

        assert ["user_a.md"] == [h["relpath"] for h in found]

    def test_a_link_inside_the_memory_dir_is_not_followed(
        self, git_repo: Path, tmp_path: Path
    ) -> None:
        """A symlinked folder inside the (symlinked) memory dir stays unread."""
        real, outside = tmp_path / "real-memory", tmp_path / "outside"
        topic(real, "user_a.md", "Editor", "The user edits in Helix", "user")
        topic(outside, "user_x.md", "Secret", "Helix secrets outside memory", "user")
        (real / "sub").symlink_to(outside, target_is_directory=True)
        memory = memory_of(git_repo)
        memory.parent.mkdir(parents=True, exist_ok=True)
        memory.symlink_to(real, target_is_directory=True)

        found = recall_json("helix", cwd=git_repo)

        assert ["user_a.md"] == [h["relpath"] for h in found]

    def test_a_name_that_is_not_utf8_is_found(self, git_repo: Path) -> None:
        """A topic file whose name is not UTF-8 is indexed, its bytes escaped."""
        memory = memory_of(git_repo)
        memory.mkdir(parents=True)
        name = os.fsdecode(b"user_caf\xe9.md")
        (memory / name).write_text(
            "---\nname: Cafe\ndescription: The user drinks flat whites\n"
            "type: user\n---\nBody.\n"
        )

        found = recall_json("flat whites", cwd=git_repo)
        text = subprocess.run(
            [MEMD, "recall", "flat", "whites"],
            cwd=git_repo,
            capture_output=True,
            text=True,
            check=True,
        )

        assert [name] == [h["relpath"] for h in found]
        assert "user_caf\\xe9.md" in text.stdout


TOKEN = "ghp_4fJ9kLm2Qw8Rt6Yz1Xc3Vb5Nm7As0Df2Gh4J"  # noqa: S105


class TestSecretsMasked:
    """What `memd recall` shows of memory never holds a likely secret, even in part."""

    def _memory_with_a_token(self, git_repo: Path) -> Path:
        memory = memory_of(git_repo)
        memory.mkdir(parents=True, exist_ok=True)
        (memory / "project_deploy.md").write_text(
            "---\nname: Deploy\ndescription: How we deploy, token "
            f"{TOKEN}\ntype: project\n---\n"
            f"Deploy with the CI token {TOKEN} from the vault.\n"
            + "Padding words so the window cuts. " * 3
            + f"Again: ghp_{'A1b2C3d4' * 5}\n"
        )
        return memory

    @pytest.mark.parametrize("query", ["deploy token", "vault", "padding cuts"])
    def test_json_and_text_output_mask_the_token(
        self, git_repo: Path, query: str
    ) -> None:
        self._memory_with_a_token(git_repo)

        (hit,) = recall_json(query, cwd=git_repo)
        text = subprocess.run(
            [MEMD, "recall", query], cwd=git_repo, capture_output=True, text=True,
            check=True,
        ).stdout  # fmt: skip

        shown = json.dumps(hit) + text
        assert "ghp_" not in shown
        assert "[secret: github-token " in str(hit["description"])
        assert "Deploy" == hit["name"]
