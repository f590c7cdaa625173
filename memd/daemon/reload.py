"""When the daemon reloads its config, and what a new one or a new profile redoes.

Pure decisions over values the daemon passes in (stat keys, `Config`s, profile
choices); the daemon reads the file, logs and rebuilds as they say.
"""

from __future__ import annotations

from dataclasses import dataclass

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memd.claude_code.choice import ProfileChoice
    from memd.config import Config


@dataclass(frozen=True, slots=True)
class Reload:
    """What a config that differs from the one in force makes the daemon redo."""

    rewrites_all: bool  # new modes: every snapshot written again
    moves_recall: bool  # new cache dir: a new recall index, then every snapshot


@dataclass(frozen=True, slots=True)
class ProfileSwitch:
    """What a fresh choice of the agent profile asks for."""

    is_logged: bool  # the first choice, or a new version or reason
    rerenders: bool  # a different profile: rediscover and write every snapshot


def is_reload_due(
    *,
    asked: bool,
    touched: bool,
    rediscovering: bool,
    stat_before: tuple[int, int, int],
    stat_now: tuple[int, int, int],
) -> bool:
    """Whether a batch reloads the config: a SIGHUP, an event on the file, or a
    new stat found on rediscovery (saved before its directory was watched, the
    file shows up only as a new stat)."""
    return asked or touched or (rediscovering and stat_now != stat_before)


def reload_of(current: Config, loaded: Config) -> Reload | None:
    """Return what `loaded` changes against `current`; None if nothing."""
    if loaded == current:
        return None
    return Reload(
        rewrites_all=loaded.modes != current.modes,
        moves_recall=loaded.cache_dir != current.cache_dir,
    )


def profile_switch(
    previous: ProfileChoice | None, chosen: ProfileChoice
) -> ProfileSwitch:
    """Return what choosing `chosen` after `previous` (None at start) asks for."""
    return ProfileSwitch(
        is_logged=chosen != previous,
        rerenders=previous is not None and chosen.profile != previous.profile,
    )
