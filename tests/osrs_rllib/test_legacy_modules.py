"""Checkpoints written before the package split name modules that moved; they still unpickle (`legacy_modules`)."""

from __future__ import annotations

import pickle
import subprocess
import sys

import pytest

from osrs_rllib.training.legacy_modules import LEGACY_MODULES

PICKLED = {  # what a checkpoint of before the split pickles from each old module (read off a real one)
    "osrs_rllib.callbacks": "TrainingCallbacks",
    "osrs_rllib.grad_accumulation": "AccumulatingPPOTorchPolicy",
    "osrs_rllib.lockstep_sampler": "LockstepRolloutWorker",
    "osrs_rllib.ppo_policy": "NHPPOTorchPolicy",
    "osrs_rllib.training_env": "policy_mapping_fn",
}


def test_the_old_names_unpickle_as_todays_objects() -> None:
    """In a fresh interpreter (nothing imported yet), after `register_everything`, as `export` and `--resume` call
    it."""
    code = (
        "import importlib, pickle, sys\n"
        "from osrs_rllib.training import register_everything\n"
        "register_everything()\n"
        f"for old, name, new in {[(old, PICKLED[old], new) for old, new in LEGACY_MODULES.items()]!r}:\n"
        "    obj = pickle.loads(f'c{old}\\n{name}\\n.'.encode())\n"
        "    assert obj is getattr(importlib.import_module(new), name), (old, obj)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]


def test_every_old_name_has_what_was_pickled_from_it() -> None:
    assert set(PICKLED) == set(LEGACY_MODULES)


def test_an_unknown_module_still_fails() -> None:
    from osrs_rllib.training.legacy_modules import install_legacy_module_names

    install_legacy_module_names()
    with pytest.raises(ModuleNotFoundError):
        pickle.loads(b"cosrs_rllib.no_such_module\nThing\n.")
