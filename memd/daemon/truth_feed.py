"""The daemon re-checks memory against its project when the project's `HEAD` moves.

`TruthFeed.poll` is called on each full sweep (never on a save's rebuild):
it only hands the watched memory dirs to one background thread and returns.
That thread learns each dir's project roots (`memd.projects.roots`), reads
each repository's `HEAD` signature by `stat` (`memd.truth.repo.head_signature`,
no git), and runs `memd.truth.check.check_memory` for a dir whose `HEAD`
signature or memory listing changed since its last check, or that was never
checked. The check leaves the report SessionStart, `memd status` and the
viewer read (`memd.truth.notice`). One check at a time; a poll while one
runs is dropped (the next sweep asks again).
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

    from structlog.typing import FilteringBoundLogger

    from memd.config import Config


class TruthFeed:
    """One background thread that keeps each memory dir's truth report current."""

    def __init__(
        self,
        config: Callable[[], Config],
        env: Mapping[str, str],
        log: FilteringBoundLogger,
        *,
        profile: Callable[[], object] = lambda: None,
    ) -> None:
        self._config = config
        self._env = env
        self._log = log
        self._profile = profile
        self._pool = ThreadPoolExecutor(1, "memd-truth")
        self._busy = threading.Lock()
        self._seen: dict[str, tuple[object, ...]] = {}  # memory dir -> inputs checked
        self.checks = 0

    def poll(self, memory_dirs: Iterable[str]) -> None:
        """Ask for a re-check of `memory_dirs` whose project moved; never waits."""
        if not self._busy.acquire(blocking=False):
            return
        dirs = sorted(memory_dirs)
        try:
            self._pool.submit(self._run, dirs)
        except RuntimeError:  # shut down meanwhile
            self._busy.release()

    def close(self) -> None:
        """Stop after the check in progress."""
        self._pool.shutdown(wait=True, cancel_futures=True)

    def _run(self, memory_dirs: list[str]) -> None:
        try:
            self._check_all(memory_dirs)
        except Exception:  # noqa: BLE001 -- one guard per unit of work: log, carry on
            self._log.exception("truth_check_failed")
        finally:
            self._busy.release()

    def _check_all(self, memory_dirs: list[str]) -> None:
        from memd.claude_code.gitroot import find_git_root
        from memd.projects.roots import roots_by_memory_dir
        from memd.truth.check import check_memory
        from memd.truth.repo import head_signature

        config = self._config()
        profile = self._profile()
        roots = roots_by_memory_dir(
            memory_dirs,
            env=self._env,
            state_dir=config.state_dir,
            extra_roots=config.watch_projects,
            profile=profile,  # type: ignore[arg-type]
        )
        for memory_dir in memory_dirs:
            its_roots = roots.get(memory_dir, ())
            root = its_roots[0] if its_roots else None
            inputs = (
                its_roots,
                head_signature(root) if root is not None else None,
                _listing(memory_dir),
            )
            if self._seen.get(memory_dir) == inputs:
                continue
            report = check_memory(
                memory_dir,
                (find_git_root(root) or root) if root is not None else None,
                cache_dir=config.cache_dir,
                severities=config.lint_severities,
                max_file_bytes=config.max_topic_file_bytes,
                roots=its_roots,
                env=self._env,
                profile=profile,
            )
            self._seen[memory_dir] = inputs
            self.checks += 1
            self._log.info(
                "truth_checked",
                memory_dir=memory_dir,
                head=report.head,
                findings=len(report.diagnostics),
                gone_files=len(report.gone_files),
            )


def _listing(memory_dir: str) -> tuple[tuple[str, int, int], ...]:
    """(name, size, mtime_ns) of each topic file: a memory edit is a new input."""
    from memd.fsread import list_dir

    try:
        entries = list_dir(memory_dir)
    except OSError:
        return ()
    found = []
    for entry in entries:
        if entry.name.endswith(".md"):
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            found.append((entry.name, info.st_size, info.st_mtime_ns))
    return tuple(sorted(found))
