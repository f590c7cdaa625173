"""Imports point one way only: wiring -> edges -> core (docs/architecture.md).

Every module in the package must appear in LAYERS, so the map stays true as
modules are added. Imports under `if TYPE_CHECKING:` are ignored (they never
run); imports inside functions count, since they run when the function does.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "memd"

CORE, EDGE, WIRING = "core", "edge", "wiring"

# module -> layer; "memd.lint.*" covers the folder and everything in it, and
# a module named on its own overrides its folder's wildcard.
LAYERS = {
    "memd": CORE,  # lazy re-exports only; imports nothing at import time
    "memd._version": CORE,  # the release string, a leaf
    "memd.errors": CORE,
    "memd.diagnostics": CORE,
    "memd.config_keys": CORE,  # the key table and value parsers; config.py reads files
    "memd.fsread": CORE,  # the one bounded reader (the agent reads through it)
    "memd.statkey": CORE,  # (size, mtime_ns, inode): what every stat comparison reads
    "memd.relpath": CORE,  # the one path rule for relpaths from outside
    "memd.racy": CORE,  # the racily-clean rule every stat comparison shares
    "memd.dirs": CORE,  # memd's own dirs from the environment, for the warm paths
    "memd.fastjson": CORE,  # JSON through `_json`, without `json`'s `re` import
    "memd.jsonedit": CORE,  # edit a user's JSON text by splices, not re-serialising
    "memd.hook_lint": EDGE,  # the hooks ask the daemon to lint: socket, request
    "memd.config": EDGE,
    "memd.atomic": EDGE,
    "memd.locks": EDGE,
    "memd.state": EDGE,
    "memd.api": EDGE,  # the library facade: load_memory_prompt, lint_path, append_log
    "memd.logconfig": WIRING,
    "memd.__main__": WIRING,
    "memd.claude_code.*": CORE,  # Claude Code's behaviour: pure, plus its own reads
    "memd.claude_code.choice": EDGE,  # which profile: runs `claude --version`
    "memd.memory.*": CORE,
    "memd.memory.reader": EDGE,  # the descriptor-relative walk and re-read
    "memd.lint.*": CORE,
    "memd.lint.targets": EDGE,  # what lint and fix act on; reads directories
    "memd.lint.fix_files": EDGE,  # fix's reads and its compare-and-write
    "memd.snapshot.*": EDGE,
    "memd.snapshot.telemetry": CORE,  # events as dicts; telemetry_sink writes them
    "memd.kairos.*": EDGE,
    "memd.kairos.schedule": CORE,
    "memd.kairos.consolidate": CORE,
    "memd.kairos.facts": CORE,  # the similarity rule
    "memd.kairos.dates": CORE,  # the one range-checked date resolver
    "memd.kairos.factfile": CORE,  # the fact block of a topic file
    "memd.kairos.scheduler": WIRING,  # the one APScheduler owner
    "memd.daemon.*": EDGE,
    "memd.daemon.watcher": WIRING,  # the watchdog owner
    "memd.daemon.watchdog_probes": WIRING,  # and its reach into watchdog's privates
    "memd.daemon.run": WIRING,  # the composition root
    "memd.service.*": WIRING,
    "memd.service.units": CORE,  # unit and plist text; install.py installs them
    "memd.hooks.*": EDGE,
    "memd.hooks.settings": CORE,  # settings in, settings out; feedback.py does the I/O
    "memd.hooks.wording": CORE,  # what the hooks say, from findings as plain dicts
    "memd.cli.*": WIRING,
    "memd.gitsync.*": EDGE,  # the git engine: git, the tree rule, merge, journal
    "memd.gitsync.merge": CORE,  # the conflict rules, on contents
    "memd.gitsync.backoff": CORE,  # when the next sync is due
    "memd.team.*": EDGE,  # team's layout, commit step, state and schedule
    "memd.sync.*": EDGE,  # personal sync: identity by git, the engine, the schedule
    "memd.recall.*": EDGE,  # the FTS5 database; text.py is pure
    "memd.recall.text": CORE,
    "memd.mcp_server.*": EDGE,  # the tools do the project's I/O
    "memd.mcp_server.writing": CORE,  # plan a memory_write: bytes in, bytes out
    "memd.mcp_server.install": CORE,  # config in, config out
    "memd.mcp_server.catalog": CORE,  # the handshake and listings, as data
    "memd.mcp_server.server": WIRING,  # the one `mcp` SDK owner
    "memd.ui.*": EDGE,  # the viewer: what it reads and does
    "memd.ui.views": CORE,  # what each page shows, from values
    "memd.ui.plots": CORE,  # the SVG plots
    "memd.ui.security": CORE,  # tokens, Host and Origin, parameter rules
    "memd.ui.app": WIRING,  # the one Starlette / Jinja2 owner
    "memd.ui.server": WIRING,  # the sockets and the uvicorn thread
    "memd.history.*": EDGE,  # the SQLite store, recording, restore, notices
    "memd.history.codec": CORE,  # a version against its base, zlib
    "memd.history.when": CORE,  # the one parser of --at / --since
    "memd.history.loss": CORE,  # the loss rule
    "memd.history.wording": CORE,  # every sentence the loss alarm says
    "memd.history.retention": CORE,  # which versions retention removes
    "memd.agents.*": EDGE,  # each agent's config files, hooks and stores
    "memd.agents.toml_text": CORE,  # TOML tables found and cut in text
    "memd.projects.*": EDGE,  # which roots a memory dir serves: state, transcripts
    "memd.projects.naming": CORE,  # what a person calls it, from roots
    "memd.times": CORE,  # the times a person reads; history.when parses them back
    "memd.truth.*": EDGE,  # memory that stays true: git reads, the check
    "memd.truth.claims": CORE,  # what a memory names
    "memd.truth.scripts": CORE,  # what a project defines
    "memd.truth.facts": CORE,  # a repository at one HEAD, git's output parsed
    "memd.truth.judge": CORE,  # which claims are gone
    "memd.truth.duplicates": CORE,  # two topic files saying one thing
    "memd.truth.renames": CORE,  # the edit a rename offers
}
# folder -> the folders it may import (the shared top-level modules are open to all).
FOLDERS = {
    "claude_code": set(),
    "projects": {"claude_code"},
    "memory": {"claude_code"},
    "lint": {"claude_code", "memory"},
    "snapshot": {"claude_code", "memory", "lint"},
    "kairos": {"claude_code", "projects", "memory", "lint", "snapshot", "history"},
    "hooks": {
        "claude_code",
        "projects",
        "memory",
        "lint",
        "snapshot",
        "history",
        "truth",
    },
    "daemon": {
        "claude_code",
        "projects",
        "memory",
        "lint",
        "snapshot",
        "kairos",
        "gitsync",
        "team",
        "sync",
        "recall",
        "ui",
        "history",
        "agents",
        "truth",
    },
    "service": set(),
    "gitsync": {"claude_code", "memory", "lint", "history"},
    "team": {"claude_code", "memory", "lint", "gitsync"},
    "sync": {"claude_code", "projects", "memory", "lint", "gitsync"},
    "recall": {"claude_code", "memory", "lint", "snapshot"},  # lint: secret masking
    "mcp_server": {
        "claude_code",
        "projects",
        "memory",
        "lint",
        "snapshot",
        "kairos",
        "recall",
        "history",
        "truth",
    },
    "history": {"claude_code", "projects", "memory", "lint"},
    "agents": {"claude_code", "lint", "snapshot", "hooks", "mcp_server", "history"},
    "truth": {"claude_code", "projects", "memory", "lint", "gitsync"},
    "ui": {
        "claude_code",
        "projects",
        "memory",
        "lint",
        "snapshot",
        "kairos",
        "recall",
        "team",
        "sync",
        "history",
        "agents",
        "truth",
    },
    "cli": {
        "claude_code",
        "projects",
        "memory",
        "lint",
        "snapshot",
        "kairos",
        "hooks",
        "daemon",
        "service",
        "gitsync",
        "team",
        "sync",
        "recall",
        "mcp_server",
        "ui",
        "history",
        "agents",
        "truth",
    },
}
RANK = {CORE: 0, EDGE: 1, WIRING: 2}

# Third-party packages a layer may import, and which modules alone may.
THIRD_PARTY_OWNERS = {
    "yaml": ("memd.memory.yaml_safe",),
    "frontmatter": ("memd.memory.yaml_safe",),
    "watchdog": ("memd.daemon.watcher", "memd.daemon.watchdog_probes"),
    "apscheduler": ("memd.kairos.scheduler",),
    "tzlocal": (
        "memd.kairos.scheduler",
    ),  # APScheduler 3's own dependency: the local zone
    "mcp": ("memd.mcp_server.server",),  # pydantic, starlette: `memd mcp` only
    # The SDK's own dependencies, for the line reader in front of its stdin.
    "anyio": ("memd.mcp_server.server",),
    "mcp_types": ("memd.mcp_server.server",),
    "pydantic": ("memd.mcp_server.server",),
    # The viewer's web stack: Starlette (through the SDK) and Jinja2.
    "starlette": ("memd.ui.app",),
    "sse_starlette": ("memd.ui.app",),
    "jinja2": ("memd.ui.app",),
    "markupsafe": ("memd.ui.app",),
    "uvicorn": ("memd.ui.server",),
}
WIRING_THIRD_PARTY = frozenset({"structlog"})
HEAVY = ("watchdog", "apscheduler", "structlog")


def layer_of(module: str) -> str | None:
    """Return the layer LAYERS gives `module`, or None if it is unmapped."""
    if module in LAYERS:
        return LAYERS[module]
    parts = module.split(".")
    for end in range(len(parts), 0, -1):
        layer = LAYERS.get(".".join(parts[:end]) + ".*")
        if layer is not None:
            return layer
    return None


def folder_of(module: str) -> str | None:
    """Return the folder of `memd.<folder>.<module>`, or None for a top-level module."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in FOLDERS else None


