"""The lockstep sampler's array path against its dict path, on real fights of the compiled core: the same seeds
and settings must give the same batches bit for bit (every column, the same rows in the same order), the same
finished episodes with the same metrics, the same league results and the same normaliser moments."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
import torch
from ray.rllib.policy.sample_batch import MultiAgentBatch, SampleBatch

from envs.nh.core_engine import core_available
from league.callback import LeaguePlan, PlanEntry, slot_policy_id
from osrs_rllib.config.schema import load_config
from osrs_rllib.training.algorithm import build_algorithm_config, register_everything
from osrs_rllib.training.sampling.lockstep import LockstepSampler
from policies.rllib_model import nh_model_of

pytestmark = [
    pytest.mark.usefixtures("ray_session"),
    pytest.mark.skipif(not core_available(), reason="compiled core not built"),
]

REPO = Path(__file__).resolve().parents[2]
SB = SampleBatch
PLAN = LeaguePlan(
    generation=1,
    learners=("main",),
    learner_probs=(1.0,),
    tables={
        "main": (
            PlanEntry(None, "baseline", "baseline", 0.3),
            PlanEntry("main", "main", "self_play", 0.2),
            PlanEntry(None, "scripted_prayer_switcher", "prayer_switcher", 0.1),
            PlanEntry(None, "scripted_tribrid", "tribrid", 0.1),
            PlanEntry(slot_policy_id(0), "main_1", "prioritized", 0.15),
            PlanEntry(slot_policy_id(1), "main_2", "prioritized", 0.15),
        )
    },
)
"""nh.yml's kinds of opponent, the two league slots among them (frozen snapshots acting in seat 1)."""
EXPLOITER = "main_exploiter_0"
EXPLOITER_PLAN = LeaguePlan(
    generation=1,
    learners=("main", EXPLOITER),
    learner_probs=(0.5, 0.5),
    tables={**PLAN.tables, EXPLOITER: (PlanEntry("main", "main", "main_exploiter", 1.0),)},
)
"""Two learners: in half of the fights a main exploiter in seat 0 against main in seat 1, both trained."""


def _build(overrides: list[str], plan: LeaguePlan | None) -> Any:
    register_everything()
    learners = plan.learners if plan is not None else ("main",)
    return build_algorithm_config(load_config(REPO / "configs" / "smoke.yml", overrides), learners).build_algo()


def _sample(
    arrays: bool, overrides: list[str], fragments: int, plan: LeaguePlan | None, weights: Any
) -> dict[str, Any]:
    algo = _build(overrides, plan)
    try:
        worker = algo.env_runner
        for pid, state in weights.items():  # the same weights, float64 normalisers included
            nh_model_of(worker.policy_map[pid]).load_state_dict(state)
        sampler = worker.__dict__["_lockstep"] = LockstepSampler(worker, arrays=arrays)
        assert (sampler.arrays is not None) == arrays
        envs = worker.async_env.get_sub_environments()
        for env in envs if plan is not None else ():
            env.set_league_plan(plan)
        torch.manual_seed(7)
        batches = [worker.sample() for _ in range(fragments)]
        metrics = [m._replace(perf_stats={}) for m in worker.get_metrics()]
        learners = ("main", EXPLOITER)
        pending = {pid: nh_model_of(p).pop_pending() for pid, p in worker.policy_map.items() if pid in learners}
        results = [r for env in envs for r in env.pop_league_results()]
        slots = [(s.episode.episode_id, s.episode.length, s.episode.total_reward, s.episode.agent_rewards)
                 for s in sampler.slots]  # fmt: skip
        return {"batches": batches, "metrics": metrics, "pending": pending, "league": results, "slots": slots}
    finally:
        algo.stop()


def _weights(overrides: list[str], plan: LeaguePlan | None) -> dict[str, Any]:
    """Main's initial weights and different ones for the league slots and an exploiter (each seat its own net)."""
    algo = _build(overrides, plan)
    try:
        model = nh_model_of(algo.get_policy("main"))
        out = {"main": {k: v.clone() for k, v in model.state_dict().items()}}
        gen = torch.Generator().manual_seed(3)
        others = [slot_policy_id(0), slot_policy_id(1), *(p for p in (plan.learners if plan else ()) if p != "main")]
        for pid in others:
            out[pid] = {
                k: v + 0.05 * torch.randn(v.shape, generator=gen, dtype=v.dtype) if v.is_floating_point() else v
                for k, v in out["main"].items()
            }
        return out
    finally:
        algo.stop()


