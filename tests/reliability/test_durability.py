"""Every atomic write is durable: data fsynced before the rename, the directory after.

SPEC §5: temp, fsync, rename, directory fsync. Without the last step a power
cut can undo the rename, so the reader finds the old file after memd said
"written". Nothing in a file's bytes shows whether the rename was flushed, so
these tests watch the real syscalls of a real `memd` process with strace
(`-y` names each descriptor's path): a spy on `os.fsync` would see only the
calls made through that one Python name, and would pass if memd flushed the
wrong descriptor or none at the kernel. The last test keeps the list of
renames in memd closed, so a new write path goes through `write_atomic` or
gets its own durability test here.
"""

from __future__ import annotations

import ast
import functools
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from memd.claude_code.paths import sanitize_path
from tests.conftest import Home

STRACE = shutil.which("strace")
pytestmark = pytest.mark.skipif(STRACE is None, reason="needs strace")

_PID = r"^(?:\[pid\s+)?\d+\]?\s+"
_FD = r"(?:\d+|AT_FDCWD)<([^>]*)>"
_SYNC = re.compile(_PID + rf"f(?:data)?sync\({_FD}\)\s+= 0")
_RENAME = re.compile(_PID + r'rename\("([^"]*)", "([^"]*)"\)\s+= 0')
_RENAMEAT = re.compile(
    _PID + rf'renameat2?\({_FD}, "([^"]*)", {_FD}, "([^"]*)"(?:, \w+)?\)\s+= 0'
)


@dataclass(frozen=True, slots=True)
class Call:
    """One successful syscall: `sync` of `path`, or `rename` of `path` to `target`."""

    kind: str
    path: str
    target: str = ""


def _parse(trace: str, cwd: Path) -> list[Call]:
    calls = []
    for line in trace.splitlines():
        if m := _SYNC.match(line):
            calls.append(Call("sync", m[1]))
        elif m := _RENAME.match(line):
            calls.append(Call("rename", str(cwd / m[1]), str(cwd / m[2])))
        elif m := _RENAMEAT.match(line):
            src, dst = os.path.join(m[1], m[2]), os.path.join(m[3], m[4])
            calls.append(Call("rename", src, dst))
    return calls


