"""Writing warm prompt snapshots: publish a version, make it durable, sweep old ones.

The write side of `memd.snapshot.store` (which keeps the layout and the warm read
path, and must stay light to import). A new snapshot is written into a fresh
version directory, its data flushed (fdatasync, directory fsync), then
published by renaming a new symlink over `<mode>`; `flush` makes the rename
durable afterwards, off the save's path, and puts the previous link back if it
fails. A failed write removes the half-written version and leaves the link
alone. Old versions are removed only after `VERSION_GRACE_NS`, so a reader that
resolved the link just before a swap can still finish.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil

from memd.atomic import crash_point
from memd.errors import SnapshotError
from memd.fsread import list_names, read_bytes
from memd.racy import is_racy
from memd.snapshot.store import (
    META_FILE,
    META_MAGIC,
    MODES,
    PROMPT_FILE,
    VERSION_GRACE_NS,
    SnapshotReader,
    encode_prompt,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memd.snapshot.build import Snapshot


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
        f"profile {snapshot.profile}",
    ]
    lines += [
        f"input {i.size} {i.mtime_ns} {i.inode} {i.path}" for i in snapshot.inputs
    ]
    if any("\n" in line or "\r" in line for line in lines[1:]):
        # A path with a line break cannot be recorded faithfully: never serve this warm.
        lines = [META_MAGIC, f"version {version}", "never_fresh 1"]
    return "\n".join(lines) + "\n"


def matches(store: SnapshotReader, snapshot: Snapshot) -> bool:
    """Whether the published snapshot already is `snapshot`, fresh and whole.

    Same prompt bytes, diagnostics and manifest, same recorded inputs, none
    of them racy: the daemon then skips the write (a restart over a warm
    cache). Reading the whole prompt also catches a version torn by a crash.
    """
    found = store.read(snapshot.memory_dir, snapshot.mode)
    if found is None:
        return False
    meta, data = found
    inputs = [(i.size, i.mtime_ns, i.inode, i.path) for i in snapshot.inputs]
    built_ns = meta["built_ns"]
    if (
        meta.get("mode") != snapshot.mode
        or meta.get("env") != snapshot.env_fingerprint
        or meta.get("profile") != snapshot.profile
        or meta.get("sha256") != snapshot.sha256
        or meta["inputs"] != inputs
        or not isinstance(built_ns, int)
        or any(is_racy(i[1], built_ns) for i in inputs)
        or data != encode_prompt(snapshot.text)
    ):
        return False
    version_dir = str(meta["version_dir"])
    for filename, expected in _content_files(snapshot):
        try:
            if read_bytes(os.path.join(version_dir, filename)) != expected:
                return False
        except OSError:
            return False
    return True


def write(store: SnapshotReader, snapshot: Snapshot) -> str:
    """Publish `snapshot` atomically, make it durable, return its prompt path.

    Raises:
        SnapshotError: the cache could not be written; the old snapshot is intact.
    """
    published = publish(store, snapshot)
    flush(published)
    return os.path.join(published.key_dir, published.mode, PROMPT_FILE)


def publish(store: SnapshotReader, snapshot: Snapshot) -> Published:
    """Write a new version, make its data durable, and swap the link to it.

    The version directory is private until the link is renamed over
    `<mode>`, so its files are written in place (no temp files); their data
    is flushed before the rename (SPEC §5: temp, fsync, rename), so a power
    cut never leaves the link on a torn version. `flush` then makes the
    rename itself durable and removes old versions, off the save's path.

    Raises:
        SnapshotError: the cache could not be written; the old snapshot is intact.
    """
    key_dir = store.key_dir(snapshot.memory_dir)
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
            crash_point()
        _sync_version(version_dir)
        crash_point()
        os.symlink(name, link_temp)
        crash_point()
        os.replace(link_temp, os.path.join(key_dir, mode))
        crash_point()
    except OSError as error:
        shutil.rmtree(version_dir, ignore_errors=True)
        with contextlib.suppress(OSError):
            os.unlink(link_temp)
        raise SnapshotError(error.strerror or str(error), path=version_dir) from error
    return Published(
        key_dir=key_dir,
        mode=mode,
        name=name,
        previous=previous,
        built_ns=snapshot.built_ns,
    )


def flush(published: Published) -> None:
    """Make a published version durable, then remove versions past their grace.

    A flush that fails (ENOSPC or EIO surfacing late) puts the previous
    link back, unless a newer version was published meanwhile.

    Raises:
        SnapshotError: the version could not be made durable.
    """
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
        raise SnapshotError(error.strerror or str(error), path=version_dir) from error
    crash_point()
    _remove_old_versions(key_dir, mode, keep=name, now_ns=published.built_ns)


def sweep_versions(cache_dir: str, *, now_ns: int) -> None:
    """Remove versions no link points to and past their grace (a killed writer's).

    Run once at daemon start-up: a version is otherwise cleaned only when its
    directory's snapshot is next rewritten, which may be never.
    """
    root = os.path.join(cache_dir, "snapshots")
    try:
        key_dirs = list_names(root)
    except OSError:
        return
    for key in key_dirs:
        for mode in MODES:
            _remove_old_versions(os.path.join(root, key), mode, keep="", now_ns=now_ns)


class Published:
    """A version in place but maybe not yet durable: what `flush` needs.

    A plain slotted class, as before the writer left the warm-path module.
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
        "profile": snapshot.profile,
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
    # A lone surrogate (a file name that is not UTF-8) becomes a JSON `\udcXX`
    # escape: surrogatepass would write bytes no UTF-8 reader accepts.
    # No indent: json's C encoder runs only without one (10,000 inputs: ~10x).
    return (json.dumps(data, ensure_ascii=False) + "\n").encode(
        "utf-8", "backslashreplace"
    )


def _remove_old_versions(key_dir: str, mode: str, *, keep: str, now_ns: int) -> None:
    """Remove unpublished versions of `mode` past the grace period; best effort."""
    try:
        names = list_names(key_dir)
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


class SnapshotStore(SnapshotReader):
    """The snapshots under one cache directory, with the write side."""

    __slots__ = ()

    def matches(self, snapshot: Snapshot) -> bool:
        """Whether the published snapshot already is `snapshot`, fresh and whole."""
        return matches(self, snapshot)

    def write(self, snapshot: Snapshot) -> str:
        """Publish `snapshot` and make it durable; see `write`."""
        return write(self, snapshot)

    def publish(self, snapshot: Snapshot) -> Published:
        """Publish `snapshot`; see `publish`."""
        return publish(self, snapshot)

    def flush(self, published: Published) -> None:
        """Make `published` durable; see `flush`."""
        flush(published)
