"""`memd setup`: wire memd into every agent in one command, and `--undo` it.

Wires each agent memd serves (`memd.agents`) that is on PATH, or those named
with `--agent` (Claude Code when none is found): Claude Code's hooks (the
same code as `memd hook install`) and server (`memd mcp install`), Codex
CLI's and Gemini CLI's MCP server and SessionStart hook, each agent's way of
letting memd's read tools run unasked; then `memd service install`, lints
every project and says what it did and what to do next. A config file an
agent's edit cannot parse is left alone with one line saying why, and the
other agents are still wired. `--dry-run` shows
each change first (the settings files' diffs, the service's files and
commands) and writes nothing. Run again, it changes nothing.

What setup changed is kept in memd's state dir: `setup.json` names each file
setup changed, the SHA-256 of the bytes it left, and a copy of the bytes it
found (in `setup/`, none for a file it created), and whether the service was
there before; the copies are files of their own, not JSON that a size cap
or a corrupt read could lose. `--undo` puts back the exact bytes of each file that
still holds what setup wrote (deleting one setup created), takes only memd's
entries out of a file edited since, and uninstalls a service setup installed.
Every copy keeps the mode of the file it copies, and a file that is a link
(into a dotfiles repository) stays a link: its target is written, by setup
and by `--undo`.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable

    from memd.agents.base import Agent

RECORD = "setup.json"
COPIES = "setup"  # the bytes setup found, one file per changed file
MAX_FILE_BYTES = 64 * 1024 * 1024 + 1  # ~/.claude.json holds the agent's history
AGENT_NAMES = (
    "claude-code",
    "codex",
    "gemini",
)  # memd.agents.NAMES, without importing it


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="show every change (the settings diffs, the service plan); do nothing",
    )
    parser.add_argument(
        "--undo",
        action="store_true",
        help="remove what setup added; restore the settings files byte for byte",
    )
    parser.add_argument(
        "--agent",
        action="append",
        choices=AGENT_NAMES,
        metavar="NAME",
        help="wire only this agent (repeatable): "
        + ", ".join(AGENT_NAMES)
        + "; default: every one on PATH",
    )
    parser.add_argument(
        "--no-service",
        action="store_true",
        help="leave the user service out (run `memd run` yourself)",
    )


def run(args: argparse.Namespace) -> int:
    from memd.cli.commands._options import configure_command_logs
    from memd.config import load_config

    config = load_config()
    configure_command_logs(config, args)
    if args.undo:
        return _undo(config.state_dir, dry_run=args.dry_run)
    return _setup(
        config.state_dir,
        dry_run=args.dry_run,
        service=not args.no_service,
        names=args.agent,
    )


def _chosen(names: list[str] | None) -> tuple[list[Agent], str]:
    """The agents to wire, and how they were chosen (for the first line)."""
    from memd.agents import all_agents, get_agent

    if names:
        chosen = [get_agent(name) for name in dict.fromkeys(names)]
        return chosen, "as asked"
    found = [agent for agent in all_agents() if agent.on_path(os.environ)]
    if found:
        return found, "found on PATH"
    return [get_agent("claude-code")], "none found on PATH; Claude Code, memd's first"


def _targets(
    agents: list[Agent] | None = None,
) -> tuple[tuple[str, str, Callable[..., str]], ...]:
    """(what, config file, its edit): the files setup changes, in order.

    Without `agents`, every agent's files: `--undo` takes memd out of each.
    """
    from memd.agents import all_agents
    from memd.cli.commands.hook import memd_executable

    executable = memd_executable()
    several = agents is None or len(agents) > 1 or agents[0].name != "claude-code"
    return tuple(
        (f"{agent.title} {edit.what}" if several else edit.what, edit.path, edit.edit)
        for agent in (all_agents() if agents is None else agents)
        for edit in agent.config_edits(os.environ, executable)
    )


def _setup(
    state_dir: str, *, dry_run: bool, service: bool, names: list[str] | None = None
) -> int:
    from memd.atomic import file_mode
    from memd.errors import UsageError
    from memd.hooks.settings_file import BACKUP_SUFFIX
    from memd.state import read_state, write_state

    record = read_state(state_dir, RECORD) if not dry_run else {}
    files = record.get("files")
    files = dict(files) if isinstance(files, dict) else {}
    agents, how = _chosen(names)
    print("memd setup --dry-run: nothing is changed" if dry_run else "memd setup:")
    print(f"  agents ({how}): {', '.join(agent.title for agent in agents)}")
    failed = False
    for what, path, edit in _targets(agents):
        watched = (path, path + BACKUP_SUFFIX)
        before = {p: _read_or_none(p) for p in watched}
        try:
            said = edit(path, install=True, dry_run=dry_run)
        except UsageError as error:  # this agent's file stays as it is
            print(f"  {what}: {error}", file=sys.stderr)
            failed = True
            continue
        if dry_run:
            print(f"# {what}: {path}")
            sys.stdout.write(said if said.startswith("---") else f"  {said}")
            continue
        print(f"  {what}: {said.rstrip()}")
        for changed in watched:
            after = _read_or_none(changed)
            if after == before[changed]:
                continue
            entry = files.get(changed)
            if isinstance(entry, dict):  # the first setup's copy is what it found
                first, mode = entry.get("before"), entry.get("mode")
            else:
                mode = file_mode(changed) if before[changed] is not None else None
                first = _keep_copy(state_dir, changed, before[changed], mode)
            files[changed] = {"before": first, "after": _digest(after), "mode": mode}
        record["files"] = files
        write_state(state_dir, RECORD, record)
    if not dry_run:
        _say_tool_approval(agents)
        known = record.get("agents")
        known = set(known) if isinstance(known, list) else set()
        record["agents"] = sorted(known | {agent.name for agent in agents})
        write_state(state_dir, RECORD, record)
    code = 0
    if service:
        code = _install_service(state_dir, record, dry_run=dry_run)
    else:
        print("  service: left out (--no-service); run `memd run` to watch memory")
    command = _put_on_path(state_dir, record, dry_run=dry_run)
    _lint_all(dry_run=dry_run)
    if not dry_run:
        _next_steps(service, agents, command)
    return code or (1 if failed else 0)


def _say_tool_approval(agents: list[Agent]) -> None:
    """Say how each agent may call memd's tools: reads unasked, writes asked."""
    names = {agent.name for agent in agents}
    if "codex" in names:
        print(
            "  Codex CLI: memd's read tools are marked read-only, so Codex calls"
            " them without asking; memory_write and memory_log ask first;"
            " the SessionStart hook is recorded as trusted"
        )
    if "gemini" in names:
        print(
            "  Gemini CLI: memd's server is in mcp.allowed, so Gemini calls its"
            " read tools without asking; memory_write and memory_log are in"
            " tools.confirmationRequired and ask first; Gemini runs hooks and"
            " MCP servers only in folders you trust"
        )


