"""Hostile input (SPEC §11): each case gets a diagnostic, nothing raises or blocks.

The committed corpus lives in tests/hostile/; filesystem-level cases (a 50 MB
file, symlinks out and in loops, unreadable files, FIFOs, files that vanish
mid-read) are built here in temporary directories.

Unreadable files: root ignores `chmod 000`, so when the tests run as root the
loader runs in a subprocess under `setpriv` without CAP_DAC_OVERRIDE and
CAP_DAC_READ_SEARCH, where the permission bits bite as they would for a user.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memd.diagnostics import Severity
from memd.memory.index import normalize_target, parse_index
from memd.memory.memdir import MemDir, ParseCache
from memd.memory.memfile import parse_memory_file
from memd.memory.reader import load_memdir
from tests.conftest import MemDirMaker

CORPUS = Path(__file__).parent / "hostile"
EXPECTED = {
    "alias_bomb.md": ["M002"],
    "alias_loop.md": ["M002"],
    "unparsable.md": ["M002"],
    "not_mapping.md": ["M004"],
    "scalar_root.md": ["M004"],
    "empty.md": ["M001"],
    "bom_crlf.md": ["F007", "F006"],
    "invalid_utf8.md": ["F001"],
    "nul_bytes.md": ["F002"],
    "binary.md": ["F002"],
    "python_tag.md": ["M002"],
    "unclosed.md": ["M003"],
    "bad_date.md": ["M002"],
    "late_close.md": ["M003"],
}
CANARY = "TOP-CANARY-7c1e0b9a-never-read"


def codes(memdir: MemDir) -> list[tuple[str, str]]:
    return [(d.code, d.path) for d in memdir.diagnostics]


def copy_corpus(root: Path) -> None:
    for name in EXPECTED:
        shutil.copyfile(CORPUS / name, root / name)


class TestCorpus:
    def test_every_corpus_file_is_listed(self) -> None:
        """The table names every committed hostile file, so none goes untested."""
        committed = {p.name for p in CORPUS.iterdir() if p.suffix == ".md"}

        assert committed - {"README.md"} == set(EXPECTED)

    @pytest.mark.parametrize("name", sorted(EXPECTED))
    def test_parse(self, name: str) -> None:
        """Each hostile file parses to exactly its expected diagnostics."""
        parsed = parse_memory_file(name, (CORPUS / name).read_bytes())

        assert EXPECTED[name] == [d.code for d in parsed.diagnostics]

    def test_whole_corpus_as_a_memory_dir(self, make_memdir: MemDirMaker) -> None:
        """Loading all of it at once gives every file its diagnostics."""
        copy_corpus(make_memdir.root)

        memdir = load_memdir(str(make_memdir.root))

        found = {f.relpath: [d.code for d in f.diagnostics] for f in memdir.files}
        assert EXPECTED == found
        assert () == memdir.diagnostics

    def test_bom_crlf_file_is_still_valid(self) -> None:
        """A BOM and CRLF are only infos: the file keeps its meaning."""
        parsed = parse_memory_file("x.md", (CORPUS / "bom_crlf.md").read_bytes())

        assert ("Windows file", "reference") == (parsed.name, parsed.type)
        assert all(d.severity is Severity.INFO for d in parsed.diagnostics)


class TestHugeFiles:
    def test_50_mb_topic_file(self, make_memdir: MemDirMaker) -> None:
        """A 50 MB file is reported, its frontmatter still read, memory bounded."""
        path = make_memdir.root / "huge.md"
        with path.open("wb") as out:
            out.write(b"---\nname: huge\ndescription: a giant file\ntype: user\n---\n")
            line = b"x" * 1023 + b"\n"
            out.writelines([line * 1024] * 50)
        tracemalloc.start()
        try:
            memdir = load_memdir(str(make_memdir.root))
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()

        assert [("F003", "huge.md")] == codes(memdir)
        assert Severity.WARNING == memdir.diagnostics[0].severity
        assert ("huge", True) == (memdir.files[0].name, memdir.files[0].was_truncated)
        assert len(memdir.files[0].body) < 256 * 1024
        assert peak < 8 * 1024 * 1024

    def test_huge_single_line_is_cut_on_a_character(
        self, make_memdir: MemDirMaker
    ) -> None:
        """A file with no newline is cut without splitting a UTF-8 character."""
        make_memdir.write("wide.md", "\u00e9" * 200_000)

        memdir = load_memdir(str(make_memdir.root), max_file_bytes=1001)

        assert [] == [d.code for d in memdir.files[0].diagnostics if d.code == "F001"]
        assert [("F003", "wide.md")] == codes(memdir)

    def test_huge_frontmatter(self, make_memdir: MemDirMaker) -> None:
        """A frontmatter over 64 KiB is refused before any YAML parsing."""
        make_memdir.write("fm.md", "---\n" + "k: v\n" * 20_000 + "---\nbody\n")

        memdir = load_memdir(str(make_memdir.root))

        assert ["M002"] == [d.code for d in memdir.files[0].diagnostics]


class TestSymlinks:
    def test_symlink_to_a_secret_outside(
        self, make_memdir: MemDirMaker, tmp_path: Path
    ) -> None:
        """A symlink out of the directory is an error; its content appears nowhere."""
        secret = tmp_path / "secret.md"
        secret.write_text(
            f"---\nname: {CANARY}\ndescription: {CANARY}\n---\n{CANARY}\n"
        )
        (make_memdir.root / "leak.md").symlink_to(secret)
        (make_memdir.root / "MEMORY.md").symlink_to(secret)

        memdir = load_memdir(str(make_memdir.root))

        assert [("F004", "MEMORY.md"), ("F004", "leak.md")] == codes(memdir)
        assert all(d.severity is Severity.ERROR for d in memdir.diagnostics)
        assert CANARY not in repr(memdir)
        assert memdir.index_text is None
        assert str(secret) not in {i.path for i in memdir.inputs}

    def test_symlinked_directory_outside(
        self, make_memdir: MemDirMaker, tmp_path: Path
    ) -> None:
        """A symlinked directory pointing out is reported and never listed."""
        outside = tmp_path / "outside"
        outside.mkdir()
        (outside / "s.md").write_text(CANARY)
        (make_memdir.root / "team").symlink_to(outside)

        memdir = load_memdir(str(make_memdir.root))

        assert [("F004", "team")] == codes(memdir)
        assert CANARY not in repr(memdir)

    def test_relative_escape(self, make_memdir: MemDirMaker, tmp_path: Path) -> None:
        """A relative `../` symlink is resolved and caught like an absolute one."""
        (tmp_path / "s.md").write_text(CANARY)
        (make_memdir.root / "rel.md").symlink_to("../s.md")

        memdir = load_memdir(str(make_memdir.root))

        assert [("F004", "rel.md")] == codes(memdir)
        assert CANARY not in repr(memdir)

    def test_symlink_loop_and_dangling(self, make_memdir: MemDirMaker) -> None:
        """Looping and dangling symlinks are unreadable files, not crashes."""
        (make_memdir.root / "loop1.md").symlink_to("loop2.md")
        (make_memdir.root / "loop2.md").symlink_to("loop1.md")
        (make_memdir.root / "self.md").symlink_to("self.md")
        (make_memdir.root / "gone.md").symlink_to("nothing-here.md")
        (make_memdir.root / "dirloop").symlink_to(".")

        memdir = load_memdir(str(make_memdir.root))

        assert [
            ("F005", "gone.md"),
            ("F005", "loop1.md"),
            ("F005", "loop2.md"),
            ("F005", "self.md"),
        ] == codes(memdir)
        assert ("gone.md", "loop1.md", "loop2.md", "self.md") == memdir.unreadable_paths


def load_in_thread(path: Path, cache: ParseCache | None = None) -> MemDir:
    """Load in a thread and fail, rather than hang, if the load blocks."""
    result: list[MemDir] = []
    worker = threading.Thread(
        target=lambda: result.append(load_memdir(str(path), cache=cache)), daemon=True
    )
    worker.start()
    worker.join(timeout=30)

    assert not worker.is_alive(), "load_memdir blocked"
    return result[0]


class TestSpecialFiles:
    def test_fifo_is_never_opened(self, make_memdir: MemDirMaker) -> None:
        """A FIFO named like a topic file is reported, not opened (open would block)."""
        os.mkfifo(make_memdir.root / "pipe.md")
        os.mkfifo(make_memdir.root / "MEMORY.md")

        memdir = load_in_thread(make_memdir.root)

        assert [("F005", "MEMORY.md"), ("F005", "pipe.md")] == codes(memdir)
        assert memdir.index_text is None

    def test_file_deleted_between_listing_and_reading(
        self, make_memdir: MemDirMaker
    ) -> None:
        """A file removed after the listing is silently absent."""
        doomed = make_memdir.topic("doomed.md", name="d", description="d", type="user")
        make_memdir.topic("kept.md", name="k", description="k", type="user")

        class DeletingCache(ParseCache):
            # get() runs after the listing and the stat, just before open().
            def get(self, path: str, key: tuple[int, int, int, int, int]) -> None:
                if path == str(doomed):
                    doomed.unlink()

        memdir = load_memdir(str(make_memdir.root), cache=DeletingCache())

        assert (["kept.md"], []) == ([f.relpath for f in memdir.files], codes(memdir))

    def test_file_swapped_for_a_fifo_mid_read(self, make_memdir: MemDirMaker) -> None:
        """A file replaced by a FIFO between stat and open never blocks the load."""
        path = make_memdir.topic("swap.md", name="s", description="s", type="user")

        class SwappingCache(ParseCache):
            def get(self, p: str, key: tuple[int, int, int, int, int]) -> None:
                if p == str(path):
                    path.unlink()
                    os.mkfifo(path)

        memdir = load_in_thread(make_memdir.root, SwappingCache())

        assert [("F005", "swap.md")] == codes(memdir)

    def test_directory_swapped_for_a_symlink(
        self, make_memdir: MemDirMaker, tmp_path: Path
    ) -> None:
        """A directory replaced by a symlink out mid-walk is never entered."""
        make_memdir.topic("a.md", name="a", description="a", type="user")
        make_memdir.topic("team/t.md", name="t", description="t", type="user")
        outside = tmp_path / "outside"
        outside.mkdir()
        (outside / "s.md").write_text(CANARY)
        team = make_memdir.root / "team"

        class SwappingCache(ParseCache):
            def get(self, p: str, key: tuple[int, int, int, int, int]) -> None:
                if p.endswith("a.md") and team.is_dir() and not team.is_symlink():
                    shutil.rmtree(team)
                    team.symlink_to(outside)

        memdir = load_memdir(str(make_memdir.root), cache=SwappingCache())

        assert CANARY not in repr(memdir)
        assert [("F005", "team")] == codes(memdir)

    def test_symlink_target_directory_swapped(
        self, make_memdir: MemDirMaker, tmp_path: Path
    ) -> None:
        """A link's target dir swapped for a link out after the check is never read."""
        make_memdir.topic("team/real.md", name="r", description="r", type="user")
        (make_memdir.root / "alias.md").symlink_to("team/real.md")
        outside = tmp_path / "outside"
        outside.mkdir()
        (outside / "real.md").write_text(CANARY)
        team = make_memdir.root / "team"

        class SwappingCache(ParseCache):
            def get(self, p: str, key: tuple[int, int, int, int, int]) -> None:
                if p.endswith("alias.md"):
                    shutil.rmtree(team)
                    team.symlink_to(outside)

        memdir = load_memdir(str(make_memdir.root), cache=SwappingCache())

        assert CANARY not in repr(memdir)
        assert [("F005", "alias.md"), ("F005", "team")] == codes(memdir)


