"""`memd run`: the daemon, in the foreground (systemd and launchd supervise it).

Under a service manager (stderr no terminal) every log record is a JSON line
on stderr, for the journal. In a terminal the records go to memd's log file
(`-v` shows them instead) and the person sees readable lines: first what it
watches and how to stop it, then each file that turns invalid with its
findings as `memd lint` writes them, each one fixed, and any warning.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import MutableMapping
    from typing import Any

    from memd.config import Config


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add `--foreground` (the only way memd runs; accepted for service files)."""
    from memd.cli.commands._options import add_verbose_argument

    parser.add_argument(
        "--foreground",
        action="store_true",
        help="stay in the foreground (always the case; the service manager supervises)",
    )
    add_verbose_argument(parser)


def run(args: argparse.Namespace) -> int:
    """Load the configuration, configure logging and run the daemon until stopped."""
    from memd.cli.commands._options import configure_command_logs
    from memd.config import load_config
    from memd.daemon.run import run as run_daemon
    from memd.logconfig import get_logger

    config = load_config()
    # Under a unit without journald, stderr is the log file and memd rotates it
    # (configure_command_logging passes it on); in a terminal the records go there.
    configure_command_logs(config, args, show=_ForPeople(config).line)
    return run_daemon(config, get_logger(component="daemon"))


class _ForPeople:
    """Turns the daemon's events into the lines a person in a terminal reads."""

    def __init__(self, config: Config) -> None:
        from memd.service.units import log_file_path

        self.config = config
        self.log_file = log_file_path(config.state_dir)
        # Findings of the first scan wait for the first line, which needs its count.
        self.before_ready: list[str] | None = []

    def line(self, level: str, event: MutableMapping[str, Any]) -> str | None:
        name = event.get("event")
        if name == "daemon_ready" and self.before_ready is not None:
            lines, self.before_ready = self.before_ready, None
            return "\n".join([self._first_line(event), *lines])
        if name == "memory_file_broken":
            found = self._findings(event)
            if found is not None and self.before_ready is not None:
                self.before_ready.append(found)
                return None
            return found
        if name == "memory_file_fixed":
            return f"{_joined(event.get('memory_dir'), event.get('file'))}: fixed"
        if name == "daemon_stopped":
            return "memd: stopped"
        if name == "memory_loss":
            return self._loss(event)
        if level in ("warning", "error", "critical", "exception"):
            return f"memd: {level}: {name} (details in {self.log_file})"
        return None

    def _first_line(self, event: MutableMapping[str, Any]) -> str:
        import os

        from memd.claude_code.paths import home_dir, memory_base_dir
        from memd.projects.naming import tilde

        home = home_dir()
        roots = [
            tilde(path, home)
            for path in (
                os.path.join(memory_base_dir(), "projects"),
                *self.config.watch_dirs,
            )
        ]
        extra = len(self.config.watch_projects)
        also = f" and {extra} configured project(s)" if extra else ""
        count = event.get("dirs")
        return (
            f"memd: watching {count} memory director{'y' if count == 1 else 'ies'}"
            f" ({', '.join(roots)}{also}); logs in {tilde(self.log_file, home)};"
            " Ctrl-C stops it"
        )

    def _loss(self, event: MutableMapping[str, Any]) -> str:
        """The loss, named by its project, with the command that brings it back.

        From the `memory_loss` record alone: what was lost, by what cause, and
        the restore command memd.history gives (`restore`), else the revision
        from before the loss (`restore_rev`) for that project.
        """
        import time

        from memd.history.wording import cause_words
        from memd.projects.naming import placed
        from memd.projects.roots import load_project_names
        from memd.times import clock

        memory_dir = str(event.get("memory_dir") or "")
        # Said from the daemon's logging path: memd's own roots and the folder
        # the name spells, not a read of the agent's transcripts.
        names = load_project_names([memory_dir], config=self.config, transcripts=False)
        restore = event.get("restore")
        if not isinstance(restore, str) or not restore:
            restore = (
                f"memd restore --all --project {names.project_arg(memory_dir)}"
                f" --rev {event.get('restore_rev')}"
            )
        now = time.time()  # the record is told as it is written
        stamp = clock(now, now=now).removeprefix("today ")  # HH:MM:SS: --at reads it
        sentence = (
            f"memd: {event.get('loss') or 'memory was lost'} at {stamp}"
            f" ({cause_words(event.get('cause'))});"
            f" `{restore}` brings them back."
        )
        return (
            f"{placed(sentence, names.label(memory_dir))}\n"
            f"  memory directory: {names.detail(memory_dir)}"
        )

    def _findings(self, event: MutableMapping[str, Any]) -> str | None:
        import dataclasses

        from memd.diagnostics import Diagnostic
        from memd.lint.formats import render_text
        from memd.projects.roots import load_project_names

        found = event.get("diagnostics")
        if not isinstance(found, list):
            return None
        diagnostics = tuple(
            dataclasses.replace(
                d, path=_joined(event.get("memory_dir"), d.path or event.get("file"))
            )
            for d in (Diagnostic.from_dict(f) for f in found if isinstance(f, dict))
        )
        # each file in its project by folder, as the loss is (no transcripts read)
        memory_dir = str(event.get("memory_dir") or "")
        names = load_project_names([memory_dir], config=self.config, transcripts=False)
        return render_text(diagnostics, summary=False, heading=names.file).rstrip("\n")


def _joined(directory: object, file: object) -> str:
    import os

    return os.path.join(str(directory or ""), str(file or ""))