def _install_service(
    state_dir: str, record: dict[str, object], *, dry_run: bool
) -> int:
    import contextlib
    import io

    from memd.cli.commands.service import change_service, service_file
    from memd.service import install as service
    from memd.state import write_state

    manager = service.detect_manager()
    unit = service_file(manager)
    before = _read_or_none(unit)
    said = io.StringIO()
    with contextlib.redirect_stdout(said), contextlib.redirect_stderr(said):
        code = change_service("install", manager, dry_run=dry_run)
    print(f"# service ({manager})" if dry_run else f"  service ({manager}):")
    for line in said.getvalue().splitlines():
        print(f"    {line}")
    if not dry_run and "service" not in record:
        record["service"] = {
            "manager": manager,
            "file": unit,
            "existed": before is not None,
        }
        write_state(state_dir, RECORD, record)
    return code


def _lint_all(*, dry_run: bool) -> None:
    from memd.claude_code.choice import in_force
    from memd.config import load_config
    from memd.diagnostics import count_by_severity
    from memd.lint.targets import discover_targets, lint_targets

    targets = discover_targets()
    if dry_run:
        print(f"# lint: would lint {len(targets)} memory directories (read only)")
        return
    config = load_config()
    profile = in_force(config).profile
    found = lint_targets(targets, config=config, profile=profile)
    errors, warnings, _ = count_by_severity(found)
    if not targets:
        print("  lint: no memory yet (the agent makes it in its first session)")
        return
    verdict = f"{errors} errors, {warnings} warnings"
    more = "; `memd lint --all` shows them" if errors or warnings else ""
    print(f"  lint: {len(targets)} memory directories, {verdict}{more}")


