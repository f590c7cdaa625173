"""memd.recall.text: CJK bigrams, query terms, snippets and the recency factor."""

from __future__ import annotations

from memd.recall.text import (
    index_text,
    match_expression,
    query_terms,
    recency_factor,
    snippet,
)


class TestIndexText:
    def test_cjk_runs_become_bigrams(self) -> None:
        """A Chinese run is indexed as its overlapping bigrams; Latin text is kept."""
        assert " 部署 署流 流程 , use CI" == index_text("部署流程, use CI")

    def test_single_cjk_character_stays(self) -> None:
        """A one-character run has no bigram, so it is indexed as itself."""
        assert "a 字 b" == " ".join(index_text("a 字 b").split())

    def test_trigram_text_is_unchanged(self) -> None:
        """The trigram tokenizer needs no help with CJK."""
        assert "部署流程" == index_text("部署流程", "trigram")


class TestQueryTerms:
    def test_stopwords_dropped_and_lowercased(self) -> None:
        """Question words say nothing about the memory wanted."""
        assert ("tests", "mock", "database") == query_terms(
            "Should the tests mock the database?"
        )

    def test_japanese_query_bigrams(self) -> None:
        """Kana and kanji runs are cut into bigrams, like the index."""
        assert ("テス", "スト", "トの", "の方", "方針") == query_terms("テストの方針")

    def test_trigram_drops_short_terms(self) -> None:
        """The trigram tokenizer cannot match fewer than three characters."""
        assert ("数据库", "database") == query_terms("数据库 db database", "trigram")

    def test_match_expression_quotes_terms(self) -> None:
        """Each term is a quoted FTS5 string, so operators in a query are text."""
        assert '"a""b" OR "near"' == match_expression(('a"b', "near"))

    def test_no_terms_no_expression(self) -> None:
        """A query of stopwords only matches nothing rather than everything."""
        assert None is match_expression(query_terms("what is it?"))


class TestSnippet:
    def test_marks_terms_around_the_first_match(self) -> None:
        """Matched terms are bracketed; the window starts before the first one."""
        text = "x " * 100 + "we deploy with the blue green switch"

        result = snippet(text, ("deploy", "green"), width=40)

        assert "…x x x we [deploy] with the blue [green] swi…" == result

    def test_terms_match_where_words_start(self) -> None:
        """`use` marks `used` but not `because`; CJK terms match inside a run."""
        text = "because we used 部署流程 daily"

        result = snippet(text, ("use", "部署"), width=80)

        assert "because we [use]d [部署]流程 daily" == result

    def test_no_match_starts_at_the_top(self) -> None:
        """Without a match the snippet is the start of the text."""
        assert "one two…" == snippet("one two three", ("zzz",), width=8)


class TestRecency:
    def test_fresh_and_old(self) -> None:
        """Today adds the whole weight, 30 days half, a negative age counts as 0."""
        assert (1.1, 1.05, 1.1) == (
            recency_factor(0),
            recency_factor(30),
            recency_factor(-5),
        )