def traced(argv: list[str], *, cwd: Path, env: dict[str, str]) -> list[Call]:
    """Run `argv` under strace; return its fsyncs and renames in order."""
    assert STRACE is not None
    log = cwd / "strace.log"
    syscalls = "trace=fsync,fdatasync,rename,renameat,renameat2"
    done = subprocess.run(
        [STRACE, "-f", "-y", "-qq", "-o", str(log), "-e", syscalls, *argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode in (0, 1), done.stderr
    return _parse(log.read_text(), cwd)


def memd(*args: str) -> list[str]:
    return [sys.executable, "-m", "memd", *args]


def python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def assert_replaced_durably(calls: list[Call], target: Path) -> None:
    """`target` was renamed into place from a flushed file, then its dir flushed."""
    renames = [
        i for i, c in enumerate(calls) if c.kind == "rename" and c.target == str(target)
    ]
    assert renames, f"no rename onto {target} in {calls}"
    at = renames[-1]
    temp = calls[at].path
    before, after = calls[:at], calls[at + 1 :]

    assert Call("sync", temp) in before, f"{temp} renamed unflushed: {calls}"
    assert Call("sync", str(target.parent)) in after, (
        f"{target.parent} not fsynced after the rename: {calls}"
    )


GOOD = (
    "---\nname: {0}\ndescription: a specific enough description\ntype: user\n---\nx\n"
)


def _memdir(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / "MEMORY.md").write_bytes(b"# Index\r\n- [A](a.md) \xe2\x80\x94 a\r\n")
    (root / "a.md").write_text(GOOD.format("A"))
    (root / "b.md").write_bytes(b"\xef\xbb\xbf" + GOOD.format("B").encode())
    return root


class TestAtomicWrites:
    def test_write_atomic(self, tmp_path: Path, isolated_home: Home) -> None:
        """write_atomic flushes the temp file, renames it, then flushes the dir."""
        target = tmp_path / "sub" / "file.txt"
        target.parent.mkdir()
        target.write_text("old")
        code = (
            f"from memd.atomic import write_atomic; write_atomic({str(target)!r}, b'n')"
        )

        calls = traced(python(code), cwd=tmp_path, env=isolated_home.env())

        assert_replaced_durably(calls, target)
        assert "n" == target.read_text()

    def test_state_file(self, tmp_path: Path, isolated_home: Home) -> None:
        """memd's state files (daemon.json, projects.json, dreams.json) are durable."""
        state = tmp_path / "state"
        code = (
            "from memd.state import write_state; "
            f"write_state({str(state)!r}, 'dreams', {{'a': 1}})"
        )

        calls = traced(python(code), cwd=tmp_path, env=isolated_home.env())

        [written] = [p for p in state.iterdir() if not p.name.startswith(".")]
        assert_replaced_durably(calls, written)
        assert {"a": 1} == json.loads(written.read_text())

    def test_memd_fix(self, tmp_path: Path, isolated_home: Home) -> None:
        """`memd fix` replaces each fixed user file durably."""
        root = _memdir(tmp_path / "memory")

        calls = traced(memd("fix", str(root)), cwd=tmp_path, env=isolated_home.env())

        assert_replaced_durably(calls, root / "MEMORY.md")
        assert_replaced_durably(calls, root / "b.md")
        assert not (root / "b.md").read_bytes().startswith(b"\xef\xbb\xbf")

    def test_memd_hook_install(self, tmp_path: Path, isolated_home: Home) -> None:
        """`memd hook install` writes the agent's settings file durably."""
        project = tmp_path / "project"
        (project / ".claude").mkdir(parents=True)
        settings = project / ".claude" / "settings.local.json"
        settings.write_text('{"permissions": {}}\n')

        calls = traced(
            memd("hook", "install", "--project", str(project)),
            cwd=tmp_path,
            env=isolated_home.env(),
        )

        assert_replaced_durably(calls, settings)
        assert "hooks" in json.loads(settings.read_text())

    def test_snapshot_publish(self, tmp_path: Path, isolated_home: Home) -> None:
        """A snapshot's served files are flushed, then the link swap, then its dir."""
        project = tmp_path / "project"
        project.mkdir()
        base = isolated_home.claude / "projects"
        _memdir(base / sanitize_path(str(project)) / "memory")

        calls = traced(
            memd("prompt", "--path", "--project", str(project)),
            cwd=tmp_path,
            env=isolated_home.env(),
        )

        links = [
            Path(c.target)
            for c in calls
            if c.kind == "rename" and os.path.islink(c.target)
        ]
        assert links, calls
        link = links[-1]
        version = link.parent / os.readlink(link)
        at = calls.index(next(c for c in calls if c.target == str(link)))
        for served in ("prompt.md", "meta.txt"):
            assert Call("sync", str(version / served)) in calls[:at], calls
        assert Call("sync", str(version)) in calls[:at], calls
        assert Call("sync", str(link.parent)) in calls[at + 1 :], calls


class TestReplacedNotRewritten:
    """A write replaces the file: a reader that opened the old one reads it whole.

    An in-place rewrite (open with O_TRUNC, write) would keep the inode and
    show a concurrent reader a truncated or half-written file.
    """

    @staticmethod
    def _opened(path: Path) -> tuple[int, bytes, int]:
        fd = os.open(path, os.O_RDONLY)
        return fd, path.read_bytes(), os.fstat(fd).st_ino

    @staticmethod
    def _assert_replaced(path: Path, opened: tuple[int, bytes, int]) -> None:
        fd, old, inode = opened
        try:
            seen = os.pread(fd, len(old) + 4096, 0)
        finally:
            os.close(fd)

        assert old == seen
        assert inode != path.stat().st_ino

    def test_write_atomic(self, tmp_path: Path) -> None:
        """write_atomic gives the path a new inode; the old one keeps its bytes."""
        from memd.atomic import write_atomic

        target = tmp_path / "file.txt"
        target.write_bytes(b"old " * 1000)
        opened = self._opened(target)

        write_atomic(str(target), b"new")

        self._assert_replaced(target, opened)
        assert b"new" == target.read_bytes()

    def test_state_file(self, tmp_path: Path) -> None:
        """write_state replaces its JSON file."""
        from memd.state import read_state, write_state

        write_state(str(tmp_path), "dreams", {"old": "x" * 1000})
        [path] = [p for p in tmp_path.iterdir() if not p.name.startswith(".")]
        opened = self._opened(path)

        write_state(str(tmp_path), "dreams", {"new": 1})

        self._assert_replaced(path, opened)
        assert {"new": 1} == read_state(str(tmp_path), "dreams")

    def test_memd_fix(self, tmp_path: Path) -> None:
        """`memd fix` replaces the user's files, never rewrites them in place."""
        from memd.cli.main import main

        root = _memdir(tmp_path / "memory")
        opened = [self._opened(root / name) for name in ("MEMORY.md", "b.md")]

        assert 0 == main(["fix", str(root)])

        self._assert_replaced(root / "MEMORY.md", opened[0])
        self._assert_replaced(root / "b.md", opened[1])

    def test_memd_hook_install(self, tmp_path: Path) -> None:
        """`memd hook install` replaces the agent's settings file."""
        from memd.cli.main import main

        project = tmp_path / "project"
        (project / ".claude").mkdir(parents=True)
        settings = project / ".claude" / "settings.local.json"
        settings.write_text('{"permissions": {}}\n')
        opened = self._opened(settings)

        assert 0 == main(["hook", "install", "--project", str(project)])

        self._assert_replaced(settings, opened)


# Every rename in memd, by module and function: the atomic-write primitives,
# and the renames whose durability is argued where they stand.
RENAMES = {
    ("memd/atomic.py", "_replace_at"),  # write_atomic's rename, tested above
    ("memd/snapshot/publish.py", "publish"),  # tested above
    ("memd/snapshot/publish.py", "flush"),  # puts the old link back on a failure
    ("memd/logconfig.py", "rotate_log_file"),  # memd's own log: loss is harmless
    (
        "memd/snapshot/telemetry_sink.py",
        "_rotate_if_full",
    ),  # telemetry: loss is harmless
    ("memd/kairos/daily_log.py", "apply_retention"),  # a move, never a copy
    ("memd/kairos/generations.py", "_commit"),  # commit point; dir fsynced
    ("memd/gitsync/repo.py", "init_repo"),  # a new git dir: a lost init is redone
    # A claim, not a write: one SessionStart takes the loss notice; a claim a
    # crash undoes only tells the loss once more.
    ("memd/history/notice.py", "take_notice"),
    # A restore takes a file away to check it before it goes (a rename is how
    # nothing newer is lost); the parent is fsynced after (restore._put).
    ("memd/history/restore.py", "_take_away"),
    ("memd/history/restore.py", "_swap_by_rename"),
}


def _functions_calling(
    root: Path, is_it: Callable[[ast.Call], bool]
) -> set[tuple[str, str]]:
    """Return (module, function) for every function in memd with a call `is_it`."""
    found = set()
    for relpath, tree in _memd_trees(root):
        for func in ast.walk(tree):
            if isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef) and any(
                isinstance(node, ast.Call) and is_it(node) for node in ast.walk(func)
            ):
                found.add((relpath, func.name))
    return found


@functools.cache
def _memd_trees(root: Path) -> tuple[tuple[str, ast.Module], ...]:
    """Parse memd's modules once for both censuses."""
    return tuple(
        (path.relative_to(root).as_posix(), ast.parse(path.read_text("utf-8")))
        for path in sorted((root / "memd").rglob("*.py"))
    )


def _is_os_rename(call: ast.Call) -> bool:
    return (
        isinstance(call.func, ast.Attribute)
        and call.func.attr in ("replace", "rename", "renames")
        and isinstance(call.func.value, ast.Name)
        and call.func.value.id == "os"
    )


def _is_not_durable(call: ast.Call) -> bool:
    return any(
        k.arg == "durable" and not (isinstance(k.value, ast.Constant) and k.value.value)
        for k in call.keywords
    )


# write_atomic(durable=False) callers: memd's own records, cheap to lose.
NOT_DURABLE = {
    ("memd/hooks/session_state.py", "write_state"),
    ("memd/kairos/external.py", "_run"),  # the dream command's scratch files
    ("memd/kairos/external.py", "_write_tree"),
}


class TestEveryRename:
    ROOT = Path(__file__).resolve().parents[2]

    def test_renames_are_the_known_ones(self) -> None:
        """A new os.replace/os.rename must use write_atomic or be listed and argued."""
        actual = _functions_calling(self.ROOT, _is_os_rename)

        assert RENAMES == actual

    def test_only_the_listed_writes_skip_the_fsyncs(self) -> None:
        """Every write_atomic is durable but memd's own scratch and records."""
        actual = _functions_calling(self.ROOT, _is_not_durable)

        assert NOT_DURABLE == actual
