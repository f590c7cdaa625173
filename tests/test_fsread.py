"""The one bounded reader (memd.fsread): its refusals, and that nothing bypasses it."""

from __future__ import annotations

import ast
import os
import re
import threading
from pathlib import Path

import pytest

from memd.fsread import (
    FileTooLargeError,
    UnsafeFileError,
    list_names,
    open_dir,
    open_regular,
    read_bytes,
    read_prefix,
)

PACKAGE = Path(__file__).resolve().parent.parent / "memd"

# Opens outside memd.fsread, each with why it is not a read of a user path.
ALLOWED_OPENS = {
    ("memd/atomic.py", "os.open"),  # creates memd's own O_EXCL-like temp file
    ("memd/snapshot/publish.py", "os.open"),  # memd's own cache: new files, fsync
    ("memd/cli/main.py", "open"),  # /dev/null for stdout after a broken pipe
    ("memd/mcp_server/lobby.py", "os.open"),  # /dev/null in place of the wire on fd 0
    ("memd/cli/commands/prompt.py", "os.open"),  # /dev/null, same reason
    ("memd/daemon/run.py", "os.walk"),  # memd's own cache tree (lead's module)
    ("memd/gitsync/repo.py", "open"),  # appends to .git/info/exclude of its own repo
    ("memd/logconfig.py", "os.fdopen"),  # wraps the log file fsread.open_regular made
    ("memd/kairos/confine.py", "os.open"),  # /proc, Landlock's O_PATH: stdlib only
    ("memd/kairos/confine.py", "os.listdir"),  # /proc's pids
}
_CALL = re.compile(r"\b(os\.open|os\.fdopen|os\.scandir|os\.listdir|os\.walk|open)\(")