def _assert_same_batch(ours: MultiAgentBatch, theirs: MultiAgentBatch) -> dict[str, int]:
    assert ours.env_steps() == theirs.env_steps()
    assert list(ours.policy_batches) == list(theirs.policy_batches)
    ends = {"terminated": 0, "truncated": 0}
    for pid, a in ours.policy_batches.items():
        b = theirs.policy_batches[pid]
        assert list(a.keys()) == list(b.keys()), pid
        for key in a.keys():
            x, y = np.asarray(a[key]), np.asarray(b[key])
            assert x.dtype == y.dtype and x.shape == y.shape, (pid, key, x.dtype, y.dtype, x.shape, y.shape)
            assert np.array_equal(x, y, equal_nan=x.dtype.kind == "f"), (pid, key)
            if x.dtype.kind == "f":  # bit for bit: equal values could still differ in the sign of a zero
                assert x.tobytes() == y.tobytes(), (pid, key)
        ends["terminated"] += int(a[SB.TERMINATEDS].sum())
        ends["truncated"] += int(a[SB.TRUNCATEDS].sum())
    return ends


@pytest.mark.parametrize(
    ("case", "overrides", "fragments", "plan"),
    [
        # short fights: many truncations and resets inside every fragment, the league's slots in seat 1
        ("league", ["env.params.max_episode_ticks=25", "ppo.train_batch_size=256"], 3, PLAN),
        # nh.yml's mix without a plan (its fixed kinds), fights of up to 300 ticks: won, lost and cut short
        ("mix", ["ppo.train_batch_size=512"], 5, None),
        # the graded ladder's rungs, the prescient expert among them (shown the learner's action of the tick)
        ("ladder", ["ppo.train_batch_size=512", "opponents.mix.baseline=0.1", "opponents.mix.self_play=0.0",
                    "opponents.mix.prayer_switcher=0.0", "opponents.mix.tribrid=0.0", "opponents.mix.prioritized=0.1",
                    "opponents.mix.expert=0.4", "opponents.mix.veteran=0.2", "opponents.mix.novice=0.2"], 5, None),
        # two trained policies in one fight (exploiter against main): their trajectories open in the dict path's order
        ("exploiter", ["env.params.max_episode_ticks=25", "ppo.train_batch_size=256"], 3, EXPLOITER_PLAN),
    ],
)
def test_array_path_gives_the_dict_paths_batches_and_metrics(
    case: str, overrides: list[str], fragments: int, plan: LeaguePlan | None
) -> None:
    overrides = [*overrides, "runners.num_envs_per_env_runner=8", "ppo.minibatch_size=128"]
    weights = _weights(overrides, plan)
    dicts = _sample(False, overrides, fragments, plan, weights)
    arrays = _sample(True, overrides, fragments, plan, weights)
    ends = {"terminated": 0, "truncated": 0}
    for ours, theirs in zip(arrays["batches"], dicts["batches"], strict=True):
        for key, value in _assert_same_batch(ours, theirs).items():
            ends[key] += value
    assert arrays["metrics"] == dicts["metrics"]
    assert arrays["league"] == dicts["league"]
    assert arrays["slots"] == dicts["slots"]
    for pid, moments in dicts["pending"].items():
        assert set(arrays["pending"][pid]) == set(moments)
        for key, (count, mean, var) in moments.items():
            count2, mean2, var2 = arrays["pending"][pid][key]
            assert count2 == count and mean2.tobytes() == mean.tobytes() and var2.tobytes() == var.tobytes(), key
    # what the comparison covered: fights ended inside fragments, both ways, with the episodes' metrics
    assert len(dicts["metrics"]) >= 8, len(dicts["metrics"])
    assert all("won" in m.custom_metrics for m in dicts["metrics"])
    if plan is not None:  # cut at 25 ticks: every fight truncated, some inside a fragment
        kinds = {r.kind for r in dicts["league"]}
        assert "prioritized" in kinds and len(kinds) >= 3 and ends["truncated"] > 0, (kinds, ends)
    else:
        assert ends["terminated"] > 0, ends
    if case == "ladder":  # the rungs played: the prescient expert, shown the tick's action the array path checked
        seen = {k for m in dicts["metrics"] for k in m.custom_metrics if k.startswith("win_vs_")}
        assert {"win_vs_expert", "win_vs_veteran"} <= seen, seen
    if plan is EXPLOITER_PLAN:
        assert {EXPLOITER, "main"} <= set(dicts["batches"][-1].policy_batches), "both learners trained"
        assert {r.learner for r in dicts["league"]} == {"main", EXPLOITER}


