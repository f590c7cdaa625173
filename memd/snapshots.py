"""Warm prompt snapshots in the cache directory: layout, atomic replace, stat freshness.

Layout, per memory directory and mode::

    <cache>/snapshots/<sanitize_path(memory_dir)>/
        <mode> -> .<mode>.<version>        symlink, swapped atomically by rename
        .<mode>.<version>/prompt.md        the prompt bytes
                          meta.txt         plain text for the hot path (str.split)
                          meta.json        everything, for `--format json` and status
                          diagnostics.json
                          manifest.json

A new snapshot is written into a fresh version directory and published by
renaming a new symlink over `<mode>`, so `<mode>/prompt.md` is always a whole
file. A reader resolves the link once and reads meta and prompt from the same
version directory, so it never pairs an old prompt with new meta. A failed write
(ENOSPC, EFBIG) removes the half-written version and leaves the link alone, so the
old snapshot survives. The version's data is flushed (fdatasync, directory fsync)
before the rename, so a power cut never leaves the link on a torn version; the
rename itself is made durable afterwards, off the save's path, and a flush that
fails puts the previous link back. Old versions are
removed only after `VERSION_GRACE_NS`, so a reader that resolved the link just
before a swap can still finish.

Freshness is checked with `stat` only: every recorded input must show the same
size, mtime_ns and inode. Like git's "racily clean" rule, an input whose mtime
is within `RACY_WINDOW_NS` of the build start is treated as changed, because a
write in the same timestamp tick after it was read would leave its stat
unchanged. One second covers nanosecond filesystems (ext4, XFS, btrfs, APFS, whose
timestamps advance in clock ticks) and HFS+'s whole seconds.

Hot path: the warm `memd prompt` imports this module, so only `os`, `sys` and
`memd.paths` load at import time; `json` and `shutil` load inside `write`.
"""

from __future__ import annotations

import os

from memd.jscompat import js_trim
from memd.paths import sanitize_path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

    from memd.diagnostics import Diagnostic
    from memd.memdir import InputStat
    from memd.pipeline import Snapshot

RACY_WINDOW_NS = 1_000_000_000
VERSION_GRACE_NS = 5_000_000_000
META_MAGIC = "memd-snapshot 1"
MISSING = (-1, 0, 0)  # size, mtime_ns, inode of an input that does not exist
PROMPT_FILE = "prompt.md"
META_FILE = "meta.txt"


def encode_prompt(text: str) -> bytes:
    """Return the prompt as UTF-8; a lone surrogate becomes U+FFFD, as in Node."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        units = text.encode("utf-16-le", "surrogatepass")
        return units.decode("utf-16-le", "replace").encode("utf-8")


def fingerprint(value: str | None) -> str:
    """Return a short stable hex digest of `value` (FNV-1a 64), "-" for None.

    Not cryptographic: it only tells whether a setting changed, and it costs no
    `hashlib` import on the hot path.
    """
    if value is None:
        return "-"
    h = 0xCBF29CE484222325
    for byte in value.encode("utf-8", "surrogatepass"):
        h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def guidelines_fingerprint(extra_guidelines: str | None) -> str:
    """Return the fingerprint of extra guidelines as rendered: blank counts as none."""
    if extra_guidelines is None or not js_trim(extra_guidelines):
        return "-"
    return fingerprint(extra_guidelines)


def stat_input(path: str) -> tuple[int, int, int]:
    """Return (size, mtime_ns, inode) of `path`, symlinks followed; else MISSING."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return MISSING
    return st.st_size, st.st_mtime_ns, st.st_ino


def inputs_unchanged(inputs: list[tuple[int, int, int, str]], built_ns: int) -> bool:
    """Return True when every (size, mtime_ns, inode, path) stats the same."""
    racy_from = built_ns - RACY_WINDOW_NS
    for size, mtime_ns, inode, path in inputs:
        if mtime_ns >= racy_from:
            return False
        if stat_input(path) != (size, mtime_ns, inode):
            return False
    return True


