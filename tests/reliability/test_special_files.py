"""FIFOs and odd names in a memory directory never block or abort a command.

Each command runs as a real `memd` subprocess with a timeout: a FIFO that
blocked `open()` would hang it, which the timeout turns into a failure.
"""

from __future__ import annotations

import datetime
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memd.claude_code.paths import daily_log_path, resolve_memory_location

MEMD = os.path.join(os.path.dirname(sys.executable), "memd")
TIMEOUT = 30  # a blocked open never returns; a working run takes well under 2 s
CRLF_TOPIC = (
    b"---\r\nname: crlf\r\ndescription: has CRLF\r\ntype: user\r\n---\r\nBody\r\n"
)
FIXED_TOPIC = b"---\nname: crlf\ndescription: has CRLF\ntype: user\n---\nBody\n"


def memd(*argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MEMD_TELEMETRY": "off", "MEMD_LOG_LEVEL": "error"}
    return subprocess.run(
        [MEMD, *argv], capture_output=True, text=True, timeout=TIMEOUT, env=env
    )


def no_traceback(result: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in result.stderr, result.stderr


@pytest.fixture(name="memory")
def _memory(git_repo: Path) -> Path:
    path = Path(resolve_memory_location(str(git_repo)).memory_dir)
    path.mkdir(parents=True)
    (path / "crlf.md").write_bytes(CRLF_TOPIC)
    return path


def _today_log(memory: Path) -> Path:
    return Path(daily_log_path(str(memory), datetime.date.today()))


@pytest.mark.parametrize("name", ["MEMORY.md", "fifo.md"])
class TestFixWithFifo:
    def test_fix_finishes_and_fixes_the_rest(self, memory: Path, name: str) -> None:
        """A FIFO index or topic file: fix returns, and the CRLF file is fixed."""
        os.mkfifo(memory / name)

        result = memd("fix", str(memory))

        no_traceback(result)
        assert 0 == result.returncode, result.stderr
        assert f"{name}: " in result.stderr  # reported as skipped
        assert FIXED_TOPIC == (memory / "crlf.md").read_bytes()

    def test_dry_run_finishes(self, memory: Path, name: str) -> None:
        """fix --dry-run with a FIFO present prints the diff and writes nothing."""
        os.mkfifo(memory / name)

        result = memd("fix", "--dry-run", str(memory))

        no_traceback(result)
        assert 0 == result.returncode, result.stderr
        assert "crlf.md" in result.stdout
        assert CRLF_TOPIC == (memory / "crlf.md").read_bytes()


class TestDreamWithFifo:
    def _log(self, git_repo: Path) -> None:
        result = memd("log", "--project", str(git_repo), "#fifo one entry")
        assert 0 == result.returncode, result.stderr

    def test_fifo_consolidate_lock(self, git_repo: Path, memory: Path) -> None:
        """A FIFO `.consolidate-lock` is replaced by a real lock; the dream runs."""
        self._log(git_repo)
        os.mkfifo(memory / ".consolidate-lock")

        result = memd("dream", "--now", "--project", str(git_repo))

        no_traceback(result)
        assert 0 == result.returncode, result.stderr
        assert "one entry" in (memory / "project_fifo.md").read_text()

    @pytest.mark.parametrize("name", ["MEMORY.md", "project_fifo.md"])
    def test_fifo_dream_target_fails_clearly(
        self, git_repo: Path, memory: Path, name: str
    ) -> None:
        """A FIFO where the dream must read fails that dream with a reason, at once."""
        self._log(git_repo)
        os.mkfifo(memory / name)

        result = memd("dream", "--now", "--project", str(git_repo))

        no_traceback(result)
        assert 1 == result.returncode
        assert "not a regular file" in result.stdout + result.stderr

    def test_fifo_today_log_dry_run(self, git_repo: Path, memory: Path) -> None:
        """A FIFO as today's log is skipped by the dream, never opened."""
        _today_log(memory).parent.mkdir(parents=True)
        os.mkfifo(_today_log(memory))

        result = memd("dream", "--dry-run", "--project", str(git_repo))

        no_traceback(result)
        assert 0 == result.returncode, result.stderr


class TestLogIntoFifo:
    def test_log_fails_clearly(self, git_repo: Path, memory: Path) -> None:
        """`memd log` into a FIFO: exit 2 and one line naming the file."""
        _today_log(memory).parent.mkdir(parents=True)
        os.mkfifo(_today_log(memory))

        result = memd("log", "--project", str(git_repo), "do not lose me")

        assert 2 == result.returncode
        assert 1 == len(result.stderr.splitlines()), result.stderr
        assert "not a regular file" in result.stderr

    def test_log_into_symlink_fails(
        self, git_repo: Path, memory: Path, tmp_path: Path
    ) -> None:
        """A symlinked log is refused; the file it points to is unchanged."""
        outside = tmp_path / "outside.md"
        outside.write_text("outside\n")
        _today_log(memory).parent.mkdir(parents=True)
        _today_log(memory).symlink_to(outside)

        result = memd("log", "--project", str(git_repo), "never outside")

        assert 2 == result.returncode
        assert "symlink" in result.stderr
        assert "outside\n" == outside.read_text()


class TestFixSkipsWhatItCannotHandle:
    def test_undecodable_name(self, memory: Path) -> None:
        """A topic file with an undecodable name: no traceback, the rest is fixed."""
        bad = os.path.join(os.fsencode(memory), b"caf\xe9.md")
        with open(bad, "wb") as handle:
            handle.write(CRLF_TOPIC)

        result = memd("fix", str(memory))

        no_traceback(result)
        assert "not valid UTF-8" in result.stderr
        assert FIXED_TOPIC == (memory / "crlf.md").read_bytes()

    def test_243_byte_name(self, memory: Path) -> None:
        """A 243-byte name is fixed like any other: the temp name stays short."""
        long_name = "x" * 240 + ".md"
        (memory / long_name).write_bytes(CRLF_TOPIC.replace(b"crlf", b"long"))

        result = memd("fix", str(memory))

        no_traceback(result)
        assert 0 == result.returncode, result.stderr
        assert b"\r" not in (memory / long_name).read_bytes()
        assert FIXED_TOPIC == (memory / "crlf.md").read_bytes()

    def test_index_is_a_directory(self, memory: Path) -> None:
        """MEMORY.md a directory: reported and skipped, the other fixes applied."""
        (memory / "MEMORY.md").mkdir()

        result = memd("fix", str(memory))

        no_traceback(result)
        assert 0 == result.returncode, result.stderr
        assert "MEMORY.md: not a regular file" in result.stderr
        assert FIXED_TOPIC == (memory / "crlf.md").read_bytes()
        assert (memory / "MEMORY.md").is_dir()


class TestAllOrNothingAppend:
    def test_full_disk_leaves_the_log_as_it_was(
        self, git_repo: Path, memory: Path
    ) -> None:
        """A short write (file size limit hit mid-entry): exit 2, not a byte left."""
        import resource
        import signal

        assert 0 == memd("log", "--project", str(git_repo), "first").returncode
        log = _today_log(memory)
        before = log.read_bytes()
        limit = len(before) + 100  # room for 100 bytes of an 8 KB entry

        def limited() -> None:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG, not a kill
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

        result = subprocess.run(
            [MEMD, "log", "--project", str(git_repo), "x" * 8192],
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
            preexec_fn=limited,
        )

        assert 2 == result.returncode, result.stderr
        assert "not logged" in result.stderr or "short write" in result.stderr
        assert before == log.read_bytes()


def test_stale_temp_files_are_removed(memory: Path, tmp_path: Path) -> None:
    """Old `.memd-tmp-*` files go, fresh ones and everything outside stay."""
    from memd.atomic import remove_stale_temp_files_tree

    (memory / "sub").mkdir()
    old = [memory / ".memd-tmp-0123456789abcdef", memory / "sub" / ".memd-tmp-aa"]
    fresh = memory / ".memd-tmp-fresh"
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / ".memd-tmp-outside").write_text("keep")
    (memory / "linked").symlink_to(outside)
    for path in (*old, fresh):
        path.write_text("partial")
    for path in (*old, outside / ".memd-tmp-outside"):
        os.utime(path, (1_000_000, 1_000_000))

    removed = remove_stale_temp_files_tree(str(memory), older_than_seconds=600)

    assert 2 == removed
    assert not any(p.exists() for p in old)
    assert fresh.exists()
    assert (outside / ".memd-tmp-outside").exists()
    assert FIXED_TOPIC != (memory / "crlf.md").read_bytes()  # untouched
