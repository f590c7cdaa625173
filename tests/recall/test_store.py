"""memd.recall.store: the daemon's incremental update, the CLI's stat refresh, rebuilds.

Tested as snapshots are: real files in temp dirs, a real SQLite database,
every expected value written by hand.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from memd.memory.reader import load_memdir
from memd.racy import RACY_WINDOW_NS
from memd.recall.index import RecallIndex, open_index, recall, stat_signature
from memd.recall.store import index_path
from tests.conftest import MemDirMaker


def relpaths(hits: tuple[object, ...]) -> list[str]:
    return [h.relpath for h in hits]  # type: ignore[attr-defined]


def _index(tmp_path: Path) -> RecallIndex:
    return open_index(str(tmp_path / "cache"))


def _seed(make_memdir: MemDirMaker) -> None:
    make_memdir.topic(
        "feedback_db.md",
        name="Real database in tests",
        description="Integration tests must hit a real Postgres, never mocks",
        type="feedback",
        body="Use the docker Postgres.\n",
    )
    make_memdir.topic(
        "project_deploy.md",
        name="部署流程",
        description="生产环境部署前必须先在预发布环境验证",
        type="project",
        body="每次发布前先跑冒烟测试。\n",
    )
    make_memdir.topic(
        "user_role.md",
        name="Role",
        description="The user is a data scientist new to Rust",
        type="user",
    )


class TestDaemonPath:
    def test_update_from_a_read_memdir(
        self, make_memdir: MemDirMaker, tmp_path: Path
    ) -> None:
        """The daemon's MemDir goes in whole; English and Chinese queries find it."""
        _seed(make_memdir)
        with _index(tmp_path) as index:
            written = index.update(load_memdir(str(make_memdir.root)))

            english = index.search("should tests use mocks?")
            chinese = index.search("怎么部署到生产环境")

        assert 3 == written
        assert ["feedback_db.md"] == relpaths(english)
        assert ["project_deploy.md"] == relpaths(chinese)

    def test_changed_relpaths_only(
        self, make_memdir: MemDirMaker, tmp_path: Path
    ) -> None:
        """One saved file rewrites one row; a deleted one is gone from results."""
        _seed(make_memdir)
        root = str(make_memdir.root)
        with _index(tmp_path) as index:
            first = load_memdir(root)
            index.update(first, owner_pid=os.getpid())
            make_memdir.topic(
                "user_role.md",
                name="Role",
                description="The user is a Kubernetes operator",
                type="user",
            )
            (make_memdir.root / "feedback_db.md").unlink()
            changed = frozenset({"user_role.md", "feedback_db.md"})
            second = load_memdir(root, previous=first, changed=changed)

            written = index.update(second, changed=changed, owner_pid=os.getpid())
            kubernetes = index.search("kubernetes")
            mocks = index.search("mocks")

        assert 2 == written
        assert ["user_role.md"] == relpaths(kubernetes)
        assert [] == relpaths(mocks)

    def test_unchanged_directory_writes_nothing(
        self, make_memdir: MemDirMaker, tmp_path: Path
    ) -> None:
        """A pass with nothing new touches no row."""
        _seed(make_memdir)
        with _index(tmp_path) as index:
            index.update(load_memdir(str(make_memdir.root)))

            again = index.update(load_memdir(str(make_memdir.root)))

        assert 0 == again

    def test_type_filter_and_limit(
        self, make_memdir: MemDirMaker, tmp_path: Path
    ) -> None:
        """--type keeps one type; --limit cuts the list."""
        _seed(make_memdir)
        with _index(tmp_path) as index:
            index.update(load_memdir(str(make_memdir.root)))

            typed = index.search("user tests postgres", memory_type="user")
            limited = index.search("user tests postgres rust", limit=1)

        assert ["user_role.md"] == relpaths(typed)
        assert 1 == len(limited)

    def test_directories_and_type_narrow_the_ranking(self, tmp_path: Path) -> None:
        """Any set of directories (few, many, every one) and a type: only their rows.

        Few directories are narrowed inside FTS5, more than 32 after ranking;
        either way no other directory's row comes back, and none is missing.
        """
        dirs = []
        for number in range(40):
            memory_dir = tmp_path / f"project{number:02d}"
            memory_dir.mkdir()
            kind = "user" if number % 2 else "project"
            (memory_dir / "kafka.md").write_text(
                f"---\nname: Kafka {number}\ndescription: Kafka topic retention "
                f"for project {number}\ntype: {kind}\n---\nKeep seven days.\n"
            )
            dirs.append(str(memory_dir))
        with _index(tmp_path) as index:
            for memory_dir in dirs:
                index.update(load_memdir(memory_dir))

            def found(where: list[str] | None, kind: str | None = None) -> set[str]:
                hits = index.search(
                    "kafka retention", memory_dirs=where, limit=50, memory_type=kind
                )
                return {os.path.basename(h.memory_dir) for h in hits}

            few = found(dirs[:3])
            many = found(dirs[:35])
            every = found(dirs)
            few_users = found(dirs[:4], "user")
            many_users = found(dirs[:35], "user")
            unknown_type = found(None, "secret")

        assert {"project00", "project01", "project02"} == few
        assert {f"project{n:02d}" for n in range(35)} == many
        assert {f"project{n:02d}" for n in range(40)} == every
        assert {"project01", "project03"} == few_users
        assert {f"project{n:02d}" for n in range(1, 35, 2)} == many_users
        assert set() == unknown_type