def existing_modules() -> list[str]:
    """Return the dotted name of every .py file in the package."""
    names = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = ["memd", *path.relative_to(PACKAGE).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        names.append(".".join(parts))
    return names


def source_of(module: str) -> Path:
    relative = Path(*module.split(".")[1:])
    package_init = PACKAGE / relative / "__init__.py"
    return (
        package_init if package_init.exists() else PACKAGE / relative.with_suffix(".py")
    )


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def runtime_imports(module: str) -> set[str]:
    """Return the absolute names `module` imports outside `if TYPE_CHECKING:` blocks."""
    tree = ast.parse(source_of(module).read_text("utf-8"))
    is_package = source_of(module).name == "__init__.py"
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")
                base = base if is_package else base[:-1]
                base = base[: len(base) - (node.level - 1)]
                prefix = ".".join([*base, *([node.module] if node.module else [])])
            else:
                prefix = node.module or ""
            if prefix == "__future__":
                return
            found.add(prefix)
            # `from memd import config` imports the module memd.config
            found.update(
                f"{prefix}.{alias.name}"
                for alias in node.names
                if layer_of(f"{prefix}.{alias.name}") is not None
                and (PACKAGE / Path(*f"{prefix}.{alias.name}".split(".")[1:]))
                .with_suffix(".py")
                .exists()
            )
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


MODULES = existing_modules()


class TestLayerMap:
    def test_every_module_is_mapped(self) -> None:
        """A module missing from LAYERS fails here, so the map stays true."""
        assert [] == [name for name in MODULES if layer_of(name) is None]

    def test_the_map_names_modules_that_exist_or_are_planned(self) -> None:
        """Every wildcard in the map matches a package that exists."""
        wildcards = [name[:-2] for name in LAYERS if name.endswith(".*")]

        assert [] == [
            w for w in wildcards if not (PACKAGE / Path(*w.split(".")[1:])).is_dir()
        ]


@pytest.mark.parametrize("module", MODULES)
class TestImports:
    def test_imports_point_down(self, module: str) -> None:
        """A module imports memd modules of its own layer or below, never above."""
        layer = layer_of(module)
        assert layer is not None
        upward = sorted(
            name
            for name in runtime_imports(module)
            if name.split(".")[0] == "memd"
            and (target := layer_of(name)) is not None
            and RANK[target] > RANK[layer]
        )

        assert [] == upward

    def test_third_party_only_where_allowed(self, module: str) -> None:
        """Core and edges use the stdlib; yaml, watchdog, apscheduler have one owner."""
        layer = layer_of(module)
        stdlib = sys.stdlib_module_names
        offending = []
        for name in runtime_imports(module):
            top = name.split(".")[0]
            if top in stdlib or top == "memd":
                continue
            owners = THIRD_PARTY_OWNERS.get(top)
            if owners is not None:
                if module not in owners:
                    offending.append(name)
            elif not (layer == WIRING and top in WIRING_THIRD_PARTY):
                offending.append(name)

        assert [] == sorted(offending)

    def test_library_never_imports_the_cli(self, module: str) -> None:
        """Only the CLI and its commands import memd.cli."""
        if layer_of(module) == WIRING and module.startswith(
            ("memd.cli", "memd.__main__")
        ):
            return
        cli = sorted(
            name
            for name in runtime_imports(module)
            if name == "memd.cli" or name.startswith("memd.cli.")
        )

        assert [] == cli

    def test_folders_import_only_what_they_may(self, module: str) -> None:
        """A folder imports the folders FOLDERS gives it, and the shared modules."""
        folder = folder_of(module)
        if folder is None:
            return
        allowed = FOLDERS[folder] | {folder}
        outside = sorted(
            name
            for name in runtime_imports(module)
            if (other := folder_of(name)) is not None and other not in allowed
        )

        assert [] == outside

    def test_no_arrow_runs_back_up_to_the_package_root(self, module: str) -> None:
        """A module imports `memd.<module>`, never a name from `memd` itself."""
        if module == "memd":
            return
        tree = ast.parse(source_of(module).read_text("utf-8"))
        upward = sorted(
            f"{node.lineno}: {alias.name}"
            for node in ast.walk(tree)
            if isinstance(node, ast.Import | ast.ImportFrom)
            for alias in node.names
            if (isinstance(node, ast.Import) and alias.name == "memd")
            or (
                isinstance(node, ast.ImportFrom)
                and node.module == "memd"
                and node.level == 0
                and not (PACKAGE / f"{alias.name}.py").exists()
                and not (PACKAGE / alias.name / "__init__.py").exists()
            )
        )

        assert [] == upward

    def test_only_logconfig_configures_structlog(self, module: str) -> None:
        """structlog.configure is called in one place."""
        tree = ast.parse(source_of(module).read_text("utf-8"))
        calls = [
            node.lineno
            for node in ast.walk(tree)
            if isinstance(node, ast.Attribute)
            and node.attr in ("configure", "configure_once")
            and isinstance(node.value, ast.Name)
            and node.value.id == "structlog"
        ]

        assert [] == ([] if module == "memd.logconfig" else calls)


def test_every_folder_is_in_the_folder_map() -> None:
    """A new folder must say what it may import."""
    folders = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}

    assert folders == set(FOLDERS)


