"""What a memory names that the code can confirm or deny: paths and commands (pure).

A memory's checkable claims are

- a path relative to the project root, in backticks (`` `src/auth/session.ts` ``,
  `` `docs/` ``) or in prose when it has a folder and an extension
  (``see scripts/deploy.sh``), or inside a command (`` `python tools/x.py` ``);
- a bare file name in backticks (`` `session.ts` ``): it counts when it named
  exactly one file of the project, which the judge decides;
- a command: ``npm run X``, ``pnpm [run] X``, ``yarn [run] X``, ``make X``,
  ``just X``, a ``[project.scripts]`` entry run as ``uv run X`` /
  ``poetry run X`` / ``pdm run X`` or as the first word of a code span.

Left alone: fenced code blocks, link targets (the index rules' business),
URLs, absolute paths outside the project, ``~/…``, globs, options,
``$VARIABLES`` and anything with ``..``. The scan is one pass over each
line with bounded work per character: code spans are paired through a
table of backtick runs, every token is cut to `MAX_TOKEN` and a file gives
at most `MAX_CLAIMS` claims.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_CLAIMS = 400
MAX_TOKEN = 256
MAX_LINE = 4096  # a longer line is read this far: memory lines are short
PATH = "path"
NAME = "name"  # a bare file name
COMMAND_KINDS = ("npm", "make", "just", "pyscript")

# File names without an extension that projects commonly hold.
_PLAIN_NAMES = frozenset(
    {
        "Makefile",
        "makefile",
        "GNUmakefile",
        "Dockerfile",
        "Containerfile",
        "justfile",
        "Justfile",
        "Procfile",
        "Gemfile",
        "Rakefile",
        "Jenkinsfile",
        "Vagrantfile",
        "Brewfile",
    }
)
# What a path, a file name and a script name may hold: letters and digits of
# any script and a little punctuation (each pattern linear: one class, no nesting).
_PATH_CHARS = re.compile(r"[\w.+@/-]*")
_NAME_CHARS = re.compile(r"[\w.+-]*")
_WORD_CHARS = re.compile(r"[\w:.-]*")
_LETTER = re.compile(r"[^\W\d_]")
_TRIM = "\"'()[]{}<>,;:!?*"
# pnpm's and yarn's own commands: `pnpm install` runs no script.
_PM_BUILTINS = frozenset(
    {
        "add",
        "audit",
        "bin",
        "cache",
        "config",
        "create",
        "dedupe",
        "deploy",
        "dlx",
        "doctor",
        "env",
        "exec",
        "fetch",
        "i",
        "import",
        "info",
        "init",
        "install",
        "link",
        "list",
        "login",
        "logout",
        "ls",
        "outdated",
        "pack",
        "patch",
        "prune",
        "publish",
        "rebuild",
        "remove",
        "rm",
        "root",
        "setup",
        "store",
        "unlink",
        "up",
        "update",
        "upgrade",
        "version",
        "why",
        "workspace",
        "workspaces",
        "help",
        "set",
        "node",
        "npm",
        "run",
        "x",
    }
)
_NPM_LIFECYCLE = frozenset({"test", "start", "stop", "restart"})
_PY_RUNNERS = frozenset({"uv", "poetry", "pdm", "rye"})
_SEPARATORS = ("&&", "||", ";", "|")


@dataclass(frozen=True, slots=True, kw_only=True)
class Claim:
    """One thing a memory names: where, as written, and what to look up.

    `kind` is `PATH`, `NAME` or one of `COMMAND_KINDS`; `value` the path
    (relative to the project root, no ``./``, a folder ending in ``/``), the
    bare name, or the script / target / recipe name. `is_loose` marks a
    claim the judge reports only with more evidence (a code span's first
    word that may be a ``[project.scripts]`` entry, or a program).
    """

    kind: str
    text: str
    value: str
    line: int
    column: int
    is_loose: bool = False


def extract_claims(text: str, *, root: str | None = None) -> tuple[Claim, ...]:
    """Return the paths and commands `text` (a memory file) names, in order.

    `root`, the project's absolute path, turns an absolute path inside it
    into a relative one; any other absolute path is left alone.
    """
    found: list[Claim] = []
    seen: set[tuple[str, str, int]] = set()
    fence: str | None = None
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw[:MAX_LINE]
        stripped = line.lstrip(" >\t")
        if fence is not None:
            if (
                stripped.startswith(fence)
                and not stripped[len(fence) :].strip(fence[0]).strip()
            ):
                fence = None
            continue
        opening = _fence_opening(stripped)
        if opening is not None:
            fence = opening
            continue
        for claim in _line_claims(line, number, root):
            key = (claim.kind, claim.value, claim.line)
            if key not in seen:
                seen.add(key)
                found.append(claim)
                if len(found) >= MAX_CLAIMS:
                    return tuple(found)
    return tuple(found)


def _fence_opening(stripped: str) -> str | None:
    for char in "`~":
        if stripped.startswith(char * 3):
            run = len(stripped) - len(stripped.lstrip(char))
            if char == "`" and "`" in stripped[run:]:
                return None  # ```x``` on one line is a code span, not a fence
            return char * run
    return None


def _line_claims(line: str, number: int, root: str | None) -> list[Claim]:
    spans = _code_spans(line)
    claims: list[Claim] = []
    prose_start = 0
    pieces: list[tuple[int, str]] = []
    for start, end, inner_start, inner_end in spans:
        pieces.append((prose_start, line[prose_start:start]))
        content = line[inner_start:inner_end].strip()
        claims.extend(_span_claims(content, number, inner_start + 1, root))
        prose_start = end
    pieces.append((prose_start, line[prose_start:]))
    for offset, prose in pieces:
        claims.extend(_prose_claims(prose, number, offset, root))
    claims.sort(key=lambda c: c.column)
    return claims


def _code_spans(line: str) -> list[tuple[int, int, int, int]]:
    """Return (start, end, inner start, inner end) of each code span, CommonMark's way.

    A run of n backticks opens a span closed by the next run of exactly n;
    runs are listed once and each length's runs are paired by a moving
    pointer, so a line of unmatched backticks costs linear time.
    """
    runs: list[tuple[int, int]] = []  # (position, length)
    position = line.find("`")
    while position != -1:
        end = position
        while end < len(line) and line[end] == "`":
            end += 1
        runs.append((position, end - position))
        position = line.find("`", end)
    by_length: dict[int, list[int]] = {}
    for index, (_, length) in enumerate(runs):
        by_length.setdefault(length, []).append(index)
    pointer = dict.fromkeys(by_length, 0)
    spans = []
    index = 0
    while index < len(runs):
        start, length = runs[index]
        same = by_length[length]
        while pointer[length] < len(same) and same[pointer[length]] <= index:
            pointer[length] += 1
        if pointer[length] >= len(same):
            index += 1
            continue
        closing = same[pointer[length]]
        close_start = runs[closing][0]
        spans.append((start, close_start + length, start + length, close_start))
        index = closing + 1
    return spans


def _span_claims(
    content: str, number: int, column: int, root: str | None
) -> list[Claim]:
    if not content or len(content) > MAX_TOKEN * 4:
        return []
    words = content.split()
    commands = _command_claims(content, number, column)
    if commands is not None:
        return commands
    if len(words) == 1:
        value = _path_value(words[0], root)
        if value is not None:
            return [
                Claim(kind=PATH, text=words[0], value=value, line=number, column=column)
            ]
        name = _bare_name(words[0])
        if name is not None:
            return [
                Claim(kind=NAME, text=words[0], value=name, line=number, column=column)
            ]
    claims = []
    if _is_word(words[0]):
        claims.append(
            Claim(
                kind="pyscript",
                text=words[0],
                value=words[0],
                line=number,
                column=column,
                is_loose=True,
            )
        )
    for word in words[1:]:
        value = _path_value(word, root)
        if value is not None and "/" in value.rstrip("/") and _has_extension(value):
            claims.append(
                Claim(kind=PATH, text=word, value=value, line=number, column=column)
            )
    return claims


def _prose_claims(
    prose: str, number: int, offset: int, root: str | None
) -> list[Claim]:
    claims: list[Claim] = []
    if "/" not in prose and not any(
        tool in prose for tool in ("npm", "pnpm", "yarn", "make", "just", " run")
    ):
        return claims
    prose = _without_link_targets(prose)
    position = 0
    words = prose.split(" ")
    for index, word in enumerate(words):
        column = offset + position + 1
        position += len(word) + 1
        if "/" in word:
            token = word.rstrip(_TRIM + ".").lstrip(_TRIM)
            if "://" in word or word.startswith(("www.", "<")):
                continue
            value = _path_value(token, root)
            if value is not None and "/" in value.rstrip("/"):
                claims.append(
                    Claim(
                        kind=PATH, text=token, value=value, line=number, column=column
                    )
                )
        elif word in ("npm", "pnpm", "yarn", "make", "just", "uv", "poetry", "pdm"):
            tail = " ".join(words[index : index + 6])
            found = _command_claims(_until_sentence_end(tail), number, column)
            if found:
                claims.append(found[0])  # prose: "make sure the tests pass"
    return claims


def _until_sentence_end(text: str) -> str:
    for index, char in enumerate(text):
        if char in ',;()!?`"' or (
            char == "." and text[index + 1 : index + 2] in ("", " ")
        ):
            return text[:index]
    return text


def _without_link_targets(prose: str) -> str:
    """`prose` with each Markdown link's `(target)` blanked, so it is not read."""
    if "](" not in prose:
        return prose
    out = []
    position = 0
    while True:
        found = prose.find("](", position)
        if found == -1:
            out.append(prose[position:])
            return "".join(out)
        close = prose.find(")", found + 2)
        if close == -1:
            out.append(prose[position:])
            return "".join(out)
        out.append(prose[position : found + 1])
        out.append(" " * (close - found))
        position = close + 1


