"""`memd run`: the daemon, in the foreground (systemd and launchd supervise it)."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add `--foreground` (the only way memd runs; accepted for service files)."""
    parser.add_argument(
        "--foreground",
        action="store_true",
        help="stay in the foreground (always the case; the service manager supervises)",
    )


def run(args: argparse.Namespace) -> int:
    """Load the configuration, configure logging and run the daemon until stopped."""
    from memd.config import load_config
    from memd.daemon.run import run as run_daemon
    from memd.logconfig import configure_logging, get_logger
    from memd.service.units import log_file_path

    config = load_config()
    # Under a unit without journald, stderr is this file and memd rotates it.
    configure_logging(
        config.log_format, config.log_level, rotate_file=log_file_path(config.state_dir)
    )
    return run_daemon(config, get_logger(component="daemon"))
