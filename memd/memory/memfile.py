"""Parse one topic file: bytes in, a `MemoryFile` with diagnostics out, never raising.

Both frontmatter dialects are read the same way (REFERENCE.md §8): the classic
one with a top-level `type`, and the current release's nested one with `type`,
`node_type`, `originSessionId` and `modified` under `metadata:`. Every top-level
key other than `name`, `description` and `metadata` folds into the effective
metadata, and the nested keys win.

Hostile input (SPEC §11): the frontmatter is capped at 64 KiB *before* any YAML
is parsed; `memd.memory.yaml_safe` then loads it with PyYAML's safe loader and refuses
alias bombs, self-reference and runaway nesting.

The recall scan reads only the first 30 lines of a file (REFERENCE.md §5), so
the parse records whether the frontmatter closes within them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from types import MappingProxyType

from memd.claude_code.recall import line_ends
from memd.diagnostics import Diagnostic, Severity, one_line
from memd.memory.yaml_safe import load_yaml

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

MAX_FRONTMATTER_BYTES = 64 * 1024
RECALL_LINES = 30
_BOM = b"\xef\xbb\xbf"
_OPEN = re.compile(r"---[^\S\n]*(?:\n|\Z)")
_CLOSE = re.compile(r"^---[^\S\n]*$", re.MULTILINE)
_TOP_KEYS = ("name", "description", "metadata")


def _empty() -> Mapping[str, object]:
    return MappingProxyType({})


def _no_lines() -> Mapping[str, int]:
    return MappingProxyType({})


@dataclass(frozen=True, slots=True, kw_only=True)
class MemoryFile:
    """One topic file as memd understands it.

    `metadata` is the effective metadata (top-level extras folded in, nested keys
    win); `fields` is the flat view lint judges: `name`, `description` and every
    effective metadata key, with YAML types as parsed (a list stays a list).
    `raw_frontmatter` is the top-level mapping exactly as YAML produced it.
    `field_lines` maps a top-level key (`type`) or a nested one (`metadata.type`)
    to the 1-based line it is on. `body` has CRLF turned into LF.
    """

    relpath: str
    name: str | None = None
    description: str | None = None
    type: str | None = None
    dialect: str | None = None  # "classic" | "nested" | None (no usable frontmatter)
    metadata: Mapping[str, object] = field(default_factory=_empty)
    frontmatter_end_line: int | None = None
    body: str = ""
    diagnostics: tuple[Diagnostic, ...] = ()
    fields: Mapping[str, object] = field(default_factory=_empty)
    raw_frontmatter: Mapping[str, object] = field(default_factory=_empty)
    field_lines: Mapping[str, int] = field(default_factory=_no_lines)
    frontmatter_start_line: int | None = None  # 1 when the file opens with `---`
    body_start_line: int = 1
    is_frontmatter_in_scan: bool = False  # closes within the first 30 lines
    has_crlf: bool = False
    has_bom: bool = False
    is_binary: bool = False
    was_truncated: bool = False  # memdir parsed only the first part of a large file
    size_bytes: int = 0  # of the bytes read, BOM stripped
    # Byte end of each of the first lines (memd.claude_code.recall.line_ends): what a
    # profile's recall and scan limits keep, without holding the bytes.
    line_ends: tuple[int, ...] = ()


# The parser's findings: code -> (name, severity); lint's rule table mirrors these.
PARSE_RULES: Mapping[str, tuple[str, Severity]] = MappingProxyType(
    {
        "M001": ("frontmatter-missing", Severity.ERROR),
        "M002": ("frontmatter-unparsable", Severity.ERROR),
        "M003": ("frontmatter-unclosed", Severity.ERROR),
        "M004": ("frontmatter-not-mapping", Severity.ERROR),
        "M012": ("type-conflict", Severity.WARNING),
        "F001": ("file-not-utf8", Severity.ERROR),
        "F002": ("file-binary", Severity.ERROR),
        "F006": ("crlf-line-endings", Severity.INFO),
        "F007": ("byte-order-mark", Severity.INFO),
    }
)


def _finding(
    code: str,
    path: str,
    message: str,
    hint: str,
    line: int | None = None,
    column: int | None = None,
) -> Diagnostic:
    name, severity = PARSE_RULES[code]
    return Diagnostic(
        code=code,
        name=name,
        severity=severity,
        path=path,
        message=one_line(message),
        hint=one_line(hint),
        line=line,
        column=column,
    )


def decode_text(
    relpath: str, data: bytes, *, normalize_newlines: bool = True
) -> tuple[str, list[Diagnostic], bool, bool]:
    """Return (text without BOM, CRLF as LF, diagnostics, has_bom, has_crlf).

    Invalid UTF-8 is reported with the line of the first bad byte and decoded
    with U+FFFD, the way Node's `readFile(..., "utf8")` would.
    """
    diags: list[Diagnostic] = []
    has_bom = data.startswith(_BOM)
    if has_bom:
        data = data[len(_BOM) :]
        diags.append(
            _finding(
                "F007",
                relpath,
                "file starts with a UTF-8 byte-order mark",
                "save the file as UTF-8 without BOM",
                line=1,
            )
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        diags.append(
            _finding(
                "F001",
                relpath,
                f"file is not valid UTF-8 (first bad byte at offset {exc.start})",
                "re-save the file as UTF-8",
                line=line,
            )
        )
        text = data.decode("utf-8", errors="replace")
    crlf_at = text.find("\r\n")
    has_crlf = crlf_at >= 0
    if has_crlf:
        diags.append(
            _finding(
                "F006",
                relpath,
                "file uses CRLF line endings",
                "convert to LF (`memd fix` does this)",
                line=text.count("\n", 0, crlf_at) + 1,
            )
        )
        if normalize_newlines:
            text = text.replace("\r\n", "\n")
    return text, diags, has_bom, has_crlf


def parse_memory_file(
    relpath: str, data: bytes, *, was_truncated: bool = False
) -> MemoryFile:
    """Parse a topic file's bytes; bad content becomes diagnostics, never raises."""
    if b"\x00" in data:
        return MemoryFile(
            relpath=relpath,
            is_binary=True,
            was_truncated=was_truncated,
            diagnostics=(
                _finding(
                    "F002",
                    relpath,
                    "file contains NUL bytes: it is binary, not Markdown",
                    "memory files must be UTF-8 text; remove or replace this file",
                    line=data.count(b"\n", 0, data.index(b"\x00")) + 1,
                ),
            ),
        )
    text, diags, has_bom, has_crlf = decode_text(relpath, data)
    common = {
        "relpath": relpath,
        "has_bom": has_bom,
        "has_crlf": has_crlf,
        "was_truncated": was_truncated,
        "size_bytes": len(data) - (len(_BOM) if data.startswith(_BOM) else 0),
        "line_ends": line_ends(data),
    }
    if not _OPEN.match(text):
        diags.append(
            _finding(
                "M001",
                relpath,
                "file has no YAML frontmatter (line 1 must be `---`)",
                "open with `---`, `name:`, `description:`, `type:` lines, then `---`",
                line=1,
            )
        )
        return MemoryFile(body=text, diagnostics=tuple(diags), **common)  # type: ignore[arg-type]
    fm_start = text.find("\n") + 1 if "\n" in text else len(text)
    close = _find_close(text, fm_start)
    if close is None:
        too_big = len(text) - fm_start > MAX_FRONTMATTER_BYTES
        diags.append(_unclosed_or_too_big(relpath, too_big))
        return MemoryFile(
            body=text,
            frontmatter_start_line=1,
            diagnostics=tuple(diags),
            **common,  # type: ignore[arg-type]
        )
    close_start, close_end = close
    fm_text = text[fm_start:close_start]
    end_line = text.count("\n", 0, close_start) + 1
    body = text[close_end + 1 :] if close_end < len(text) else ""
    if len(fm_text.encode("utf-8", "surrogatepass")) > MAX_FRONTMATTER_BYTES:
        diags.append(_unclosed_or_too_big(relpath, True))
        return MemoryFile(
            body=body,
            frontmatter_start_line=1,
            frontmatter_end_line=end_line,
            body_start_line=end_line + 1,
            diagnostics=tuple(diags),
            **common,  # type: ignore[arg-type]
        )
    in_scan = end_line <= RECALL_LINES
    if not in_scan:
        diags.append(
            _finding(
                "M003",
                relpath,
                f"frontmatter closes on line {end_line}; recall reads only the first "
                f"{RECALL_LINES} lines, so the agent sees no name, description or type",
                "shorten the frontmatter so `---` closes it within the first 30 lines",
                line=end_line,
            )
        )
    base = {
        **common,
        "body": body,
        "frontmatter_start_line": 1,
        "frontmatter_end_line": end_line,
        "body_start_line": end_line + 1,
        "is_frontmatter_in_scan": in_scan,
    }
    loaded, problem = _load_yaml(relpath, fm_text)
    if problem is not None:
        diags.append(problem)
        return MemoryFile(diagnostics=tuple(diags), **base)  # type: ignore[arg-type]
    if loaded is None:
        loaded = {}
    if not isinstance(loaded, dict):
        diags.append(
            _finding(
                "M004",
                relpath,
                f"frontmatter is a YAML {_kind(loaded)}, not a `key: value` mapping",
                "write it as `name: ...`, `description: ...`, `type: ...` lines",
                line=2,
            )
        )
        return MemoryFile(diagnostics=tuple(diags), **base)  # type: ignore[arg-type]
    return _from_mapping(loaded, fm_text, diags, base)