def racy_until_ns(inputs: Iterable[InputStat], built_ns: int) -> int | None:
    """Return when a rebuild would no longer see a racy input, or None if none is racy.

    A snapshot built within `RACY_WINDOW_NS` of an input's change is never
    served warm; the daemon can re-render once this time has passed.
    """
    racy = [i.mtime_ns for i in inputs if i.mtime_ns >= built_ns - RACY_WINDOW_NS]
    return max(racy) + RACY_WINDOW_NS + 1 if racy else None


def parse_meta(text: str) -> dict[str, object] | None:
    """Parse meta.txt into its keys plus `inputs`; None when it is not a snapshot."""
    lines = text.split("\n")
    if not lines or lines[0] != META_MAGIC or "never_fresh 1" in lines:
        return None
    meta: dict[str, object] = {}
    inputs: list[tuple[int, int, int, str]] = []
    try:
        for line in lines[1:]:
            if line.startswith("input "):
                _, size, mtime_ns, inode, path = line.split(" ", 4)
                inputs.append((int(size), int(mtime_ns), int(inode), path))
            elif line:
                key, _, value = line.partition(" ")
                meta[key] = value
        meta["built_ns"] = int(str(meta["built_ns"]))
        meta["prompt_bytes"] = int(str(meta["prompt_bytes"]))
    except (ValueError, KeyError):
        return None
    meta["inputs"] = inputs
    return meta


def format_meta(snapshot: Snapshot, *, prompt_bytes: int, version: str) -> str:
    """Return meta.txt: one `key value` per line, then one `input` line per input."""
    lines = [
        META_MAGIC,
        f"version {version}",
        f"sha256 {snapshot.sha256}",
        f"built_ns {snapshot.built_ns}",
        f"prompt_bytes {prompt_bytes}",
        f"env {snapshot.env_fingerprint}",
        f"mode {snapshot.mode}",
        f"memory_dir {snapshot.memory_dir}",
    ]
    lines += [
        f"input {i.size} {i.mtime_ns} {i.inode} {i.path}" for i in snapshot.inputs
    ]
    if any("\n" in line or "\r" in line for line in lines[1:]):
        # A path with a line break cannot be recorded faithfully: never serve this warm.
        lines = [META_MAGIC, f"version {version}", "never_fresh 1"]
    return "\n".join(lines) + "\n"


