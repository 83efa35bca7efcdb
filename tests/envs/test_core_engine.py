"""`CoreEngine` and the adapters' `engine` option against the Python engine (issue 15 item 4, first part).

The gym env and the RLlib env on `engine: core` must hand out exactly what they hand out on `engine: python`
(observations, masks, critic inputs, rewards, terminations, truncations, infos with signals) over random-legal
episodes of every build, and `CoreEngine` must equal `NHEngine` step for step, generator state included.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
import pytest

from envs.gym_env import NHGymEnv
from envs.nh import core_engine
from envs.nh.contract import BoolArray, Head, apply_dependencies_and_force
from envs.nh.core_engine import CoreEngine, make_engine
from envs.nh.engine import NHEngine
from envs.nh.loadouts import Build
from envs.nh.params import OPPONENT_AGENT, FightParams, ParamError
from envs.nh.rewards import CORE_REWARD_WEIGHTS, REWARD_COMPONENTS
from envs.rllib_env import NHMultiAgentEnv

pytest.importorskip("envs.nh.core._nhcore", reason="compiled core not built (pip install -e .)")

BUILDS = [b.value for b in Build]


class LegalSampler:
    """A uniformly random legal value per head (§14.2)."""

    def __init__(self, seed: int) -> None:
        self._make = np.random.default_rng(seed)

    def _choose(self, head: Head, legal: BoolArray) -> int:
        values = np.flatnonzero(legal)
        return int(values[int(self._make.integers(0, len(values)))])

    def sample(self, mask: np.ndarray) -> np.ndarray:
        return apply_dependencies_and_force(np.asarray(mask, dtype=bool), self._choose)


def _same(a: Any, b: Any, where: object) -> None:
    """Equal, with numpy arrays compared bit for bit (dtype, shape, bytes)."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys(), where
        for k in a:
            _same(a[k], b[k], (where, k))
    elif isinstance(a, list | tuple):
        assert type(a) is type(b) and len(a) == len(b), where
        for k, (x, y) in enumerate(zip(a, b, strict=True)):
            _same(x, y, (where, k))
    elif isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray) and a.dtype == b.dtype and a.shape == b.shape, where
        assert a.tobytes() == b.tobytes(), where
    else:
        assert a == b and type(a) is type(b), (where, a, b)


@pytest.mark.parametrize("observe_all", [True, False])
@pytest.mark.parametrize("self_play", [False, True])
def test_core_engine_equals_python_engine(self_play: bool, observe_all: bool) -> None:
    sampler = LegalSampler(3 + self_play)
    for k, build in enumerate(Build):
        params = FightParams(
            account_build=build,
            randomize_gear=True,
            randomize_fight_type=True,
            opponent=OPPONENT_AGENT if self_play else FightParams().opponent,
            include_opponent_observation=k % 2 == 0,
        )
        engines = [NHEngine(params, CORE_REWARD_WEIGHTS, observe_all=observe_all),
                   CoreEngine(params, CORE_REWARD_WEIGHTS, observe_all=observe_all)]
        for e in engines:
            e.record_reward_components = True
            e.progress = 40.0 * k
            e.reset(seed=60 + k)
        py, co = engines
        assert co.self_play == py.self_play and co.params == py.params
        _same(co.info(0), py.info(0), (build, 0))
        while True:
            _same(co.obs.copy(), py.obs.copy(), build)
            _same(co.masks.copy(), py.masks.copy(), build)
            for i in range(2):
                _same(co.critic_obs(i), py.critic_obs(i), (build, i))
            actions = [None if p.is_baseline else sampler.sample(py.masks[p.index]) for p in py.sim.players]
            want, got = py.step(actions), co.step(actions)
            assert got.rewards == want.rewards and got.signals == want.signals, build
            assert (got.outcomes, got.terminated, got.truncated) == (want.outcomes, want.terminated, want.truncated)
            assert want.reward_components is not None and got.reward_components is not None
            for i in range(2):
                w, g = want.reward_components[i], got.reward_components[i]
                assert (w is None) == (g is None)
                if w is not None and g is not None:
                    assert [g[c] for c in REWARD_COMPONENTS] == [w.get(c, 0.0) for c in REWARD_COMPONENTS]
                _same(co.info(i, got), py.info(i, want), (build, i))
            assert co.rng.bit_generator.state == py.sim.rng.bit_generator.state
            if want.terminated or want.truncated:
                break
        with pytest.raises(RuntimeError, match="reset"):
            co.step([None, None])
    co.reset(seed=1)
    with pytest.raises(ValueError, match="head values"):
        co.step([[0] * 11 + [99], None])
    with pytest.raises(ValueError, match="head values"):
        co.step([[-1] + [0] * 11, None])


