"""The compiled core's §17 signals, rewards and reward components against envs/nh/engine.py.

Every tick of every fight, for both players: the core's signals dict equals `rewards.signals_for`, its reward
equals `compute_reward` and its reward components equal the recorded parts, all with `==` (float64 bit for
bit, not approximately), over random-legal self-play and agent-vs-baseline fights of every build and fight
type, under the default weights, `CORE_REWARD_WEIGHTS` and random weights (schedules read at several training
progress values, every boolean switch flipped now and then).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from envs.nh.contract import HEAD_SIZES, BoolArray, Head, apply_dependencies_and_force
from envs.nh.core import reset_params, reward_weights_mapping
from envs.nh.engine import NHEngine
from envs.nh.loadouts import Build
from envs.nh.params import OPPONENT_AGENT, FightParams
from envs.nh.rewards import CORE_REWARD_WEIGHTS, REWARD_COMPONENTS, WEIGHT_TYPES, RewardWeights
from tests.envs.core_snapshots import compiled_core

core = compiled_core()


class LegalSampler:
    """A uniformly random legal value per head (§14.2), as `benchmarks/sim_throughput.py`'s sampler."""

    def __init__(self, make: np.random.Generator) -> None:
        self._make = make

    def _choose(self, head: Head, legal: BoolArray) -> int:
        values = np.flatnonzero(legal)
        return int(values[int(self._make.integers(0, len(values)))])

    def sample(self, mask: BoolArray) -> list[int]:
        return [int(v) for v in apply_dependencies_and_force(mask, self._choose)]


def _random_weights(make: np.random.Generator) -> RewardWeights:
    """Every weight random: about half the scheduled ones as [a, b, n], every switch flipped at random."""
    values: dict[str, Any] = {}
    for name, kind in WEIGHT_TYPES.items():
        if kind == "bool":
            values[name] = bool(make.random() < 0.5)
        elif kind == "Schedule" and make.random() < 0.5:
            values[name] = (float(make.normal()), float(make.normal()), float(make.integers(1, 400)))
        elif name == "player_died_with_food_offset":
            values[name] = float(make.uniform(0.0, 2.0))  # (scale + offset) ** exponent stays real (§17.3)
        elif name == "player_died_with_food_exponent":
            values[name] = 0.0 if make.random() < 0.3 else float(make.uniform(-2.0, 3.0))
        else:
            values[name] = float(make.normal()) if make.random() < 0.8 else int(make.integers(-3, 4))
    return RewardWeights.from_mapping(values)


def _params(make: np.random.Generator, self_play: bool) -> FightParams:
    builds = list(Build)
    params = FightParams(
        account_build=builds[int(make.integers(0, len(builds)))],
        randomize_gear=bool(make.random() < 0.8),
        randomize_fight_type=bool(make.random() < 0.7),
        training=bool(make.random() < 0.8),
        death_match=bool(make.random() < 0.8),
        max_episode_ticks=int(make.integers(40, 200)) if make.random() < 0.2 else 2000,
    )
    return replace(params, opponent=OPPONENT_AGENT) if self_play else params


def _check_step(batch: Any, engine: NHEngine, step: Any, where: tuple[object, ...]) -> None:
    got_rewards = batch.last_rewards(0)
    for i in range(2):
        want_signals = step.signals[i]
        got_signals = batch.signals(0, i)
        assert got_signals == want_signals, (where, i)
        if want_signals is not None:  # same key set and the same types: bools stay bools
            assert {k: type(v) for k, v in got_signals.items()} == {k: type(v) for k, v in want_signals.items()}
        assert got_rewards[i] == step.rewards[i] or (math.isnan(got_rewards[i]) and math.isnan(step.rewards[i])), (
            where,
            i,
            got_rewards[i],
            step.rewards[i],
        )
        parts = step.reward_components[i] if step.reward_components is not None else None
        got_parts = batch.reward_components(0, i)
        want_parts = tuple(parts.get(k, 0.0) if parts else 0.0 for k in REWARD_COMPONENTS)
        assert got_parts == want_parts, (where, i)


def _run(
    make: np.random.Generator,
    weights: RewardWeights,
    fights: int,
    max_ticks: int,
    progress_values: tuple[float, ...] = (0.0,),
    seen: set[tuple[int, int]] | None = None,
) -> int:
    """Fights alternating self-play and agent-vs-baseline, checked every tick; returns the ticks stepped."""
    batch = core.FightBatch(1)
    batch.set_reward_weights(reward_weights_mapping(weights))
    sampler = LegalSampler(make)
    ticks = 0
    for fight in range(fights):
        self_play = fight % 2 == 0
        params = _params(make, self_play)
        engine = NHEngine(params, weights, observe_all=True)
        engine.record_reward_components = True
        seed = int(make.integers(0, 2**31))
        engine.reset(seed=seed)
        batch.reset(0, np.random.default_rng(seed).bit_generator.state, reset_params(params))
        assert batch.signals(0, 0) is None and batch.signals(0, 1) is None
        if seen is not None:
            fight_info = batch.fight(0)
            seen.add((fight_info["build"], fight_info["fight_mode"]))
        progress = progress_values[fight % len(progress_values)]
        engine.progress = progress
        batch.progress = progress
        while not engine.sim.done and engine.sim.tick < max_ticks:
            actions = [
                None if p.is_baseline or make.random() < 0.05 else sampler.sample(engine.masks[p.index])
                for p in engine.sim.players
            ]
            step = engine.step(actions)
            batch.step(0, actions)
            ticks += 1
            _check_step(batch, engine, step, (fight, engine.sim.tick, progress))
    return ticks