def _find_close(text: str, fm_start: int) -> tuple[int, int] | None:
    """Return (start, end) of the closing `---` line, searching only up to the cap."""
    # Characters never outnumber UTF-8 bytes, so this bound covers the byte cap.
    if fm_start >= len(text):
        return None
    limit = min(len(text), fm_start + MAX_FRONTMATTER_BYTES + 8)
    match = _CLOSE.search(text, fm_start, limit)
    if match is None:
        return None
    if match.end() < len(text) and text[match.end()] != "\n":
        return None  # the search bound cut a longer line short
    return match.start(), match.end()


def _unclosed_or_too_big(relpath: str, too_big: bool) -> Diagnostic:
    if too_big:
        return _finding(
            "M002",
            relpath,
            f"frontmatter is over {MAX_FRONTMATTER_BYTES // 1024} KiB; not parsed",
            "keep the frontmatter to a few short lines and move detail into the body",
            line=1,
        )
    return _finding(
        "M003",
        relpath,
        "frontmatter is never closed: no `---` line follows the opening one",
        "add a `---` line after the last frontmatter field (within the first 30 lines)",
        line=1,
    )


def _load_yaml(relpath: str, fm_text: str) -> tuple[object, Diagnostic | None]:
    loaded, problem = load_yaml(fm_text)
    if problem is None:
        return loaded, None
    # The frontmatter starts on the file's line 2.
    return None, _finding(
        "M002",
        relpath,
        problem.message,
        "quote values that contain `:`, `#`, `[`, `{`, `&`, `*` or start with a quote",
        line=problem.line + 1,
        column=problem.column,
    )


