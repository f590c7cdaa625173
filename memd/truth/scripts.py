"""The commands a project defines, read from its definition files' bytes (pure).

- ``package.json``: the keys of ``"scripts"`` (``npm run``, ``pnpm``, ``yarn``);
- a Makefile: every rule target at the start of a line (``build:``,
  ``a b: deps``, not ``X := 1``, not ``.PHONY``, not pattern rules); one that
  includes another or has a match-anything rule (``%:``) defines "unknown";
- a justfile: every recipe (``name arg='x':``, ``@quiet:``); one that
  imports another, "unknown";
- ``pyproject.toml``: the keys of ``[project.scripts]``, ``[project.gui-scripts]``
  and ``[tool.poetry.scripts]``.

Each reader takes at most `MAX_DEFINITION_BYTES` and never raises: a file it
cannot read defines nothing, and the caller treats "nothing" as "unknown"
(never as "gone") when the file is present but unreadable.
"""

from __future__ import annotations

MAX_DEFINITION_BYTES = 1024 * 1024
# Definition files by kind, as named at any depth of the tree.
DEFINITION_FILES = {
    "npm": ("package.json",),
    "make": ("Makefile", "makefile", "GNUmakefile"),
    "just": ("justfile", "Justfile", ".justfile"),
    "pyscript": ("pyproject.toml",),
}
KIND_OF_FILE = {
    name: kind for kind, names in DEFINITION_FILES.items() for name in names
}


def defined_commands(kind: str, data: bytes) -> frozenset[str] | None:
    """Return the names a definition file of `kind` defines, or None if unreadable."""
    if len(data) > MAX_DEFINITION_BYTES:
        return None
    text = data.decode("utf-8", "replace")
    if kind == "npm":
        return _npm_scripts(text)
    if kind == "make":
        return _make_targets(text)
    if kind == "just":
        return _just_recipes(text)
    if kind == "pyscript":
        return _pyproject_scripts(text)
    return None


def _npm_scripts(text: str) -> frozenset[str] | None:
    from memd.fastjson import loads

    try:
        document = loads(text, max_depth=64)
    except ValueError:
        return None
    if not isinstance(document, dict):
        return None
    scripts = document.get("scripts")
    if not isinstance(scripts, dict):
        return frozenset()
    return frozenset(str(name) for name in scripts)


def _make_targets(text: str) -> frozenset[str] | None:
    targets: set[str] = set()
    for line in _logical_lines(text):
        if not line or line[0] in " \t#":
            continue
        if line.startswith(("include ", "-include ", "sinclude ", "%:", "% :")):
            return None  # targets from elsewhere, or any target at all: unknown
        head, colon, rest = line.partition(":")
        if not colon or rest.startswith("=") or "=" in head:
            continue  # X := 1, X ?= 1, X = a:b
        for word in head.split():
            if word.startswith(".") or "%" in word or "$" in word:
                continue
            targets.add(word)
    return frozenset(targets)


def _logical_lines(text: str) -> list[str]:
    """Lines with backslash continuations joined (a rule may span lines)."""
    lines: list[str] = []
    pending = ""
    for line in text.split("\n"):
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        lines.append(pending + line)
        pending = ""
    if pending:
        lines.append(pending)
    return lines


def _just_recipes(text: str) -> frozenset[str] | None:
    recipes: set[str] = set()
    for line in _logical_lines(text):
        if not line or line[0] in " \t#[":
            continue
        if line.startswith(("import ", "mod ", "import? ", "mod? ")):
            return None  # recipes from another file: unknown
        head, colon, rest = line.partition(":")
        if not colon or rest.startswith("="):
            continue  # x := "y"
        words = head.split()
        if not words or words[0] in ("set", "alias", "export", "import", "mod"):
            if words[:1] == ["alias"] and len(words) > 1:
                recipes.add(words[1])
            continue
        name = words[0].lstrip("@")
        if name and all(char.isalnum() or char in "-_" for char in name):
            recipes.add(name)
    return frozenset(recipes)


def _pyproject_scripts(text: str) -> frozenset[str] | None:
    import tomllib

    try:
        document = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError):
        return None
    names: set[str] = set()
    project = document.get("project")
    if isinstance(project, dict):
        for table in ("scripts", "gui-scripts"):
            value = project.get(table)
            if isinstance(value, dict):
                names.update(str(name) for name in value)
    tool = document.get("tool")
    poetry = tool.get("poetry") if isinstance(tool, dict) else None
    if isinstance(poetry, dict) and isinstance(poetry.get("scripts"), dict):
        names.update(str(name) for name in poetry["scripts"])
    return frozenset(names)