def _training_envs(n: int, **extra: Any) -> list[Any]:
    from osrs_rllib.training.algorithm import env_config
    from osrs_rllib.training.sampling.env import TrainingEnv

    cfg = load_config(REPO / "configs" / "smoke.yml", ["env.params.max_episode_ticks=30"])
    mix = {"baseline": 0.3, "self_play": 0.3, "prayer_switcher": 0.2, "tribrid": 0.2}
    base = {**env_config(cfg), "league": False, "opponent_mix": mix, **extra}
    return [TrainingEnv({**base, "mix_seed": 5 + k}) for k in range(n)]  # each its own draws of opponent


def _same(a: Any, b: Any) -> bool:
    """Deep equality of the dicts environments hand out (arrays compared bit for bit)."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.tobytes() == b.tobytes()
    if isinstance(a, dict):
        return isinstance(b, dict) and list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, tuple | list):
        return type(a) is type(b) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def test_core_env_batch_steps_as_step_envs() -> None:
    """The environments' half of the array path on its own: `CoreEnvBatch.step` against `step_envs` on twin
    environments with the same seeds and random legal actions, every fight's observation rows, rewards and ends
    equal, and each ended fight's five dicts (infos, episode metrics) equal."""
    from envs.nh.contract import masked_random_actions
    from envs.rllib_env import AGENT_IDS, CoreEnvBatch, share_core_batch, step_envs
    from osrs_rllib.training.sampling.lockstep import _Flattener

    n = 6
    twins = [_training_envs(n), _training_envs(n)]
    assert all(share_core_batch(envs) for envs in twins)
    batch = CoreEnvBatch(twins[1])
    space = SimpleNamespace(original_space=twins[0][0].observation_space)  # a policy's space as RLlib wraps it
    flatten = _Flattener(SimpleNamespace(observation_space=space))
    rng = np.random.default_rng(0)
    # odd fights' critics are not shown the opponent (unless in self-play): their critic rows end in zeros
    hidden = [{"include_opponent_observation": k % 2 == 0} for k in range(n)]
    obs = [env.reset(seed=10 + k, options=dict(hidden[k]))[0] for k, env in enumerate(twins[0])]
    for k, env in enumerate(twins[1]):
        env.reset(seed=10 + k, options=dict(hidden[k]))
    flat = np.zeros((n, 2, batch.flat_size), dtype=np.float32)
    batch.write_obs(flat)
    ends = hidden_ticks = 0
    for _ in range(80):
        hidden_ticks += int(not batch.fights.critic_sees_opponent.all())
        acting = np.array([[a in env.agents for a in AGENT_IDS] for env in twins[0]])
        for k in range(n):
            for seat, agent in enumerate(AGENT_IDS):
                if acting[k, seat]:
                    assert flat[k, seat].tobytes() == flatten(obs[k][agent]).tobytes(), (k, agent)
        masks = np.stack([[o[a]["action_mask"] if a in o else np.ones(45) for a in AGENT_IDS] for o in obs]) > 0
        actions = masked_random_actions(rng, masks).astype(np.int64)
        dicts = [{a: actions[k, s] for s, a in enumerate(AGENT_IDS) if acting[k, s]} for k in range(n)]
        theirs = step_envs(twins[0], dicts)
        rewards, ended, ours = batch.step(actions, acting)
        batch.write_obs(flat)
        for k, (o, rew, term, trunc, _) in enumerate(theirs):
            assert bool(ended[k]) == (term["__all__"] or trunc["__all__"]), k
            for seat, agent in enumerate(AGENT_IDS):
                if acting[k, seat]:
                    assert rewards[k, seat] == rew[agent]
            if ended[k]:
                ends += 1
                assert _same(ours[k], theirs[k]), k
                o = twins[0][k].reset(options=dict(hidden[k]))[0]
                twins[1][k].reset(options=dict(hidden[k]))
                batch.write_obs(flat)  # the reset fight's rows (the sampler writes them from the reset dict)
            obs[k] = o
    assert ends >= n and hidden_ticks > 0, (ends, hidden_ticks)
    bad = np.zeros((n, 2, 12), dtype=np.int64)
    bad[0, 0, 10] = 7  # movement head: values 0..6
    acting = np.array([[a in env.agents for a in AGENT_IDS] for env in twins[1]])
    with pytest.raises(ValueError, match="head 10"):
        batch.step(bad, acting)


@pytest.mark.parametrize("override", ["env.frame_stack=2", "env.engine=python"])
def test_settings_the_array_path_does_not_cover_take_the_dict_path(override: str) -> None:
    register_everything()
    cfg = load_config(REPO / "configs" / "smoke.yml", [override])
    algo = build_algorithm_config(cfg).build_algo()
    try:
        worker = algo.env_runner
        sampler = worker.__dict__["_lockstep"] = LockstepSampler(worker)
        assert sampler.arrays is None
        assert worker.sample().env_steps() == cfg.ppo.train_batch_size
    finally:
        algo.stop()
