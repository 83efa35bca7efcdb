"""A trainable policy built on the `setting` fixture (`conftest.py`), as the learner builds main's: the tests of
the learner's options (the magnet, the parameter average) share it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import torch
from ray.rllib.policy.sample_batch import SampleBatch

from osrs_rllib.training.learner.ppo_policy import PRECISION_KEY, NHPPOTorchPolicy

T = TypeVar("T")


def make_policy(setting: dict[str, Any], cls: type = NHPPOTorchPolicy, **config: Any) -> Any:
    """A `cls` policy with the setting's weights, float32, and `config`'s options; the EMA magnet and the average
    start at those weights, as after a warm start."""
    policy = cls(setting["space"], setting["action_space"], {**setting["config"], PRECISION_KEY: "float32", **config})
    policy.model.load_state_dict({k: torch.as_tensor(v) for k, v in setting["weights"].items()})
    if hasattr(policy, "reset_twins"):
        policy.reset_twins()
    return policy


def batch_of(setting: dict[str, Any]) -> SampleBatch:
    """A fresh copy of the setting's batch (the loss writes into the one it is given)."""
    return SampleBatch({k: v.copy() for k, v in setting["batch"].items()})


ONE_SMALL_ITERATION = ["runners.num_env_runners=0", "ppo.train_batch_size=256", "ppo.minibatch_size=128",
                       "ppo.num_epochs=1", "runners.num_envs_per_env_runner=4"]  # fmt: skip
"""Overrides of the smoke config for one real iteration of two optimiser steps, sampled in the driver."""


def through_a_checkpoint(cfg: Any, path: Any, read: Callable[[Any], T]) -> tuple[T, T]:
    """`read` of main's policy after one real iteration, and again in a new algorithm that loaded RLlib's own
    checkpoint of it as ``--resume`` does (`path`: where the checkpoint goes). Needs a running Ray."""
    from osrs_rllib.training.algorithm import build_algorithm_config, register_everything
    from osrs_rllib.training.run_state import restore_exact_weights

    register_everything()
    algo = build_algorithm_config(cfg).build_algo()
    try:
        algo.train()
        saved = read(algo.get_policy("main"))
        algo.save_checkpoint(str(path))
    finally:
        algo.stop()
    again = build_algorithm_config(cfg).build_algo()
    try:
        again.load_checkpoint(str(path))
        restore_exact_weights(again, path)
        restored = read(again.get_policy("main"))
    finally:
        again.stop()
    return saved, restored