UNPRIVILEGED_LOADER = """
import json, sys
from memd.memory.reader import load_memdir
m = load_memdir(sys.argv[1])
print(json.dumps({
    "diagnostics": [[d.code, d.path] for d in m.diagnostics],
    "files": [f.relpath for f in m.files],
    "index": m.index_text,
    "index_size": [i.size for i in m.inputs if i.path.endswith("/MEMORY.md")],
}))
"""


def load_unprivileged(path: Path) -> dict[str, object]:
    """Run load_memdir where permission bits apply (dropping root's overrides)."""
    prefix: list[str] = []
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("running as root, which reads chmod 000 files, without setpriv")
        prefix = [setpriv, "--bounding-set", "-dac_override,-dac_read_search"]
    result = subprocess.run(
        [*prefix, sys.executable, "-c", UNPRIVILEGED_LOADER, str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    loaded: dict[str, object] = json.loads(result.stdout)
    return loaded


class TestUnreadable:
    def test_chmod_000_file_and_dir(self, make_memdir: MemDirMaker) -> None:
        """Unreadable files and directories are F005 errors; the rest still loads."""
        make_memdir.topic("ok.md", name="ok", description="ok", type="user")
        locked = make_memdir.topic("locked.md", name="l", description="l", type="user")
        make_memdir.topic("team/inner.md", name="i", description="i", type="user")
        index = make_memdir.write("MEMORY.md", "- [ok](ok.md)\n")
        team = make_memdir.root / "team"
        for path in (locked, team, index):
            path.chmod(0)
        try:
            loaded = load_unprivileged(make_memdir.root)
        finally:
            for path in (locked, team, index):
                path.chmod(0o755)

        assert {
            "diagnostics": [
                ["F005", "MEMORY.md"],
                ["F005", "locked.md"],
                ["F005", "team"],
            ],
            "files": ["ok.md"],
            "index": None,
            "index_size": [len("- [ok](ok.md)\n")],
        } == loaded

    def test_unreadable_root(self, make_memdir: MemDirMaker) -> None:
        """An unreadable memory directory is one F005 on the directory itself."""
        make_memdir.topic("ok.md", name="ok", description="ok", type="user")
        make_memdir.root.chmod(0)
        try:
            loaded = load_unprivileged(make_memdir.root)
        finally:
            make_memdir.root.chmod(0o755)

        assert {
            "diagnostics": [["F005", "."]],
            "files": [],
            "index": None,
            "index_size": [-1],
        } == loaded


class TestIndexLinks:
    def test_links_that_leave_are_never_followed(self) -> None:
        """Index links with `../`, absolute paths or URLs normalise to None."""
        text = (
            "- [Up](../../.ssh/id_rsa) \u2014 x\n"
            "- [Abs](/etc/shadow) \u2014 x\n"
            "- [Url](https://evil.example/x.md) \u2014 x\n"
            "- [File](file:///etc/passwd) \u2014 x\n"
            "- [Enc](%2e%2e%2fsecret.md) \u2014 x\n"
        )

        entries = parse_index(text)

        assert [None] * 5 == [normalize_target(e.target) for e in entries]


class TestNeverRaises:
    @settings(max_examples=40)
    @given(st.lists(st.binary(max_size=300), min_size=1, max_size=4))
    def test_load_memdir_on_arbitrary_files(self, contents: list[bytes]) -> None:
        """Arbitrary bytes as topic files and index load without raising."""
        import tempfile

        with tempfile.TemporaryDirectory() as raw:
            root = Path(raw)
            for i, data in enumerate(contents):
                (root / f"f{i}.md").write_bytes(data)
            (root / "MEMORY.md").write_bytes(contents[0])

            memdir = load_memdir(str(root))

        assert len(contents) == len(memdir.files)
