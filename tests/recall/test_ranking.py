"""Recall ranking: best first, on a corpus whose right order is known by construction.

Every file has the same shape and length; they differ only in how often the
query's words occur in the body (BM25 grows with term frequency at a fixed
length) and in their age (recency orders exact ties, and never lifts a weaker
match over a stronger one). So the right order is written down, not measured.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memd.claude_code.paths import resolve_memory_location
from memd.memory.reader import load_memdir
from memd.recall.index import open_index, recall
from tests.conftest import MemDirMaker

MEMD = os.path.join(os.path.dirname(sys.executable), "memd")
QUERY = "postgres migration"
DAY_NS = 86_400 * 10**9
NOW_NS = time.time_ns()
WORDS = 12  # body words per file: the hits plus filler, so lengths are equal

# (relpath, times the query occurs in the body, age in days), in the right order.
CORPUS = (
    ("tf5.md", 5, 400),
    ("tf3.md", 3, 300),
    # Exact lexical ties: the newer wins though its path sorts and is indexed later.
    ("tf2-b-new.md", 2, 0),
    ("tf2-a-old.md", 2, 200),
    ("tf1-b-new.md", 1, 0),  # newest of all, still below every stronger match
    ("tf1-a-old.md", 1, 365),
)
EXPECTED = [relpath for relpath, _, _ in CORPUS]


def _write_corpus(make_memdir: MemDirMaker) -> None:
    # Written weakest first, so neither file order nor inode order is the answer.
    for relpath, hits, age_days in reversed(CORPUS):
        body = " ".join(["postgres migration"] * hits + ["filler"] * (WORDS - 2 * hits))
        path = make_memdir.topic(
            relpath,
            name="Team note",
            description="a note kept for the whole team",
            type="project",
            body=body + "\n",
        )
        mtime_ns = NOW_NS - age_days * DAY_NS
        os.utime(path, ns=(mtime_ns, mtime_ns))
    for i in range(20):  # more matches than limit * CANDIDATES_PER_RESULT
        make_memdir.topic(
            f"other{i:02}.md",
            name="Team note",
            description="a note kept for the whole team",
            type="project",
            body=" ".join(["migration"] + ["filler"] * (WORDS - 1)) + "\n",
        )


class TestRanking:
    def test_best_first_in_the_known_order(
        self, make_memdir: MemDirMaker, tmp_path: Path
    ) -> None:
        """The six ranked files come first, in their known order, then the others."""
        _write_corpus(make_memdir)
        with open_index(str(tmp_path / "cache")) as index:
            index.update(load_memdir(str(make_memdir.root)))

            hits = index.search(QUERY, limit=30, now_ns=NOW_NS)

        actual = [h.relpath for h in hits]
        assert EXPECTED == actual[: len(EXPECTED)]
        assert sorted(f"other{i:02}.md" for i in range(20)) == sorted(actual[6:])
        scores = [h.score for h in hits]
        assert sorted(scores, reverse=True) == scores

    def test_exact_ties_are_in_path_order(
        self, make_memdir: MemDirMaker, tmp_path: Path
    ) -> None:
        """Same words, same age: by path, whichever was indexed first."""
        for relpath in ("tie-b.md", "tie-a.md"):
            path = make_memdir.topic(
                relpath, name="Tie", description="a tie", type="user", body=QUERY
            )
            os.utime(path, ns=(NOW_NS, NOW_NS))
        with open_index(str(tmp_path / "cache")) as index:
            (make_memdir.root / "tie-a.md").rename(tmp_path / "held.md")
            index.update(load_memdir(str(make_memdir.root)))  # tie-b gets the first row
            (tmp_path / "held.md").rename(make_memdir.root / "tie-a.md")
            index.update(load_memdir(str(make_memdir.root)))

            hits = index.search(QUERY, limit=2, now_ns=NOW_NS)

        assert ["tie-a.md", "tie-b.md"] == [h.relpath for h in hits]

    @pytest.mark.parametrize("limit", [1, 2, 3, 5])
    def test_limit_keeps_the_best(
        self, make_memdir: MemDirMaker, tmp_path: Path, limit: int
    ) -> None:
        """`limit=n` returns the n best, best first (recall refreshes by stat first)."""
        _write_corpus(make_memdir)
        with open_index(str(tmp_path / "cache")) as index:
            hits = recall(index, QUERY, [str(make_memdir.root)], limit=limit)

        assert EXPECTED[:limit] == [h.relpath for h in hits]

    def test_memd_recall_limit_1_prints_the_best(self, git_repo: Path) -> None:
        """`memd recall --limit 1` answers with the strongest memory."""
        memory = Path(resolve_memory_location(str(git_repo)).memory_dir)
        memory.mkdir(parents=True)
        _write_corpus(MemDirMaker(memory))

        argv = ["recall", "--project", str(git_repo), "--limit", "1", "--format"]
        result = subprocess.run(
            [MEMD, *argv, "json", *QUERY.split()],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
            env={**os.environ, "MEMD_TELEMETRY": "off"},
        )

        assert 0 == result.returncode, result.stderr
        hits = json.loads(result.stdout)
        hits = hits["hits"] if isinstance(hits, dict) else hits
        assert ["tf5.md"] == [h["relpath"] for h in hits]
