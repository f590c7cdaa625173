"""The wording of the memory prompt, in memd's own words.

The structure follows REFERENCE.md §4 (buildMemoryLines, buildCombinedMemoryPrompt
and the KAIROS daily-log prompt): title, where the directory is and that it
exists, the four types, what not to save, how to save, when to access, verify
before recommending, other persistence. The sentences are memd's; only the
order, the headings and the facts (limits, paths, the pointer format) match.

Everything here is a constant or a pure function of its arguments, so the
rendered prompt is the same bytes for the same inputs. No dates appear: the
KAIROS log path is given as a pattern so the text stays valid across midnight.
"""

from __future__ import annotations

INTRO_PARAGRAPHS = (
    "Over many conversations, use this memory to build an accurate picture of the "
    "person you work with: their role, how they like to collaborate, what they are "
    "building and why, and where the useful information lives. Good memory means "
    "the user never has to explain the same thing twice.",
    "When the user asks you to remember something, save it straight away as the "
    "best-fitting type below. When they ask you to forget something, find the "
    "memory and remove it.",
)

# (name, scope, description, when_to_save, how_to_use, body_structure, examples)
# `scope` is used in team mode only; examples are (private/team-neutral text).
_TYPES = (
    (
        "user",
        "Always private: facts about the user stay in the private directory.",
        "Who the user is: their role, goals, areas of expertise and working "
        "preferences. Keep it to what helps you work with them; nothing "
        "judgemental and nothing unrelated to the work.",
        "When you learn something lasting about the user's background, "
        "responsibilities or preferences.",
        "Pitch explanations at their level and shape suggestions around "
        "what they are trying to achieve.",
        None,
        (
            "The user says they are a data engineer new to the frontend -> "
            "save a user memory: experienced with pipelines and SQL, explain "
            "UI concepts from first principles.",
        ),
    ),
    (
        "feedback",
        "Private by default; team only when it is a convention for the whole project.",
        "Guidance on how the user wants the work done, both corrections "
        '("don\'t do X") and approaches they confirmed ("yes, keep doing '
        'that"). Keep the reason with the rule so edge cases can be judged later.',
        "Whenever the user corrects your approach or clearly approves one "
        "that was not obvious, if it will apply beyond this task.",
        "Follow it without being reminded; the user should never have to "
        "repeat guidance they already gave.",
        "Lead with the rule, then a **Why:** line giving the reason, then a "
        "**How to apply:** line saying when and where it applies.",
        (
            "The user rejects a mocked database in tests because mocks hid a "
            "broken migration last quarter -> save a feedback memory: "
            "integration tests use a real database.",
        ),
    ),
    (
        "project",
        "Either directory, leaning strongly to team: teammates need the same context.",
        "Ongoing work, goals, decisions, deadlines and incidents that cannot be "
        "recovered from the code or the git history. Write dates as absolute "
        'dates, never "next Tuesday". These go stale quickly, so keep them current.',
        "When you learn who is doing what, why a decision was made, or by "
        "when something must land.",
        "Understand the motivation behind a request and make suggestions "
        "that fit the constraints the project is under.",
        "Lead with the fact or decision, then a **Why:** line giving the "
        "motivation, then a **How to apply:** line saying how it should "
        "change what you do.",
        (
            "The user mentions a release freeze starting 2026-03-05 for the "
            "mobile launch -> save a project memory with that absolute date "
            "and what it blocks.",
        ),
    ),
    (
        "reference",
        "Usually team: pointers to shared systems are useful to everyone.",
        "Where information lives outside the repository: issue trackers, "
        "dashboards, runbooks, chat channels, documents.",
        "When the user points you at an outside system and what it is for.",
        "Know where to look when a question needs information the repository "
        "does not hold.",
        None,
        (
            "The user says on-call alerts are triaged in the #ops-pager channel "
            "-> save a reference memory naming the channel and its purpose.",
        ),
    ),
)

WHAT_NOT_TO_SAVE_BULLETS = (
    "- Anything the repository already shows: code patterns, architecture, "
    "conventions visible in the code, file paths and project layout.",
    "- Git history and who changed what; `git log` and `git blame` answer that.",
    "- Recipes for fixing a bug: the fix lives in the code and its commit message.",
    "- Anything already written in CLAUDE.md files.",
    "- State that only matters for the current task or conversation.",
)
SECRETS_BULLET = (
    "- Secrets of any kind (keys, tokens, passwords, private URLs) in team "
    "memory: everyone on the project can read it."
)
WHAT_NOT_TO_SAVE_NOTE = (
    "These exclusions hold even when the user asks you to save such things. "
    "In that case, save only the part that is surprising or not obvious from "
    "the repository."
)

