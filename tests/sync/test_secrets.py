"""The secret scanner's rule table: each rule finds its kind, clean text passes."""

from __future__ import annotations

import pytest

from memd.lint.secrets import RULE_NAMES, find_secrets, fingerprint

CASES = {
    "github-token": "token ghp_4fJ9kLm2Qw8Rt6Yz1Xc3Vb5Nm7As0Df2Gh4J here",
    "slack-token": "bot: xoxb-123456789012-abcdefghijkl",
    "anthropic-key": "ANTHROPIC=sk-ant-api03-abcdefghijklmnopqrstuvwx",
    "openai-key": "key sk-proj-abcdefghijklmnopqrstuvwx1234",
    "aws-access-key": "aws AKIAIOSFODNN7EXAMPL3 in prod",
    "gitlab-token": "glpat-abcdefghij1234567890",
    "npm-token": "_authToken=npm_abcdefghijklmnopqrstuvwxyz0123456789",
    "private-key": "-----BEGIN OPENSSH PRIVATE KEY-----",
    "secret-assignment": "db_password = Xk29fLq7Pz03mW",
}


class TestRules:
    def test_every_rule_has_a_case(self) -> None:
        """The table and the cases name the same rules."""
        assert set(RULE_NAMES) == set(CASES)

    @pytest.mark.parametrize("rule", sorted(CASES))
    def test_each_rule_finds_its_kind_with_line_and_column(self, rule: str) -> None:
        """A secret on line 2 is reported on line 2 by its rule."""
        found = find_secrets("intro line\n" + CASES[rule])

        assert rule in {f.rule for f in found}
        assert {2} == {f.line for f in found}

    @pytest.mark.parametrize(
        "clean",
        [
            "password: see the vault",
            "token = ${GITHUB_TOKEN}",
            "api_key: <your key here>",
            "the sk-learn library, scikit-learn-intelex",
            "secret = xxxxxxxxxxxx",
            "AKIA is the prefix of AWS access keys",
            "-----BEGIN PUBLIC KEY-----",
            "tokens: many",
        ],
    )
    def test_clean_text_passes(self, clean: str) -> None:
        """Placeholders, prose about secrets and public keys are not secrets."""
        assert () == find_secrets(clean)

    def test_a_short_secret_line_after_many_blank_lines_is_found(self) -> None:
        """Blank and short lines are skipped, a secret line just long enough is not."""
        short = "token=Xk29fLq7Z"  # the name, the sign, 9 mixed characters

        (found,) = find_secrets("\n" * 10_000 + short)
        assert (10_001, "secret-assignment") == (found.line, found.rule)

    def test_a_fingerprint_in_allow_is_not_reported(self) -> None:
        """A false positive is marked by its fingerprint, never by its text."""
        text = CASES["github-token"]
        (found,) = find_secrets(text)

        assert () == find_secrets(text, allow=frozenset({found.fingerprint}))
        assert found.fingerprint == fingerprint(text.split()[1])

    def test_a_huge_line_is_scanned_quickly_and_bounded(self) -> None:
        """Pathological input (10 MB of near-matches) returns, capped."""
        text = ("password=" + "a1" * 5 + " ") * 200_000 + "\n" + "ghp_" * 1_000_000

        found = find_secrets(text)

        assert len(found) <= 100