def _gym_episode(env: NHGymEnv, seed: int, options: dict[str, Any], sampler: LegalSampler) -> list[Any]:
    out: list[Any] = [env.reset(seed=seed, options=options)]
    done = False
    while not done:
        obs = out[-1][0]
        step = env.step(sampler.sample(obs["action_mask"]))
        out.append(step)
        done = step[2] or step[3]
    return out


@pytest.mark.parametrize("opponent", ["baseline", "novice"])
def test_gym_env_core_equals_python(opponent: str) -> None:
    params = {"randomize_gear": True, "randomize_fight_type": True, "include_opponent_observation": True}
    envs = [NHGymEnv(params, CORE_REWARD_WEIGHTS, opponent=opponent, engine=e) for e in ("python", "core")]
    assert isinstance(envs[1].engine, CoreEngine) and isinstance(envs[0].engine, NHEngine)
    for k, build in enumerate(BUILDS):
        runs = [_gym_episode(env, 10 + k, {"build": build}, LegalSampler(k)) for env in envs]
        assert len(runs[0]) == len(runs[1]) > 1
        for t, (want, got) in enumerate(zip(*runs, strict=True)):
            _same(list(got), list(want), (build, t))


def _rllib_episode(env: NHMultiAgentEnv, seed: int, options: dict[str, Any], sampler: LegalSampler) -> list[Any]:
    obs, infos = env.reset(seed=seed, options=options)
    out: list[Any] = [(obs, infos)]
    while True:
        actions = {a: sampler.sample(o["action_mask"]) for a, o in obs.items()}
        obs, rew, term, trunc, infos = env.step(actions)
        out.append((obs, rew, term, trunc, infos))
        if term["__all__"] or trunc["__all__"]:
            return out


@pytest.mark.parametrize("opponent", ["agent", "baseline"])
def test_rllib_env_core_equals_python(opponent: str) -> None:
    config = {"params": {"randomize_gear": True, "randomize_fight_type": True}, "opponent": opponent}
    envs = [NHMultiAgentEnv({**config, "engine": e}) for e in ("python", "core")]
    for env in envs:
        env.set_training_progress(12.0)
    for k, build in enumerate(BUILDS):
        runs = [_rllib_episode(env, 20 + k, {"build": build}, LegalSampler(50 + k)) for env in envs]
        assert len(runs[0]) == len(runs[1]) > 1
        for t, (want, got) in enumerate(zip(*runs, strict=True)):
            _same(list(got), list(want), (build, t))


def test_engine_option_is_checked_and_auto_falls_back_once(monkeypatch: pytest.MonkeyPatch, caplog: Any) -> None:
    with pytest.raises(ParamError, match="unknown engine"):
        NHGymEnv(engine="fast")
    with pytest.raises(ParamError, match="unknown engine"):
        NHMultiAgentEnv({"engine": "fast"})
    assert isinstance(NHGymEnv().engine, NHEngine)  # the default stays python (consumers read engine.sim)
    assert isinstance(make_engine("auto"), CoreEngine)

    def not_built() -> Any:
        raise ImportError("the compiled simulator core envs.nh.core._nhcore is not built: build it")

    monkeypatch.setattr(core_engine, "load_core", not_built)
    monkeypatch.setattr(core_engine, "_fallback_logged", False)
    with pytest.raises(ImportError, match="not built"):
        make_engine("core")
    with caplog.at_level(logging.WARNING, logger="envs.nh.core_engine"):
        assert isinstance(make_engine("auto"), NHEngine)
        assert isinstance(make_engine("auto"), NHEngine)
    assert sum("Python engine" in r.getMessage() for r in caplog.records) == 1
