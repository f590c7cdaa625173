"""The dream writes YAML it reads back, and never writes a result that fails lint."""

from __future__ import annotations

import datetime
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memd.claude_code.paths import resolve_memory_location
from memd.diagnostics import Severity
from memd.kairos.consolidate import parse_log_entries, plan_consolidation
from memd.kairos.daily_log import append_entry
from memd.lint.engine import lint_memdir
from memd.memory.memfile import parse_memory_file
from memd.memory.reader import load_memdir
from tests.conftest import Home

MEMD = os.path.join(os.path.dirname(sys.executable), "memd")
NOW = datetime.datetime(2026, 1, 1, 10, 0).astimezone()


def _plan(text: str) -> dict[str, bytes]:
    log = f"# 2026-01-01\n\n- 10:00 {text}\n".encode()
    entries, _ = parse_log_entries("logs/2026/01/2026-01-01.md", log)
    return {e.relpath: e.new for e in plan_consolidation(entries, {}, None).edits}


@pytest.mark.parametrize(
    ("tag", "name"),
    [("#null", "Null"), ("#yes", "Yes"), ("#no", "No"), ("#true", "True")],
)
def test_yaml_words_stay_strings(tag: str, name: str) -> None:
    """A tag YAML 1.1 reads as null or a boolean still names the file as written."""
    edits = _plan(f"{tag} note")
    rel = f"project_{tag[1:]}.md"
    parsed = parse_memory_file(rel, edits[rel])
    assert name == parsed.name
    assert "Daily-log facts: note" == parsed.description
    assert "project" == parsed.type


def test_typed_entry_round_trips() -> None:
    """A `[feedback]` entry with no topic: the hand-written name and description."""
    edits = _plan("[feedback] say it: plainly # not a comment")
    parsed = parse_memory_file("feedback_notes.md", edits["feedback_notes.md"])
    assert ("Feedback notes", "feedback") == (parsed.name, parsed.type)
    assert "Daily-log facts: say it: plainly # not a comment" == parsed.description


_WORD = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=12
)
_TAG = st.sampled_from(
    ["#null", "#yes", "#No", "#on", "#a-b", "#x_y", "#caf", "#Z9", "#~", "#true"]
)
_KIND = st.sampled_from(["", "[user] ", "[feedback] ", "[project] ", "[reference] "])


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    kind=_KIND,
    tags=st.lists(_TAG, max_size=2),
    words=st.lists(
        st.one_of(_WORD, st.sampled_from([" #", ":", "'", '"', "é", "—", "- "])),
        min_size=1,
        max_size=6,
    ),
)
def test_every_written_topic_reads_back_and_lints(
    tmp_path_factory: pytest.TempPathFactory,
    kind: str,
    tags: list[str],
    words: list[str],
) -> None:
    """For any entry, each new topic file parses to its intended fields, lint-clean."""
    text = " ".join([*tags, kind + " ".join(words)]).replace("\n", " ").strip()
    if not text.strip("-* \t"):
        return  # a bullet with no text is not an entry
    edits = _plan(text)
    root = tmp_path_factory.mktemp("dream")
    for relpath, data in edits.items():
        (root / relpath).write_bytes(data)
        if relpath == "MEMORY.md":
            continue
        parsed = parse_memory_file(relpath, data)
        kind, _, subject = relpath.removesuffix(".md").partition("_")
        topic = subject if subject and subject != "notes" else f"{kind} {subject}"
        assert parsed.type in ("user", "feedback", "project", "reference")
        assert parsed.name
        assert parsed.name[0].isupper()
        assert parsed.name.lower() == topic.replace("-", " ").replace("_", " ")
        assert parsed.description is not None
        assert parsed.description.startswith("Daily-log facts")
    errors = [
        d for d in lint_memdir(load_memdir(str(root))) if d.severity is Severity.ERROR
    ]
    assert [] == errors


def test_result_with_lint_errors_records_error_and_writes_nothing(
    git_repo: Path, isolated_home: Home
) -> None:
    """A plan that would add a lint error: status error, exit 1, no file changed."""
    memory = Path(resolve_memory_location(str(git_repo)).memory_dir)
    memory.mkdir(parents=True)
    topic = "---\nname: Big\ndescription: a file near the size limit\ntype: user\n---\n"
    (memory / "big.md").write_text(topic + "x" * (1500 - len(topic)))
    (memory / "MEMORY.md").write_text("- [Big](big.md) — a file near the size limit\n")
    before = {p.name: p.read_bytes() for p in memory.iterdir() if p.is_file()}
    append_entry(str(memory), "#big " + "y" * 200, now=NOW)
    env = {
        **os.environ,
        "MEMD_TELEMETRY": "off",
        "MEMD_LOG_LEVEL": "error",
        "MEMD_MAX_TOPIC_FILE_BYTES": "1600",
        "MEMD_LINT_SEVERITIES": "F003=error",
    }

    result = subprocess.run(
        [MEMD, "dream", "--now", "--project", str(git_repo)],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )

    assert 1 == result.returncode, result.stdout + result.stderr
    assert "F003" in result.stdout + result.stderr
    after = {p.name: p.read_bytes() for p in memory.iterdir() if p.is_file()}
    assert before == {k: v for k, v in after.items() if k != ".consolidate-lock"}
    (dreams,) = isolated_home.state.rglob("dreams.json")
    (record,) = json.loads(dreams.read_text()).values()
    assert "error" == record["last_result"]["status"]
    assert "watermark" not in record  # the entries stay for the next dream
