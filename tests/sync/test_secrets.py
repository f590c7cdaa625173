"""The secret scanner's rule table: each rule finds its kind, clean text passes."""

from __future__ import annotations

import pytest

from memd.lint.secrets import (
    MAX_SCAN_BYTES,
    find_secrets,
    find_secrets_in_bytes,
    fingerprint,
    mask_secrets,
    rule_names,
)

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
    "database-url": "DATABASE_URL=postgres://app:Tr0ub4dor3x@db.internal:5432/app",
}
# memd's own rules, and the shapes the rule table from gitleaks adds.
OWN_RULES = {
    "private-key", "github-token", "slack-token", "anthropic-key", "openai-key",
    "aws-access-key", "gitlab-token", "npm-token", "secret-assignment", "database-url",
}  # fmt: skip
TABLE_CASES = {
    "gcp-api-key": "maps key AIzaSyD8f3kL9qPz2xW7vB1nM4cR6tY0uE5sHjQ here",
    "jwt": (
        "Authorization: Bearer eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9."
        "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIn0."
        "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
    ),
    "stripe-access-token": "STRIPE=sk_live_4eC39HqLyjWDarjtT1zdp7dc now",
}


class TestRules:
    def test_every_own_rule_has_a_case(self) -> None:
        """memd's own rules and the cases name the same rules; the table adds more."""
        assert OWN_RULES == set(CASES)
        assert OWN_RULES | set(TABLE_CASES) <= set(rule_names())

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


# -- what a push sends: every byte, in the encodings a file may be in -------------

TOKEN = "ghp_4fJ9kLm2Qw8Rt6Yz1Xc3Vb5Nm7As0Df2Gh4J"  # noqa: S105


class TestWholeBytes:
    def test_a_token_after_64_kib_on_one_line_is_found(self) -> None:
        """No per-line cap hides a line's tail: the column is the token's."""
        line = "x " * (40 * 1024) + TOKEN

        (text_found,) = find_secrets(line)
        (bytes_found,) = find_secrets_in_bytes(("intro\n" + line).encode())

        assert ("github-token", 80 * 1024 + 1) == (text_found.rule, text_found.column)
        assert (2, "github-token") == (bytes_found.line, bytes_found.rule)

    @pytest.mark.parametrize("codec", ["utf-16", "utf-16-le", "utf-16-be", "utf-32"])
    @pytest.mark.parametrize("rule", sorted(CASES))
    def test_a_file_in_utf16_or_utf32_is_read_as_text(
        self, codec: str, rule: str
    ) -> None:
        """With a byte-order mark ("utf-16") or without one, either byte order."""
        data = ("# notes\n\n" + CASES[rule] + "\n").encode(codec)

        found = find_secrets_in_bytes(data)

        assert rule in {f.rule for f in found}

    def test_a_utf16_token_inside_utf8_bytes_is_found(self) -> None:
        """A UTF-16 run at an odd offset inside an otherwise UTF-8 file."""
        data = b"plain text, " + b"x" + ("key " + TOKEN).encode("utf-16-le")

        assert ["github-token"] == [f.rule for f in find_secrets_in_bytes(data)]

    def test_over_the_cap_is_a_finding_not_a_skip(self) -> None:
        """Too large to scan whole: said so, so the file is not pushed."""
        data = b"a" * (MAX_SCAN_BYTES + 1)

        (found,) = find_secrets_in_bytes(data)

        assert "too-large-to-scan" == found.rule
        assert "too large to scan" in found.message()


class TestNewShapes:
    @pytest.mark.parametrize(
        "url",
        [
            "postgres://app:Tr0ub4dor3x@db.internal:5432/app",
            "postgresql://u:p4ssw0rd99@h/db",
            "mysql://root:hunter2hunter2@127.0.0.1:3306/shop",
            "mongodb+srv://svc:Zq8xL2mN9p@cluster0.abcde.mongodb.net/prod",
            "redis://:S3cr3tValue@cache.internal:6379/0",
            "amqps://guest:Gu3stPassw0rd@mq.example.net/vhost",
        ],
    )
    def test_a_database_url_with_a_password_is_found(self, url: str) -> None:
        (found,) = find_secrets(f"connect with {url} in staging")

        assert "database-url" == found.rule
        assert found.fingerprint == fingerprint(url.split(":")[2].split("@")[0])

    @pytest.mark.parametrize(
        "clean",
        [
            "postgres://localhost/app",
            "postgres://app@db.internal/app",
            "postgres://app:${DB_PASSWORD}@db/app",
            "redis://:password@localhost:6379",
            "https://github.com/org/repo",
            "mysql://user:<password>@host/db",
        ],
    )
    def test_a_url_without_a_real_password_passes(self, clean: str) -> None:
        assert () == find_secrets(f"see {clean} for details")

    @pytest.mark.parametrize("rule", sorted(TABLE_CASES))
    def test_each_new_shape_is_found(self, rule: str) -> None:
        assert rule in {f.rule for f in find_secrets(TABLE_CASES[rule])}

    def test_a_restricted_stripe_key_is_found(self) -> None:
        found = find_secrets("rk_live_51HxYzAbCdEfGhIjKlMnOpQr")

        assert ["stripe-access-token"] == [f.rule for f in found]


class TestLinear:
    @pytest.mark.parametrize(
        "unit",
        ["ghp_", "sk-", "eyJ", "AIza", "://", "a:", "@", "sk_live_", "-----BEGIN ",
         "password=", "ey", "a" * 63 + " ", "xox", ".", "0"],
    )  # fmt: skip
    def test_adversarial_repetition_returns_bounded(self, unit: str) -> None:
        """1 MB of one near-match repeated: every rule runs, findings stay capped."""
        text = unit * (1_000_000 // len(unit))

        assert len(find_secrets(text)) <= 100
        assert len(find_secrets_in_bytes(text.encode("utf-16-le"))) <= 100


class TestMasking:
    def test_each_secret_is_masked_and_the_rest_kept(self) -> None:
        text = "deploy with " + TOKEN + " and " + CASES["database-url"] + " done"

        masked = mask_secrets(text)

        assert TOKEN not in masked
        assert "Tr0ub4dor3x" not in masked
        assert masked.startswith("deploy with [secret: github-token ")
        assert masked.endswith("@db.internal:5432/app done")

    def test_clean_text_is_unchanged_and_allowed_is_kept(self) -> None:
        (found,) = find_secrets(TOKEN)

        assert "no secrets here" == mask_secrets("no secrets here")
        assert TOKEN == mask_secrets(TOKEN, allow=frozenset({found.fingerprint}))


def test_the_rules_file_reads_as_tomllib_reads_it() -> None:
    """memd's own reader of secret_rules.toml (no tomllib on the hook's path)."""
    import tomllib
    from pathlib import Path

    import memd.lint.secrets as secrets

    text = (Path(secrets.__file__).parent / secrets.RULES_FILE).read_text()

    assert tomllib.loads(text)["rules"] == secrets.read_rules_file(text)
    assert "gitleaks" in text.split("[[rules]]")[0]  # its source and licence
