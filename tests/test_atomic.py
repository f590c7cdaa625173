"""memd.atomic.write_atomic in-process: where its temp file lives, modes, failure.

Durability itself (the fsyncs) is watched on the real syscalls in
tests/reliability/test_durability.py.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from memd.atomic import TEMP_PREFIX, remove_stale_temp_files, write_atomic


@pytest.fixture(name="umask_022")
def _umask_022() -> Iterator[None]:
    old = os.umask(0o022)
    yield
    os.umask(old)


def _temps(directory: Path) -> list[str]:
    return [n for n in os.listdir(directory) if n.startswith(TEMP_PREFIX)]


class TestWriteAtomic:
    def test_the_temp_file_lives_beside_the_target(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A deleted working directory does not matter: the temp is in the target's."""
        gone = tmp_path / "gone"
        gone.mkdir()
        monkeypatch.chdir(gone)
        gone.rmdir()
        target = tmp_path / "dir" / "file.md"
        target.parent.mkdir()

        write_atomic(str(target), b"data")

        assert b"data" == target.read_bytes()

    def test_a_bare_name_is_written_in_the_working_directory(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """`write_atomic("name")` writes ./name, no temp left behind."""
        monkeypatch.chdir(tmp_path)

        write_atomic("name.json", b"{}")

        assert (b"{}", []) == ((tmp_path / "name.json").read_bytes(), _temps(tmp_path))

    @pytest.mark.usefixtures("umask_022")
    def test_an_existing_files_mode_is_kept(self, tmp_path: Path) -> None:
        """A 0600 file stays 0600 (and setgid-free) after a replace."""
        target = tmp_path / "secret.json"
        target.write_bytes(b"old")
        target.chmod(0o600)

        write_atomic(str(target), b"new")

        assert 0o600 == stat.S_IMODE(target.stat().st_mode)

    @pytest.mark.usefixtures("umask_022")
    def test_a_new_file_is_0644_or_the_mode_given(self, tmp_path: Path) -> None:
        """Without a file to copy the mode from: 0644, or `mode`."""
        write_atomic(str(tmp_path / "a"), b"x")
        write_atomic(str(tmp_path / "b"), b"x", mode=0o600)

        assert (0o644, 0o600) == (
            stat.S_IMODE((tmp_path / "a").stat().st_mode),
            stat.S_IMODE((tmp_path / "b").stat().st_mode),
        )

    def test_a_failed_rename_leaves_no_temp_and_the_target_intact(
        self, tmp_path: Path
    ) -> None:
        """Replacing a directory fails with OSError; its temp file is removed."""
        target = tmp_path / "is-a-dir"
        target.mkdir()
        (target / "inside").write_bytes(b"kept")

        with pytest.raises(OSError, match="directory"):
            write_atomic(str(target), b"x")

        assert ([], b"kept") == (_temps(tmp_path), (target / "inside").read_bytes())

    def test_large_data_is_written_whole(self, tmp_path: Path) -> None:
        """Eight MiB arrive byte for byte."""
        data = os.urandom(8 << 20)

        write_atomic(str(tmp_path / "big"), data)

        assert data == (tmp_path / "big").read_bytes()


class TestRemoveStaleTempFiles:
    def test_only_old_temp_files_go(self, tmp_path: Path) -> None:
        """A temp file older than the grace goes; a fresh one and other files stay."""
        old, fresh = tmp_path / f"{TEMP_PREFIX}old", tmp_path / f"{TEMP_PREFIX}new"
        other = tmp_path / "MEMORY.md"
        for path in (old, fresh, other):
            path.write_bytes(b"x")
        os.utime(old, (1, 1))
        os.utime(other, (1, 1))

        removed = remove_stale_temp_files(str(tmp_path), older_than_seconds=60)

        assert (1, [fresh.name]) == (removed, _temps(tmp_path))
        assert other.exists()
