"""Warm prompt snapshots in the cache directory: layout, atomic replace, stat freshness.

Layout, per memory directory and mode::

    <cache>/snapshots/<sanitize_path(memory_dir)>-<hash of memory_dir>/
        <mode> -> .<mode>.<version>        symlink, swapped atomically by rename
        .<mode>.<version>/prompt.md        the prompt bytes
                          meta.txt         plain text for the hot path (str.split)
                          meta.json        everything, for `--format json` and status
                          diagnostics.json
                          manifest.json

A new snapshot is published by renaming a new symlink over `<mode>`, so
`<mode>/prompt.md` is always a whole file; `memd.snapshot.publish` does the
writing (fresh version directory, fdatasync, rename, grace period for old
versions). A reader resolves the link once and reads meta and prompt from the
same version directory, so it never pairs an old prompt with new meta.

Freshness is checked with `stat` only: every recorded input must show the same
size, mtime_ns and inode. Like git's "racily clean" rule (memd.racy), an input
whose mtime is within `RACY_WINDOW_NS` of the build start is treated as
changed, because a write in the same timestamp tick after it was read would
leave its stat unchanged. One second covers nanosecond filesystems (ext4, XFS,
btrfs, APFS, whose timestamps advance in clock ticks) and HFS+'s whole seconds.

Hot path: the warm `memd prompt` imports this module, so only `os`, `sys` and
`memd.claude_code.paths` load at import time; `json` loads inside `read_meta`, and the
writer only when a snapshot is written.
"""

from __future__ import annotations

import os

from memd._version import __version__
from memd.claude_code.jscompat import js_trim
from memd.claude_code.paths import sanitize_path
from memd.fsread import read_bytes
from memd.racy import RACY_WINDOW_NS, is_racy
from memd.statkey import stat_key

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

    from memd.diagnostics import Diagnostic
    from memd.memory.memdir import InputStat

VERSION_GRACE_NS = 5_000_000_000
# Another memd release may render differently: its snapshots are not read here.
META_MAGIC = f"memd-snapshot 1 {__version__}"
PROMPT_FILE = "prompt.md"
META_FILE = "meta.txt"
MODES = ("standard", "team", "kairos")


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


def inputs_unchanged(inputs: list[tuple[int, int, int, str]], built_ns: int) -> bool:
    """Return True when every (size, mtime_ns, inode, path) stats the same."""
    for size, mtime_ns, inode, path in inputs:
        if is_racy(mtime_ns, built_ns):
            return False
        if stat_key(path) != (size, mtime_ns, inode):
            return False
    return True


def changed_input(
    inputs: Iterable[InputStat],
) -> tuple[str, tuple[int, int, int]] | None:
    """Return the first input that no longer stats as recorded, and its stat now.

    Checked right after a build, it tells that the directory changed while
    it was read: a `touch` or write whose event the build may have swallowed.
    """
    for item in inputs:
        now = stat_key(item.path)
        if now != (item.size, item.mtime_ns, item.inode):
            return item.path, now
    return None


def racy_until_ns(inputs: Iterable[InputStat], built_ns: int) -> int | None:
    """Return when a rebuild would no longer see a racy input, or None if none is racy.

    A snapshot built within `RACY_WINDOW_NS` of an input's change is never
    served warm; the daemon can re-render once this time has passed.
    """
    racy = [i.mtime_ns for i in inputs if is_racy(i.mtime_ns, built_ns)]
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


