"""`memd ui`: open the running daemon's viewer in a browser, or print its URL.

The daemon serves the viewer (memd.ui); this command only reads `ui.json`
(its URL and this start's token) and hands the URL with the token to the
browser once. The page swaps the token for a cookie and drops it from the
address bar. Without a display it prints the URL instead.

The browser is not given the token on its command line, which every local
user can read in `ps`: it opens `ui-open.html` (mode 0600, beside ui.json),
a page that only forwards to the URL with the token.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Mapping


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--print",
        dest="print_only",
        action="store_true",
        help="print the URL (with its one-time token) instead of opening a browser",
    )


def has_display(env: Mapping[str, str], platform: str) -> bool:
    """Whether a browser can be shown: macOS, Windows, or an X11/Wayland display."""
    if platform == "darwin" or platform.startswith("win"):
        return True
    return bool(env.get("DISPLAY") or env.get("WAYLAND_DISPLAY"))


def run(args: argparse.Namespace) -> int:
    import os
    import sys
    from urllib.parse import urlencode

    from memd.config import load_config
    from memd.ui.urlfile import read_viewer

    config = load_config()
    if not config.ui_enabled:
        print(
            "memd: the viewer is off ([ui] enabled = false); turn it on and "
            "restart the daemon",
            file=sys.stderr,
        )
        return 1
    viewer = read_viewer(os.environ, state_dir=config.state_dir)
    if viewer is None:
        if _daemon_running(config.state_dir):
            print(
                "memd: the running daemon does not serve the viewer (started "
                "before it was enabled, or its port could not be bound: see its "
                "log); restart it",
                file=sys.stderr,
            )
        else:
            print(
                "memd: no daemon is serving the viewer; start one with `memd run` "
                "(or `memd service install`), then run `memd ui` again",
                file=sys.stderr,
            )
        return 1
    url = viewer["url"]
    with_token = url + "?" + urlencode({"token": viewer["token"]})
    if not args.print_only and has_display(os.environ, sys.platform):
        import webbrowser

        page = write_opener(os.environ, config.state_dir, with_token)
        if webbrowser.open("file://" + page):
            print(f"opened {url} in your browser")
            return 0
    print(with_token)
    return 0


def _daemon_running(state_dir: str) -> bool:
    """Whether daemon.json names a running `memd run` whose process exists."""
    from memd.locks import pid_alive
    from memd.state import read_state

    status = read_state(state_dir, "daemon.json")
    pid = status.get("pid")
    return (
        status.get("running") is True
        and isinstance(pid, int)
        and pid > 0
        and pid_alive(pid)
    )


def write_opener(env: Mapping[str, str], state_dir: str, url: str) -> str:
    """Write the private page that forwards the browser to `url`; return its path."""
    import html
    import os

    from memd.atomic import write_atomic
    from memd.ui.urlfile import url_file_path

    path = os.path.join(
        os.path.dirname(url_file_path(env, state_dir=state_dir)), "ui-open.html"
    )
    target = html.escape(url, quote=True)
    page = (
        "<!doctype html><meta charset=utf-8><meta name=referrer content=no-referrer>"
        f'<meta http-equiv="refresh" content="0;url={target}"><title>memd</title>'
        f'<p><a href="{target}">Open memd</a></p>\n'
    )
    write_atomic(path, page.encode(), mode=0o600)
    return path