def _calls(path: Path) -> list[tuple[int, str]]:
    """Return (line, callee) of every open/listing call in `path`, by AST."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id == "open":
            found.append((node.lineno, "open"))
        elif (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id == "os"
            and func.attr in ("open", "fdopen", "scandir", "listdir", "walk")
        ):
            found.append((node.lineno, f"os.{func.attr}"))
    return found


def test_every_open_and_listing_goes_through_fsread() -> None:
    """No module but memd.fsread opens a file or lists a directory itself."""
    stray = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE.parent).as_posix()
        if rel == "memd/fsread.py":
            continue
        for line, callee in _calls(path):
            if (rel, callee) not in ALLOWED_OPENS:
                stray.append(f"{rel}:{line}: {callee}(")
    assert [] == stray


def test_the_grep_itself_finds_a_call(tmp_path: Path) -> None:
    """The scan is not vacuous: it sees a plain open( and an os.listdir(."""
    sample = tmp_path / "sample.py"
    sample.write_text("import os\nopen('x')\nos.listdir('.')\n")
    assert [(2, "open"), (3, "os.listdir")] == _calls(sample)
    assert _CALL.search("with open(path) as f:")


def test_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    """A FIFO with no writer is refused at once, for reading and for appending."""
    fifo = tmp_path / "MEMORY.md"
    os.mkfifo(fifo)
    outcome: list[BaseException] = []

    def attempt() -> None:
        for flags in (os.O_RDONLY, os.O_RDWR | os.O_APPEND):
            try:
                os.close(open_regular(str(fifo), flags))
            except UnsafeFileError as error:
                outcome.append(error)

    thread = threading.Thread(target=attempt, daemon=True)
    thread.start()
    thread.join(timeout=5)
    assert not thread.is_alive(), "open_regular blocked on a FIFO"
    assert 2 == len(outcome)
    assert "not a regular file" in str(outcome[0])


def test_symlink_is_refused_unless_followed(tmp_path: Path) -> None:
    """A symlinked file is refused; follow=True reads its regular target."""
    target = tmp_path / "target.md"
    target.write_bytes(b"secret")
    link = tmp_path / "link.md"
    link.symlink_to(target)
    with pytest.raises(UnsafeFileError, match="symlink"):
        read_bytes(str(link))
    assert b"secret" == read_bytes(str(link), follow=True)


def test_symlinked_directory_is_refused(tmp_path: Path) -> None:
    """open_dir refuses a symlink to a directory and a regular file."""
    (tmp_path / "real").mkdir()
    (tmp_path / "logs").symlink_to(tmp_path / "real")
    (tmp_path / "file").write_text("x")
    with pytest.raises(UnsafeFileError, match="symlink"):
        open_dir("logs", dir_fd=open_dir(str(tmp_path)))
    with pytest.raises(UnsafeFileError, match="not a directory"):
        open_dir(str(tmp_path / "file"))


def test_cap_is_enforced(tmp_path: Path) -> None:
    """read_bytes raises past its cap; read_prefix returns only the first bytes."""
    big = tmp_path / "big.md"
    big.write_bytes(b"a" * 10_000)
    with pytest.raises(FileTooLargeError):
        read_bytes(str(big), 9_999)
    assert b"a" * 10_000 == read_bytes(str(big), 10_000)
    assert b"a" * 100 == read_prefix(str(big), 100)


def test_directory_is_not_a_file(tmp_path: Path) -> None:
    """A directory where a file is expected is refused, never read."""
    (tmp_path / "MEMORY.md").mkdir()
    with pytest.raises(UnsafeFileError):
        read_bytes(str(tmp_path / "MEMORY.md"))


def test_list_names_by_path_and_descriptor(tmp_path: Path) -> None:
    """list_names lists a path and an open directory descriptor alike, sorted."""
    for name in ("b.md", "a.md"):
        (tmp_path / name).write_text("x")
    fd = open_dir(str(tmp_path))
    try:
        assert ["a.md", "b.md"] == list_names(fd)
    finally:
        os.close(fd)
    assert ["a.md", "b.md"] == list_names(str(tmp_path))


# -- the beneath-opener --------------------------------------------------------

RENAME_EXCHANGE = 2


def _renameat2() -> object:
    """Return libc's renameat2, or fail: the race needs a real atomic exchange."""
    import ctypes
    import ctypes.util

    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    func = getattr(libc, "renameat2", None)
    if func is None:
        pytest.fail("libc has no renameat2 (glibc >= 2.28 is needed)")
    func.argtypes = [
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_uint,
    ]
    return func


def exchange_forever(first: Path, second: Path, stop: threading.Event) -> int:
    """Swap two names atomically until `stop`; return how many swaps were made."""
    renameat2 = _renameat2()
    at_fdcwd = -100
    swaps = 0
    while not stop.is_set():
        if (
            renameat2(  # type: ignore[operator]
                at_fdcwd, bytes(first), at_fdcwd, bytes(second), RENAME_EXCHANGE
            )
            == 0
        ):
            swaps += 1
    return swaps


class TestBeneath:
    def test_a_link_at_any_component_is_refused(self, tmp_path: Path) -> None:
        """A linked folder, a linked file and a climbing relpath all fail."""
        from memd.fsread import open_beneath, read_beneath, split_beneath

        root, outside = tmp_path / "root", tmp_path / "outside"
        (root / "a" / "b").mkdir(parents=True)
        outside.mkdir()
        (outside / "x.md").write_text("OUTSIDE")
        (root / "a" / "b" / "in.md").write_text("inside")
        (root / "a" / "link").symlink_to(outside)
        (root / "a" / "b" / "file-link.md").symlink_to(outside / "x.md")
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
        try:
            assert b"inside" == read_beneath(fd, "a/b/in.md")
            for relpath in ("a/link/x.md", "a/b/file-link.md"):
                with pytest.raises(UnsafeFileError, match="symlink"):
                    read_beneath(fd, relpath)
            for relpath in ("../outside/x.md", "a/../../outside/x.md", "/etc/passwd"):
                with pytest.raises(UnsafeFileError):
                    open_beneath(fd, relpath)
            with pytest.raises(UnsafeFileError):
                split_beneath("a//b")
        finally:
            os.close(fd)

    def test_a_write_never_lands_through_a_linked_folder(self, tmp_path: Path) -> None:
        """A linked parent is refused; a link at the final name is replaced."""
        from memd.atomic import remove_beneath, write_atomic_beneath

        root, outside = tmp_path / "root", tmp_path / "outside"
        root.mkdir()
        outside.mkdir()
        (outside / "x.md").write_text("OUTSIDE")
        (root / "sub").symlink_to(outside)
        (root / "name.md").symlink_to(outside / "x.md")
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
        try:
            with pytest.raises(UnsafeFileError):
                write_atomic_beneath(fd, "sub/x.md", b"new", make_dirs=True)
            with pytest.raises(UnsafeFileError):
                remove_beneath(fd, "sub/x.md")
            write_atomic_beneath(fd, "name.md", b"replaced")
            write_atomic_beneath(fd, "new/deep/y.md", b"made", make_dirs=True)
            remove_beneath(fd, "new/deep/y.md", prune_empty=True)
        finally:
            os.close(fd)

        assert "OUTSIDE" == (outside / "x.md").read_text()
        assert ["x.md"] == sorted(p.name for p in outside.iterdir())
        assert (b"replaced", False) == (
            (root / "name.md").read_bytes(),
            (root / "name.md").is_symlink(),
        )
        assert not (root / "new").exists()

    def test_a_swap_with_a_link_never_leads_outside(self, tmp_path: Path) -> None:
        """A thread exchanges `sub` and a link out (renameat2): no outside byte."""
        from memd.fsread import read_beneath

        root, outside = tmp_path / "root", tmp_path / "outside"
        (root / "sub").mkdir(parents=True)
        outside.mkdir()
        (root / "sub" / "x.md").write_text("inside")
        (outside / "x.md").write_text("OUTSIDE")
        (root / "swap").symlink_to(outside)
        stop = threading.Event()
        swaps: list[int] = []
        swapper = threading.Thread(
            target=lambda: swaps.append(
                exchange_forever(root / "sub", root / "swap", stop)
            )
        )
        seen: dict[str, int] = {}
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
        swapper.start()
        try:
            for _ in range(20_000):
                try:
                    key = read_beneath(fd, "sub/x.md").decode()
                except OSError as error:
                    key = f"errno {error.errno}"
                seen[key] = seen.get(key, 0) + 1
        finally:
            stop.set()
            swapper.join()
            os.close(fd)

        assert "OUTSIDE" not in seen
        assert seen.get("inside", 0) > 0
        assert swaps[0] > 0


class TestRefusalReason:
    """One wording of the reader's refusals: a cap is never "not a regular file"."""

    def test_a_cap_names_the_size_and_the_cap(self, tmp_path: Path) -> None:
        from memd.fsread import FileTooLargeError, read_bytes, refusal_reason

        big = tmp_path / "big.md"
        big.write_bytes(b"x" * 5000)
        with pytest.raises(FileTooLargeError) as caught:
            read_bytes(str(big), 4096)

        assert (5000, 4096) == (caught.value.size, caught.value.limit)
        assert (
            "5,000 bytes, over memd's cap of 4,096 bytes for one file; not read"
            == refusal_reason(caught.value)
        )

    def test_a_fifo_a_link_and_a_missing_file(self, tmp_path: Path) -> None:
        from memd.fsread import read_bytes, refusal_reason

        os.mkfifo(tmp_path / "fifo")
        (tmp_path / "link").symlink_to(tmp_path / "fifo")
        reasons = {}
        for name in ("fifo", "link", "missing"):
            with pytest.raises(OSError) as caught:  # noqa: PT011 -- three kinds
                read_bytes(str(tmp_path / name))
            reasons[name] = refusal_reason(caught.value)

        assert reasons["fifo"].startswith("not a regular file")
        assert reasons["link"].startswith("a symlink")
        assert reasons["missing"].startswith("cannot be read (")
