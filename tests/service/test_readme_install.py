"""README.md's first install command, run as written, in a fresh HOME.

The checkout is the sdist `python -m build` made, unpacked; systemctl is the
recording stub (the live user manager case is tests/service/test_live_systemd.py).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import tarfile
import time
from pathlib import Path

import pytest

from tests.conftest import SERVICE_STUB_DIR, recorded
from tests.service.conftest import REPO

pytestmark = pytest.mark.slow


def install_lines() -> list[str]:
    readme = (REPO / "README.md").read_text("utf-8")
    match = re.search(
        r"<!-- install-command:start -->\n```sh\n(.*?)```\n"
        r"<!-- install-command:end -->",
        readme,
        re.DOTALL,
    )
    assert match is not None
    return match.group(1).splitlines()


def test_the_published_line_comes_second_and_says_it_is_not_published() -> None:
    lines = install_lines()

    assert lines[0].startswith("python3 -m venv ")
    assert "not yet" in lines[1]
    assert lines[2].startswith("pipx install memd-daemon")


def test_the_first_line_works_on_a_fresh_machine(
    dist_dir: Path, tmp_path: Path, stub: Path
) -> None:
    (sdist,) = dist_dir.glob("*.tar.gz")
    with tarfile.open(sdist) as archive:
        archive.extractall(tmp_path / "src", filter="data")
    (checkout,) = (tmp_path / "src").iterdir()
    home = tmp_path / "fresh-home"
    home.mkdir()
    env = {
        **{k: v for k, v in os.environ.items() if k.startswith(("PIP_", "SERVICE_"))},
        "HOME": str(home),
        "PATH": f"{SERVICE_STUB_DIR}:/usr/bin:/bin",
        "LANG": "C.UTF-8",
    }

    # The line ends in `memd run`, which runs until stopped: wait for the daemon
    # to answer `memd status`, then stop it as Ctrl-C would.
    started = subprocess.Popen(
        ["sh", "-c", install_lines()[0]],
        cwd=checkout,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    memd = home / ".local" / "share" / "memd" / "venv" / "bin" / "memd"
    try:
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline and started.poll() is None:
            if memd.exists():
                status = subprocess.run(
                    [str(memd), "status"],
                    env=env,
                    capture_output=True,
                    text=True,
                    check=False,
                    timeout=60,
                )
                if status.returncode == 0:
                    break
            time.sleep(0.5)
        else:
            pytest.fail(f"memd run never answered: exit {started.returncode}")
    finally:
        os.killpg(started.pid, signal.SIGINT)
        out, _ = started.communicate(timeout=60)

    assert "memd is running" in status.stdout, status.stdout
    assert "daemon_stopped" in out, out[-2000:]  # the shell dies of the SIGINT too
    settings = json.loads((home / ".claude" / "settings.json").read_text())
    assert {"SessionStart", "PostToolUse"} == set(settings["hooks"])
    service_calls = recorded(stub) if stub.exists() else []
    assert [] == [c for c in service_calls if "systemctl" in c], "left to `memd setup`"
    assert "next:" in out
    # The newcomer's next step, typed as printed: the shell finds that memd.
    (doctor,) = re.findall(r"^  (\S+ doctor) ", out, re.MULTILINE)
    checked = subprocess.run(
        ["sh", "-c", doctor], env=env, capture_output=True, text=True, check=False
    )
    assert checked.returncode in (0, 1), checked.stderr  # 127: command not found
    assert "index budgets" in checked.stdout
