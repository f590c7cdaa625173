"""Render the memory prompt for one directory and mode: pure, deterministic bytes.

REFERENCE.md §4 gives the order of the sections; §3 says how MEMORY.md is
shown: YAML frontmatter stripped, then the top-level HTML comment blocks
(`html_comments`, as the real releases do it: a comment inside a list item
or a paragraph line stays), then `truncate_entrypoint`, then (2.1.332)
invisible and control characters removed and reserved tags neutralized
(`reserved_tags`: `<system-reminder>` loads as `<\\system-reminder>`), then
placed under `## MEMORY.md` (or a line saying it is empty when nothing is
left). The wording lives in `prompt_text`.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace

from memd.claude_code import wording as prompt_text
from memd.claude_code.html_comments import sanitize_loaded_text, strip_comment_blocks
from memd.claude_code.jscompat import js_trim
from memd.claude_code.profile import get_profile
from memd.claude_code.reserved_tags import neutralize_reserved_tags
from memd.claude_code.truncation import (
    EntrypointTruncation,
    format_file_size,
    truncate_entrypoint,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memd.claude_code.profile import ProfileSpec

MODES = ("standard", "team", "kairos")

# The reference's frontmatter pattern: the closing fence may carry trailing blanks.
_FRONTMATTER = re.compile(r"\A---[ \t]*\r?\n(?:[\s\S]*?\n)?---[ \t]*(?:\r?\n|\Z)")


def strip_index_markup(text: str, *, profile: ProfileSpec = None) -> str:
    """Return MEMORY.md without its frontmatter and top-level comment blocks.

    This is the one place that turns the file into what the agent loads
    before truncation; `profile` says whether a BOM goes first (2.1.332) or
    stays and hides the frontmatter (2.1.112, whose later trim drops it).
    """
    agent = get_profile(profile)
    if agent.index_drops_bom_first:
        text = text.removeprefix("\ufeff")
    text = _FRONTMATTER.sub("", text, count=1)
    return strip_comment_blocks(text, rebuild=agent.index_rebuilt_from_tokens).content


@dataclass(frozen=True, slots=True, kw_only=True)
class IndexView:
    """MEMORY.md as the agent loads it: built once, shared by render and lint."""

    shown: str  # frontmatter and HTML comments stripped; "" without an index
    truncation: EntrypointTruncation | None  # None when nothing is left to show


def view_index(
    index_text: str | None, *, profile: ProfileSpec = None, has_bom: bool = False
) -> IndexView:
    """Return `index_text` stripped of markup and truncated as the agent does it.

    `has_bom`: the file began with a BOM that the reader took off `index_text`.
    """
    if has_bom and index_text is not None:
        index_text = "\ufeff" + index_text
    shown = (
        strip_index_markup(index_text, profile=profile)
        if index_text is not None
        else ""
    )
    if not js_trim(shown):
        return IndexView(shown=shown, truncation=None)
    truncation = truncate_entrypoint(shown, profile=profile)
    agent = get_profile(profile)
    loaded = truncation.content
    if agent.index_sanitized:
        loaded = sanitize_loaded_text(loaded)
    if agent.index_tags_neutralized:  # after sanitizing, as 2.1.332's loader does
        loaded = neutralize_reserved_tags(loaded)
    if loaded != truncation.content:
        truncation = replace(truncation, content=loaded)
    return IndexView(shown=shown, truncation=truncation)


def render_index(
    index_text: str | None,
    *,
    view: IndexView | None = None,
    profile: ProfileSpec = None,
) -> tuple[tuple[str, ...], EntrypointTruncation | None]:
    """Return the `## MEMORY.md` section and the truncation facts (None when empty).

    `view`, when given, must be `view_index(index_text)`: it saves recomputing it.
    """
    if view is None:
        view = view_index(index_text, profile=profile)
    if view.truncation is None:
        return ("## MEMORY.md", "", prompt_text.INDEX_EMPTY), None
    return ("## MEMORY.md", "", view.truncation.content), view.truncation


def render_prompt(
    *,
    mode: str,
    memory_dir: str,
    index_text: str | None,
    extra_guidelines: str | None = None,
    index_view: IndexView | None = None,
    profile: ProfileSpec = None,
) -> tuple[str, EntrypointTruncation | None]:
    """Return the prompt text for `mode` and the index truncation facts.

    `memory_dir` ends with a separator; the team directory is `<memory_dir>team/`.
    The same arguments always give the same text, which ends with one newline.
    `index_view`, when given, must be `view_index(index_text, profile=profile)`;
    `profile` (default the newest release) words the truncation warning.

    Raises:
        ValueError: `mode` is not one of MODES.
    """
    if mode not in MODES:
        raise ValueError(
            f"unknown prompt mode {mode!r}; expected one of {', '.join(MODES)}"
        )
    if not memory_dir.endswith(os.sep):
        memory_dir += os.sep
    guidelines = (
        extra_guidelines if extra_guidelines and js_trim(extra_guidelines) else None
    )
    team = mode == "team"
    agent = get_profile(profile)
    recall_bytes = agent.recall_max_bytes
    recall_limit = None if recall_bytes is None else format_file_size(recall_bytes)
    sections: list[tuple[str, ...]]
    if mode == "kairos":
        sections = [
            prompt_text.kairos_sections(memory_dir),
            prompt_text.when_to_access(team=False),
            prompt_text.closing_sections(guidelines),
        ]
    else:
        intro = (
            prompt_text.team_intro(memory_dir, memory_dir + "team" + os.sep)
            if team
            else prompt_text.standard_intro(memory_dir)
        )
        sections = [
            intro,
            prompt_text.types_section(with_scope=team),
            prompt_text.what_not_to_save(team=team),
            prompt_text.how_to_save(
                team=team,
                recall_limit=recall_limit,
                frontmatter_example=agent.prompt_frontmatter,
                link_advice=agent.prompt_link_advice,
            ),
            prompt_text.when_to_access(team=team),
            prompt_text.closing_sections(guidelines),
        ]
    index_lines, truncation = render_index(index_text, view=index_view, profile=profile)
    sections.append(index_lines)
    text = "\n\n".join("\n".join(section) for section in sections)
    return text + "\n", truncation