def _next_steps(service: bool, agents: list[Agent], memd: str) -> None:
    titles = " or ".join(agent.title for agent in agents)
    print("next:")
    print(f"  {memd} doctor          check that every part is in place and answers")
    print(f"  start a new {titles} session: its hooks and MCP server load at start")
    if not service:
        print(f"  {memd} run             watch memory (Ctrl-C stops it)")
    print(f"  {memd} sync init --remote URL   sync your memory between machines")
    print(f"  {memd} setup --undo    take all of this out again")


# Where setup links `memd` when the running one is not on PATH: the user bin
# dir the XDG base-dir spec names, which most shells' profiles put on PATH.
USER_BIN = os.path.join("~", ".local", "bin")


def _put_on_path(state_dir: str, record: dict[str, object], *, dry_run: bool) -> str:
    """Make `memd` on PATH this memd; return how to type it in the next steps.

    When `memd` on PATH already is this memd, nothing changes. When
    ~/.local/bin is on PATH and holds no `memd`, a link to this one goes
    there (recorded, so `--undo` takes it out). Otherwise the full path is
    what the next steps print, with the line that puts its folder on PATH.
    """
    import shutil

    from memd.service.install import resolve_memd_path
    from memd.state import write_state

    this = resolve_memd_path()
    path = os.environ.get("PATH", os.defpath)
    found = shutil.which("memd", path=path)
    if found and os.path.realpath(found) == os.path.realpath(this):
        return "memd"
    user_bin = os.path.expanduser(USER_BIN)
    on_path = user_bin in (os.path.normpath(p) for p in path.split(os.pathsep) if p)
    link = os.path.join(user_bin, "memd")
    if on_path and not found and not os.path.lexists(link):
        if dry_run:
            print(f"# command: would link {link} -> {this}")
            return "memd"
        os.makedirs(user_bin, exist_ok=True)
        os.symlink(this, link)
        record["command_link"] = {"path": link, "target": this}
        write_state(state_dir, RECORD, record)
        print(f"  command: linked {link} -> {this}, so `memd` works in new shells")
        return "memd"
    folder = os.path.dirname(this)
    print(
        f"  command: `memd` is not on your PATH; add it with\n"
        f'    export PATH="{folder}:$PATH"\n'
        "    (put that line in your shell's profile to keep it)"
    )
    return this


def _undo(state_dir: str, *, dry_run: bool) -> int:
    from memd.state import read_state, write_state

    record = read_state(state_dir, RECORD)
    files = record.get("files")
    service = record.get("service")
    link = record.get("command_link")
    if not files and not service and not link:
        print("memd setup --undo: setup changed nothing here; nothing to undo")
        return 0
    print(
        "memd setup --undo --dry-run: nothing is changed"
        if dry_run
        else "memd setup --undo:"
    )
    code = 0
    if isinstance(service, dict) and not dry_run:
        code = _undo_service(service)
    elif isinstance(service, dict):
        verb = "keep" if service.get("existed") else "uninstall"
        print(f"  service: would {verb} it")
    edits = {path: edit for _, path, edit in _targets()}
    for path, entry in sorted(files.items()) if isinstance(files, dict) else ():
        if not isinstance(entry, dict):
            continue
        said = _undo_file(state_dir, path, entry, edits.get(path), dry_run=dry_run)
        print(f"  {path}: {said}")
    if isinstance(link, dict):
        print(f"  command: {_undo_link(link, dry_run=dry_run)}")
    if not dry_run:
        write_state(state_dir, RECORD, {})
        _drop_copies(state_dir)
    return code