class TestCliPath:
    def test_saved_file_is_found_without_a_daemon(
        self, make_memdir: MemDirMaker, tmp_path: Path
    ) -> None:
        """A file saved after the index was built is found on the next recall."""
        _seed(make_memdir)
        root = str(make_memdir.root)
        with _index(tmp_path) as index:
            before = recall(index, "kafka", (root,))
            make_memdir.topic(
                "reference_kafka.md",
                name="Kafka dashboards",
                description="Consumer lag for the kafka cluster lives in Grafana",
                type="reference",
            )
            after = recall(index, "kafka", (root,))

        assert [] == relpaths(before)
        assert ["reference_kafka.md"] == relpaths(after)

    def test_deleted_file_never_returns(
        self, make_memdir: MemDirMaker, tmp_path: Path
    ) -> None:
        """A deleted file is dropped on the next recall, even with a racy stat."""
        _seed(make_memdir)
        root = str(make_memdir.root)
        with _index(tmp_path) as index:
            first = recall(index, "postgres", (root,))
            (make_memdir.root / "feedback_db.md").unlink()
            second = recall(index, "postgres", (root,))

        assert ["feedback_db.md"] == relpaths(first)
        assert [] == relpaths(second)

    def test_in_place_edit_within_one_tick(
        self, make_memdir: MemDirMaker, tmp_path: Path
    ) -> None:
        """Rewriting a file in place, same size and mtime, is still seen (racy rule)."""
        path = make_memdir.topic(
            "user_x.md", name="X", description="likes tea in the morning", type="user"
        )
        root = str(make_memdir.root)
        with _index(tmp_path) as index:
            recall(index, "tea", (root,))
            st = path.stat()
            path.write_text(path.read_text().replace("tea", "jam"))
            os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
            found = recall(index, "jam", (root,))

        assert ["user_x.md"] == relpaths(found)

    def test_deleted_directory_is_forgotten(
        self, make_memdir: MemDirMaker, tmp_path: Path
    ) -> None:
        """A memory directory removed since is dropped from the index."""
        _seed(make_memdir)
        root = str(make_memdir.root)
        with _index(tmp_path) as index:
            recall(index, "postgres", (root,))
            for child in make_memdir.root.iterdir():
                child.unlink()
            make_memdir.root.rmdir()
            found = recall(index, "postgres", (root,))
            dirs = index.memory_dirs()

        assert ([], ()) == (relpaths(found), dirs)

    def test_live_daemon_rows_are_trusted_but_checked(
        self, make_memdir: MemDirMaker, tmp_path: Path
    ) -> None:
        """A daemon-owned directory is not re-read, yet a vanished hit is re-checked."""
        _seed(make_memdir)
        root = str(make_memdir.root)
        with _index(tmp_path) as index:
            index.update(load_memdir(root), owner_pid=os.getpid())
            (make_memdir.root / "feedback_db.md").unlink()  # the daemon lags behind

            found = recall(index, "postgres", (root,))

        assert [] == relpaths(found)


