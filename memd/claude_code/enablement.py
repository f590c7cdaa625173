"""Whether auto memory is on, and which rule decided (REFERENCE.md §1, 2.1.332).

The rules live in `memd.claude_code.enablement_rules`; the profile orders them and
the first that decides wins. Under 2.1.112: CLAUDE_CODE_DISABLE_AUTO_MEMORY
(truthy → off, defined-falsy → on), CLAUDE_CODE_SIMPLE, CLAUDE_CODE_REMOTE
(unless a remote memory dir is set), the merged `autoMemoryEnabled` (project
settings take part), default on. 2.1.332 puts safe mode first and lets
CLAUDE_COWORK_MEMORY_PATH_OVERRIDE spare a remote session.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from memd.claude_code.enablement_rules import (
    Enablement,
    is_env_defined_falsy,
    is_env_truthy,
)
from memd.claude_code.profile import ProfileSpec, get_profile

__all__ = [
    "Enablement",
    "is_auto_memory_enabled",
    "is_env_defined_falsy",
    "is_env_truthy",
]


def is_auto_memory_enabled(
    env: Mapping[str, str] | None = None,
    settings: Mapping[str, object] | None = None,
    *,
    profile: ProfileSpec = None,
) -> Enablement:
    """Return whether auto memory is enabled under `env` and the merged `settings`.

    `settings` is the merge of user, project, local and policy settings (later
    wins), as `memd.claude_code.settings.merged_settings` builds it; None means none
    apply. `profile` is a release (`"2.1.112"`) or profile; default the newest.
    """
    env = os.environ if env is None else env
    for rule in get_profile(profile).enablement_rules:
        decision = rule(env, settings)
        if decision is not None:
            return decision
    return Enablement(True, "default")
