"""The lockstep sampler on real Ray and RLlib: what it collects, its advantages and bootstraps, its metrics,
and that PPO learns through it."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from gymnasium import spaces
from ray.rllib.models.preprocessors import get_preprocessor
from ray.rllib.policy.sample_batch import SampleBatch

from envs.nh.core_engine import core_available
from osrs_rllib.config.schema import load_config
from osrs_rllib.training import build_algorithm_config, register_everything
from osrs_rllib.training.sampling.lockstep import (
    LockstepRolloutWorker,
    LockstepSampler,
    _Flattener,
    unsupported_settings,
)

pytestmark = pytest.mark.usefixtures("ray_session")

REPO = Path(__file__).resolve().parents[2]
SB = SampleBatch
GAMMA = 0.99
LAMBDA = 0.95


def build(*overrides: str) -> Any:
    register_everything()
    cfg = load_config(REPO / "configs" / "smoke.yml", list(overrides))
    return build_algorithm_config(cfg).build_algo()


@pytest.fixture(scope="module")
def self_play() -> Iterator[Any]:
    """The smoke config sampling in the driver, self-play only, short fights so that both ends of a
    trajectory (termination, truncation, the fragment's end) occur in one sample."""
    algo = build(
        "opponents.mix.baseline=0",
        "opponents.mix.prayer_switcher=0",
        "opponents.mix.tribrid=0",
        "opponents.mix.self_play=1",
        "env.params.max_episode_ticks=40",
        "env.params.death_match=false",
        f"ppo.gamma={GAMMA}",
        f"ppo.gae_lambda={LAMBDA}",
        "runners.num_envs_per_env_runner=4",
        "ppo.train_batch_size=256",
    )
    yield algo
    algo.stop()


def _trajectories(batch: SampleBatch) -> list[SampleBatch]:
    """The batch's trajectories: contiguous runs of one (episode, agent), each in time order."""
    keys = list(zip(batch[SB.EPS_ID].tolist(), batch[SB.AGENT_INDEX].tolist(), strict=True))
    starts = [i for i in range(len(keys)) if i == 0 or keys[i] != keys[i - 1]]
    assert len(starts) == len(set(keys)), "a trajectory's rows must be contiguous"
    return [batch.slice(a, b) for a, b in zip(starts, [*starts[1:], len(keys)], strict=True)]


def test_worker_is_the_lockstep_one_and_counts_steps_like_rllib(self_play: Any) -> None:
    worker = self_play.env_runner
    assert isinstance(worker, LockstepRolloutWorker)
    batch = worker.sample()
    fragment = 256 // 4
    assert batch.env_steps() == fragment * 4
    main = batch.policy_batches["main"]
    assert main.count == batch.agent_steps() == 2 * batch.env_steps()  # self-play: both seats are main
    for key in (SB.OBS, SB.ACTIONS, SB.ACTION_LOGP, SB.ACTION_DIST_INPUTS, SB.VF_PREDS, "advantages", "value_targets"):
        assert len(main[key]) == main.count, key
    assert main[SB.OBS].shape[1] == worker.policy_map["main"].observation_space.shape[0]


def test_advantages_are_gae_with_the_right_bootstraps(self_play: Any) -> None:
    """Per trajectory: terminated ends bootstrap 0, truncated ends and fragment ends the critic's value of
    the next observation; advantages are GAE(γ, λ) of rewards and values."""
    worker = self_play.env_runner
    policy = worker.policy_map["main"]
    batch = worker.sample().policy_batches["main"]
    sampler = worker.__dict__["_lockstep"]
    # Critic values of the observations the open trajectories were cut at (the next sample starts there).
    open_obs = {
        (slot.episode.episode_id, slot.episode.get_agents().index(agent)): obs
        for slot in sampler.slots
        for agent, obs in slot.obs.items()
    }
    seen = {"terminated": 0, "truncated": 0, "cut": 0}
    for traj in _trajectories(batch):
        rewards, values = traj[SB.REWARDS], traj[SB.VF_PREDS]
        key = (int(traj[SB.EPS_ID][0]), int(traj[SB.AGENT_INDEX][0]))
        if traj[SB.TERMINATEDS][-1]:
            last_r, kind = 0.0, "terminated"
        elif traj[SB.TRUNCATEDS][-1]:
            last_r, kind = None, "truncated"  # the final observation is gone with its episode
        else:
            with torch.no_grad():
                input_dict = policy._lazy_tensor_dict(SampleBatch({SB.OBS: open_obs[key][None]}))
                policy.model(input_dict)
                last_r, kind = float(policy.model.value_function()[0]), "cut"
        seen[kind] += 1
        if last_r is None:
            last_r = (traj["value_targets"][-1] - rewards[-1]) / GAMMA  # recovered; checked consistent below
        next_values = np.append(values[1:], last_r)
        deltas = rewards + GAMMA * next_values - values
        expected = np.zeros_like(deltas)
        acc = 0.0
        for t in range(len(deltas) - 1, -1, -1):
            acc = deltas[t] + GAMMA * LAMBDA * acc
            expected[t] = acc
        np.testing.assert_allclose(traj["advantages"], expected, rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(traj["value_targets"], expected + values, rtol=1e-4, atol=1e-4)
        assert np.array_equal(traj[SB.T], np.arange(traj[SB.T][0], traj[SB.T][0] + traj.count))
    assert seen["cut"] > 0 and seen["terminated"] + seen["truncated"] > 0, seen


def test_truncated_trajectories_bootstrap_from_their_final_observation() -> None:
    """A fight cut by max_episode_ticks is not a loss: its last value target is r + γ·V(final obs) ≠ r."""
    algo = build(
        "opponents.mix.baseline=0",
        "opponents.mix.prayer_switcher=0",
        "opponents.mix.tribrid=0",
        "opponents.mix.noop=1",  # a no-op opponent: nobody dies in 10 ticks, every episode is truncated
        "env.params.max_episode_ticks=10",
        "runners.num_envs_per_env_runner=2",
        "ppo.train_batch_size=40",
        "ppo.minibatch_size=20",
    )
    try:
        batch = algo.env_runner.sample().policy_batches["main"]
        ends = np.flatnonzero(batch[SB.TRUNCATEDS])
        assert len(ends) >= 2 and not batch[SB.TERMINATEDS].any()
        gamma = algo.get_policy("main").config["gamma"]
        bootstrap = (batch["value_targets"][ends] - batch[SB.REWARDS][ends]) / gamma
        assert np.all(np.abs(bootstrap) > 1e-6), "a truncated end must not bootstrap 0"
    finally:
        algo.stop()


def test_flattening_matches_rllibs_preprocessor(self_play: Any) -> None:
    policy = self_play.env_runner.policy_map["main"]
    space = policy.observation_space.original_space
    prep = get_preprocessor(space)(space)
    flat = _Flattener(policy)
    space.seed(0)
    for _ in range(5):
        obs = space.sample()
        np.testing.assert_array_equal(flat(obs), prep.transform(obs))
    box = spaces.Box(-1, 1, (3,), np.float32)
    assert flat.keys is not None and _Flattener(type("P", (), {"observation_space": box})()).keys is None


def test_episode_metrics_and_callbacks_reach_the_result(self_play: Any) -> None:
    result = self_play.train()
    runners = result["env_runners"]
    assert runners["num_episodes"] > 0
    custom = runners["custom_metrics"]
    assert "won_mean" in custom and "win_vs_self_play_mean" in custom and "fight_ticks_mean" in custom
    perf = runners["sampler_perf"]
    assert perf["mean_env_wait_ms"] > 0 and perf["mean_inference_ms"] > 0
    assert set(runners["policy_reward_mean"]) == {"main"}
    assert result["custom_metrics"]["normalizer_samples_added/main"] > 0  # on_postprocess_trajectory ran


def test_scripted_policy_seats_act_but_are_not_collected() -> None:
    algo = build(
        "opponents.mix.baseline=0",
        "opponents.mix.self_play=0",
        "opponents.mix.prayer_switcher=0",
        "opponents.mix.tribrid=1",
        "opponents.scripted_in_env=false",
        "runners.num_envs_per_env_runner=2",
        "ppo.train_batch_size=64",
        "ppo.minibatch_size=32",
    )
    try:
        worker = algo.env_runner
        assert "scripted_tribrid" in worker.policy_map
        batch = worker.sample()
        assert set(batch.policy_batches) == {"main"}
        assert batch.policy_batches["main"].count == batch.env_steps() == 64
        slots = worker.__dict__["_lockstep"].slots
        assert all(s.episode.policy_of == {"player_0": "main", "player_1": "scripted_tribrid"} for s in slots)
    finally:
        algo.stop()


def _rows_sorted(batch: SampleBatch) -> np.ndarray:
    keys = [batch[SB.OBS][j].tobytes() + batch[SB.ACTIONS][j].tobytes() for j in range(batch.count)]
    return np.argsort(np.array(keys, dtype=object))


@pytest.mark.parametrize("engine", ["core", "python"])
def test_same_experience_as_rllibs_own_sampler(engine: str) -> None:
    """Same seeds, same config: the lockstep loop and RLlib's `EnvRunnerV2` make the same forward calls on
    the same batches, so they must collect the same rows: observations, actions, rewards, log-probabilities,
    values and distribution inputs exactly (the lockstep loop calls the network directly, `NHTorchModel.act`),
    advantages to float rounding (bootstraps are computed in one batch instead of one call each). On the core,
    the lockstep loop steps its four fights in one core call (one batch) while RLlib's sampler steps the Python
    engine env by env: the rows must still be the same."""
    if engine == "core" and not core_available():
        pytest.skip("compiled core not built")
    batches: dict[str, list[SampleBatch]] = {}
    for sampler, env_engine in (("lockstep", engine), ("rllib", "python")):
        algo = build(
            "opponents.mix.prioritized=0",
            f"runners.sampler={sampler}",
            f"env.engine={env_engine}",
            "runners.num_envs_per_env_runner=4",
            "env.params.max_episode_ticks=50",
        )
        try:
            batches[sampler] = [algo.env_runner.sample().policy_batches["main"] for _ in range(2)]
            if sampler == "lockstep":
                assert algo.env_runner.__dict__["_lockstep"].batched == (engine == "core")
        finally:
            algo.stop()
    for ours, theirs in zip(batches["lockstep"], batches["rllib"], strict=True):
        assert ours.count == theirs.count
        a, b = _rows_sorted(ours), _rows_sorted(theirs)
        exact = (SB.OBS, SB.ACTIONS, SB.REWARDS, SB.ACTION_LOGP, SB.VF_PREDS, SB.ACTION_DIST_INPUTS, SB.TERMINATEDS)
        for key in (*exact, SB.TRUNCATEDS):
            np.testing.assert_array_equal(ours[key][a], theirs[key][b], err_msg=key)
        for key in ("advantages", "value_targets"):
            np.testing.assert_allclose(ours[key][a], theirs[key][b], atol=1e-4, err_msg=key)


def test_unsupported_rllib_settings_are_refused_when_the_worker_is_built() -> None:
    """Settings the loop does not implement fail at build time, each named, instead of being ignored."""
    register_everything()
    base = build_algorithm_config(load_config(REPO / "configs" / "smoke.yml", []))
    assert unsupported_settings(base) == []
    bad = (
        base.copy(copy_frozen=False)
        .env_runners(observation_filter="MeanStdFilter", batch_mode="complete_episodes", explore=False)
        .reporting(min_sample_timesteps_per_iteration=0)
        .multi_agent(count_steps_by="agent_steps")
        .offline_data(output="/tmp/never-written")
    )
    problems = unsupported_settings(bad)
    for name in ("observation_filter", "batch_mode", "explore", "count_steps_by", "output"):
        assert any(p.startswith(name) for p in problems), (name, problems)
    with pytest.raises(Exception, match="does not support: observation_filter='MeanStdFilter'") as err:
        bad.build_algo()
    assert "runners.sampler: rllib" in str(err.value)


def test_episode_ids_are_seeded_per_worker(self_play: Any) -> None:
    """Two loops of the same worker and seed number their episodes alike; the global `random` is untouched."""
    worker = self_play.env_runner
    state = random.getstate()
    first, second = LockstepSampler(worker), LockstepSampler(worker)
    ids = [[s._episode_ids.randrange(2**62) for _ in range(3)] for s in (first, second)]
    assert ids[0] == ids[1] and len(set(ids[0])) == 3
    assert random.getstate() == state
