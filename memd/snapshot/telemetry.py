"""Telemetry events: `memdir_loaded` and `memdir_disabled` as plain dicts.

REFERENCE.md §4 (tengu_memdir_loaded / tengu_memdir_disabled) gives the
reference's fields: `memory_type` (auto, team, agent), `content_length` (the
index's UTF-16 length), `line_count`, `was_truncated` (the *line* flag),
`was_byte_truncated`, and the non-recursive `total_file_count` /
`total_subdir_count`. memd adds the time, the directory, the mode, the render
duration and the lint counts. When the index is blank the reference sends no
content fields; memd sends zeros and `index_empty: true` so every event has
the same keys. The events are pure functions of their inputs (the time comes
from the snapshot's build time).

The fields a release added come from the profile that built the snapshot
(2.1.332: `memory_access_mode`, always `files` for memd, which never serves
memory through the memory tools; `prompt_variant` `base`; and for `team`,
`team_write_steered` false). `agent_profile` names that release.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from datetime import UTC, datetime

from memd.claude_code.enablement import Enablement, is_env_truthy

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memd.snapshot.build import Snapshot

MEMORY_TYPES = ("auto", "team", "agent")
LOADED = "memdir_loaded"
DISABLED = "memdir_disabled"


def _iso(time_ns: int) -> str:
    moment = datetime.fromtimestamp(time_ns / 1e9, tz=UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def memdir_loaded_event(snapshot: Snapshot, memory_type: str) -> dict[str, object]:
    """Return the `memdir_loaded` event for one rendered snapshot.

    Raises:
        ValueError: `memory_type` is not auto, team or agent.
    """
    if memory_type not in MEMORY_TYPES:
        raise ValueError(
            f"memory_type must be one of {MEMORY_TYPES}, not {memory_type!r}"
        )
    truncation = snapshot.truncation
    return {
        "event": LOADED,
        "time": _iso(snapshot.built_ns),
        "time_ns": snapshot.built_ns,
        "memory_type": memory_type,
        "memory_dir": snapshot.memory_dir,
        "mode": snapshot.mode,
        "content_length": 0 if truncation is None else truncation.byte_count,
        "line_count": 0 if truncation is None else truncation.line_count,
        "was_truncated": truncation is not None and truncation.was_line_truncated,
        "was_byte_truncated": truncation is not None and truncation.was_byte_truncated,
        "index_empty": truncation is None,
        "total_file_count": snapshot.total_file_count,
        "total_subdir_count": snapshot.total_subdir_count,
        "render_seconds": round(snapshot.render_seconds, 6),
        "lint_errors": snapshot.lint_errors,
        "lint_warnings": snapshot.lint_warnings,
        "sha256": snapshot.sha256,
        "agent_profile": snapshot.profile,
        **_release_fields(snapshot.profile, memory_type),
    }


# What memd reports for each field a release added to the event.
_MEMD_VALUES: Mapping[str, object] = {
    "memory_access_mode": "files",
    "prompt_variant": "base",
}


def _release_fields(profile: str, memory_type: str) -> dict[str, object]:
    from memd.claude_code.profile import get_profile

    fields = get_profile(profile).telemetry_fields
    found = {name: value for name, value in _MEMD_VALUES.items() if name in fields}
    if memory_type == "team" and "team_write_steered" in fields:
        found["team_write_steered"] = False
    return found


def memdir_disabled_event(
    enablement: Enablement,
    project_root: str,
    *,
    env: Mapping[str, str] | None = None,
    settings: Mapping[str, object] | None = None,
    now_ns: int | None = None,
) -> dict[str, object]:
    """Return the `memdir_disabled` event: which flags were set and the deciding rule.

    As in the reference, `disabled_by_setting` is true when the disable
    variable is not truthy and the merged `autoMemoryEnabled` is false, even if
    an earlier rule (CLAUDE_CODE_SIMPLE) decided. Without `settings`, it falls
    back to whether the setting was the deciding rule.
    """
    env = os.environ if env is None else env
    by_env = is_env_truthy(env.get("CLAUDE_CODE_DISABLE_AUTO_MEMORY"))
    if settings is not None:
        by_setting = not by_env and settings.get("autoMemoryEnabled") is False
    else:
        by_setting = enablement.reason == "settings:autoMemoryEnabled"
    time_ns = time.time_ns() if now_ns is None else now_ns
    return {
        "event": DISABLED,
        "time": _iso(time_ns),
        "time_ns": time_ns,
        "project_root": project_root,
        "disabled_by_env_var": by_env,
        "disabled_by_setting": by_setting,
        "rule": enablement.reason,
    }
