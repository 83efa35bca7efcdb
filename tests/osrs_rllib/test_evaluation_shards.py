"""Evaluation dealt over shards (a training run's idle env runners): the same fights, the same rows, as playing
them all in one place; and the model files such an evaluation ships to a runner."""

from __future__ import annotations

import os
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from envs.nh.contract import CRITIC_SIZE, OBS_SIZE
from envs.nh.loadouts import Build
from osrs_rllib.evaluation.policy_fights import evaluate, evaluate_vs_model, network_act_fn
from policies.model_file import load_model_file, save_model_file
from policies.network import NHPolicyNetwork
from policies.network_config import NetworkConfig

REPO = Path(__file__).resolve().parents[2]
PARAMS = {"randomize_build": True, "random_build_options": ["PURE", "MED"], "max_episode_ticks": 60}


def _net(seed: int) -> NHPolicyNetwork:
    torch.manual_seed(seed)
    return NHPolicyNetwork(OBS_SIZE, CRITIC_SIZE, NetworkConfig(actor_hidden=(16,), critic_hidden=(16,), head_hidden=8))


class CountingShards:
    """Plays every shard here, one after the other, pickling each job as a Ray call would, and counts the fights."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.calls: list[int] = []

    def __call__(self, job: Callable[[int, int], Any]) -> list[Any]:
        import cloudpickle

        results = []
        for i in range(self.n):
            shipped = pickle.loads(cloudpickle.dumps(job))  # as Ray ships a function to a worker
            results.append(shipped(i, self.n))
            self.calls.append(i)
        return results


def _strip(rows: list[Any]) -> list[dict[str, Any]]:
    return [r.to_dict() if hasattr(r, "to_dict") else r for r in rows]


@pytest.mark.parametrize("n", [2, 3])
def test_sharded_evaluation_plays_the_same_fights_with_the_same_results(n: int) -> None:
    act = network_act_fn(_net(0).eval())
    kwargs: dict[str, Any] = dict(params=PARAMS, seed=11, unseen_builds=[Build.MAXED], parallel=4)
    alone = evaluate(act, ["baseline", "tribrid"], 3, **kwargs)
    shards = CountingShards(n)
    dealt = evaluate(act, ["baseline", "tribrid"], 3, shards=shards, **kwargs)
    assert shards.calls == list(range(n))  # every shard played once
    assert _strip(dealt) == _strip(alone)
    assert [r.fights for r in dealt] == [6, 6]  # 3 per trained build; MAXED's 3 apart
    assert sum(b["fights"] for b in dealt[0].by_build.values()) == 9


def test_sharded_model_evaluation_matches_and_model_files_travel(tmp_path: Path) -> None:
    path = save_model_file(_net(1), tmp_path / "m.nhmodel", metadata={"name": "m"})
    model = load_model_file(path)
    copy = pickle.loads(pickle.dumps(model))
    obs = np.random.default_rng(0).normal(size=(5, OBS_SIZE)).astype(np.float32)
    masks = np.ones((5, 45), dtype=np.float32)
    assert copy.path == model.path and copy.meta == model.meta
    np.testing.assert_array_equal(copy.act(obs, masks), model.act(obs, masks))
    np.testing.assert_array_equal(copy.act(obs, masks, False, seed=3), model.act(obs, masks, False, seed=3))
    act = network_act_fn(_net(2).eval())
    for model_deterministic in (True, False):
        kwargs: dict[str, Any] = dict(params=PARAMS, seed=5, parallel=3, model_deterministic=model_deterministic)
        alone = evaluate_vs_model(act, model, 2, **kwargs)
        dealt = evaluate_vs_model(act, model, 2, shards=CountingShards(2), **kwargs)
        assert dealt == alone
        assert alone["by_seat"]["seat_0"]["fights"] == alone["by_seat"]["seat_1"]["fights"] == 2


@pytest.mark.integration
@pytest.mark.usefixtures("ray_session")
def test_a_training_runs_env_runners_play_the_evaluation() -> None:
    """On real Ray: `runner_shards` deals the fights over the algorithm's two env runners, and the rows equal the
    driver's own evaluation; the runners' torch random state is left as it was."""
    import ray

    from osrs_rllib.config.schema import load_config
    from osrs_rllib.training import build_algorithm_config, register_everything
    from osrs_rllib.training.parts import runner_shards

    register_everything()
    overrides = ["runners.num_env_runners=2", "runners.num_cpus_per_env_runner=0"]
    cfg = load_config(REPO / "configs" / "smoke.yml", overrides)
    algo = build_algorithm_config(cfg).build_algo()
    try:
        shards = runner_shards(algo)
        assert shards is not None
        pids = shards(lambda i, n: (i, n, os.getpid()))
        assert [p[:2] for p in pids] == [(0, 2), (1, 2)] and len({p[2] for p in pids}) == 2
        assert all(p[2] != os.getpid() for p in pids)  # played in the runners, not the driver
        rng_states = lambda: algo.env_runner_group.foreach_env_runner(  # noqa: E731
            lambda _w: torch.random.get_rng_state(), local_env_runner=False
        )
        states = rng_states()
        act = network_act_fn(algo.get_policy("main").model.net.eval())
        kwargs: dict[str, Any] = dict(params=PARAMS, seed=7, parallel=4, deterministic=False)
        dealt = evaluate(act, ["baseline"], 2, shards=shards, **{**kwargs, "deterministic": True})
        alone = evaluate(act, ["baseline"], 2, **{**kwargs, "deterministic": True})
        assert _strip(dealt) == _strip(alone)
        evaluate(act, ["baseline"], 2, shards=shards, **kwargs)  # sampling: draws on the runners
        assert all(torch.equal(a, b) for a, b in zip(states, rng_states(), strict=True))
        assert ray.is_initialized()
    finally:
        algo.stop()
    assert runner_shards(object()) is None  # no env runners: the evaluator plays alone


@pytest.mark.parametrize("sharded", [False, True])
def test_evaluation_runs_its_forward_passes_on_one_torch_thread_and_restores_the_count(sharded: bool) -> None:
    """Two intra-op threads collapse beside any other busy process (`policies/torch_threads.py`); evaluation in the
    driver or on a runner uses one, and leaves the caller's setting (the learner's choice) as it was."""
    inner = network_act_fn(_net(3).eval())
    seen: list[int] = []

    def act(obs: np.ndarray, masks: np.ndarray, deterministic: bool) -> np.ndarray:
        seen.append(torch.get_num_threads())
        return inner(obs, masks, deterministic)

    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        here = (lambda job: [job(i, 2) for i in range(2)]) if sharded else None  # unpickled: `seen` stays ours
        evaluate(act, ["baseline"], 2, params=PARAMS, parallel=4, shards=here)
        assert seen and set(seen) == {1}
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)
