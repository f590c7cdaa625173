"""memd/errors.py draws every MemdError in the package, and nothing else raises."""

from __future__ import annotations

import importlib
import inspect
import types
from pathlib import Path

import memd.errors
from memd.errors import MemdError

PACKAGE = Path(memd.errors.__file__).resolve().parent


def every_module() -> list[types.ModuleType]:
    """Import and return every module of the package but `__main__`."""
    names = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = ["memd", *path.relative_to(PACKAGE).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        if parts[-1] != "__main__":
            names.append(".".join(parts))
    return [importlib.import_module(name) for name in names]


def exceptions_defined_in_memd() -> list[type[BaseException]]:
    """Return each exception class a memd module defines."""
    return [
        value
        for module in every_module()
        for value in vars(module).values()
        if inspect.isclass(value)
        and issubclass(value, BaseException)
        and value.__module__ == module.__name__
    ]


def drawn_tree() -> dict[str, str]:
    """Parse the tree in errors.py's docstring into {class name: parent name}."""
    doc = memd.errors.__doc__ or ""
    lines = doc.split("    MemdError\n", 1)[1].split("\n\n", 1)[0].splitlines()
    parents: dict[str, str] = {}
    stack = ["MemdError"]
    for line in lines:
        branch = line.index("── ")
        depth = (branch - 4) // 4 + 1  # "    ├── " is depth 1
        name = line[branch + 3 :].split()[0]
        del stack[depth:]
        parents[name] = stack[-1]
        stack.append(name)
    return parents


class TestTheDrawnTree:
    def test_it_names_every_memd_error_under_its_parent(self) -> None:
        """Every MemdError subclass in the package appears, under its real base."""
        actual = {
            cls.__name__: cls.__mro__[1].__name__
            for cls in exceptions_defined_in_memd()
            if issubclass(cls, MemdError) and cls is not MemdError
        }

        assert actual == drawn_tree()

    def test_other_exceptions_are_the_two_documented_refusals(self) -> None:
        """An exception that is not a MemdError is one of the four documented."""
        from memd.config_keys import BadValue
        from memd.fsread import UnsafeFileError
        from memd.jsonedit import JsonEditError
        from memd.kairos.confine import Unconfinable

        documented = UnsafeFileError | BadValue | JsonEditError | Unconfinable
        others = sorted(
            cls.__name__
            for cls in exceptions_defined_in_memd()
            if not issubclass(cls, MemdError | documented)
        )

        assert [] == others