def test_no_import_cycles() -> None:
    """No module reaches itself through runtime imports (imports in functions count)."""
    graph = {
        name: {i for i in runtime_imports(name) if i in MODULES and i != name}
        for name in MODULES
    }
    cycles: list[list[str]] = []
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:  # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in graph[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for name in MODULES:
        if name not in index:
            visit(name)

    assert [] == cycles


LIGHT = [name for name in MODULES if layer_of(name) in (CORE, EDGE)]


@pytest.mark.parametrize("module", LIGHT)
def test_importing_core_and_edges_stays_light(module: str) -> None:
    """Importing a core or edge module loads no watchdog, apscheduler, structlog."""
    code = (
        f"import sys, {module}\n"
        f"print(','.join(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False
    )

    assert (0, "") == (result.returncode, result.stdout.strip()), result.stderr


ARCHITECTURE = PACKAGE.parent / "docs" / "architecture.md"
_TICKED = re.compile(r"`([^`]+)`")


def doc_table() -> dict[str, tuple[str, str, str]]:
    """Return the doc's folder table: folder -> (concern, layer, may import)."""
    text = ARCHITECTURE.read_text("utf-8")
    start = text.index("| folder | concern | layer | may import |")
    rows = text[start:].split("\n\n", 1)[0].splitlines()[2:]
    table = {}
    for row in rows:
        folder, concern, layer, imports = (c.strip() for c in row.strip("|").split("|"))
        name = _TICKED.findall(folder)[0].removeprefix("memd/").rstrip("/")
        table[name] = (concern, layer, imports)
    return table