class SnapshotStore:
    """The snapshots under one cache directory; holds no state but the path."""

    __slots__ = ("cache_dir",)

    def __init__(self, cache_dir: str) -> None:
        self.cache_dir = cache_dir

    def _key_dir(self, memory_dir: str) -> str:
        return os.path.join(
            self.cache_dir, "snapshots", sanitize_path(_with_sep(memory_dir))
        )

    def directory_for(self, memory_dir: str, mode: str) -> str:
        """Return `<cache>/snapshots/<sanitize_path(memory_dir)>/<mode>/` (the link)."""
        return os.path.join(self._key_dir(memory_dir), mode) + os.sep

    def prompt_path(self, memory_dir: str, mode: str) -> str:
        """Return the path of the published prompt.md (always a complete file)."""
        return os.path.join(self._key_dir(memory_dir), mode, PROMPT_FILE)

    def _version_dir(self, memory_dir: str, mode: str) -> str | None:
        key_dir = self._key_dir(memory_dir)
        try:
            target = os.readlink(os.path.join(key_dir, mode))
        except (OSError, ValueError):
            return None
        if os.sep in target or not target.startswith(f".{mode}."):
            return None  # not a link this store wrote
        return os.path.join(key_dir, target)

    def read(
        self, memory_dir: str, mode: str
    ) -> tuple[dict[str, object], bytes] | None:
        """Return (meta.txt fields, prompt bytes) from one version, or None."""
        version_dir = self._version_dir(memory_dir, mode)
        if version_dir is None:
            return None
        try:
            with open(
                os.path.join(version_dir, META_FILE),
                encoding="utf-8",
                errors="surrogateescape",
            ) as f:
                meta = parse_meta(f.read())
            if meta is None:
                return None
            with open(os.path.join(version_dir, PROMPT_FILE), "rb") as f:
                data = f.read()
        except OSError:  # a version removed under us: treat as no snapshot
            return None
        if len(data) != meta["prompt_bytes"] or meta.get("memory_dir") != _with_sep(
            memory_dir
        ):
            return None
        meta["version_dir"] = version_dir
        return meta, data

    def read_fresh_bytes(
        self, memory_dir: str, mode: str, *, extra_guidelines: str | None = None
    ) -> bytes | None:
        """Return the prompt bytes if the snapshot is fresh, else None."""
        found = self.read(memory_dir, mode)
        if found is None:
            return None
        meta, data = found
        if meta.get("mode") != mode or meta.get("env") != guidelines_fingerprint(
            extra_guidelines
        ):
            return None
        inputs = meta["inputs"]
        built_ns = meta["built_ns"]
        if not isinstance(inputs, list) or not isinstance(built_ns, int):
            return None
        return data if inputs_unchanged(inputs, built_ns) else None

    def read_fresh(
        self, memory_dir: str, mode: str, *, extra_guidelines: str | None = None
    ) -> str | None:
        """Return the text if every input stats the same and none is racy, else None."""
        data = self.read_fresh_bytes(
            memory_dir, mode, extra_guidelines=extra_guidelines
        )
        return None if data is None else data.decode("utf-8")

    def read_meta(self, memory_dir: str, mode: str) -> dict[str, object] | None:
        """Return meta.json of the published snapshot, or None."""
        import json

        version_dir = self._version_dir(memory_dir, mode)
        if version_dir is None:
            return None
        try:
            with open(os.path.join(version_dir, "meta.json"), encoding="utf-8") as f:
                data = json.load(f)
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def read_diagnostics(self, memory_dir: str, mode: str) -> tuple[Diagnostic, ...]:
        """Return the published snapshot's diagnostics (empty when there is none)."""
        import json

        from memd.diagnostics import Diagnostic

        version_dir = self._version_dir(memory_dir, mode)
        if version_dir is None:
            return ()
        try:
            with open(
                os.path.join(version_dir, "diagnostics.json"), encoding="utf-8"
            ) as f:
                data = json.load(f)
        except (OSError, ValueError):
            return ()
        items = data.get("diagnostics", data) if isinstance(data, dict) else data
        if not isinstance(items, list):
            return ()
        return tuple(
            Diagnostic.from_dict(item) for item in items if isinstance(item, dict)
        )

    def matches(self, snapshot: Snapshot) -> bool:
        """Whether the published snapshot already is `snapshot`, fresh and whole.

        Same prompt bytes, diagnostics and manifest, same recorded inputs, none
        of them racy: the daemon then skips the write (a restart over a warm
        cache). Reading the whole prompt also catches a version torn by a crash.
        """
        found = self.read(snapshot.memory_dir, snapshot.mode)
        if found is None:
            return False
        meta, data = found
        inputs = [(i.size, i.mtime_ns, i.inode, i.path) for i in snapshot.inputs]
        built_ns = meta["built_ns"]
        if (
            meta.get("mode") != snapshot.mode
            or meta.get("env") != snapshot.env_fingerprint
            or meta.get("sha256") != snapshot.sha256
            or meta["inputs"] != inputs
            or not isinstance(built_ns, int)
            or any(i[1] >= built_ns - RACY_WINDOW_NS for i in inputs)
            or data != encode_prompt(snapshot.text)
        ):
            return False
        version_dir = str(meta["version_dir"])
        for filename, expected in _content_files(snapshot):
            try:
                with open(os.path.join(version_dir, filename), "rb") as f:
                    if f.read() != expected:
                        return False
            except OSError:
                return False
        return True

    def write(self, snapshot: Snapshot) -> str:
        """Publish `snapshot` atomically, make it durable, return its prompt path.

        Raises:
            SnapshotError: the cache could not be written; the old snapshot is intact.
        """
        published = self.publish(snapshot)
        self.flush(published)
        return os.path.join(published.key_dir, published.mode, PROMPT_FILE)

    def publish(self, snapshot: Snapshot) -> Published:
        """Write a new version, make its data durable, and swap the link to it.

        The version directory is private until the link is renamed over
        `<mode>`, so its files are written in place (no temp files); their data
        is flushed before the rename (SPEC §5: temp, fsync, rename), so a power
        cut never leaves the link on a torn version. `flush` then makes the
        rename itself durable and removes old versions, off the save's path.

        Raises:
            SnapshotError: the cache could not be written; the old snapshot is intact.
        """
        import contextlib
        import shutil

        from memd.errors import SnapshotError

        key_dir = self._key_dir(snapshot.memory_dir)
        mode = snapshot.mode
        version = f"{snapshot.built_ns:x}-{os.getpid()}-{os.urandom(4).hex()}"
        name = f".{mode}.{version}"
        version_dir = os.path.join(key_dir, name)
        files = _snapshot_files(snapshot, version)
        link_temp = os.path.join(key_dir, f".{mode}.link-{version}")
        previous: str | None = None
        try:
            os.makedirs(key_dir, exist_ok=True)
            with contextlib.suppress(OSError):
                previous = os.readlink(os.path.join(key_dir, mode))
            os.mkdir(version_dir, 0o755)
            for filename, data in files:
                _write_new(os.path.join(version_dir, filename), data)
            _sync_version(version_dir)
            os.symlink(name, link_temp)
            os.replace(link_temp, os.path.join(key_dir, mode))
        except OSError as error:
            shutil.rmtree(version_dir, ignore_errors=True)
            with contextlib.suppress(OSError):
                os.unlink(link_temp)
            raise SnapshotError(
                error.strerror or str(error), path=version_dir
            ) from error
        return Published(
            key_dir=key_dir,
            mode=mode,
            name=name,
            previous=previous,
            built_ns=snapshot.built_ns,
        )

    def flush(self, published: Published) -> None:
        """Make a published version durable, then remove versions past their grace.

        A flush that fails (ENOSPC or EIO surfacing late) puts the previous
        link back, unless a newer version was published meanwhile.

        Raises:
            SnapshotError: the version could not be made durable.
        """
        import contextlib
        import shutil

        from memd.errors import SnapshotError

        key_dir, mode, name = published.key_dir, published.mode, published.name
        version_dir = os.path.join(key_dir, name)
        try:
            _fsync_dir(key_dir)  # the rename; the data was flushed before it
        except OSError as error:
            link = os.path.join(key_dir, mode)
            with contextlib.suppress(OSError):
                if published.previous is not None and os.readlink(link) == name:
                    temp = os.path.join(key_dir, f".{mode}.link-{name}-revert")
                    os.symlink(published.previous, temp)
                    os.replace(temp, link)
                    shutil.rmtree(version_dir, ignore_errors=True)
            raise SnapshotError(
                error.strerror or str(error), path=version_dir
            ) from error
        _remove_old_versions(key_dir, mode, keep=name, now_ns=published.built_ns)


