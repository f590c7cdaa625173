"""memd.state: atomic JSON files in the state directory."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from memd.atomic import TEMP_PREFIX
from memd.state import (
    MAX_KNOWN_PROJECTS,
    known_projects,
    read_state,
    remember_project,
    write_state,
)
from tests.conftest import as_nobody

UNPRIVILEGED_WRITER = """
import sys
from memd.state import write_state
try:
    write_state(sys.argv[1], "daemon", {"new": True})
except OSError as error:
    print(type(error).__name__)
else:
    print("written")
"""


class TestReadWrite:
    def test_round_trip_creates_the_directory(self, tmp_path: Path) -> None:
        """write_state creates the state dir and read_state reads the same object."""
        state = tmp_path / "state" / "memd"
        data: dict[str, object] = {"pid": 42, "dirs": ["/a"], "name": "é"}

        write_state(str(state), "daemon", data)

        assert data == read_state(str(state), "daemon")
        assert data == json.loads((state / "daemon.json").read_text("utf-8"))

    def test_name_with_or_without_suffix(self, tmp_path: Path) -> None:
        """ "dreams" and "dreams.json" name the same file."""
        write_state(str(tmp_path), "dreams.json", {"a": 1})

        assert {"a": 1} == read_state(str(tmp_path), "dreams")

    def test_files_are_private_and_leave_no_temp(self, tmp_path: Path) -> None:
        """State files are 0600 and no temp file survives a write."""
        write_state(str(tmp_path), "daemon", {"x": 1})
        write_state(str(tmp_path), "daemon", {"x": 2})

        assert 0o600 == (tmp_path / "daemon.json").stat().st_mode & 0o777
        assert ["daemon.json"] == os.listdir(tmp_path)
        assert not any(n.startswith(TEMP_PREFIX) for n in os.listdir(tmp_path))

    @pytest.mark.parametrize(
        "content",
        [b"", b"{not json", b"[1, 2]", b"\xff\xfe", b'"text"'],
    )
    def test_corrupt_file_reads_as_empty(self, tmp_path: Path, content: bytes) -> None:
        """Truncated, non-object or non-UTF-8 state reads as {}."""
        (tmp_path / "daemon.json").write_bytes(content)

        assert {} == read_state(str(tmp_path), "daemon")

    def test_missing_file_and_dir_read_as_empty(self, tmp_path: Path) -> None:
        """No state yet is {}, not an error."""
        assert {} == read_state(str(tmp_path / "nope"), "daemon")

    @pytest.mark.parametrize("name", ["", "../x", "a/b", ".hidden"])
    def test_names_cannot_leave_the_directory(self, tmp_path: Path, name: str) -> None:
        """A state name is a plain file name, never a path."""
        with pytest.raises(ValueError, match="not a state file name"):
            write_state(str(tmp_path), name, {})

    def test_unwritable_directory_raises_and_keeps_old_state(self) -> None:
        """A failed write raises PermissionError and the previous file is intact.

        The writer is a subprocess; as root (CI) it drops to nobody first, since
        root writes anywhere.
        """
        base = Path(tempfile.mkdtemp(prefix="memd-state-"))
        try:
            write_state(str(base), "daemon", {"old": True})
            base.chmod(0o555)  # nobody and the owner may list, not create
            argv = [sys.executable, "-c", UNPRIVILEGED_WRITER, str(base)]
            done = subprocess.run(
                as_nobody(*argv) if os.geteuid() == 0 else argv,
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
            )
            assert "PermissionError" == done.stdout.strip(), done.stderr
            assert [] == [p.name for p in base.iterdir() if p.name != "daemon.json"]
            base.chmod(0o700)
            assert {"old": True} == read_state(str(base), "daemon")
        finally:
            base.chmod(0o700)
            shutil.rmtree(base)

    def test_state_dir_that_is_a_file_raises(self, tmp_path: Path) -> None:
        """A state dir path taken by a regular file is an OSError, not silent loss."""
        blocker = tmp_path / "state"
        blocker.write_text("not a directory")

        with pytest.raises(FileExistsError):
            write_state(str(blocker), "daemon", {"x": 1})

        assert "not a directory" == blocker.read_text()

    def test_unencodable_data_raises_type_error_and_writes_nothing(
        self, tmp_path: Path
    ) -> None:
        """Data JSON cannot encode is a TypeError before any file is touched."""
        with pytest.raises(TypeError):
            write_state(str(tmp_path), "daemon", {"x": object()})

        assert [] == os.listdir(tmp_path)


class TestKnownProjects:
    def test_most_recent_first_without_duplicates(self, tmp_path: Path) -> None:
        """Remembering a known project moves it to the front."""
        for root in ("/a", "/b", "/c", "/a"):
            remember_project(str(tmp_path), root)

        assert ("/a", "/c", "/b") == known_projects(str(tmp_path))

    def test_bounded(self, tmp_path: Path) -> None:
        """Only the most recent `limit` projects are kept."""
        for number in range(5):
            remember_project(str(tmp_path), f"/p{number}", limit=3)

        assert ("/p4", "/p3", "/p2") == known_projects(str(tmp_path))

    def test_default_bound(self) -> None:
        """The default bound keeps the file small."""
        assert 200 == MAX_KNOWN_PROJECTS

    def test_relative_root_is_made_absolute(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A relative project root is stored as an absolute path."""
        monkeypatch.chdir(tmp_path)

        remember_project(str(tmp_path / "state"), "proj")

        assert (str(tmp_path / "proj"),) == known_projects(str(tmp_path / "state"))

    def test_repeat_of_the_first_does_not_rewrite(self, tmp_path: Path) -> None:
        """Asking again about the most recent project leaves the file alone."""
        remember_project(str(tmp_path), "/a")
        path = tmp_path / "projects.json"
        before = path.stat().st_ino

        remember_project(str(tmp_path), "/a")

        assert before == path.stat().st_ino

    def test_garbage_entries_are_ignored(self, tmp_path: Path) -> None:
        """Non-strings, relative paths and duplicates in a hand-edited file go."""
        (tmp_path / "projects.json").write_text(
            json.dumps({"projects": ["/a", 3, "rel", "/a", None, "/b"]})
        )

        assert ("/a", "/b") == known_projects(str(tmp_path))

    def test_corrupt_file_starts_over(self, tmp_path: Path) -> None:
        """A corrupt projects.json is replaced by a good one on the next remember."""
        (tmp_path / "projects.json").write_text("{")

        remember_project(str(tmp_path), "/z")

        assert ("/z",) == known_projects(str(tmp_path))