class TestRebuilds:
    def test_corrupt_database_is_rebuilt(
        self, make_memdir: MemDirMaker, tmp_path: Path
    ) -> None:
        """Garbage in the database file is thrown away and the index built again."""
        _seed(make_memdir)
        cache = tmp_path / "cache"
        cache.mkdir()
        Path(index_path(str(cache))).write_bytes(b"not a database" * 500)

        with open_index(str(cache)) as index:
            found = recall(index, "postgres", (str(make_memdir.root),))
            rebuilds = index.rebuilds

        assert ["feedback_db.md"] == relpaths(found)
        assert 1 == rebuilds

    def test_database_deleted_under_an_open_index(
        self, make_memdir: MemDirMaker, tmp_path: Path
    ) -> None:
        """The daemon's connection notices its file is gone and starts a new one."""
        _seed(make_memdir)
        root = str(make_memdir.root)
        cache = str(tmp_path / "cache")
        with open_index(cache) as daemon:
            daemon.update(load_memdir(root))
            for suffix in ("", "-wal", "-shm"):
                Path(index_path(cache) + suffix).unlink(missing_ok=True)
            daemon.update(load_memdir(root))
        with open_index(cache) as cli:
            rows = cli.conn.execute("SELECT count(*) FROM files").fetchone()[0]

        assert 3 == rows

    def test_foreign_schema_is_replaced(self, tmp_path: Path) -> None:
        """A database of another layout (an older memd) is rebuilt, not used."""
        cache = tmp_path / "cache"
        cache.mkdir()
        conn = sqlite3.connect(index_path(str(cache)))
        conn.execute("CREATE TABLE meta(key TEXT, value TEXT)")
        conn.execute("INSERT INTO meta VALUES ('schema', '0')")
        conn.commit()
        conn.close()

        with open_index(str(cache)) as index:
            tables = {
                r[0] for r in index.conn.execute("SELECT name FROM sqlite_master")
            }

        assert {"dirs", "files", "docs"} <= tables

    def test_wal_reader_during_a_write(
        self, make_memdir: MemDirMaker, tmp_path: Path
    ) -> None:
        """A search runs while another connection holds a write transaction."""
        _seed(make_memdir)
        root = str(make_memdir.root)
        cache = str(tmp_path / "cache")
        with open_index(cache) as writer, open_index(cache) as reader:
            writer.update(load_memdir(root))
            writer.conn.execute("BEGIN IMMEDIATE")
            writer.conn.execute("DELETE FROM files")
            started = time.monotonic()
            found: list[list[str]] = []
            thread = threading.Thread(
                target=lambda: found.append(relpaths(reader.search("postgres")))
            )
            thread.start()
            thread.join(timeout=10)
            writer.conn.execute("ROLLBACK")
            mode = reader.conn.execute("PRAGMA journal_mode").fetchone()[0]

        assert [["feedback_db.md"]] == found
        assert "wal" == mode
        assert time.monotonic() - started < 10


def test_unknown_tokenizer_is_refused(tmp_path: Path) -> None:
    """Only the two measured tokenizers exist."""
    with pytest.raises(ValueError, match="unknown tokenizer"):
        RecallIndex(str(tmp_path / "x.sqlite3"), tokenizer="porter")


class TestRecallUpdater:
    def test_daemon_pass_sequence(
        self, make_memdir: MemDirMaker, tmp_path: Path
    ) -> None:
        """First pass full, then changed relpaths; a deleted database is rebuilt."""
        from memd.recall.index import RecallUpdater

        _seed(make_memdir)
        root = str(make_memdir.root)
        cache = str(tmp_path / "cache")
        updater = RecallUpdater(cache)
        first = load_memdir(root)
        errors = [updater.update(first, frozenset({"user_role.md"}))]
        make_memdir.topic(
            "reference_kafka.md",
            name="Kafka",
            description="Kafka consumer lag dashboards live in Grafana",
            type="reference",
        )
        changed = frozenset({"reference_kafka.md"})
        errors.append(
            updater.update(load_memdir(root, previous=first, changed=changed), changed)
        )
        for suffix in ("", "-wal", "-shm"):
            Path(index_path(cache) + suffix).unlink(missing_ok=True)
        (make_memdir.root / "user_role.md").unlink()
        changed = frozenset({"user_role.md"})
        errors.append(updater.update(load_memdir(root), changed))
        updater.close()
        with open_index(cache) as index:
            rows = sorted(r[0] for r in index.conn.execute("SELECT relpath FROM files"))
            owners = {r[0] for r in index.conn.execute("SELECT owner_pid FROM dirs")}

        assert [None, None, None] == errors
        assert ["feedback_db.md", "project_deploy.md", "reference_kafka.md"] == rows
        assert {os.getpid()} == owners

    def test_failure_is_returned_not_raised(
        self, make_memdir: MemDirMaker, tmp_path: Path
    ) -> None:
        """An unwritable cache gives a message for the log; the daemon goes on."""
        from memd.recall.index import RecallUpdater

        _seed(make_memdir)
        blocker = tmp_path / "not-a-dir"
        blocker.write_text("")
        updater = RecallUpdater(str(blocker / "cache"))

        message = updater.update(load_memdir(str(make_memdir.root)), None)

        assert message is not None
        assert "Error" in message