FRONTMATTER_EXAMPLE = (
    "```markdown",
    "---",
    "name: {{short title}}",
    "description: {{one specific line, used later to judge whether it is relevant}}",
    "type: {{user, feedback, project or reference}}",
    "---",
    "",
    "{{the memory; for feedback and project: the rule or fact, then **Why:** and "
    "**How to apply:** lines}}",
    "```",
)

# 2.1.332 on: the nested form the agent writes (REFERENCE.md §8). The three
# placeholder lines are the agent's own; the body placeholder is memd's words.
FRONTMATTER_EXAMPLE_NESTED = (
    "```markdown",
    "---",
    "name: {{short-kebab-case-slug}}",
    "description: {{one-line summary, used to decide relevance in future "
    "conversations, so be specific}}",
    "metadata:",
    "  type: {{user, feedback, project, reference}}",
    "---",
    "",
    "{{the memory; for feedback and project: the rule or fact, then **Why:** and "
    "**How to apply:** lines. Link related memories with [[their-name]].}}",
    "```",
)

# The agent's own sentence (REFERENCE.md, 2.1.332: `[[name]]` links), backticks
# as in the bundle: both `[[name]]` and the `name` after "where".
LINK_ADVICE = (
    "In the body, link to related memories with `[[name]]`, where `name` is the "
    "other memory's name: slug. Link liberally — a `[[name]]` that doesn't match "
    "an existing memory yet is fine; it marks something worth writing later, not "
    "an error."
)

WHEN_TO_ACCESS = (
    "- Read memories when they look relevant to the task, or when the user "
    "refers to earlier work.",
    "- Always read them when the user asks you to check, recall or remember.",
    "- Memories can drift: a fact that was true when it was saved may no longer "
    "hold. Compare what a memory says with the current state of the files and "
    "trust what you observe now. When a memory is wrong or outdated, fix it or "
    "delete it rather than acting on it.",
)

BEFORE_RECOMMENDING = (
    "A memory that names a file, function, command or flag says it existed when "
    "the memory was written, not that it exists now. Before you recommend it or "
    "build on it, check that it is still there (open the file, search for the "
    "symbol). If it is gone, say so and update the memory.",
)

OTHER_PERSISTENCE = (
    "Memory is for things that will matter in future conversations. For state "
    "that only matters in this conversation, use the tools made for it: a plan "
    "to agree on an approach, and tasks to track the steps of the current work.",
)

INDEX_EMPTY = "Your MEMORY.md is empty for now. Memories you save will be listed here."


def standard_intro(memory_dir: str) -> tuple[str, ...]:
    """Return the title and intro for a single private memory directory."""
    return (
        "# auto memory",
        "",
        f"You have a persistent, file-based memory in `{memory_dir}`. The directory "
        "already exists: write files there directly with the Write tool, without "
        "running mkdir or checking whether it is there.",
        "",
        INTRO_PARAGRAPHS[0],
        "",
        INTRO_PARAGRAPHS[1],
    )


def team_intro(memory_dir: str, team_dir: str) -> tuple[str, ...]:
    """Return the title, intro and scope section for private plus team memory."""
    return (
        "# Memory",
        "",
        "You have a persistent, file-based memory in two directories, and both "
        f"already exist: your private memory in `{memory_dir}` and the team's "
        f"shared memory in `{team_dir}`. Write files there directly with the "
        "Write tool, without running mkdir or checking first.",
        "",
        INTRO_PARAGRAPHS[0],
        "",
        INTRO_PARAGRAPHS[1],
        "",
        "## Memory scope",
        "",
        f"- Private (`{memory_dir}`): only you and this user see it. Personal "
        "preferences and anything about the user go here.",
        f"- Team (`{team_dir}`): shared with everyone working on this project. "
        "Put there what every teammate's assistant should know.",
    )


def types_section(*, with_scope: bool) -> tuple[str, ...]:
    """Return `## Types of memory` with its <types> block (scope tags in team mode)."""
    lines = [
        "## Types of memory",
        "",
        "Every memory has one of these four types:",
        "",
        "<types>",
    ]
    for name, scope, description, when, how, body, examples in _TYPES:
        lines += ["<type>", f"    <name>{name}</name>"]
        if with_scope:
            lines.append(f"    <scope>{scope}</scope>")
        lines += [
            f"    <description>{description}</description>",
            f"    <when_to_save>{when}</when_to_save>",
            f"    <how_to_use>{how}</how_to_use>",
        ]
        if body is not None:
            lines.append(f"    <body_structure>{body}</body_structure>")
        lines.append("    <examples>")
        for example in examples:
            where = _example_scope(name) if with_scope else ""
            lines.append(f"    {where}{example}")
        lines += ["    </examples>", "</type>"]
    lines.append("</types>")
    return tuple(lines)


