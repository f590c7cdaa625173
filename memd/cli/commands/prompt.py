"""`memd prompt`: print a project's memory prompt, warm from a snapshot when fresh.

`serve_warm` runs before argparse (memd/cli/main.py) and answers the plain argv
shapes through `memd.snapshot.serve.serve_warm`, which reads only the
resolution record and the snapshot; anything else returns None and the full
parser runs `run`, which goes through `memd.snapshot.serve.serve`.

Only `os` and `sys` are imported at the top; the warm path adds
`memd.snapshot.serve` and `memd.snapshot.store` (and through them
`memd.claude_code.paths`, `memd.claude_code.jscompat`, `unicodedata`).
"""

from __future__ import annotations

import os
import sys

from memd.cli.commands._options import (
    add_project_argument,
    project_dir,
    report_memory_off,
)
from memd.snapshot.store import MODES

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

    from memd.snapshot.serve import Served


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_project_argument(parser, "directory")
    parser.add_argument(
        "--mode",
        choices=MODES,
        default=None,
        help="prompt mode (default: team when team memory is on, else standard)",
    )
    parser.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="text prints the prompt; json adds its metadata (default: text)",
    )
    parser.add_argument(
        "--path",
        action="store_true",
        help="print the path of the fresh snapshot's prompt file instead of the prompt",
    )


# -- the warm path -------------------------------------------------------------


def serve_warm(argv: list[str]) -> int | None:
    """Print a fresh snapshot for the simple argv shapes and return 0; else None."""
    parsed = _parse_simple(argv)
    if parsed is None:
        return None
    project, mode, want_path = parsed
    from memd.snapshot.serve import serve_warm as serve_fresh_snapshot

    try:
        data = serve_fresh_snapshot(project, mode, os.environ, path=want_path)
    except (OSError, ValueError):  # anything odd: let the full path decide and report
        return None
    if data is None:
        return None
    prompt, warning = data
    _write_stdout(prompt)
    if warning is not None:
        print(warning, file=sys.stderr)
    return 0


def _parse_simple(argv: list[str]) -> tuple[str | None, str | None, bool] | None:
    project: str | None = None
    mode: str | None = None
    want_path = False
    i = 0
    while i < len(argv):
        arg = argv[i]
        name, eq, value = arg.partition("=")
        if name in ("--project", "--mode", "--format"):
            if not eq:
                if i + 1 >= len(argv):
                    return None
                i += 1
                value = argv[i]
            if name == "--project":
                project = value
            elif name == "--mode":
                if value not in MODES:
                    return None
                mode = value
            elif value != "text":
                return None
        elif arg == "--path":
            want_path = True
        else:
            return None
        i += 1
    return project, mode, want_path


def _write_stdout(data: bytes) -> None:
    """Write exact bytes to stdout (through the text layer when there is no buffer)."""
    stream = sys.stdout
    try:
        stream.flush()
        buffer = getattr(stream, "buffer", None)
        if buffer is None:
            stream.write(data.decode("utf-8", "replace"))
        else:
            buffer.write(data)
        stream.flush()
    except BrokenPipeError:
        # The reader went away (`memd prompt | head`): not an error. Point stdout
        # at /dev/null so the interpreter's flush at exit stays quiet.
        try:
            fd = os.open(os.devnull, os.O_WRONLY)
            os.dup2(fd, sys.stdout.fileno())
            os.close(fd)
        except (OSError, ValueError):
            pass


# -- the full path ---------------------------------------------------------------


def run(args: argparse.Namespace) -> int:
    from memd.config import load_config
    from memd.snapshot.serve import serve

    env = os.environ
    # Showing a prompt creates nothing: only the agent's session makes the dir.
    served = serve(project_dir(args), args.mode, load_config(env), env, create=False)
    if not served.enabled:
        return report_memory_off(
            served.location, nothing="no prompt", as_json=args.format == "json"
        )
    if args.path:
        if served.write_error is not None:
            raise served.write_error
        _write_stdout((served.prompt_path + "\n").encode("utf-8", "surrogateescape"))
    elif args.format == "json":
        _write_stdout(_json_output(served).encode("utf-8"))
    else:
        _write_stdout(served.data)
    if served.write_error is not None:
        print(
            f"memd: warning: snapshot not saved: {served.write_error}", file=sys.stderr
        )
    _warn_unread_index(served)
    return 0


def _warn_unread_index(served: Served) -> None:
    """Say so on stderr when MEMORY.md exists but cannot be read (`index_warning`)."""
    from memd.snapshot.serve import index_warning

    warning = index_warning(
        served.location.memory_dir,
        ((d.code, d.path, d.message) for d in served.diagnostics()),
    )
    if warning is not None:
        print(warning, file=sys.stderr)


def _json_output(served: Served) -> str:
    import json

    out = {
        "project_root": served.location.project_root,
        "memory_dir": served.location.memory_dir,
        "mode": served.mode,
        "prompt_path": served.prompt_path,
        "served_from": "render" if served.snapshot is not None else "snapshot",
        "metadata": served.metadata(),
        "prompt": served.text,
    }
    return json.dumps(out, indent=2, ensure_ascii=False) + "\n"
