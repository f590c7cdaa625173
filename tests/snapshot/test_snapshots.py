"""Tests for memd.snapshot.store and .publish: layout, freshness, atomic replace."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
import textwrap
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

import memd
from memd.errors import SnapshotError
from memd.memory.memdir import InputStat
from memd.racy import RACY_WINDOW_NS
from memd.snapshot.build import Snapshot
from memd.snapshot.publish import SnapshotStore, sweep_versions
from memd.snapshot.store import (
    encode_prompt,
    guidelines_fingerprint,
    parse_meta,
    racy_until_ns,
)

OLD_NS = 10 * RACY_WINDOW_NS  # how far in the past inputs are dated to be clearly clean


def _stat(path: Path) -> InputStat:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return InputStat(path=str(path), size=-1, mtime_ns=0, inode=0)
    return InputStat(
        path=str(path), size=st.st_size, mtime_ns=st.st_mtime_ns, inode=st.st_ino
    )


def _age(path: Path, ago_ns: int = OLD_NS) -> None:
    then = time.time_ns() - ago_ns
    os.utime(path, ns=(then, then))


def make_snapshot(
    memory_dir: Path,
    text: str,
    *,
    inputs: tuple[Path, ...] = (),
    mode: str = "standard",
    built_ns: int | None = None,
    extra_guidelines: str | None = None,
) -> Snapshot:
    """Build a Snapshot value directly, with the stat of `inputs` as they are now."""
    return Snapshot(
        memory_dir=str(memory_dir) + os.sep,
        mode=mode,
        text=text,
        sha256=hashlib.sha256(encode_prompt(text)).hexdigest(),
        built_ns=time.time_ns() if built_ns is None else built_ns,
        inputs=tuple(_stat(p) for p in inputs),
        truncation=None,
        diagnostics=(),
        manifest=(),
        lint_errors=0,
        lint_warnings=0,
        total_file_count=len(inputs),
        total_subdir_count=0,
        render_seconds=0.001,
        env_fingerprint=guidelines_fingerprint(extra_guidelines),
    )


@dataclass(frozen=True)
class Fixture:
    store: SnapshotStore
    memory: Path
    index: Path


@pytest.fixture(name="fx")
def _fx(tmp_path: Path) -> Fixture:
    memory = tmp_path / "memory"
    memory.mkdir()
    index = memory / "MEMORY.md"
    index.write_text("- [A](a.md) — a\n")
    _age(index)
    _age(memory)
    return Fixture(
        store=SnapshotStore(str(tmp_path / "cache")), memory=memory, index=index
    )


class TestLayout:
    def test_paths(self, fx: Fixture, tmp_path: Path) -> None:
        """The snapshot lives under <cache>/snapshots/<sanitized dir>-<hash>/<mode>/."""
        sanitized = re.sub("[^A-Za-z0-9]", "-", str(fx.memory) + os.sep)
        directory = fx.store.directory_for(str(fx.memory) + os.sep, "team")

        key = Path(directory).parent.name
        assert re.fullmatch(re.escape(sanitized) + "-[0-9a-f]{16}", key)
        expected = str(tmp_path / "cache" / "snapshots" / key / "team") + os.sep
        assert expected == directory
        assert expected + "prompt.md" == fx.store.prompt_path(str(fx.memory), "team")

    def test_dirs_that_sanitize_alike_get_their_own_keys(
        self, fx: Fixture, tmp_path: Path
    ) -> None:
        """`team_a` and `team-a` sanitize to one name; each keeps its own snapshot."""
        underscore, dash = tmp_path / "team_a", tmp_path / "team-a"
        for directory, text in ((underscore, "underscore\n"), (dash, "dash\n")):
            directory.mkdir()
            fx.store.write(make_snapshot(directory, text))

        assert fx.store.key_dir(str(underscore)) != fx.store.key_dir(str(dash))
        assert "underscore\n" == fx.store.read_fresh(str(underscore), "standard")
        assert "dash\n" == fx.store.read_fresh(str(dash), "standard")

    def test_write_files(self, fx: Fixture) -> None:
        """write() publishes the prompt, meta.txt/json, diagnostics and manifest."""
        snap = make_snapshot(fx.memory, "hello\n", inputs=(fx.index,))
        path = fx.store.write(snap)
        directory = fx.store.directory_for(str(fx.memory), "standard")

        assert path == fx.store.prompt_path(str(fx.memory), "standard")
        assert b"hello\n" == Path(path).read_bytes()
        assert {
            "prompt.md",
            "meta.txt",
            "meta.json",
            "diagnostics.json",
            "manifest.json",
        } == set(os.listdir(directory))
        meta = fx.store.read_meta(str(fx.memory), "standard")
        assert meta is not None
        assert snap.sha256 == meta["sha256"]

    def test_meta_txt_splits(self, fx: Fixture) -> None:
        """meta.txt parses with str.split into sha, build time, env and inputs."""
        snap = make_snapshot(fx.memory, "x\n", inputs=(fx.index,))
        fx.store.write(snap)
        text = Path(
            fx.store.directory_for(str(fx.memory), "standard"), "meta.txt"
        ).read_text()
        meta = parse_meta(text)

        assert meta is not None
        assert snap.sha256 == meta["sha256"]
        assert snap.built_ns == meta["built_ns"]
        assert "-" == meta["env"]
        i = snap.inputs[0]
        assert [(i.size, i.mtime_ns, i.inode, i.path)] == meta["inputs"]


class TestSweepVersions:
    def test_removes_orphans_keeps_the_published(
        self, fx: Fixture, tmp_path: Path
    ) -> None:
        """Old versions no link points to go, in any key dir; the published stays."""
        fx.store.write(make_snapshot(fx.memory, "kept\n", inputs=(fx.index,)))
        key_dir = Path(fx.store.directory_for(str(fx.memory), "standard")).parent
        orphan = key_dir / ".standard.killed-writer"
        orphan.mkdir()
        (orphan / "prompt.md").write_text("half")
        linkless = tmp_path / "cache" / "snapshots" / "-gone-" / ".kairos.old"
        linkless.mkdir(parents=True)
        fresh = key_dir / ".standard.just-now"
        fresh.mkdir()
        _age(orphan)
        _age(linkless)

        sweep_versions(str(tmp_path / "cache"), now_ns=time.time_ns())

        assert not orphan.exists()
        assert not linkless.exists()
        assert fresh.exists()  # inside the grace period: a writer may be using it
        assert "kept\n" == fx.store.read_fresh(str(fx.memory), "standard")


class TestReadFresh:
    def test_fresh(self, fx: Fixture) -> None:
        """Unchanged, old inputs serve the snapshot text."""
        fx.store.write(
            make_snapshot(fx.memory, "prompt\n", inputs=(fx.index, fx.memory))
        )

        assert "prompt\n" == fx.store.read_fresh(str(fx.memory), "standard")

    def test_another_memd_release_wrote_it(self, fx: Fixture) -> None:
        """An upgrade may render differently (2.1.332's template did): not served."""
        fx.store.write(
            make_snapshot(fx.memory, "prompt\n", inputs=(fx.index, fx.memory))
        )
        meta = Path(fx.store.directory_for(str(fx.memory), "standard"), "meta.txt")
        first, rest = meta.read_text().split("\n", 1)
        assert f"memd-snapshot 1 {memd.__version__}" == first
        meta.write_text("memd-snapshot 1 0.0.9\n" + rest)

        assert None is fx.store.read_fresh(str(fx.memory), "standard")
        assert not fx.store.is_fresh(str(fx.memory), "standard")

    def test_is_fresh_answers_as_read_fresh_does_without_the_prompt(
        self, fx: Fixture
    ) -> None:
        """Fresh, torn, stale, other mode: `is_fresh` agrees with `read_fresh`."""
        store, memory = fx.store, str(fx.memory)
        store.write(make_snapshot(fx.memory, "prompt\n", inputs=(fx.index,)))
        answers = [(store.is_fresh(memory, "standard"), "fresh")]
        answers.append((store.is_fresh(memory, "team"), "never written"))
        prompt = Path(store.prompt_path(memory, "standard"))
        prompt.write_bytes(b"prom")  # torn: shorter than meta.txt records
        answers.append((store.is_fresh(memory, "standard"), "torn"))
        store.write(make_snapshot(fx.memory, "prompt\n", inputs=(fx.index,)))
        fx.index.write_text("- [B](b.md) — b, longer\n")
        _age(fx.index)
        answers.append((store.is_fresh(memory, "standard"), "stale"))

        expected = [(True, "fresh"), (False, "never written"), (False, "torn")]
        assert [*expected, (False, "stale")] == answers
        assert None is store.read_fresh(memory, "standard")

    def test_edit_makes_stale(self, fx: Fixture) -> None:
        """Editing an input makes the snapshot stale."""
        fx.store.write(make_snapshot(fx.memory, "prompt\n", inputs=(fx.index,)))
        fx.index.write_text("- [B](b.md) — b, longer\n")
        _age(fx.index)

        assert None is fx.store.read_fresh(str(fx.memory), "standard")

    def test_new_file_makes_stale(self, fx: Fixture) -> None:
        """A recorded-missing input that appears makes the snapshot stale."""
        missing = fx.memory / "team"
        fx.store.write(make_snapshot(fx.memory, "p\n", inputs=(fx.index, missing)))
        missing.mkdir()
        _age(missing)

        assert None is fx.store.read_fresh(str(fx.memory), "standard")

    def test_same_stat_different_inode(self, fx: Fixture) -> None:
        """A file replaced by rename (same size and mtime, new inode) is stale."""
        fx.store.write(make_snapshot(fx.memory, "p\n", inputs=(fx.index,)))
        st = os.stat(fx.index)
        replacement = fx.memory / "new.tmp"
        replacement.write_bytes(fx.index.read_bytes())
        os.utime(replacement, ns=(st.st_atime_ns, st.st_mtime_ns))
        os.replace(replacement, fx.index)

        assert None is fx.store.read_fresh(str(fx.memory), "standard")

    def test_racy_input_is_stale(self, fx: Fixture) -> None:
        """An input modified within the racy window of the build counts as changed."""
        built = time.time_ns()
        inside = built - RACY_WINDOW_NS // 2
        os.utime(fx.index, ns=(inside, inside))
        fx.store.write(
            make_snapshot(fx.memory, "p\n", inputs=(fx.index,), built_ns=built)
        )

        assert None is fx.store.read_fresh(str(fx.memory), "standard")

    def test_input_just_outside_window_is_fresh(self, fx: Fixture) -> None:
        """An input older than the racy window is trusted by stat."""
        built = time.time_ns()
        outside = built - RACY_WINDOW_NS - 1
        os.utime(fx.index, ns=(outside, outside))
        fx.store.write(
            make_snapshot(fx.memory, "p\n", inputs=(fx.index,), built_ns=built)
        )

        assert "p\n" == fx.store.read_fresh(str(fx.memory), "standard")

    def test_racy_until(self, fx: Fixture) -> None:
        """racy_until_ns says when a rebuild would be clean, None when already clean."""
        built = time.time_ns()
        inside = built - RACY_WINDOW_NS // 2
        os.utime(fx.index, ns=(inside, inside))
        racy = make_snapshot(fx.memory, "p\n", inputs=(fx.index,), built_ns=built)
        clean = make_snapshot(
            fx.memory, "p\n", inputs=(fx.index,), built_ns=built + RACY_WINDOW_NS
        )

        assert inside + RACY_WINDOW_NS + 1 == racy_until_ns(racy.inputs, racy.built_ns)
        assert None is racy_until_ns(clean.inputs, clean.built_ns)

    def test_guidelines_change_is_stale(self, fx: Fixture) -> None:
        """A snapshot rendered with other extra guidelines is not served."""
        fx.store.write(make_snapshot(fx.memory, "p\n", extra_guidelines="Be terse."))
        memory = str(fx.memory)

        assert "p\n" == fx.store.read_fresh(
            memory, "standard", extra_guidelines="Be terse."
        )
        assert None is fx.store.read_fresh(memory, "standard")

    def test_blank_guidelines_equal_none(self, fx: Fixture) -> None:
        """Empty or blank guidelines render like none, so they share a snapshot."""
        fx.store.write(make_snapshot(fx.memory, "p\n", extra_guidelines=" \n"))

        assert "p\n" == fx.store.read_fresh(str(fx.memory), "standard")
        assert "p\n" == fx.store.read_fresh(
            str(fx.memory), "standard", extra_guidelines=""
        )

    def test_other_mode_or_dir_misses(self, fx: Fixture, tmp_path: Path) -> None:
        """A mode never written, or another dir with the same sanitized key, misses."""
        dashed, nested = tmp_path / "a-b", tmp_path / "a" / "b"
        dashed.mkdir()
        nested.mkdir(parents=True)
        fx.store.write(make_snapshot(dashed, "p\n"))

        assert "p\n" == fx.store.read_fresh(str(dashed), "standard")
        assert None is fx.store.read_fresh(str(dashed), "team")
        assert None is fx.store.read_fresh(str(nested), "standard")

    def test_no_snapshot(self, fx: Fixture) -> None:
        """Nothing written reads as None."""
        assert None is fx.store.read_fresh(str(fx.memory), "standard")
        assert None is fx.store.read_meta(str(fx.memory), "standard")


class TestAtomicReplace:
    def test_reader_never_sees_mix(self, fx: Fixture) -> None:
        """Readers hammering during rewrites get a prompt matching its own meta."""
        texts = ["A" * 5000 + "\n", "B" * 20000 + "\n", "C\n"]
        memory = str(fx.memory)
        fx.store.write(make_snapshot(fx.memory, texts[0]))
        stop = threading.Event()
        problems: list[str] = []
        reads = [0]

        def reader() -> None:
            prompt_path = fx.store.prompt_path(memory, "standard")
            while not stop.is_set():
                found = fx.store.read(memory, "standard")
                if found is not None:
                    meta, data = found
                    if hashlib.sha256(data).hexdigest() != meta["sha256"]:
                        problems.append("prompt does not match its meta")
                    reads[0] += 1
                try:
                    whole = Path(prompt_path).read_text()
                except FileNotFoundError:
                    continue
                if whole not in texts:
                    problems.append(f"partial prompt of {len(whole)} chars")

        threads = [threading.Thread(target=reader) for _ in range(2)]
        for thread in threads:
            thread.start()
        try:
            for i in range(60):
                fx.store.write(make_snapshot(fx.memory, texts[i % 3]))
        finally:
            stop.set()
            for thread in threads:
                thread.join()

        assert [] == problems
        assert reads[0] > 0

    def test_old_versions_removed_after_grace(self, fx: Fixture) -> None:
        """Superseded versions past the grace period go on the next write."""
        memory = str(fx.memory)
        fx.store.write(make_snapshot(fx.memory, "one\n"))
        key_dir = Path(fx.store.directory_for(memory, "standard")).parent
        first = os.readlink(key_dir / "standard")
        _age(key_dir / first, 60 * RACY_WINDOW_NS)
        fx.store.write(make_snapshot(fx.memory, "two\n"))

        assert first not in os.listdir(key_dir)
        assert 1 == sum(1 for n in os.listdir(key_dir) if n.startswith(".standard."))


class TestDiskFull:
    def test_old_snapshot_survives_write_failure(
        self, fx: Fixture, tmp_path: Path
    ) -> None:
        """A write hitting a file-size limit (EFBIG, like ENOSPC) keeps the old one."""
        memory = str(fx.memory)
        fx.store.write(make_snapshot(fx.memory, "old\n", inputs=(fx.index,)))
        script = textwrap.dedent(
            f"""
            import resource, signal, sys
            sys.path.insert(0, {str(Path(__file__).parent)!r})
            from test_snapshots import make_snapshot
            from pathlib import Path
            from memd.errors import SnapshotError
            from memd.snapshot.publish import SnapshotStore
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (16384, 16384))
            try:
                SnapshotStore({fx.store.cache_dir!r}).write(
                    make_snapshot(Path({memory!r}), "new" * 100000)
                )
            except SnapshotError as error:
                print("refused", error)
            """
        )
        result = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, check=False
        )
        key_dir = Path(fx.store.directory_for(memory, "standard")).parent

        assert result.stdout.startswith("refused"), result.stderr
        assert "old\n" == fx.store.read_fresh(memory, "standard")
        assert 1 == sum(1 for n in os.listdir(key_dir) if n.startswith(".standard."))

    def test_unwritable_cache_raises_snapshot_error(
        self, fx: Fixture, tmp_path: Path
    ) -> None:
        """A cache path that cannot be created raises SnapshotError."""
        blocker = tmp_path / "blocker"
        blocker.write_text("a file, not a directory")
        store = SnapshotStore(str(blocker / "cache"))

        with pytest.raises(SnapshotError):
            store.write(make_snapshot(fx.memory, "p\n"))