def sweep_versions(cache_dir: str, *, now_ns: int) -> None:
    """Remove versions no link points to and past their grace (a killed writer's).

    Run once at daemon start-up: a version is otherwise cleaned only when its
    directory's snapshot is next rewritten, which may be never.
    """
    from memd.serving import MODES

    root = os.path.join(cache_dir, "snapshots")
    try:
        key_dirs = os.listdir(root)
    except OSError:
        return
    for key in key_dirs:
        for mode in MODES:
            _remove_old_versions(os.path.join(root, key), mode, keep="", now_ns=now_ns)


class Published:
    """A version in place but maybe not yet durable: what `flush` needs.

    A plain slotted class: `dataclasses` would cost the warm path milliseconds.
    """

    __slots__ = ("built_ns", "key_dir", "mode", "name", "previous")

    def __init__(
        self, *, key_dir: str, mode: str, name: str, previous: str | None, built_ns: int
    ) -> None:
        self.key_dir = key_dir
        self.mode = mode
        self.name = name  # the version directory's name, `.<mode>.<version>`
        self.previous = previous  # the link's target before, for a failed flush
        self.built_ns = built_ns


def _snapshot_files(snapshot: Snapshot, version: str) -> tuple[tuple[str, bytes], ...]:
    """Return (file name, bytes) of one version; the warm-path files come last."""
    prompt = encode_prompt(snapshot.text)
    meta_txt = format_meta(snapshot, prompt_bytes=len(prompt), version=version)
    return (
        *_content_files(snapshot),
        ("meta.json", _json_bytes({**snapshot_metadata(snapshot), "version": version})),
        (PROMPT_FILE, prompt),
        (META_FILE, meta_txt.encode("utf-8", "surrogateescape")),
    )


