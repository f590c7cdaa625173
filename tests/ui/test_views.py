"""The viewer's pure parts: the index model, masking, diffs, plots, the gate's rules."""

from __future__ import annotations

import pytest

from memd.claude_code.prompt import view_index
from memd.config import load_config
from memd.errors import ConfigError
from memd.lint.secrets import find_secrets
from memd.ui import plots, security, views

SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def model_of(text: str) -> views.IndexModel:
    view = view_index(text)
    return views.index_model(
        text, view.shown, view.truncation, max_lines=200, max_units=25_000
    )


class TestIndexModel:
    def test_the_cut_falls_after_line_200(self) -> None:
        text = "".join(f"- [E{n}](e{n}.md) — hook\n" for n in range(1, 251))
        model = model_of(text)

        assert (200, True) == (model.cut_after, model.is_line_cut)
        assert [201, 250] == [
            model.entries_past_cut[0][0],
            model.entries_past_cut[-1][0],
        ]
        assert [False, True] == [model.lines[199].is_cut, model.lines[200].is_cut]

    def test_leading_blank_lines_move_the_cut(self) -> None:
        """The agent trims first: blank lines at the top do not count."""
        text = "\n\n" + "".join(f"- [E{n}](e{n}.md)\n" for n in range(1, 211))

        assert 202 == model_of(text).cut_after

    def test_a_unit_cut(self) -> None:
        text = "".join(f"- [E{n}](e{n}.md) — {'x' * 400}\n" for n in range(100))
        model = model_of(text)

        assert (False, True) == (model.is_line_cut, model.is_unit_cut)
        assert model.cut_after is not None
        assert model.cut_after < 100

    def test_no_cut_and_stripped_markup(self) -> None:
        text = "<!-- a note for people -->\n- [A](a.md)\n"
        model = model_of(text)

        assert (None, ()) == (model.cut_after, model.entries_past_cut)
        assert model.stripped_chars > 0


class TestMasking:
    @pytest.mark.parametrize(
        "text",
        [
            f"token {SECRET} here",
            f"<td>{SECRET}</td>",
            "password = Hunter2Hunter2xyZ9",
            "sk-ant-" + "q" * 30,
        ],
    )
    def test_secrets_are_masked(self, text: str) -> None:
        masked = views.mask_secrets(text)
        page = views.mask_page(text)

        assert (masked != text, page != text) == (True, True)
        assert ((), ()) == (find_secrets(masked), find_secrets(page))

    def test_markup_around_a_secret_survives(self) -> None:
        assert f"<td>{views.MASK}</td>" == views.mask_page(f"<td>{SECRET}</td>")

    def test_the_page_keeps_its_csrf_value(self) -> None:
        csrf = security.csrf_value("t" * 43)
        form = f'<input type="hidden" name="csrf" value="{csrf}">'

        assert form == views.mask_page(form, keep=(csrf,))

    def test_a_private_key_block_is_masked_whole(self) -> None:
        key = (
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nAAAA\n"
            "-----END RSA PRIVATE KEY-----"
        )
        masked = views.mask_page(f"before\n{key}\nafter")

        assert "MIIEow" not in masked
        assert masked.startswith("before\n")
        assert masked.endswith("\nafter")

    def test_many_secrets(self) -> None:
        text = "\n".join(f"k{n} {SECRET[:-2]}{n:02d}" for n in range(150))

        assert SECRET[:-2] not in views.mask_secrets(text)
        assert SECRET[:-2] not in views.mask_page(text)


class TestDiff:
    def test_created_file(self) -> None:
        diff = views.diff(None, b"a\nb\n", name="x.md")

        assert ["hunk", "add", "add", "add"] == [kind for kind, _ in diff.lines]

    def test_bounded(self) -> None:
        big = b"x\n" * 5000

        assert "" != views.diff(big, big + b"y\n").note

    def test_frontmatter_lines_are_kept(self) -> None:
        """A removed `---` reads `----`, an added `++x` reads `+++x`: both stay."""
        with_front = b"---\nname: a\n---\nbody\n"
        removed = views.diff(with_front, b"body\n", name="a.md")
        added = views.diff(b"body\n", b"++x\nbody\n", name="a.md")

        assert ["----", "-name: a", "----"] == [
            text for kind, text in removed.lines if kind == "del"
        ]
        assert ["+++x"] == [text for kind, text in added.lines if kind == "add"]
        assert (0, 3, "+0 \u22123 lines") == (
            removed.added,
            removed.removed,
            removed.counts,
        )


def row(name: str, **values: object) -> views.ProjectRow:
    meta: dict[str, object] = {"lint_errors": 0, "lint_warnings": 0}
    meta.update(values)
    return views.project_row(
        f"/m/{name}",
        source="test",
        meta=meta,
        alarm=str(values.get("alarm", "")),
        needs_review=int(str(values.get("needs_review", 0))),
        name=f"~/code/{name}",
        max_lines=200,
        max_units=25_000,
    )


class TestOverviewOrder:
    def test_losses_errors_cuts_stale_warnings_then_the_rest(self) -> None:
        rows = [
            row("a"),
            row("b", lint_warnings=2),
            row("f", lint_warnings=3, needs_review=1),
            row("c", truncation={"was_line_truncated": True, "line_count": 230}),
            row("d", lint_errors=1),
            row("e", alarm="4 memory files were deleted"),
        ]

        assert ["e", "d", "c", "f", "b", "a"] == [
            r.shown.rsplit("/", 1)[-1] for r in views.by_attention(rows)
        ]
        assert ["~/code/c"] == [r.shown for r in views.by_attention(rows, " DE/C ")]


