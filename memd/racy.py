"""The racily-clean rule: when an unchanged stat does not prove unchanged content.

As in git, a file whose mtime falls within `RACY_WINDOW_NS` of the moment it
was recorded (a snapshot's build, a hook's record, a recall pass) may have
been rewritten within the same timestamp tick without its stat moving, so it
counts as maybe changed and is checked again later.

The window is two-sided and bounded. An mtime further in the future than the
window (a clock stepped back, `touch -d`, files from a skewed machine or file
server) is not racy: the next write stamps a different mtime, so the stat
still tells. Counting it racy would keep it "maybe changed" until the clock
caught up, hours or years of rebuilding the same snapshot.

Standard library only: the hooks' fast path imports it.
"""

from __future__ import annotations

RACY_WINDOW_NS = 1_000_000_000


def is_racy(mtime_ns: int, recorded_ns: int) -> bool:
    """Whether a file with `mtime_ns` may have changed unseen since `recorded_ns`."""
    return abs(mtime_ns - recorded_ns) <= RACY_WINDOW_NS
