"""The public API: `memd.__all__` is sorted, complete and every name resolves."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import memd

PACKAGE = Path(memd.__file__).resolve().parent


def module_exists(module: str) -> bool:
    """Return whether `module`'s source file is in the package."""
    return (PACKAGE / Path(*module.split(".")[1:])).with_suffix(".py").exists()


class TestAll:
    def test_sorted(self) -> None:
        """__all__ is kept sorted (case-sensitively) so diffs stay small."""
        assert sorted(memd.__all__) == memd.__all__

    def test_no_duplicates(self) -> None:
        """Each public name appears once."""
        assert len(set(memd.__all__)) == len(memd.__all__)

    def test_matches_the_lazy_export_table(self) -> None:
        """Every lazily exported name is public and every public name is exported."""
        assert sorted(memd._EXPORTS) == memd.__all__

    def test_type_checkers_see_the_same_names(self) -> None:
        """The `if TYPE_CHECKING:` imports re-export exactly _EXPORTS."""
        tree = ast.parse((PACKAGE / "__init__.py").read_text("utf-8"))
        block = next(
            node
            for node in tree.body
            if isinstance(node, ast.If)
            and isinstance(node.test, ast.Name)
            and node.test.id == "TYPE_CHECKING"
        )
        seen = {
            alias.name: node.module
            for node in block.body
            if isinstance(node, ast.ImportFrom)
            for alias in node.names
            if alias.asname == alias.name  # `import X as X`: an explicit re-export
        }

        assert memd._EXPORTS == seen

    def test_dir_lists_the_public_names(self) -> None:
        """dir(memd) shows exactly __all__."""
        assert sorted(memd.__all__) == dir(memd)

    def test_exports_name_real_modules(self) -> None:
        """Every export points into a module of the memd package."""
        assert [] == [m for m in memd._EXPORTS.values() if not m.startswith("memd.")]


@pytest.mark.parametrize("name", sorted(memd._EXPORTS))
def test_name_resolves(name: str) -> None:
    """memd.<name> is the object its module defines."""
    import importlib

    module_name = memd._EXPORTS[name]
    assert module_exists(module_name), module_name

    expected = getattr(importlib.import_module(module_name), name)

    assert expected is getattr(memd, name)


def test_version_is_the_packages_version() -> None:
    """memd.__version__ is the version pip installed (pyproject reads _version.py)."""
    from importlib.metadata import version

    assert version("memd-daemon") == memd.__version__


def test_unknown_name_is_an_attribute_error() -> None:
    """A name memd does not export raises AttributeError, as a module should."""
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        memd.nope  # noqa: B018 -- the access is the test


def test_import_memd_loads_no_submodule() -> None:
    """`import memd` alone imports no memd submodule and none of the heavy packages."""
    code = (
        "import sys, memd\n"
        "print(sorted(m for m in sys.modules if m.startswith('memd.')"
        " or m.split('.')[0] in ('yaml', 'watchdog', 'structlog', 'apscheduler')))\n"
    )

    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )

    assert "[]" == result.stdout.strip()


def test_no_parameter_shadows_the_builtin_type() -> None:
    """No function takes `type`, but the MCP tools, whose names are the wire schema.

    A value object's `type` field (the frontmatter key, as `MemoryFile.type`)
    is set by its constructor, so `__init__` may name it.
    """
    shadowing = sorted(
        f"{path.relative_to(PACKAGE)}:{node.lineno} {node.name}"
        for path in PACKAGE.rglob("*.py")
        if path.relative_to(PACKAGE).as_posix() != "mcp_server/server.py"
        for node in ast.walk(ast.parse(path.read_text("utf-8")))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.name != "__init__"
        for arg in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs)
        if arg.arg == "type"
    )

    assert [] == shadowing
