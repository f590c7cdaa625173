"""Where truth findings show: SessionStart's one line, once-only notices, MCP lint."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from memd.cli.main import main
from tests.truth.conftest import Project
from tests.truth.test_check import history
from tests.truth.test_sharing import memory_in

MEMD = str(Path(sys.executable).with_name("memd"))


def session_start(root: Path, session: str) -> str:
    """What the agent's SessionStart hook tells a session starting in `root`."""
    payload = {
        "session_id": session,
        "cwd": str(root),
        "hook_event_name": "SessionStart",
    }
    done = subprocess.run(
        [MEMD, "hook", "session-start"],
        input=json.dumps(payload),
        cwd=root,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    if not done.stdout:
        return ""
    specific = json.loads(done.stdout).get("hookSpecificOutput", {})
    return str(specific.get("additionalContext", ""))


class TestSessionStart:
    def test_one_line_counts_the_memories_naming_something_gone(
        self, project: Project, capsys: object
    ) -> None:
        """After a check, every session says how many memories name something gone."""
        history(project)
        project.memory_file("project_auth.md", "Sessions: `src/auth/session.ts`.\n")
        project.memory_file("project_ok.md", "Kept: `src/keep.py`.\n")
        main(["lint", "--project", str(project.root)])

        first = session_start(project.root, "s1")
        second = session_start(project.root, "s2")

        expected = (
            "memd: 1 memory names a path or command this project no longer has"
            " (project_auth.md)"
        )
        assert expected in first
        assert expected in second
        assert 1 == first.count("no longer has")

    def test_a_shared_dir_is_told_once_in_each_project(self, tmp_path: Path) -> None:
        """Two projects sharing one dir: each hears it once, in its first session."""
        one, two = tmp_path / "work" / "a-b" / "c", tmp_path / "work" / "a" / "b-c"
        one.mkdir(parents=True)
        two.mkdir(parents=True)
        memory_in(one)
        main(["lint", "--project", str(one)])
        main(["lint", "--project", str(two)])

        said = [
            session_start(one, "a1"),
            session_start(one, "a2"),
            session_start(two, "b1"),
            session_start(two, "b2"),
        ]

        assert [True, False, True, False] == ["share one memory dir" in s for s in said]
        assert "autoMemoryDirectory" in said[0]


class TestMcp:
    def test_the_lint_tool_returns_them(self, project: Project) -> None:
        """memory_lint over the mcp SDK's real client returns the D001 finding."""
        from tests.mcp_server.test_server import call

        history(project)
        project.memory_file("project_auth.md", "Sessions: `src/auth/session.ts`.\n")

        (lint,) = call(project.root, ("memory_lint", {}))
        found = [json.loads(c.text) for c in lint.content]  # type: ignore[attr-defined]

        assert ["D001"] == [d["code"] for d in found]
        assert "renamed to `src/auth/sessions.ts`" in found[0]["message"]


class TestStatus:
    def test_status_lists_what_needs_review(
        self, project: Project, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """`memd status` names the project and the memory naming something gone."""
        history(project)
        project.memory_file("project_auth.md", "Sessions: `src/auth/session.ts`.\n")
        main(["lint", "--project", str(project.root)])
        capsys.readouterr()

        main(["status"])
        out = capsys.readouterr().out

        assert "needs review: " in out
        assert (
            "1 memory names something the code no longer has (project_auth.md)" in out
        )
        assert "webshop" in out.split("needs review: ", 1)[1].splitlines()[0]


class TestViewer:
    def test_the_project_page_lists_them_under_needs_review(
        self, project: Project
    ) -> None:
        """The viewer's project page carries the last check's findings, file first."""
        import structlog

        from memd.config import load_config
        from memd.ui.gather import Source, project_page
        from memd.ui.views import project_id

        history(project)
        project.memory_file("project_auth.md", "Sessions: `src/auth/session.ts`.\n")
        main(["lint", "--project", str(project.root)])
        memory = str(project.memory).rstrip("/")
        source = Source(
            config=load_config,
            memory_dirs=lambda: {memory: "test"},
            log=structlog.get_logger(),
        )

        page = project_page(source, project_id(memory))

        assert ["D001"] == [f.code for f in page.needs_review]
        assert page.needs_review[0].message.startswith(
            "project_auth.md: `src/auth/session.ts`"
        )