def _content_files(snapshot: Snapshot) -> tuple[tuple[str, bytes], ...]:
    """Return diagnostics.json and manifest.json: what no version stamp changes."""
    return (
        ("diagnostics.json", _json_bytes([d.to_dict() for d in snapshot.diagnostics])),
        ("manifest.json", _json_bytes([_manifest_dict(m) for m in snapshot.manifest])),
    )


_sync_data = getattr(os, "fdatasync", os.fsync)  # macOS has no fdatasync
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def _write_new(path: str, data: bytes) -> None:
    """Write a new file in an unpublished version directory."""
    fd = os.open(path, _NEW_FILE, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


def _sync_version(version_dir: str) -> None:
    """Flush a version's files and directory entries before it is published.

    Only prompt.md and meta.txt are read without validation (the JSON files
    fail to parse when torn), so only they are flushed file by file.
    """
    for filename in (PROMPT_FILE, META_FILE):
        fd = os.open(os.path.join(version_dir, filename), os.O_RDONLY | os.O_CLOEXEC)
        try:
            _sync_data(fd)
        finally:
            os.close(fd)
    _fsync_dir(version_dir)


def _fsync_dir(directory: str) -> None:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def snapshot_metadata(snapshot: Snapshot) -> dict[str, object]:
    """Return the JSON metadata: sha, times, inputs, truncation, lint counts."""
    truncation = snapshot.truncation
    return {
        "memory_dir": snapshot.memory_dir,
        "mode": snapshot.mode,
        "sha256": snapshot.sha256,
        "built_ns": snapshot.built_ns,
        "render_seconds": snapshot.render_seconds,
        "env_fingerprint": snapshot.env_fingerprint,
        "inputs": [
            {"path": i.path, "size": i.size, "mtime_ns": i.mtime_ns, "inode": i.inode}
            for i in snapshot.inputs
        ],
        "truncation": None
        if truncation is None
        else {
            "line_count": truncation.line_count,
            "byte_count": truncation.byte_count,
            "was_line_truncated": truncation.was_line_truncated,
            "was_byte_truncated": truncation.was_byte_truncated,
        },
        "lint_errors": snapshot.lint_errors,
        "lint_warnings": snapshot.lint_warnings,
        "total_file_count": snapshot.total_file_count,
        "total_subdir_count": snapshot.total_subdir_count,
    }


def _manifest_dict(entry: object) -> dict[str, object]:
    return {
        name: getattr(entry, name)
        for name in ("relpath", "name", "type", "description", "mtime_ns")
    }


def _json_bytes(data: object) -> bytes:
    import json

    # A lone surrogate (a file name that is not UTF-8) becomes a JSON `\udcXX`
    # escape: surrogatepass would write bytes no UTF-8 reader accepts.
    # No indent: json's C encoder runs only without one (10,000 inputs: ~10x).
    return (json.dumps(data, ensure_ascii=False) + "\n").encode(
        "utf-8", "backslashreplace"
    )


def _with_sep(memory_dir: str) -> str:
    return memory_dir if memory_dir.endswith(os.sep) else memory_dir + os.sep


def _remove_old_versions(key_dir: str, mode: str, *, keep: str, now_ns: int) -> None:
    """Remove unpublished versions of `mode` past the grace period; best effort."""
    import shutil

    try:
        names = os.listdir(key_dir)
    except OSError:
        return
    try:
        current: str | None = os.readlink(os.path.join(key_dir, mode))
    except OSError:
        current = None  # no published version: every old one is an orphan
    cutoff = now_ns - VERSION_GRACE_NS
    for name in names:
        if not name.startswith(f".{mode}.") or name in (keep, current):
            continue
        path = os.path.join(key_dir, name)
        try:
            if os.lstat(path).st_mtime_ns >= cutoff:
                continue
            if name.startswith(f".{mode}.link-"):
                os.unlink(path)
            else:
                shutil.rmtree(path)
        except OSError:
            pass
