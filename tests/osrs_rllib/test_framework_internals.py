"""Pins of the Ray and RLlib internals this code base reaches behind their public APIs.

Why: each of these has no public equivalent in Ray 2.60's old API stack, and a rename in an upgrade would not
fail loudly where it is used (a resume would restart the iteration counter, an exploiter reset would keep its
old Adam moments, the mapping function would see no environment, `--address auto` and `dashboard-token`
would look in the wrong file). Each test fails on the real class or function if the internal changes; no Ray
instance is started.
"""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest


def test_trainable_counts_iterations_in__iteration() -> None:
    """`osrs_rllib.training.trainer.Trainer._restore` sets ``algo._iteration``, the counter behind
    `Trainable.iteration`."""
    from ray.rllib.algorithms.algorithm import Algorithm
    from ray.tune.trainable import Trainable

    assert issubclass(Algorithm, Trainable)
    assert "self._iteration = 0" in inspect.getsource(Trainable.__init__)
    iteration = Trainable.__dict__["iteration"]
    assert isinstance(iteration, property) and "return self._iteration" in inspect.getsource(iteration.fget)


def test_torch_policies_keep_their_optimisers_in__optimizers() -> None:
    """`league.callback.LeagueRunner.apply` clears ``policy._optimizers`` when an exploiter is reset."""
    from ray.rllib.algorithms.ppo.ppo_torch_policy import PPOTorchPolicy
    from ray.rllib.policy.torch_policy_v2 import TorchPolicyV2

    assert issubclass(PPOTorchPolicy, TorchPolicyV2)
    assert "self._optimizers = force_list(self.optimizer())" in inspect.getsource(TorchPolicyV2.__init__)


def test_rollout_workers_expose_their_sub_environments_as_async_env() -> None:
    """`osrs_rllib.training.sampling.env.episode_env` and the lockstep sampler read ``worker.async_env``."""
    from ray.rllib.env.base_env import BaseEnv
    from ray.rllib.evaluation.rollout_worker import RolloutWorker

    source = inspect.getsource(RolloutWorker.__init__)
    assert "self.async_env: BaseEnv = convert_to_base_env(" in source
    assert callable(BaseEnv.get_sub_environments)


def test_the_current_cluster_file_is_where_check_cluster_reachable_reads_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """`osrs_rllib.training.ray_cluster.check_cluster_reachable` reads ``$RAY_TMPDIR/ray/ray_current_cluster`` for
    ``auto``."""
    from ray._common.utils import get_ray_address_file

    monkeypatch.delenv("RAY_TMPDIR", raising=False)
    assert Path(get_ray_address_file(None)) == Path("/tmp") / "ray" / "ray_current_cluster"
    monkeypatch.setenv("RAY_TMPDIR", "/somewhere")
    assert Path(get_ray_address_file(None)) == Path("/somewhere") / "ray" / "ray_current_cluster"


def test_the_token_file_is_where_dashboard_token_reads_it() -> None:
    """`osrs_rllib.experiments.jobs.RAY_TOKEN_FILE` is Ray's default token path (without RAY_AUTH_TOKEN(_PATH))."""
    from ray._private.authentication.authentication_token_setup import _get_default_token_path

    from osrs_rllib.experiments.jobs import RAY_TOKEN_FILE

    assert _get_default_token_path() == RAY_TOKEN_FILE


def test_ray_init_installs_its_sigterm_handlers_through_set_sigterm_handler() -> None:
    """`serving.ray_start.ray_keeps_our_signal_handlers` replaces ``ray._private.utils.set_sigterm_handler``
    while `ray.init` runs, so that a stop during start-up reaches the trainer's handler."""
    import ray._private.node as node
    import ray._private.utils as ray_utils
    import ray._private.worker as worker

    assert callable(ray_utils.set_sigterm_handler)
    assert "ray._private.utils.set_sigterm_handler(sigterm_handler)" in inspect.getsource(worker.init)
    assert "ray._private.utils.set_sigterm_handler(sigterm_handler)" in inspect.getsource(node.Node)
