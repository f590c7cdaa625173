"""What lint keeps out of a sync's commit: each file's first error.

Both syncs ask it before a commit. A likely secret counts as an error
whatever its configured severity; an index is held back only when it is not
text or holds a secret, never for its budget.
"""

from __future__ import annotations

from memd.claude_code.terms import INDEX_NAME

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from memd.config import Config


def lint_errors(
    team_dir: str,
    *,
    severities: Mapping[str, str] | None = None,
    max_file_bytes: int | None = None,
    secret_allow: tuple[str, ...] = (),
) -> dict[str, str]:
    """Return relpath -> first error message for each file in `team_dir` with errors.

    A likely secret (lint's S001, whatever its configured severity) counts
    as an error here: no sync ever commits it. An index (``MEMORY.md``) is
    held back only when it cannot be read as text (F001, F002) or holds a
    secret, never for its budget (I002, I003): the other machine needs the
    index that links the files it receives.
    """
    from memd.lint.engine import lint_memdir
    from memd.memory.reader import load_memdir

    memdir = (
        load_memdir(team_dir)
        if max_file_bytes is None
        else load_memdir(team_dir, max_file_bytes=max_file_bytes)
    )
    errors: dict[str, str] = {}
    for diagnostic in lint_memdir(
        memdir, severities=severities, secret_allow=secret_allow
    ):
        if diagnostic.path.rsplit("/", 1)[-1] == INDEX_NAME and not (
            diagnostic.code.startswith("F") or diagnostic.code == "S001"
        ):
            continue
        if str(diagnostic.severity) == "error" or diagnostic.code == "S001":
            line = f" at line {diagnostic.line}" if diagnostic.line else ""
            errors.setdefault(
                diagnostic.path, f"{diagnostic.code}{line} {diagnostic.message}"
            )
    return errors


def lint_errors_for(config: Config) -> Callable[[str], dict[str, str]]:
    """Return `lint_errors` as every sync calls it: with `config`'s lint settings."""
    return lambda directory: lint_errors(
        directory,
        severities=config.lint_severities,
        max_file_bytes=config.max_topic_file_bytes,
        secret_allow=config.sync_allow,
    )