def documented_layers(folder: str, column: str) -> dict[str, str]:
    """Parse "edge (`a`, `b`: core; `c`: wiring)" into {module: layer}."""
    base, _, overrides = column.partition("(")
    layers = {f"memd.{folder}.*": base.strip()}
    for part in overrides.rstrip(")").split(";"):
        names, _, layer = part.partition(":")
        for name in _TICKED.findall(names):
            layers[f"memd.{folder}.{name}"] = layer.strip()
    return layers


def may_import_line(folder: str) -> set[str]:
    """Return the folders named in the "May import:" paragraph of folder/__init__.py."""
    docstring = ast.get_docstring(
        ast.parse((PACKAGE / folder / "__init__.py").read_text())
    )
    paragraph = (docstring or "").split("May import:", 1)[1].split("\n\n", 1)[0]
    named = (n.removeprefix("memd.").split(".")[0] for n in _TICKED.findall(paragraph))
    return {name for name in named if name in FOLDERS}


class TestTheDocumentedMap:
    """docs/architecture.md and each folder's __init__ say what FOLDERS, LAYERS do."""

    def test_the_doc_table_has_a_row_per_folder(self) -> None:
        """One row for the top-level modules and one per folder."""
        assert sorted(["", *FOLDERS]) == sorted(doc_table())

    @pytest.mark.parametrize("folder", sorted(FOLDERS))
    def test_the_doc_table_says_what_folders_says(self, folder: str) -> None:
        """The "may import" column names exactly FOLDERS[folder]."""
        imports = doc_table()[folder][2]

        assert FOLDERS[folder] == set(_TICKED.findall(imports))

    @pytest.mark.parametrize("folder", sorted(FOLDERS))
    def test_the_doc_table_says_what_layers_says(self, folder: str) -> None:
        """The layer column gives the folder's layer and every module that differs."""
        in_layers = {
            name: layer
            for name, layer in LAYERS.items()
            if name.startswith(f"memd.{folder}.")
        }

        assert in_layers == documented_layers(folder, doc_table()[folder][1])

    @pytest.mark.parametrize("folder", sorted(FOLDERS))
    def test_each_init_says_what_folders_says(self, folder: str) -> None:
        """The folder's own docstring names the folders FOLDERS lets it import."""
        assert FOLDERS[folder] == may_import_line(folder)

    def test_the_top_row_names_every_shared_module(self) -> None:
        """The top-level row lists the modules that exist, no more and no fewer."""
        shared = {p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__"}
        concern = doc_table()[""][0]

        assert shared == set(_TICKED.findall(concern))