def _undo_file(
    state_dir: str,
    path: str,
    entry: dict[str, object],
    edit: Callable[..., str] | None,
    *,
    dry_run: bool,
) -> str:
    """Put `path` back as setup found it (through a link, in its mode); say what."""
    from memd.atomic import write_through

    copy = entry.get("before")
    before = _read_copy(state_dir, copy) if isinstance(copy, str) else None
    if isinstance(copy, str) and before is None:
        return f"the copy setup kept is gone ({COPIES}/{copy}); left as it is"
    current = _read_or_none(path)
    if current == before:
        return "already as setup found it"
    if _digest(current) == entry.get("after"):
        if dry_run:
            return (
                "would restore the bytes setup found"
                if before is not None
                else ("would delete it (setup created it)")
            )
        if before is None and os.path.islink(path):
            return "a link now (setup created a file here); left as it is"
        if before is None:
            os.unlink(path)
            return "deleted (setup created it)"
        mode = entry.get("mode")
        try:
            write_through(path, before, mode=mode if isinstance(mode, int) else None)
        except OSError as error:
            return f"cannot write it ({error}); left as it is"
        return "restored byte for byte"
    if edit is None:  # a backup changed since: it is the user's now
        return "changed since setup; left as it is"
    said = edit(path, install=False, dry_run=dry_run)
    return "changed since setup, so only memd's entries: " + said.strip()


def _undo_link(link: dict[str, object], *, dry_run: bool) -> str:
    """Take out the `memd` link setup made, if it is still that link."""
    path, target = str(link.get("path")), link.get("target")
    try:
        still = os.readlink(path) == target
    except OSError:
        still = False
    if not still:
        return f"{path} is no longer the link setup made; left as it is"
    if dry_run:
        return f"would remove the link {path}"
    os.unlink(path)
    return f"removed the link {path}"


def _undo_service(service: dict[str, object]) -> int:
    import contextlib
    import io

    from memd.cli.commands.service import change_service

    if service.get("existed"):
        print("  service: kept (it was installed before setup)")
        return 0
    manager = str(service.get("manager"))
    said = io.StringIO()
    with contextlib.redirect_stdout(said), contextlib.redirect_stderr(said):
        code = change_service("uninstall", manager, dry_run=False)
    print(f"  service ({manager}):")
    for line in said.getvalue().splitlines():
        print(f"    {line}")
    return code


def _read_or_none(path: str) -> bytes | None:
    from memd.fsread import read_bytes

    try:
        return read_bytes(path, MAX_FILE_BYTES, follow=True)
    except FileNotFoundError:
        return None


def _digest(data: bytes | None) -> str | None:
    import hashlib

    return None if data is None else hashlib.sha256(data).hexdigest()


def _keep_copy(
    state_dir: str, path: str, data: bytes | None, mode: int | None
) -> str | None:
    """Save the bytes setup found at `path`; the copy's name (None: no file).

    The copy keeps the file's mode (a 0600 `~/.claude.json` holds API keys),
    in a directory only the user can enter.
    """
    import hashlib

    from memd.atomic import write_atomic

    if data is None:
        return None
    name = hashlib.sha256(path.encode("utf-8", "surrogateescape")).hexdigest()[:32]
    directory = os.path.join(state_dir, COPIES)
    os.makedirs(directory, mode=0o700, exist_ok=True)
    write_atomic(
        os.path.join(directory, name), data, mode=0o600 if mode is None else mode
    )
    return name


def _read_copy(state_dir: str, name: str) -> bytes | None:
    if not name.isalnum():  # a name setup made, never a path
        return None
    try:
        return _read_or_none(os.path.join(state_dir, COPIES, name))
    except OSError:
        return None


def _drop_copies(state_dir: str) -> None:
    import contextlib

    from memd.fsread import list_names

    directory = os.path.join(state_dir, COPIES)
    with contextlib.suppress(OSError):
        for name in list_names(directory):
            os.unlink(os.path.join(directory, name))
        os.rmdir(directory)