class SnapshotReader:
    """The snapshots under one cache directory, read side; holds no state but the path.

    `memd.snapshot.publish.SnapshotStore` adds the write side.
    """

    __slots__ = ("cache_dir",)

    def __init__(self, cache_dir: str) -> None:
        self.cache_dir = cache_dir

    def key_dir(self, memory_dir: str) -> str:
        """Return `<cache>/snapshots/<key>`, the directory holding all of its modes.

        The key is `sanitize_path(memory_dir)` plus a hash of the exact path:
        sanitizing alone maps `team_a` and `team-a` to one name.
        """
        path = _with_sep(memory_dir)
        key = f"{sanitize_path(path)}-{fingerprint(path)}"
        return os.path.join(self.cache_dir, "snapshots", key)

    def directory_for(self, memory_dir: str, mode: str) -> str:
        """Return `<cache>/snapshots/<sanitize_path(memory_dir)>/<mode>/` (the link)."""
        return os.path.join(self.key_dir(memory_dir), mode) + os.sep

    def prompt_path(self, memory_dir: str, mode: str) -> str:
        """Return the path of the published prompt.md (always a complete file)."""
        return os.path.join(self.key_dir(memory_dir), mode, PROMPT_FILE)

    def _version_dir(self, memory_dir: str, mode: str) -> str | None:
        key_dir = self.key_dir(memory_dir)
        try:
            target = os.readlink(os.path.join(key_dir, mode))
        except (OSError, ValueError):
            return None
        if os.sep in target or not target.startswith(f".{mode}."):
            return None  # not a link this store wrote
        return os.path.join(key_dir, target)

    def _meta(self, memory_dir: str, mode: str) -> dict[str, object] | None:
        """Return the published version's meta.txt fields and `version_dir`, or None."""
        version_dir = self._version_dir(memory_dir, mode)
        if version_dir is None:
            return None
        try:
            meta_bytes = read_bytes(os.path.join(version_dir, META_FILE))
        except OSError:  # a version removed under us: treat as no snapshot
            return None
        meta = parse_meta(meta_bytes.decode("utf-8", "surrogateescape"))
        if meta is None or meta.get("memory_dir") != _with_sep(memory_dir):
            return None
        meta["version_dir"] = version_dir
        return meta

    def read(
        self, memory_dir: str, mode: str
    ) -> tuple[dict[str, object], bytes] | None:
        """Return (meta.txt fields, prompt bytes) from one version, or None."""
        meta = self._meta(memory_dir, mode)
        if meta is None:
            return None
        try:
            data = read_bytes(os.path.join(str(meta["version_dir"]), PROMPT_FILE))
        except OSError:
            return None
        return (meta, data) if len(data) == meta["prompt_bytes"] else None

    def read_fresh_bytes(
        self,
        memory_dir: str,
        mode: str,
        *,
        extra_guidelines: str | None = None,
        profile: str | None = None,
    ) -> bytes | None:
        """Return the prompt bytes if the snapshot is fresh, else None.

        `profile` is the agent release in force: a snapshot another release's
        rules built is stale. None skips that check.
        """
        found = self.read(memory_dir, mode)
        if found is None:
            return None
        meta, data = found
        return data if _is_current(meta, mode, extra_guidelines, profile) else None

    def is_fresh(
        self,
        memory_dir: str,
        mode: str,
        *,
        extra_guidelines: str | None = None,
        profile: str | None = None,
    ) -> bool:
        """Whether `read_fresh_bytes` would serve the snapshot, without reading it.

        The prompt file is only stat'ed for its recorded size: the daemon's
        sweep and the SessionStart fast path need the answer, not the bytes.
        """
        meta = self._meta(memory_dir, mode)
        if meta is None:
            return False
        prompt = os.path.join(str(meta["version_dir"]), PROMPT_FILE)
        try:
            size = os.stat(prompt, follow_symlinks=False).st_size
        except OSError:
            return False
        return size == meta["prompt_bytes"] and _is_current(
            meta, mode, extra_guidelines, profile
        )

    def read_fresh(
        self,
        memory_dir: str,
        mode: str,
        *,
        extra_guidelines: str | None = None,
        profile: str | None = None,
    ) -> str | None:
        """Return the text if every input stats the same and none is racy, else None."""
        data = self.read_fresh_bytes(
            memory_dir, mode, extra_guidelines=extra_guidelines, profile=profile
        )
        return None if data is None else data.decode("utf-8")

    def read_meta(self, memory_dir: str, mode: str) -> dict[str, object] | None:
        """Return meta.json of the published snapshot, or None."""
        import json

        version_dir = self._version_dir(memory_dir, mode)
        if version_dir is None:
            return None
        try:
            data = json.loads(read_bytes(os.path.join(version_dir, "meta.json")))
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def read_diagnostics(self, memory_dir: str, mode: str) -> tuple[Diagnostic, ...]:
        """Return the published snapshot's diagnostics (empty when there is none)."""
        from memd.diagnostics import Diagnostic

        items = self.read_diagnostic_dicts(memory_dir, mode) or []
        return tuple(Diagnostic.from_dict(item) for item in items)

    def read_diagnostic_dicts(
        self, memory_dir: str, mode: str
    ) -> list[dict[str, object]] | None:
        """Return diagnostics.json's findings as plain dicts, or None when unreadable.

        The hooks' warm SessionStart words these without `memd.diagnostics`
        (nor `json`: memd.fastjson reads them).
        """
        from memd.fastjson import loads

        version_dir = self._version_dir(memory_dir, mode)
        if version_dir is None:
            return None
        try:
            data = loads(read_bytes(os.path.join(version_dir, "diagnostics.json")))
        except (OSError, ValueError):
            return None
        items = data.get("diagnostics", data) if isinstance(data, dict) else data
        if not isinstance(items, list):
            return None
        return [item for item in items if isinstance(item, dict)]


def _is_current(
    meta: dict[str, object],
    mode: str,
    extra_guidelines: str | None,
    profile: str | None,
) -> bool:
    """Whether a snapshot's meta matches this request and its inputs still stat so."""
    if (
        meta.get("mode") != mode
        or meta.get("env") != guidelines_fingerprint(extra_guidelines)
        or (profile is not None and meta.get("profile") != profile)
    ):
        return False
    inputs, built_ns = meta["inputs"], meta["built_ns"]
    if not isinstance(inputs, list) or not isinstance(built_ns, int):
        return False
    return inputs_unchanged(inputs, built_ns)


def _with_sep(memory_dir: str) -> str:
    return memory_dir if memory_dir.endswith(os.sep) else memory_dir + os.sep
