"""`python -m build` makes an sdist and a wheel that install and run on their own."""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from tests.service.conftest import REPO, wheel_in

pytestmark = pytest.mark.slow

NAME = "memd_daemon"  # the distribution `memd-daemon`, normalised in file names


class TestWheel:
    def test_build_makes_an_sdist_and_a_wheel(self, dist_dir: Path) -> None:
        """One sdist and one wheel, named after the distribution and memd's version."""
        assert [f"{NAME}-0.1.0-py3-none-any.whl", f"{NAME}-0.1.0.tar.gz"] == sorted(
            path.name for path in dist_dir.iterdir()
        )

    def test_sdist_carries_the_package(self, dist_dir: Path) -> None:
        """The sdist has the package, its metadata source and the README."""
        (sdist,) = dist_dir.glob("*.tar.gz")
        with tarfile.open(sdist) as archive:
            names = {
                name.split("/", 1)[1] for name in archive.getnames() if "/" in name
            }

        assert {"memd/cli/main.py", "pyproject.toml", "README.md"} <= names

    def test_wheel_carries_the_viewers_templates_and_assets(
        self, dist_dir: Path
    ) -> None:
        """`memd ui`'s templates, CSS and script ship in the wheel (no CDN)."""
        import zipfile

        with zipfile.ZipFile(wheel_in(dist_dir)) as wheel:
            names = set(wheel.namelist())
        shipped = {
            "memd/ui/templates/base.html",
            "memd/ui/templates/overview.html",
            "memd/ui/templates/file.html",
            "memd/ui/static/ui.css",
            "memd/ui/static/ui.js",
        }
        templates = Path(REPO, "memd/ui/templates")

        assert shipped <= names
        assert {
            f"memd/ui/templates/{path.name}" for path in templates.glob("*.html")
        } <= names

    def test_wheel_installs_into_a_fresh_venv_and_runs(
        self, dist_dir: Path, tmp_path: Path
    ) -> None:
        """`memd --version` and `memd lint` run from the wheel, outside the checkout."""
        venv = tmp_path / "venv"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        pip = subprocess.run(
            [str(venv / "bin" / "pip"), "install", "-q", str(wheel_in(dist_dir))],
            capture_output=True,
            text=True,
            check=False,
            timeout=300,
        )
        assert 0 == pip.returncode, pip.stderr[-2000:]
        env = {**os.environ, "PATH": f"{venv / 'bin'}:/usr/bin:/bin"}
        memd = str(venv / "bin" / "memd")

        version = subprocess.run(
            [memd, "--version"], capture_output=True, text=True, env=env, cwd=tmp_path
        )
        lint = subprocess.run(
            [memd, "lint", "--color", "never", str(REPO / "tests/lint/cases/M001/bad")],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
        )

        assert (0, "memd 0.1.0\n") == (version.returncode, version.stdout)
        assert 1 == lint.returncode
        assert "1 error, 0 warnings, 0 info in 1 file" in lint.stdout
        assert "M001 file has no YAML frontmatter" in lint.stdout