def _command_claims(content: str, number: int, column: int) -> list[Claim] | None:
    """Claims of the commands in `content`, or None when it starts with none."""
    segments = [content]
    for separator in _SEPARATORS:
        segments = [part for segment in segments for part in segment.split(separator)]
    claims: list[Claim] = []
    is_command = False
    after_cd = False
    for segment in segments:
        words = segment.split()
        if not words:
            continue
        if words[0] == "cd":
            after_cd = True  # another folder's package.json or Makefile: not ours
            continue
        found = _command_of(words)
        if found is None:
            continue
        is_command = True
        if after_cd:
            continue
        kind, names = found
        for name in names:
            claims.append(
                Claim(
                    kind=kind,
                    text=" ".join(words[: words.index(name) + 1])
                    if name in words
                    else segment.strip(),
                    value=name,
                    line=number,
                    column=column,
                )
            )
    if not is_command:
        return None
    return claims


def _command_of(words: list[str]) -> tuple[str, list[str]] | None:
    tool, rest = words[0], words[1:]
    if tool == "npm":
        if rest[:1] in (["run"], ["run-script"]) and len(rest) > 1:
            return _script("npm", rest[1])
        if rest and rest[0] in _NPM_LIFECYCLE:
            return _script("npm", rest[0])
        return ("npm", []) if rest else None
    if tool in ("pnpm", "yarn"):
        if rest[:1] == ["run"] and len(rest) > 1:
            return _script("npm", rest[1])
        if rest and not rest[0].startswith("-") and rest[0] not in _PM_BUILTINS:
            return _script("npm", rest[0])
        return ("npm", []) if rest else None
    if tool == "make":
        targets = []
        for word in rest:
            if word in ("-C", "-f", "--directory", "--file") or word.startswith(
                ("-C", "-f", "--directory=", "--file=")
            ):
                return ("make", [])  # another Makefile than the project's
            if word.startswith("-") or "=" in word:
                continue
            if not _is_word(word):
                break
            targets.append(word)
        return ("make", targets) if rest else None
    if tool == "just":
        for word in rest:
            if word.startswith("-"):
                if word in ("-f", "--justfile", "-d", "--working-directory"):
                    return ("just", [])
                continue
            return ("just", [word] if _is_word(word) else [])
        return None
    if tool in _PY_RUNNERS and rest[:1] == ["run"] and len(rest) > 1:
        name = rest[1]
        return (
            "pyscript",
            [name] if _is_word(name) and not name.startswith("-") else [],
        )
    return None


