"""Team memory is its own index: `team/MEMORY.md` links the files under `team/`.

Real directories on disk, linted and fixed through memd's own targets and CLI.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memd.cli.main import main
from memd.lint.targets import lint_targets, resolve_targets

PRIVATE = (
    "---\nname: role\ndescription: The user is a staff SRE on payments\n"
    "type: user\n---\nSRE.\n"
)
TEAM = (
    "---\nname: {name}\ndescription: What the team decided about {name} here\n"
    "type: project\n---\nDecided.\n\n**Why:** asked.\n**How to apply:** always.\n"
)


@pytest.fixture(name="memory")
def _memory(tmp_path: Path) -> Path:
    memory = tmp_path / "memory"
    (memory / "team").mkdir(parents=True)
    (memory / "user_role.md").write_text(PRIVATE)
    (memory / "MEMORY.md").write_text("- [Role](user_role.md) — the SRE\n")
    (memory / "team" / "deploys.md").write_text(TEAM.format(name="deploys"))
    (memory / "team" / "oncall.md").write_text(TEAM.format(name="oncall"))
    (memory / "team" / "MEMORY.md").write_text(
        "- [Deploys](deploys.md) — how we ship\n- [Gone](gone.md) — removed\n"
    )
    return memory


def _found(*paths: Path, cwd: Path) -> list[tuple[str, str]]:
    targets = resolve_targets([str(p) for p in paths])
    return [(d.path, d.code) for d in lint_targets(targets, cwd=str(cwd))]


class TestTeamIndex:
    def test_team_files_are_judged_by_the_team_index(self, memory: Path) -> None:
        """A team file linked from team/MEMORY.md is no orphan of the private one;
        one the team index does not link is the team's orphan."""
        found = _found(memory, cwd=memory)

        assert [
            ("team/MEMORY.md", "I005"),
            ("team/oncall.md", "I006"),
        ] == found

    @pytest.mark.parametrize("name", ["deploys.md", "oncall.md"])
    def test_one_files_lint_equals_its_directorys(
        self, memory: Path, name: str
    ) -> None:
        whole = _found(memory, cwd=memory)

        alone = _found(memory / "team" / name, cwd=memory)

        assert [f for f in whole if f[0] == f"team/{name}"] == alone

    def test_linting_the_team_dir_gives_the_same(self, memory: Path) -> None:
        assert _found(memory, cwd=memory) == _found(memory / "team", cwd=memory)

    def test_without_a_team_index_team_files_are_no_private_orphans(
        self, memory: Path
    ) -> None:
        (memory / "team" / "MEMORY.md").unlink()

        whole = _found(memory, cwd=memory)
        alone = _found(memory / "team" / "oncall.md", cwd=memory)

        assert [] == whole
        assert [] == alone


class TestFix:
    def test_fix_never_writes_team_files_into_the_private_index(
        self, memory: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        (memory / "orphan.md").write_text(PRIVATE.replace("role", "orphan"))

        assert 0 == main(["fix", "--dry-run", str(memory)])

        diff = capsys.readouterr().out
        assert "+- [orphan](orphan.md)" in diff
        assert "team/" not in diff

    def test_lint_json_of_the_dir(
        self, memory: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        main(["lint", "--format", "json", str(memory)])

        codes = {
            (Path(d["path"]).name, d["code"])
            for d in json.loads(capsys.readouterr().out)["diagnostics"]
        }
        assert ("deploys.md", "I006") not in codes


class TestTheAgentsConvention:
    """2.1.112 and 2.1.332 index team files from the private MEMORY.md as team/x.md."""

    def test_a_private_team_link_reaches_its_file(self, memory: Path) -> None:
        (memory / "MEMORY.md").write_text(
            "- [Role](user_role.md) — the SRE\n- [Oncall](team/oncall.md) — rota\n"
        )

        found = _found(memory, cwd=memory)
        alone = _found(memory / "team" / "oncall.md", cwd=memory)
        team = _found(memory / "team", cwd=memory)

        assert [("team/MEMORY.md", "I005")] == found
        assert [] == alone
        assert found == team
