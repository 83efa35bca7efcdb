"""Checkpoints written before ``osrs_rllib/`` was split into packages still load.

An RLlib checkpoint pickles its classes by module path (the policy class, the env runner class, the callbacks, the
policy mapping function). The split moved those modules, so unpickling a run's older checkpoint (``train
--resume``, ``export``) failed with ``No module named 'osrs_rllib.ppo_policy'``. The old names below resolve,
on first import and only then, to the modules that hold the same classes now; nothing imports an old name
otherwise, and a checkpoint written today names only the new ones.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
from importlib.machinery import ModuleSpec
from types import ModuleType

LEGACY_MODULES: dict[str, str] = {
    "osrs_rllib.callbacks": "osrs_rllib.training.callbacks",
    "osrs_rllib.grad_accumulation": "osrs_rllib.training.learner.accumulation",
    "osrs_rllib.lockstep_sampler": "osrs_rllib.training.sampling.lockstep",
    "osrs_rllib.ppo_policy": "osrs_rllib.training.learner.ppo_policy",
    "osrs_rllib.training_env": "osrs_rllib.training.sampling.env",
}
"""Module path in a checkpoint written before the split → the module that holds its classes now."""


class _LegacyNames(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports an old module name as the module that replaced it (the same module object under both names)."""

    def find_spec(self, fullname: str, path: object = None, target: object = None) -> ModuleSpec | None:
        if fullname not in LEGACY_MODULES:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec: ModuleSpec) -> ModuleType:
        return importlib.import_module(LEGACY_MODULES[spec.name])

    def exec_module(self, module: ModuleType) -> None:
        """The module was executed under its own name already."""


def install_legacy_module_names() -> None:
    """Let the old module names import (idempotent)."""
    if not any(isinstance(finder, _LegacyNames) for finder in sys.meta_path):
        sys.meta_path.append(_LegacyNames())


__all__ = ["LEGACY_MODULES", "install_legacy_module_names"]
