"""`memd service install|uninstall|status`: run memd under systemd or launchd."""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Mapping


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "action",
        choices=("install", "uninstall", "status"),
        help="install (write, enable and start), uninstall (stop, disable, remove)"
        " or status (the service manager's view plus `memd status`)",
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="print the files and commands instead of writing or running anything",
    )
    which = parser.add_mutually_exclusive_group()
    which.add_argument(
        "--systemd",
        dest="manager",
        action="store_const",
        const="systemd",
        help="use a systemd user unit (the default on Linux)",
    )
    which.add_argument(
        "--launchd",
        dest="manager",
        action="store_const",
        const="launchd",
        help="use a launchd LaunchAgent (the default on macOS)",
    )


def run(args: argparse.Namespace) -> int:
    from memd.config import load_config
    from memd.service import install as service

    env = os.environ
    manager = args.manager or service.detect_manager()
    if args.action == "status":
        config = load_config(env)
        uid, user = os.getuid(), _user_name()
        return _status(manager, uid, user, env, config.state_dir, args.dry_run)
    return change_service(args.action, manager, dry_run=args.dry_run)


def service_file(manager: str) -> str:
    """The unit or plist file `memd service install` writes for `manager`."""
    from memd.service import install as service
    from memd.service.units import launchd_plist_path, systemd_unit_path

    home = os.path.expanduser("~")
    if manager == service.LAUNCHD:
        return launchd_plist_path(home)
    return systemd_unit_path(os.environ, home)


def change_service(action: str, manager: str, *, dry_run: bool) -> int:
    """`memd service install|uninstall` (`memd setup` runs it too): the exit code."""
    from memd.config import load_config
    from memd.service import install as service
    from memd.service.units import log_file_path

    env = os.environ
    home = os.path.expanduser("~")
    uid, user = os.getuid(), _user_name()
    config = load_config(env)
    if action == "install":
        journal = manager != service.SYSTEMD or service.journal_running()
        log_file = None if journal else log_file_path(config.state_dir)
        plan = service.install_plan(
            manager,
            memd_path=service.resolve_memd_path(env),
            env=env,
            home=home,
            uid=uid,
            user=user,
            writable=(config.cache_dir, config.state_dir, *config.watch_dirs),
            log_file=log_file,
        )
    else:
        log_file = None
        plan = service.uninstall_plan(manager, env=env, home=home, uid=uid, user=user)
    if dry_run:
        print(f"# memd service {action} --dry-run ({manager}): nothing is done")
        print(service.describe_plan(plan), end="")
        return 0
    try:
        service.execute_plan(plan, env=env, echo=print)
    except service.UserManagerUnreachable as error:
        print(f"memd: {error}", file=sys.stderr)
        print(
            "Files are in place; finish by hand (lingering keeps memd", file=sys.stderr
        )
        print("running when you are logged out):", file=sys.stderr)
        for line in error.manual:
            print(f"  {line}", file=sys.stderr)
        return 2
    except service.ServiceStartFailed as error:
        print(f"memd: {error}", file=sys.stderr)
        for line in error.details:
            print(f"  {line}", file=sys.stderr)
        print(f"hint: {error.hint}", file=sys.stderr)
        return 2
    print(_next_steps(manager, action, home, log_file))
    return 0


def _user_name() -> str:
    import getpass

    try:
        return getpass.getuser()
    except (OSError, KeyError):  # no passwd entry and no $USER (some containers)
        return "$USER"


def _next_steps(manager: str, action: str, home: str, log_file: str | None) -> str:
    from memd.service import install as service
    from memd.service import units as service_units

    if action == "uninstall":
        return "memd service removed."
    if manager == service.LAUNCHD:
        logs = service_units.launchd_log_dir(home)
        return f"memd agent {service_units.LABEL} is loaded; logs: {logs}/"
    logs = log_file or "journalctl --user -u memd"
    return (
        f"memd.service is enabled and started; logs: {logs}\n"
        "To keep it running while you are logged out: loginctl enable-linger"
    )


def _status(
    manager: str,
    uid: int,
    user: str,
    env: Mapping[str, str],
    state_dir: str,
    dry_run: bool,
) -> int:
    import shlex

    from memd.service import install as service

    command = service.status_command(manager, uid)
    if dry_run:
        print(shlex.join(command))
        return 0
    print(f"# {shlex.join(command)}")
    result = service.run_command(command)
    if manager == service.SYSTEMD and service.is_unreachable(result, env):
        print(f"memd: {service.describe_unreachable(result)}", file=sys.stderr)
        return 2
    sys.stdout.write(result.stdout)
    sys.stdout.write(result.stderr)
    code = 0 if result.returncode == 0 else 1
    if manager == service.SYSTEMD:
        _print_linger(user)
        _print_log_tail(state_dir)
    print("# memd status")
    _print_memd_status()
    return code


def _print_linger(user: str) -> None:
    """Say whether memd outlives the login session (systemd's lingering)."""
    from memd.errors import ServiceError
    from memd.service import install as service

    try:
        linger = service.run_command(
            ("loginctl", "show-user", user, "--property=Linger", "--value")
        )
    except ServiceError:  # no loginctl: nothing to say
        return
    if linger.returncode == 0 and linger.stdout.strip() == "no":
        print(f"lingering is off: memd stops when {user} logs out")
        print(f"  (keep it running with: loginctl enable-linger {user})")


def _print_log_tail(state_dir: str, lines: int = 20) -> None:
    """Print memd's last log lines: from the journal, or the unit's log file."""
    from memd.errors import ServiceError
    from memd.service import install as service
    from memd.service.units import log_file_path

    if service.journal_running():
        command = ("journalctl", "--user", "-u", "memd", "-n", str(lines), "--no-pager")
        print(f"# last log lines: {' '.join(command)}")
        try:
            result = service.run_command(command)
        except ServiceError as error:
            print(f"({error})")
            return
        sys.stdout.write(result.stdout or result.stderr)
        return
    path = log_file_path(state_dir)
    print(f"# last log lines: {path}")
    try:
        tail = service.read_log_tail(path, lines)
    except OSError as error:
        print(f"(no log file: {error.strerror})")
        return
    for line in tail:
        print(line)


def _print_memd_status() -> None:
    import argparse
    import importlib
    import importlib.util

    if importlib.util.find_spec("memd.cli.commands.status") is None:
        print("memd status is not available in this build")
        return
    status = importlib.import_module("memd.cli.commands.status")
    parser = argparse.ArgumentParser(prog="memd status")
    status.add_arguments(parser)
    status.run(parser.parse_args([]))