def _script(kind: str, name: str) -> tuple[str, list[str]]:
    return (kind, [name] if _is_word(name) else [])


def _is_word(word: str) -> bool:
    """A script, target or program name: letters, digits, `-_:.`, not an option."""
    return (
        0 < len(word) <= 80
        and not word.startswith(("-", "."))
        and _WORD_CHARS.fullmatch(word) is not None
        and _LETTER.search(word) is not None
    )


def _path_value(token: str, root: str | None) -> str | None:
    """The project-relative path `token` names, or None when it names none."""
    if not token or len(token) > MAX_TOKEN or "://" in token:
        return None
    token = _without_location(token)
    for glob in ("/**", "/*"):
        if token.endswith(glob):
            token = token[: -len(glob)] + "/"  # src/game/** names the folder
            break
    if token.startswith("/"):
        if root is None or not token.startswith(root.rstrip("/") + "/"):
            return None
        token = token[len(root.rstrip("/")) + 1 :]
    while token.startswith("./"):
        token = token[2:]
    if not token or "/" not in token or token.startswith(("~", "-", "@", "$", "/")):
        return None
    if _PATH_CHARS.fullmatch(token) is None:
        return None
    parts = token.rstrip("/").split("/")
    if any(part in ("", ".", "..") for part in parts) or len(parts) > 24:
        return None
    if _LETTER.search(token) is None:
        return None  # 1/2, 24/7
    return token