def _example_scope(type_name: str) -> str:
    return "(private) " if type_name in ("user", "feedback") else "(team) "


def what_not_to_save(*, team: bool) -> tuple[str, ...]:
    """Return `## What NOT to save in memory` (with the secrets rule in team mode)."""
    bullets = (
        (*WHAT_NOT_TO_SAVE_BULLETS, SECRETS_BULLET)
        if team
        else WHAT_NOT_TO_SAVE_BULLETS
    )
    return ("## What NOT to save in memory", "", *bullets, "", WHAT_NOT_TO_SAVE_NOTE)


def how_to_save(
    *,
    team: bool,
    recall_limit: str | None = None,
    frontmatter_example: tuple[str, ...] = FRONTMATTER_EXAMPLE,
    link_advice: str | None = None,
) -> tuple[str, ...]:
    """Return `## How to save memories`: a topic file, then a one-line index pointer.

    `recall_limit` (`4KB`, 2.1.332 on) adds the agent's topic-file size advice;
    `link_advice`, when given, follows the frontmatter example as a paragraph.
    """
    where = (
        "in the private or the team directory, as its scope says"
        if team
        else "in the memory directory"
    )
    lines = [
        "## How to save memories",
        "",
        "Saving takes two steps:",
        "",
        f"1. Write the memory to its own topic file {where} (for example "
        "`feedback_testing.md`), starting with this frontmatter:",
        "",
        *frontmatter_example,
        "",
        *((link_advice, "") if link_advice is not None else ()),
        "2. Add a pointer to it in `MEMORY.md`, one line per memory, in the form "
        "`- [Title](file.md) — one-line hook`. Keep each line under about 150 "
        "characters. `MEMORY.md` is an index, not a place for the memories "
        "themselves.",
    ]
    if team:
        lines += [
            "",
            "A single `MEMORY.md`, in the private directory, indexes both "
            "directories: write team entries with the `team/` prefix, as in "
            "`- [Deploy freeze](team/project_freeze.md) — no deploys during launch`.",
        ]
    lines += [
        "",
        "- `MEMORY.md` is loaded into every conversation, and lines after 200 are "
        "cut off, so keep it short and put detail in the topic files.",
        "- Organise by topic, not by date. Update an existing memory rather than "
        "writing a duplicate, and remove memories that turn out to be wrong.",
    ]
    if recall_limit is not None:
        # The agent's own sentence (REFERENCE.md, 2.1.332: topic-file limit).
        lines.append(
            f"- Keep each memory file under {recall_limit} including frontmatter "
            f"(recall shows only the first {recall_limit}) and the description to "
            "one specific line; when a file outgrows that, split or summarize it "
            "rather than continuing it in a second file."
        )
    return tuple(lines)


def when_to_access(*, team: bool) -> tuple[str, ...]:
    """Return `## When to access memories`, ending with the drift caveat."""
    lead = (
        "Your memories, private and team, are there to be used:"
        if team
        else "Your memories are there to be used:"
    )
    return ("## When to access memories", "", lead, "", *WHEN_TO_ACCESS)


def closing_sections(extra_guidelines: str | None) -> tuple[str, ...]:
    """Return the verify, other-persistence and extra-guidelines sections."""
    lines = [
        "## Before recommending from memory",
        "",
        *BEFORE_RECOMMENDING,
        "",
        "## Memory and other forms of persistence",
        "",
        *OTHER_PERSISTENCE,
    ]
    if extra_guidelines is not None:
        lines += ["", extra_guidelines]
    return tuple(lines)


def kairos_sections(memory_dir: str) -> tuple[str, ...]:
    """Return the KAIROS daily-log prompt; the log path is a pattern, never a date."""
    pattern = f"{memory_dir}logs/YYYY/MM/YYYY-MM-DD.md"
    return (
        "# auto memory",
        "",
        f"You have a persistent, file-based memory in `{memory_dir}`. The directory "
        "already exists: write there directly with the Write tool, without running "
        "mkdir or checking first.",
        "",
        INTRO_PARAGRAPHS[0],
        "",
        "## Daily log",
        "",
        "In this mode you do not organise memories yourself. Instead, record "
        "what is worth keeping in today's log as you go:",
        "",
        f"- The log for a day is `{pattern}`, using today's local date. Create "
        "the file and its folders if they are missing.",
        "- Append one short bullet per item, stamped with the local time: "
        "`- HH:MM what happened or what you learned`. Never rewrite or reorder "
        "earlier bullets.",
        "- Log what a future conversation would want to know: the user's "
        "preferences and corrections, decisions and their reasons, deadlines, "
        "where outside information lives.",
        "- Do not edit `MEMORY.md` or the topic files. They are rebuilt from the "
        "logs every night.",
        "",
        *what_not_to_save(team=False),
    )
