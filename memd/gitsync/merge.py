"""The conflict rules of a team sync, as pure functions of file contents.

- ``MEMORY.md`` changed on both sides merges as an ordered union: every line
  of ours, then each line only theirs has, placed after the line it follows
  in theirs. Entry lines are the same line when they link the same file
  (`memd.memory.index`), so an entry is never listed twice; other non-blank
  lines are the same when their text is. Entries for files the merge
  deleted are dropped, so deleting a memory still travels.
- A topic file changed on both sides keeps ours in place; theirs becomes
  ``<stem>.from-<author>.md`` next to it, with valid frontmatter, and the
  index links it after ours.
- A file deleted on one side and changed on the other keeps the change.

Lint's rule T001 (`memd.lint.checks_files.is_conflict_copy`) reports such copies.
Nothing here truncates: a merged index over the agent's limits is reported
by lint like any other.
"""

from __future__ import annotations

import posixpath
import re

from memd.memory.index import normalize_target, parse_index
from memd.memory.memfile import parse_memory_file

_SLUG_RUN = re.compile(r"[a-z0-9]+")
MAX_AUTHOR_SLUG = 40


def author_slug(author: str) -> str:
    """Return `author` as a file-name-safe slug (``Ana María`` -> ``ana-mar-a``)."""
    slug = "-".join(_SLUG_RUN.findall(author.lower()))[:MAX_AUTHOR_SLUG].strip("-")
    return slug or "them"


def conflict_copy_path(relpath: str, author: str, taken: frozenset[str]) -> str:
    """Return ``<stem>.from-<author>.md`` beside `relpath`, numbered past `taken`."""
    head, name = posixpath.split(relpath)
    stem = name[:-3] if name.endswith(".md") else name
    base = f"{stem}.from-{author_slug(author)}"
    candidate = posixpath.join(head, base + ".md")
    number = 2
    while candidate in taken:
        candidate = posixpath.join(head, f"{base}-{number}.md")
        number += 1
    return candidate


def conflict_copy_text(relpath: str, theirs: bytes, author: str) -> bytes:
    """Return their version of `relpath` as a topic file whose frontmatter lints.

    Their bytes are kept as they are when they already parse without errors;
    otherwise (a member without memd pushed a broken file) they become the
    body under a frontmatter that says where they came from.
    """
    parsed = parse_memory_file(relpath, theirs)
    if not any(str(d.severity) == "error" for d in parsed.diagnostics):
        return theirs
    body = theirs.decode("utf-8", "replace").replace("\x00", "")
    stem = posixpath.basename(relpath).removesuffix(".md")
    header = (
        "---\n"
        f"name: {_yaml_quote(f'{stem} (from {author})')}\n"
        f"description: {_yaml_quote(f'Their {relpath}, kept by a team sync')}\n"
        "type: project\n"
        "---\n"
    )
    return (header + body).encode("utf-8")


def _yaml_quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _line_keys(text: str) -> list[tuple[str, str] | None]:
    """Return a merge key per line: the linked file, the text, or None (blank)."""
    lines = text.split("\n")
    keys: list[tuple[str, str] | None] = [
        ("text", line.rstrip()) if line.strip() else None for line in lines
    ]
    for entry in parse_index(text):
        target = normalize_target(entry.target)
        if target is not None and keys[entry.line - 1] is not None:
            keys[entry.line - 1] = ("link", target)
    return keys


def merge_index(
    ours: str, theirs: str, *, deleted: frozenset[str] = frozenset()
) -> str:
    """Return the ordered union of two versions of MEMORY.md.

    `deleted` holds the relpaths the merge removed; entries linking them are
    dropped from both sides.
    """
    ours_lines = ours.split("\n")
    merged: list[tuple[tuple[str, str] | None, str]] = [
        (key, line)
        for key, line in zip(_line_keys(ours), ours_lines, strict=True)
        if not (key is not None and key[0] == "link" and key[1] in deleted)
    ]
    # A final newline is an empty last element; keep it last.
    trailer = merged.pop() if merged and merged[-1] == (None, "") else None
    position = {key: at for at, (key, _) in enumerate(merged) if key is not None}
    anchor: int | None = None
    theirs_keys = _line_keys(theirs)
    for number, (key, line) in enumerate(
        zip(theirs_keys, theirs.split("\n"), strict=True)
    ):
        if key is None or (key[0] == "link" and key[1] in deleted):
            continue
        if key in position:
            anchor = position[key]
            continue
        if anchor is None:
            # Before any shared line: go before the first one that follows in theirs.
            later = (position.get(k) for k in theirs_keys[number + 1 :] if k)
            at = next((found for found in later if found is not None), len(merged))
        else:
            at = anchor + 1
        merged.insert(at, (key, line))
        position = {k: i for i, (k, _) in enumerate(merged) if k is not None}
        anchor = at
    if trailer is not None:
        merged.append(trailer)
    return "\n".join(line for _, line in merged)


def without_links_to(index_text: str, targets: frozenset[str]) -> str:
    """Return `index_text` without the entry lines that link one of `targets`."""
    lines = index_text.split("\n")
    return "\n".join(
        line
        for key, line in zip(_line_keys(index_text), lines, strict=True)
        if not (key is not None and key[0] == "link" and key[1] in targets)
    )


def link_copies(index_text: str, copies: tuple[tuple[str, str, str], ...]) -> str:
    """Return `index_text` with an entry for each (original, copy, author) it lacks.

    The entry goes right after the original's entry, else at the end.
    """
    lines = index_text.split("\n")
    had_final_newline = bool(lines) and lines[-1] == ""
    if had_final_newline:
        lines.pop()
    for original, copy, author in copies:
        keys = _line_keys("\n".join(lines))
        if ("link", copy) in keys:
            continue
        entry = (
            f"- [{posixpath.basename(original)} from {author}]({copy})"
            f" \u2014 both sides changed {original}; merge into it, then delete this"
        )
        after = (
            keys.index(("link", original)) + 1 if ("link", original) in keys else None
        )
        lines.insert(len(lines) if after is None else after, entry)
    return "\n".join(lines) + ("\n" if had_final_newline or not lines else "")
