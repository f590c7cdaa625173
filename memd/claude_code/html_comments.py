"""Strip HTML comments from MEMORY.md the way the agent does: by Markdown block.

Both releases lex the file with marked (`gfm: false`) and look only at the
top-level tokens: an `html` block whose text starts with `<!--` and holds a
`-->` loses every `<!--…-->` in it, and is dropped whole (its trailing blank
lines too) when nothing but blanks is left. Every other token is kept as it
is, so a comment inside a list item, a paragraph line, a blockquote, a
heading or code stays. The lexer first turns CRLF and lone CR into LF.
A file without `<!--` is returned untouched. 2.1.112 rebuilds the text from
the tokens (so any `<!--` normalises line ends); 2.1.332 returns the file
untouched when no comment block was stripped. (Both read from the released
code, `h5z`/`aD4` in 2.1.112's cli.js and `OHe` in 2.1.332, and checked
against the real agents by tests/e2e/.)

This module ports the top-level part of marked's block lexer that decides
where such an `html` block starts and ends: blank lines, indented code,
fences, ATX headings, rules, blockquotes, lists (marked's item loop) and
paragraphs with their interruptions. It works line by line; each line is
looked at a bounded number of times, so the cost is linear in the text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memd.claude_code.jscompat import js_trim

_BLANK = re.compile(r"[ \t]*\Z")
_CODE = re.compile(r"(?: {4}| {0,3}\t)[^\n]")
_FENCE_OPEN = re.compile(r" {0,3}(`{3,}(?=[^`\n]*\Z)|~{3,})")
_HEADING = re.compile(r" {0,3}#{1,6}(?:[ \t\f\v]|\Z)")
_HR = re.compile(r" {0,3}(?:(?:-[\t ]*){3,}|(?:_[ \t]*){3,}|(?:\*[ \t]*){3,})\Z")
_QUOTE = re.compile(r" {0,3}>")
_BULLET = re.compile(r"( {0,3}(?:[*+-]|\d{1,9}[.)]))((?:[\t ].*)?)\Z")
# marked's HTML block kinds 1 and 6: the tag names that open a block.
_TAGS = (
    "address|article|aside|base|basefont|blockquote|body|caption|center|col"
    "|colgroup|dd|details|dialog|dir|div|dl|dt|fieldset|figcaption|figure|footer"
    "|form|frame|frameset|h[1-6]|head|header|hr|html|iframe|legend|li|link|main"
    "|menu|menuitem|meta|nav|noframes|ol|optgroup|option|p|param|search|section"
    "|summary|table|tbody|td|tfoot|th|thead|title|tr|track|ul"
)
# What ends a paragraph line run in marked (`paragraph`, gfm off).
_INTERRUPT = re.compile(
    r" {0,3}(?:(?:-[\t ]*){3,}|(?:_[ \t]*){3,}|(?:\*[ \t]*){3,})\Z"
    r"| {0,3}#{1,6}(?:\s|\Z)"
    r"| {0,3}>"
    r"| {0,3}(?:`{3,}(?=[^`]*\Z)|~{3,})"
    r"| {0,3}(?:[*+-]|1[.)]) "
    rf"|</?(?:{_TAGS})(?: |/?>|\Z)|<(?:script|pre|style|textarea|!--)"
)
_RAW_TAG = re.compile(r" {0,3}<(script|pre|style|textarea)(?:[\s>]|\Z)", re.I)
_OTHER_HTML = re.compile(
    r" {0,3}(?:<\?|<![A-Z]|<!\[CDATA\[|</?(?:"
    + _TAGS
    + r")(?: |/?>|\Z)"
    + r"|<(?!script|pre|style|textarea)[a-z][\w-]*"
    r"(?: +[a-zA-Z:_][\w.:-]*(?: *= *\"[^\"]*\"| *= *'[^']*'| *= *[^\s\"'=<>`]+)?)*?"
    r" */?>[ \t]*\Z"
    r"|</(?!script|pre|style|textarea)[a-z][\w-]*\s*>[ \t]*\Z)",
    re.I,
)
_COMMENT_START = re.compile(r" {0,3}<!--")
_COMMENT = re.compile(r"<!--[\s\S]*?-->")


@dataclass(frozen=True, slots=True)
class Stripped:
    """The text the agent keeps, and whether a comment block was stripped."""

    content: str
    was_stripped: bool


def strip_comment_blocks(text: str, *, rebuild: bool) -> Stripped:
    """Return `text` with its top-level comment blocks stripped as the agent does.

    `rebuild` is 2.1.112's way: with any `<!--`, the result has LF line ends
    even when nothing was stripped. Without it (2.1.332), such a text is
    returned as it was.
    """
    if "<!--" not in text:
        return Stripped(text, False)
    normal = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = normal.split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    out: list[str] = []
    kept_from = 0
    stripped = False
    for first, end in _comment_blocks(lines):
        begin = starts[first]
        stop = min(starts[end], len(normal))
        residue = _COMMENT.sub("", normal[begin:stop])
        out.append(normal[kept_from:begin])
        if js_trim(residue):
            out.append(residue)
        kept_from = stop
        stripped = True
    if not stripped:
        return Stripped(normal if rebuild else text, False)
    out.append(normal[kept_from:])
    return Stripped("".join(out), True)


def comment_free_lines(lines: list[str]) -> list[str]:
    """Return `lines` (LF-split, no CR) with the agent's stripped comments removed.

    The same blocks as `strip_comment_blocks`, but line for line: a comment
    that spans lines leaves empty lines, so line numbers stay the file's.
    Comments the agent keeps (in a list item, a paragraph line, code) stay.
    """
    shown = list(lines)
    for first, end in _comment_blocks(lines):
        block = "\n".join(lines[first:end])
        kept = _COMMENT.sub(lambda m: "\n" * m.group().count("\n"), block)
        shown[first:end] = kept.split("\n")
    return shown


def _comment_blocks(lines: list[str]) -> list[tuple[int, int]]:
    """Return (first line, end line) of each top-level `<!--` html block.

    A block ends after its last line and the blank lines that follow it, as
    marked's `comment[^\\n]*(\\n+|$)` takes them; only blocks that hold a
    `-->` are returned, since the agent keeps an unclosed one.
    """
    found: list[tuple[int, int]] = []
    count = len(lines)
    i = 0
    while i < count:
        line = lines[i]
        if _BLANK.match(line):
            i += 1
        elif _CODE.match(line):
            i = _code_end(lines, i)
        elif match := _FENCE_OPEN.match(line):
            i = _fence_end(lines, i, match.group(1))
        elif _HEADING.match(line) or _HR.match(line):
            i += 1
        elif _QUOTE.match(line):
            i = _quote_end(lines, i)
        elif (bullet := _BULLET.match(line)) and not _HR.match(line):
            i = _list_end(lines, i, bullet)
        elif _COMMENT_START.match(line):
            end, closed = _comment_end(lines, i)
            if closed:
                found.append((i, end))
            i = end
        elif raw_tag := _RAW_TAG.match(line):
            i = _raw_tag_end(lines, i, raw_tag.group(1))
        elif _OTHER_HTML.match(line):
            i = _until_blank(lines, i)
        else:
            i = _paragraph_end(lines, i)
    return found


def _comment_end(lines: list[str], i: int) -> tuple[int, bool]:
    """Return where the comment block at line `i` ends, and whether it closes."""
    # `<!--(?:-?>|[\s\S]*?(?:-->|$))`: `<!-->` and `<!--->` close at once.
    first = lines[i]
    start = first.index("<!--") + 4
    j, col = i, start
    if first.startswith(("->", ">"), start):
        closed = True
    else:
        closed = False
        while j < len(lines):
            if lines[j].find("-->", col) >= 0:
                closed = True
                break
            j, col = j + 1, 0
        if not closed:
            return len(lines), False
    # The rest of that line, then every following empty line.
    j += 1
    while j < len(lines) - 1 and lines[j] == "":
        j += 1
    if j == len(lines) - 1 and lines[j] == "":
        j += 1
    return j, True


def _code_end(lines: list[str], i: int) -> int:
    last = i
    j = i + 1
    while j < len(lines):
        if _CODE.match(lines[j]):
            last = j
        elif not _BLANK.match(lines[j]):
            break
        j += 1
    return last + 1


def _fence_end(lines: list[str], i: int, fence: str) -> int:
    closing = re.compile(r" {0,3}" + re.escape(fence) + r"[~`]* *\Z")
    j = i + 1
    while j < len(lines):
        if closing.match(lines[j]):
            return j + 1
        j += 1
    return j


def _quote_end(lines: list[str], i: int) -> int:
    """A run of `>` lines, each with its lazy paragraph continuation lines."""
    j = i
    while j < len(lines) and _QUOTE.match(lines[j]):
        content = re.sub(r"^ {0,3}> ?", "", lines[j])
        j += 1
        if content:  # `(paragraph|[^\n]*)`: any text opens a paragraph
            while j < len(lines) and _continues_paragraph(lines[j]):
                j += 1
    return j


def _continues_paragraph(line: str) -> bool:
    return bool(line) and not _INTERRUPT.match(line) and not re.fullmatch(" +", line)


def _paragraph_end(lines: list[str], i: int) -> int:
    j = i + 1
    while j < len(lines) and _continues_paragraph(lines[j]):
        j += 1
    return j


def _until_blank(lines: list[str], i: int) -> int:
    j = i + 1
    while j < len(lines) and not _BLANK.match(lines[j]):
        j += 1
    return j


def _raw_tag_end(lines: list[str], i: int, tag: str) -> int:
    closing = re.compile(rf"</{re.escape(tag)}>", re.I)
    for j in range(i, len(lines)):
        if closing.search(lines[j]):
            return j + 1
    return len(lines)


def _list_end(lines: list[str], i: int, first: re.Match[str]) -> int:
    """Port of marked's list loop: the items of one list, from line `i`."""
    bullet = first.group(1).strip()
    if len(bullet) > 1:
        item = re.compile(
            r"( {0,3}\d{1,9}" + re.escape(bullet[-1]) + r")((?:[\t ].*)?)\Z"
        )
    else:
        item = re.compile(r"( {0,3}" + re.escape(bullet) + r")((?:[\t ].*)?)\Z")
    j = i
    while j < len(lines):
        match = item.match(lines[j])
        if match is None or _HR.match(lines[j]):
            break
        marker, rest = match.group(1), match.group(2)
        line = re.sub(r"^\t+", lambda t: " " * 3 * len(t.group()), rest)
        blank_line = not line.strip()
        if blank_line:
            indent = len(marker) + 1
        else:
            found = re.search(r"[^ ]", rest)
            indent = found.start() if found else 0
            indent = 1 if indent > 4 else indent
            line = line[indent:]
            indent += len(marker)
        j += 1
        if blank_line and j < len(lines) and not lines[j].strip():
            j += 1
            continue
        near = min(3, indent - 1)
        stops = re.compile(
            rf" {{0,{near}}}(?:(?:[*+-]|\d{{1,9}}[.)])(?:[ \t].*)?\Z"
            rf"|(?:(?:- *){{3,}}|(?:_ *){{3,}}|(?:\* *){{3,}})\Z"
            rf"|```|~~~|#|<(?:[a-z].*>|!--))",
            re.I,
        )
        while j < len(lines):
            next_line = lines[j]
            if stops.match(next_line):
                break
            without_tabs = next_line.replace("\t", "    ")
            found = re.search(r"[^ ]", without_tabs)
            if (found is not None and found.start() >= indent) or not next_line.strip():
                pass
            else:
                if blank_line:
                    break
                plain = line.replace("\t", "    ")
                lead = re.search(r"[^ ]", plain)
                if lead is not None and lead.start() >= 4:
                    break
                if re.match(rf" {{0,{near}}}(?:```|~~~|#)", line) or re.match(
                    rf" {{0,{near}}}(?:(?:- *){{3,}}|(?:_ *){{3,}}|(?:\* *){{3,}})\Z",
                    line,
                ):
                    break
            if not blank_line and not next_line.strip():
                blank_line = True
            j += 1
            line = without_tabs[indent:]
    # marked trims the list's trailing blank lines off its raw text.
    while j > i + 1 and not lines[j - 1].strip():
        j -= 1
    return j