FACTS_BEFORE = """---
name: Deploy
description: d
type: project
---
<!-- memd:facts v2 -->
- The timeout is 30 s <!-- memd:fact 2026-11-01 2026-11-01 1 -->
- Staging runs on k3s <!-- memd:fact 2026-11-01 2026-11-01 1 -->
- Old cache is redis <!-- memd:fact 2026-10-01 2026-10-01 1 -->
<!-- memd:end -->
"""
FACTS_AFTER = """---
name: Deploy
description: d
type: project
---
<!-- memd:facts v2 -->
- The timeout is 60 s <!-- memd:fact 2026-11-02 2026-11-02 1 -->
  - previously: The timeout is 30 s, until 2026-11-02 <!-- memd:was 2026-11-01 -->
- Staging runs on k3s <!-- memd:fact 2026-11-01 2026-11-02 2 -->
- Builds use uv <!-- memd:fact 2026-11-02 2026-11-02 1 -->
<!-- memd:end -->
"""


class TestFactChanges:
    def test_added_updated_archived_and_seen_again(self) -> None:
        changes = views.fact_changes(
            "project_deploy.md", FACTS_BEFORE.encode(), FACTS_AFTER.encode()
        )

        assert changes is not None
        assert ("Builds use uv",) == changes.added
        assert (("The timeout is 30 s", "The timeout is 60 s"),) == changes.updated
        assert ("Old cache is redis",) == changes.archived
        assert 1 == changes.seen_again

    def test_a_file_without_facts_is_shown_by_its_diff(self) -> None:
        assert None is views.fact_changes("MEMORY.md", b"- [A](a.md)\n", b"")


class TestPlots:
    def test_labels_are_escaped(self) -> None:
        series = (
            plots.Series(label="<script>x</script>", points=((1.0, 2.0), (2.0, 3.0))),
        )
        svg = plots.line_plot(series, title="t<b>")

        assert "<script>" not in svg
        assert "<b>" not in svg
        assert "&lt;script&gt;" in svg

    def test_telemetry_model(self) -> None:
        events = [
            {
                "event": "memdir_loaded",
                "time_ns": n * 10**9,
                "memory_dir": "/m/memory",
                "memory_type": "auto",
                "content_length": n,
                "line_count": n,
                "was_truncated": n == 3,
            }
            for n in range(1, 5)
        ]
        model = plots.telemetry_model(events, {"/m/memory": "m"})

        assert (1, 4, 1) == (
            len(model.units),
            len(model.units[0].points),
            len(model.cuts),
        )


class TestGateRules:
    @pytest.mark.parametrize(
        ("name", "value", "ok"),
        [
            ("id", "0123456789abcdef", True),
            ("id", "../etc", False),
            ("file", "notes/a.md", True),
            ("file", "../a.md", False),
            ("file", "/etc/passwd", False),
            ("file", "a/./b.md", False),
            ("file", ".git/config", False),
            ("rev", "12", True),
            ("rev", "-1", False),
            ("q", "what ../ do we know", True),
            ("path", "a.md", False),
        ],
    )
    def test_parameters(self, name: str, value: str, ok: bool) -> None:
        assert ok == (security.parameter_refusal(name, value) is None)

    def test_hosts(self) -> None:
        hosts = security.allowed_hosts(("127.0.0.1", "::1"), 7437)

        assert {"127.0.0.1:7437", "[::1]:7437", "localhost:7437"} == set(hosts)
        assert not security.host_allowed("evil.example:7437", hosts)
        assert security.origin_allowed("http://127.0.0.1:7437", hosts)
        assert not security.origin_allowed("null", hosts)

    def test_the_cookie_is_not_the_token(self) -> None:
        token = "t" * 43

        assert token not in (security.session_value(token), security.csrf_value(token))


class TestConfig:
    def test_defaults(self) -> None:
        config = load_config()

        assert (True, 7437, "127.0.0.1") == (
            config.ui_enabled,
            config.ui_port,
            config.ui_address,
        )

    @pytest.mark.parametrize(
        ("key", "value"),
        [("MEMD_UI_PORT", "70000"), ("MEMD_UI_ADDRESS", "evil.example")],
    )
    def test_bad_values(
        self, key: str, value: str, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv(key, value)

        with pytest.raises(ConfigError):
            load_config()


def test_peer_uid_reads_the_proc_table() -> None:
    """The client's row: local = the client's address, remote = the server's."""
    table = (
        "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when "
        "retrnsmt   uid  timeout inode\n"
        "   0: 0100007F:1D0D 00000000:0000 0A 00000000:00000000 00:00000000 "
        "00000000     0        0 1 1 0 100 0 0 10 0\n"
        "   1: 0100007F:C350 0100007F:1D0D 01 00000000:00000000 00:00000000 "
        "00000000  1000        0 2 1 0 20 4 30 10 -1\n"
    )

    assert 1000 == security.peer_uid(table, ("127.0.0.1", 50000), ("127.0.0.1", 7437))
    assert security.peer_uid(table, ("127.0.0.1", 50001), ("127.0.0.1", 7437)) is None