def _from_mapping(
    loaded: dict[object, object],
    fm_text: str,
    diags: list[Diagnostic],
    base: dict[str, object],
) -> MemoryFile:
    relpath = str(base["relpath"])
    top = {str(k): v for k, v in loaded.items()}
    nested_raw = top.get("metadata")
    nested = (
        {str(k): v for k, v in nested_raw.items()}
        if isinstance(nested_raw, dict)
        else None
    )
    meta = {k: v for k, v in top.items() if k not in _TOP_KEYS}
    if nested is not None:
        meta.update(nested)
    flat: dict[str, object] = {k: top[k] for k in ("name", "description") if k in top}
    flat.update(meta)
    if nested_raw is not None and nested is None:
        flat["metadata"] = nested_raw  # not a mapping: lint reports its YAML type
    lines = _field_lines(fm_text)
    if (
        nested is not None
        and "type" in top
        and "type" in nested
        and top["type"] != nested["type"]
    ):
        diags.append(
            _finding(
                "M012",
                relpath,
                f"top-level `type: {top['type']}` and `metadata.type: "
                f"{nested['type']}` disagree; "
                f"`{nested['type']}` wins",
                "keep one `type`: under `metadata:` (nested) or at the top (classic)",
                line=lines.get("type"),
            )
        )
    name, description, kind = top.get("name"), top.get("description"), meta.get("type")
    return MemoryFile(
        name=name if isinstance(name, str) else None,
        description=description if isinstance(description, str) else None,
        type=kind if isinstance(kind, str) else None,
        dialect="nested" if nested is not None else "classic",
        metadata=MappingProxyType(meta),
        fields=MappingProxyType(flat),
        raw_frontmatter=MappingProxyType(top),
        field_lines=MappingProxyType(lines),
        diagnostics=tuple(diags),
        **base,  # type: ignore[arg-type]
    )


def _field_lines(fm_text: str) -> dict[str, int]:
    """Map top-level keys and `metadata.<key>` to their first 1-based file line."""
    lines: dict[str, int] = {}
    in_metadata = False
    for offset, line in enumerate(fm_text.split("\n")):
        stripped = line.strip()
        if not stripped or stripped[0] == "#":
            continue
        key, sep, _ = stripped.partition(":")
        if not sep:
            continue
        indented = line[0] in " \t"
        key = key.strip().strip("'\"")
        if not indented:
            in_metadata = key == "metadata"
            lines.setdefault(key, offset + 2)
        elif in_metadata:
            lines.setdefault(f"metadata.{key}", offset + 2)
    return lines


def _kind(value: object) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, list):
        return "list"
    if isinstance(value, str):
        return "string"
    return type(value).__name__