def test_default_weights_match_python() -> None:
    ticks = _run(np.random.default_rng(15), RewardWeights(), fights=8, max_ticks=300)
    assert ticks > 800, ticks


def test_core_training_weights_match_python() -> None:
    ticks = _run(np.random.default_rng(16), CORE_REWARD_WEIGHTS, fights=8, max_ticks=300, progress_values=(0, 150, 900))
    assert ticks > 800, ticks


@pytest.mark.parametrize("seed", range(3))
def test_random_weights_and_schedules_match_python(seed: int) -> None:
    make = np.random.default_rng(170 + seed)
    ticks = 0
    for _ in range(3):
        ticks += _run(make, _random_weights(make), fights=2, max_ticks=200, progress_values=(0.0, 37.5, 1e4))
    assert ticks > 300, ticks


def test_step_batch_writes_rewards_and_components() -> None:
    """The batch call's reward outputs: each fight's row equals its own Python engine's step."""
    make = np.random.default_rng(99)
    n = 6
    batch = core.FightBatch(n)
    batch.set_reward_weights(reward_weights_mapping(CORE_REWARD_WEIGHTS))
    batch.progress = 120.0
    engines = []
    for i in range(n):
        params = _params(make, self_play=i % 2 == 0)
        engine = NHEngine(params, CORE_REWARD_WEIGHTS, observe_all=True)
        engine.record_reward_components = True
        engine.progress = 120.0
        engine.reset(seed=300 + i)
        batch.reset(i, np.random.default_rng(300 + i).bit_generator.state, reset_params(params))
        engines.append(engine)
    sampler = LegalSampler(make)
    results = np.zeros((n, 4), dtype=np.int32)
    rewards = np.full((n, 2), np.nan)
    components = np.full((n, 2, len(REWARD_COMPONENTS)), np.nan)
    for _ in range(120):
        actions = np.zeros((n, 2, len(HEAD_SIZES)), dtype=np.int32)
        has = np.zeros((n, 2), dtype=np.int32)
        for i, engine in enumerate(engines):
            for p in engine.sim.players:
                if not p.is_baseline and not engine.sim.done:
                    actions[i, p.index], has[i, p.index] = sampler.sample(engine.masks[p.index]), 1
        running = [not e.sim.done for e in engines]
        batch.step_batch(actions, has, results, rewards=rewards, components=components)
        for i, engine in enumerate(engines):
            if not running[i]:
                continue
            step = engine.step([actions[i, k].tolist() if has[i, k] else None for k in range(2)])
            assert rewards[i].tolist() == step.rewards, i
            for k in range(2):
                parts = step.reward_components[k] if step.reward_components else None
                assert components[i, k].tolist() == [parts.get(c, 0.0) if parts else 0.0 for c in REWARD_COMPONENTS]


def test_bad_weights_are_refused_and_change_nothing() -> None:
    batch = core.FightBatch(1)
    good = reward_weights_mapping(CORE_REWARD_WEIGHTS)
    batch.set_reward_weights(good)
    batch.progress = 50.0
    with pytest.raises(KeyError, match="win_reward"):
        batch.set_reward_weights({k: v for k, v in good.items() if k != "win_reward"})
    with pytest.raises(ValueError, match="finite"):
        batch.set_reward_weights({**good, "safe_penalty": math.inf})
    with pytest.raises(TypeError, match="true or false"):
        batch.set_reward_weights({**good, "reward_heals": 1})
    with pytest.raises(ValueError, match=r"\(a, b, n\)"):
        batch.set_reward_weights({**good, "tie_reward": (1.0, 2.0)})
    assert batch.progress == 50.0
    with pytest.raises(ValueError, match="set_reward_weights"):
        core.FightBatch(1).step_batch(
            np.zeros((1, 2, 12), np.int32),
            np.zeros((1, 2), np.int32),
            np.zeros((1, 4), np.int32),
            rewards=np.zeros((1, 2)),
        )


@pytest.mark.slow
def test_hundred_thousand_ticks_of_rewards_match_python() -> None:
    """The bar for step 5: >= 100,000 ticks, every build and fight type, default, core and random weights."""
    make = np.random.default_rng(5150)
    ticks = 0
    rounds = 0
    seen: set[tuple[int, int]] = set()
    while ticks < 100_000:
        weights = (RewardWeights(), CORE_REWARD_WEIGHTS, _random_weights(make))[rounds % 3]
        ticks += _run(make, weights, fights=6, max_ticks=1000, progress_values=(0.0, 77.0, 250.0, 5e3), seen=seen)
        rounds += 1
    assert {build for build, _ in seen} == set(range(len(Build))), seen
    assert len({mode for _, mode in seen}) > 1, seen
