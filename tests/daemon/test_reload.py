"""memd.daemon.reload: when the config is reloaded, and what it or a profile redoes."""

from __future__ import annotations

import dataclasses

import pytest

from memd.claude_code.choice import ProfileChoice
from memd.claude_code.profile import PROFILES
from memd.config import load_config
from memd.daemon.reload import Reload, is_reload_due, profile_switch, reload_of
from tests.conftest import Home

SAME = (10, 1, 2)


MOVED = (11, 1, 2)


class TestIsReloadDue:
    @pytest.mark.parametrize(
        ("asked", "touched", "rediscovering", "stat_now", "expected"),
        [
            (True, False, False, SAME, True),  # SIGHUP
            (False, True, False, SAME, True),  # an event named the file
            # Saved before its directory was watched: only a new stat shows it.
            (False, False, True, MOVED, True),
            (False, False, False, MOVED, False),  # a stat is looked at on rediscovery
            (False, False, True, SAME, False),
        ],
    )
    def test_a_signal_an_event_or_a_new_stat_on_rediscovery_reloads(
        self,
        asked: bool,
        touched: bool,
        rediscovering: bool,
        stat_now: tuple[int, int, int],
        expected: bool,
    ) -> None:
        """SIGHUP or an event naming the file reload; a new stat only on rediscovery."""
        due = is_reload_due(
            asked=asked,
            touched=touched,
            rediscovering=rediscovering,
            stat_before=SAME,
            stat_now=stat_now,
        )

        assert expected == due


class TestReloadOf:
    def test_an_equal_config_changes_nothing(self, isolated_home: Home) -> None:
        """Reloaded unchanged: nothing to redo."""
        assert reload_of(load_config(), load_config()) is None

    def test_new_modes_rewrite_and_a_new_cache_moves_recall(
        self, isolated_home: Home
    ) -> None:
        """Modes: every snapshot again; cache dir: a new recall index too."""
        config = load_config()
        modes = dataclasses.replace(config, modes=("standard", "team"))
        cache = dataclasses.replace(config, cache_dir=config.cache_dir + "-new")
        settle = dataclasses.replace(config, settle_seconds=2.5)

        assert Reload(rewrites_all=True, moves_recall=False) == reload_of(config, modes)
        assert Reload(rewrites_all=False, moves_recall=True) == reload_of(config, cache)
        assert Reload(rewrites_all=False, moves_recall=False) == reload_of(
            config, settle
        )


class TestProfileSwitch:
    def test_the_first_choice_is_logged_and_rerenders_nothing(self) -> None:
        """At start there is nothing rendered under another profile."""
        chosen = ProfileChoice(profile=PROFILES[-1], reason="default", binary=None)

        switch = profile_switch(None, chosen)

        assert (True, False) == (switch.is_logged, switch.rerenders)

    def test_a_new_reason_is_logged_and_a_new_profile_rerenders(self) -> None:
        """Same profile for another reason: a log line; another profile: re-render."""
        newest = ProfileChoice(profile=PROFILES[-1], reason="default", binary=None)
        pinned = ProfileChoice(profile=PROFILES[-1], reason="pin", binary=None)
        older = ProfileChoice(profile=PROFILES[0], reason="pin", binary=None)

        same = profile_switch(newest, newest)
        reason = profile_switch(newest, pinned)
        other = profile_switch(pinned, older)

        assert (False, False) == (same.is_logged, same.rerenders)
        assert (True, False) == (reason.is_logged, reason.rerenders)
        assert (True, True) == (other.is_logged, other.rerenders)