class TestUndecodableNames:
    def test_a_name_that_is_not_utf8_is_indexed_too(
        self, make_memdir: MemDirMaker, tmp_path: Path
    ) -> None:
        """SQLite text must be UTF-8: an undecodable file name is kept as its bytes,
        never skipped, and found under the same name."""
        from memd.recall.index import RecallUpdater

        _seed(make_memdir)
        name = os.fsdecode(b"odd\x01\x7fname\xff.md")
        odd = make_memdir.root / name
        odd.write_text("---\nname: Odd\ndescription: odd name\ntype: user\n---\nx\n")
        updater = RecallUpdater(str(tmp_path / "cache"))
        error = updater.update(load_memdir(str(make_memdir.root)), None)
        updater.close()
        with open_index(str(tmp_path / "cache")) as index:
            rows = sorted(
                r[0] if isinstance(r[0], str) else os.fsdecode(r[0])
                for r in index.conn.execute("SELECT relpath FROM files")
            )
            found = recall(index, "odd", (str(make_memdir.root),))

        assert None is error
        assert (
            sorted(["feedback_db.md", "project_deploy.md", "user_role.md", name])
            == rows
        )
        assert [name] == [h.relpath for h in found]


def _after_the_racy_window() -> int:
    """A moment far enough after every write so far that nothing is racy."""
    return time.time_ns() + 2 * RACY_WINDOW_NS