def _without_location(token: str) -> str:
    """`src/x.py:42`, `src/x.py:42:7` and `src/x.py#L10-L20` name `src/x.py`."""
    hash_at = token.find("#")
    if hash_at > 0:
        token = token[:hash_at]
    while ":" in token:
        head, _, tail = token.rpartition(":")
        if tail.isdigit() or (tail[:1] == "L" and tail[1:].isdigit()):
            token = head
        else:
            break
    return token


def _has_extension(path: str) -> bool:
    last = path.rstrip("/").rsplit("/", 1)[-1]
    if last in _PLAIN_NAMES:
        return True
    stem, dot, extension = last.rpartition(".")
    return (
        bool(dot)
        and bool(stem.strip("."))
        and 0 < len(extension) <= 10
        and extension.isalnum()
        and not extension.isdigit()
        and _LETTER.search(extension) is not None
    )


def _bare_name(token: str) -> str | None:
    """The file name a lone backticked word names (`session.ts`), or None."""
    token = _without_location(token)
    if not token or len(token) > MAX_TOKEN or token.startswith(("-", "@", "$", "~")):
        return None
    if _NAME_CHARS.fullmatch(token) is None:
        return None
    if token in _PLAIN_NAMES:
        return token
    if token.startswith(".") and token.count(".") == 1 and len(token) > 2:
        return token  # .env.example has two; .gitignore, .nvmrc one
    stem = token.rsplit(".", 1)[0]
    if not _has_extension(token) or _LETTER.search(stem) is None:
        return None
    return token