# Default_Ignorable_Code_Point (Unicode's DerivedCoreProperties), which
# `unicodedata` does not expose; 2.1.332's sanitizer removes these too.
_DEFAULT_IGNORABLE = (
    (0x00AD, 0x00AD),
    (0x034F, 0x034F),
    (0x061C, 0x061C),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x206F),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0),
    (0xFFF0, 0xFFF8),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
)
_KEPT_INVISIBLE = frozenset({0x200C, 0x200D, 0xFE0E, 0xFE0F})  # joiners, VS15/16
_LINE_BREAKS = re.compile("\r\n?|[\u2028\u2029]")


def sanitize_loaded_text(text: str) -> str:
    r"""Return `text` as 2.1.332 hands loaded memory to the model.

    CR, CRLF, U+2028 and U+2029 become LF; C0/C1 controls but tab and line
    ends, and every format, private-use, unassigned, surrogate or default
    ignorable character go, except ZWNJ, ZWJ and the two emoji variation
    selectors (the release's `/[\0-\x08…\p{Cf}\p{Co}\p{Cn}\p{Cs}\p{DI}]/gu`).
    """
    text = _LINE_BREAKS.sub("\n", text)
    if text.isascii() and text.isprintable():
        return text
    # Judge each distinct character once, then drop them all in one C pass:
    # a per-character loop cost 2 us a character on every large index.
    dropped = {ord(char): None for char in set(text) if _is_dropped(char)}
    return text.translate(dropped) if dropped else text


def _is_dropped(char: str) -> bool:
    import unicodedata

    code = ord(char)
    if code in _KEPT_INVISIBLE or char in "\t\n\r":
        return False
    return (
        code < 0x20
        or 0x7F <= code <= 0x9F
        or unicodedata.category(char) in ("Cf", "Co", "Cn", "Cs")
        or any(low <= code <= high for low, high in _DEFAULT_IGNORABLE)
    )
