"""Imports point one way only: wiring -> edges -> core (docs/architecture.md).

Every module in the package must appear in LAYERS, so the map stays true as
modules are added. Imports under `if TYPE_CHECKING:` are ignored (they never
run); imports inside functions count, since they run when the function does.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "memd"

CORE, EDGE, WIRING = "core", "edge", "wiring"

# module -> layer; "memd.lint.*" covers the package and everything in it.
LAYERS = {
    "memd": CORE,  # lazy re-exports only; imports nothing at import time
    "memd.errors": CORE,
    "memd.diagnostics": CORE,
    "memd.jscompat": CORE,
    "memd.paths": CORE,
    "memd.gitroot": CORE,
    "memd.claude_settings": CORE,
    "memd.enablement": CORE,
    "memd.truncation": CORE,
    "memd.memfile": CORE,
    "memd.yaml_safe": CORE,  # the one YAML loader: safe, capped, alias-checked
    "memd.index": CORE,
    "memd.manifest": CORE,
    "memd.prompt_text": CORE,
    "memd.prompt": CORE,
    "memd.lint.*": CORE,
    "memd.fixes": CORE,
    "memd.dialect": CORE,
    "memd.telemetry": CORE,
    "memd.dream_schedule": CORE,
    "memd.consolidate": CORE,
    "memd.hook_settings": CORE,  # settings in, settings out; hooks.py does the I/O
    "memd.service_units": CORE,  # unit and plist text; service.py installs them
    "memd.atomic": EDGE,
    "memd.memdir": EDGE,
    "memd.memdir_walk": EDGE,  # the descriptor-relative walk load_memdir runs
    "memd.memdir_reload": EDGE,  # re-read only a watcher batch's changed paths
    "memd.snapshots": EDGE,  # layout and the warm read path: stdlib os only
    "memd.snapshot_writer": EDGE,  # publish, flush, sweep: off the warm path
    "memd.pipeline": EDGE,
    "memd.config": EDGE,
    "memd.config_keys": CORE,  # the key table and value parsers; config.py reads files
    "memd.state": EDGE,
    "memd.locks": EDGE,
    "memd.daily_log": EDGE,
    "memd.dream_command": EDGE,
    "memd.dream": EDGE,
    "memd.telemetry_sink": EDGE,
    "memd.discovery": EDGE,
    "memd.notify": EDGE,
    "memd.hooks": EDGE,
    "memd.api": EDGE,
    "memd.serving": EDGE,  # resolve, render, save: shared by prompt, hooks and the API
    "memd.lint_targets": EDGE,  # what lint and fix act on; reads directories
    "memd.logconfig": WIRING,
    "memd.watcher": WIRING,
    "memd.settle": EDGE,  # coalescing changes into batches; knows no watchdog
    "memd.scheduler": WIRING,
    "memd.daemon": WIRING,
    "memd.daemon_status": EDGE,  # daemon.json: when to write it, and writing it
    "memd.service": WIRING,
    "memd.cli": WIRING,
    "memd.__main__": WIRING,
    "memd.commands.*": WIRING,
}
RANK = {CORE: 0, EDGE: 1, WIRING: 2}

# Third-party packages a layer may import, and which modules alone may.
THIRD_PARTY_OWNERS = {
    "yaml": ("memd.yaml_safe",),
    "frontmatter": ("memd.yaml_safe",),
    "watchdog": ("memd.watcher",),
    "apscheduler": ("memd.scheduler",),
    "tzlocal": ("memd.scheduler",),  # APScheduler 3's own dependency: the local zone
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
        """Only the CLI and its commands import memd.cli or memd.commands."""
        if layer_of(module) == WIRING and module.startswith(
            ("memd.cli", "memd.commands", "memd.__main__")
        ):
            return
        cli = sorted(
            name
            for name in runtime_imports(module)
            if name == "memd.cli" or name.startswith("memd.commands")
        )

        assert [] == cli

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
