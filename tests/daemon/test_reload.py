"""memd.daemon.reload: when the config is reloaded, and what it or a profile redoes."""

from __future__ import annotations

import dataclasses

from memd.agent.choice import ProfileChoice
from memd.agent.profile import PROFILES
from memd.config import load_config
from memd.daemon.reload import Reload, is_reload_due, profile_switch, reload_of
from tests.conftest import Home

SAME = (10, 1, 2)


class TestIsReloadDue:
    def test_a_signal_or_an_event_on_the_file_reloads(self) -> None:
        """SIGHUP or an event naming the file: reload, whatever its stat."""
        for asked, touched in ((True, False), (False, True)):
            assert is_reload_due(
                asked=asked,
                touched=touched,
                rediscovering=False,
                stat_before=SAME,
                stat_now=SAME,
            )

    def test_a_new_stat_counts_only_on_rediscovery(self) -> None:
        """Saved before its directory was watched, the file shows only as a new stat."""
        moved = (11, 1, 2)

        assert is_reload_due(
            asked=False,
            touched=False,
            rediscovering=True,
            stat_before=SAME,
            stat_now=moved,
        )
        assert not is_reload_due(
            asked=False,
            touched=False,
            rediscovering=False,
            stat_before=SAME,
            stat_now=moved,
        )
        assert not is_reload_due(
            asked=False,
            touched=False,
            rediscovering=True,
            stat_before=SAME,
            stat_now=SAME,
        )


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
