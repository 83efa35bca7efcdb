"""A package's public names, imported on first use: the package lists its entry points in a table, and nothing
heavy is imported until one of them is.

Why: the application's packages (`osrs_rllib.training`, `osrs_rllib.evaluation`, ...) name their entry points in their
``__init__`` so that code elsewhere imports through them (the layer rules of tests/test_layers.py), but importing a
package must not import Ray or torch: ``osrs-rllib --help`` and ``jobs`` load every command module and must answer
at once (tests/osrs_rllib/test_cli_startup.py). PEP 562's module ``__getattr__`` resolves a name the first time it
is read, from the table.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(package: str, exports: Mapping[str, str]) -> Callable[[str], Any]:
    """The module ``__getattr__`` of `package`: ``name`` → the attribute of the submodule ``exports[name]`` (relative
    to the package), imported then and kept on the package. Unknown names raise AttributeError, so that ``from
    package import submodule`` still finds a submodule the table does not name."""

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