class TestStatRefresh:
    def test_the_signature_covers_topic_files_and_nothing_else(
        self, make_memdir: MemDirMaker, tmp_path: Path
    ) -> None:
        """Topic files, in subdirectories too; no log, index, hidden or linked file."""
        make_memdir.topic("a.md", name="A", description="a", type="user")
        team = make_memdir.topic("team/b.md", name="B", description="b", type="user")
        log = make_memdir.write("logs/2026/12/2026-12-01.md", "- noted\n")
        index_file = make_memdir.write("MEMORY.md", "- [A](a.md) — a\n")
        hidden = make_memdir.write(".draft.md", "x\n")
        other = make_memdir.write("notes.txt", "x\n")
        outside = tmp_path / "outside"
        outside.mkdir()
        (outside / "c.md").write_text("c\n")
        (make_memdir.root / "linked").symlink_to(outside, target_is_directory=True)
        root = str(make_memdir.root)
        before = stat_signature(root, _after_the_racy_window())

        for path in (log, index_file, hidden, other, outside / "c.md"):
            with path.open("a") as handle:
                handle.write("more\n")
        unrelated = stat_signature(root, _after_the_racy_window())
        st = team.stat()
        team.write_bytes(team.read_bytes().replace(b"b\n", b"c\n"))
        os.utime(team, ns=(st.st_atime_ns, st.st_mtime_ns))  # same size and mtime
        edited = stat_signature(root, _after_the_racy_window())

        assert before is not None
        assert edited is not None
        assert (before[0], False) == unrelated
        assert before[0] != edited[0]

    def test_the_signature_is_the_same_in_another_process(
        self, make_memdir: MemDirMaker
    ) -> None:
        """The CLI runs after CLI: no per-process hash salt may reach the signature."""
        _seed(make_memdir)
        make_memdir.topic("team/t.md", name="T", description="t", type="user")
        root = str(make_memdir.root)
        taken = _after_the_racy_window()
        probe = (
            "from memd.recall.index import stat_signature\n"
            f"print(stat_signature({root!r}, {taken})[0])\n"
        )
        found = stat_signature(root, taken)
        others = {
            subprocess.run(
                [sys.executable, "-c", probe],
                capture_output=True,
                text=True,
                check=True,
                env={**os.environ, "PYTHONHASHSEED": seed},
            ).stdout.strip()
            for seed in ("1", "2")
        }

        assert found is not None
        assert {found[0]} == others

    def test_a_symlinked_memory_directory_is_signed_as_its_target(
        self, make_memdir: MemDirMaker, tmp_path: Path
    ) -> None:
        """The memory dir's own link is followed, as the agent follows it."""
        _seed(make_memdir)
        link = tmp_path / "link"
        link.symlink_to(make_memdir.root, target_is_directory=True)
        now = _after_the_racy_window()

        assert stat_signature(str(make_memdir.root), now) == stat_signature(
            str(link), now
        )

    def test_a_file_dated_past_2262_is_signed_and_found(
        self, make_memdir: MemDirMaker, tmp_path: Path
    ) -> None:
        """Nanoseconds past 2**63 (`touch -d 2300-01-01`): no crash, the file found."""
        path = make_memdir.topic(
            "user_far.md", name="Far", description="a far future note", type="user"
        )
        year_2300_ns = 10_413_792_000 * 10**9  # 2300-01-01T00:00:00Z
        os.utime(path, ns=(year_2300_ns, year_2300_ns))
        root = str(make_memdir.root)
        with _index(tmp_path) as index:
            first = stat_signature(root, time.time_ns())
            again = stat_signature(root, time.time_ns())
            found = recall(index, "future", (root,))

        assert first is not None
        assert again is not None
        assert first[0] == again[0]
        assert ["user_far.md"] == relpaths(found)

    def test_unchanged_directories_are_not_read_again(self, tmp_path: Path) -> None:
        """Once out of the racy window a signature is kept; only an edit re-reads."""
        dirs = []
        for number in range(3):
            maker = MemDirMaker(tmp_path / f"memory{number}")
            maker.root.mkdir()
            maker.topic("team/t.md", name="T", description="tea time", type="user")
            dirs.append(str(maker.root))
        edited = tmp_path / "memory1" / "team" / "t.md"
        with _index(tmp_path) as index:
            recall(index, "tea", dirs)
            time.sleep(1.1)  # ctimes leave the racy window; they cannot be set back
            recall(index, "tea", dirs)
            quiet = [index.refresh(d) for d in dirs]
            st = edited.stat()
            edited.write_bytes(edited.read_bytes().replace(b"tea", b"jam"))
            os.utime(edited, ns=(st.st_atime_ns, st.st_mtime_ns))
            after_edit = [index.refresh(d) for d in dirs]
            found = index.search("jam")

        assert [False, False, False] == quiet
        assert [False, True, False] == after_edit
        assert [(dirs[1], "team/t.md")] == [(h.memory_dir, h.relpath) for h in found]


class TestOwners:
    def test_each_owning_daemon_is_checked_once(self, tmp_path: Path) -> None:
        """Directories of a live daemon are trusted, a dead one's are read again."""
        live = subprocess.Popen(["sleep", "60"])
        dead = subprocess.Popen(["true"])
        dead.wait()
        dirs = []
        try:
            with _index(tmp_path) as index:
                for number, owner in enumerate((live.pid, live.pid, dead.pid)):
                    maker = MemDirMaker(tmp_path / f"memory{number}")
                    maker.root.mkdir()
                    maker.topic("a.md", name="A", description="apples", type="user")
                    index.update(load_memdir(str(maker.root)), owner_pid=owner)
                    maker.topic("b.md", name="B", description="kiwis", type="user")
                    dirs.append(str(maker.root))
                alive: dict[int, bool] = {}

                reread = [index.refresh(d, alive=alive) for d in dirs]
                found = [h.memory_dir for h in index.search("kiwis")]
        finally:
            live.kill()
            live.wait()

        assert [False, False, True] == reread
        assert {live.pid: True, dead.pid: False} == alive
        assert [dirs[2]] == found

    def test_some_daemon_owned_directories_of_many(
        self, make_memdir: MemDirMaker, tmp_path: Path
    ) -> None:
        """With nothing to re-read, the ids read with the records still narrow it."""
        dirs = []
        with _index(tmp_path) as index:
            for number in range(3):
                maker = MemDirMaker(tmp_path / f"memory{number}")
                maker.root.mkdir()
                maker.topic("k.md", name="K", description="kafka lag", type="user")
                index.update(load_memdir(str(maker.root)), owner_pid=os.getpid())
                dirs.append(str(maker.root))

            found = recall(index, "kafka", dirs[:2])

        assert sorted(dirs[:2]) == sorted(h.memory_dir for h in found)
