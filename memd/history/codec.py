"""A version's bytes as stored: zlib, primed with the previous version when small.

`zlib.compressobj(zdict=base)` lets a stream refer back into `base`, so a
small edit of a small file costs tens of bytes instead of a compressed copy.
The window is 32 KiB, so only files and bases of at most `DELTA_MAX_BYTES`
are stored as deltas; a chain is cut by a full copy every `FULL_EVERY`
versions, so reading any version decompresses at most that many streams.
"""

from __future__ import annotations

import zlib

from memd.errors import MemdError

FULL_EVERY = 16
DELTA_MAX_BYTES = 32 * 1024  # zlib's window: a longer dictionary is cut to its tail
LEVEL = 6


class DamagedBlobError(MemdError, ValueError):
    """A stored version that cannot be read back (corrupt, missing, a broken chain).

    A `ValueError` too: the recorders' guard (`except ValueError`) survives it.
    """


def can_delta(data: bytes, base: bytes | None, base_depth: int) -> bool:
    """Whether `data` may be stored against `base` (at chain depth `base_depth`)."""
    return (
        base is not None
        and 0 < len(base) <= DELTA_MAX_BYTES
        and len(data) <= DELTA_MAX_BYTES
        and base_depth + 1 < FULL_EVERY
    )


def encode(data: bytes, base: bytes | None = None) -> bytes:
    """Compress `data`, primed with `base` when one is given."""
    packer = (
        zlib.compressobj(LEVEL, zlib.DEFLATED, 15, 9, zlib.Z_DEFAULT_STRATEGY, base)
        if base
        else zlib.compressobj(LEVEL)
    )
    return packer.compress(data) + packer.flush()


def decode(stored: bytes, base: bytes | None = None, *, limit: int) -> bytes:
    """Decompress `stored` (primed with `base` if it was), at most `limit` bytes.

    Raises `DamagedBlobError` (a `ValueError`) for a corrupt stream or one that
    inflates past `limit`.
    """
    try:
        unpacker = zlib.decompressobj(15, base) if base else zlib.decompressobj()
        data = unpacker.decompress(stored, limit + 1)
    except zlib.error as error:
        raise DamagedBlobError(f"corrupt history blob: {error}") from None
    if len(data) > limit or unpacker.unconsumed_tail:
        raise DamagedBlobError("history blob inflates past its recorded size")
    if not unpacker.eof:
        raise DamagedBlobError("corrupt history blob: the stream is cut short")
    return data
