"""`memd config`: the effective configuration and where each value came from.

The text form is valid TOML (sources are comments), so it can be pasted into
config.toml and edited. A bad config file or variable is one line and exit 2,
raised as `ConfigError` and printed by `memd.cli`.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

    from memd.config import Config


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="output format (default: text, which is valid TOML)",
    )


def run(args: argparse.Namespace) -> int:
    import os

    from memd.config import load_config
    from memd.dirs import config_path

    config = load_config()
    path = config_path()
    exists = os.path.isfile(path)
    if args.format == "json":
        print(render_json(config, path, exists=exists))
    else:
        print(render_text(config, path, exists=exists), end="")
    return 0


def _toml_value(value: object) -> str:
    import json
    from collections.abc import Mapping

    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # a valid TOML basic string
    if isinstance(value, tuple | list):
        return "[" + ", ".join(_toml_value(item) for item in value) + "]"
    if isinstance(value, Mapping):
        pairs = (f"{json.dumps(k)} = {_toml_value(v)}" for k, v in value.items())
        return "{" + ", ".join(pairs) + "}"
    raise TypeError(f"no TOML form for {value!r}")


def render_text(config: Config, path: str, *, exists: bool) -> str:
    """Return the configuration as TOML, with each value's source as a comment."""
    from memd.config import describe_config

    lines = [f"# config file: {path}{'' if exists else ' (not present)'}"]
    section = ""
    for dotted, env_name, value, source in describe_config(config):
        table, _, key = dotted.rpartition(".")
        if table != section:
            lines.extend(("", f"[{table}]"))
            section = table
        note = f"# from {source}; env {env_name}"
        if value is None:
            lines.append(f"# {key} is unset  {note}")
        else:
            lines.append(f"{key} = {_toml_value(value)}  {note}")
    return "\n".join(lines) + "\n"


def render_json(config: Config, path: str, *, exists: bool) -> str:
    """Return the configuration as JSON: the file, then each key's value and source."""
    import json
    from collections.abc import Mapping

    from memd.config import describe_config

    keys = {
        dotted: {
            "value": dict(value) if isinstance(value, Mapping) else value,
            "source": source,
            "env": env_name,
        }
        for dotted, env_name, value, source in describe_config(config)
    }
    return json.dumps(
        {"config_file": path, "config_file_exists": exists, "keys": keys}, indent=2
    )
