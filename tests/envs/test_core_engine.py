"""`CoreEngine` and the adapters' `engine` option against the Python engine (first part).

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
from tests.envs.core_snapshots import compiled_core

compiled_core(testing=False)

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
    assert isinstance(NHGymEnv().engine, CoreEngine)  # the default is auto: the core where it is built
    assert isinstance(NHMultiAgentEnv().engine, CoreEngine)
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


def test_one_core_call_for_many_fights_equals_the_python_engine_fight_by_fight() -> None:
    """Fights of one `CoreFights` stepped together (`step_engines`, one core call per tick) equal Python engines
    stepped one at a time: fights end at different ticks and are restarted while the others run, every build,
    agent and baseline opponents, and each fight's generator state comes back to the caller."""
    n = 5
    weights = CORE_REWARD_WEIGHTS
    core = core_engine.make_engines("core", n, reward_weights=weights)
    python = core_engine.make_engines("python", n, reward_weights=weights)
    assert all(isinstance(e, CoreEngine) and e.fights is core[0].fights for e in core)
    assert all(isinstance(e, NHEngine) for e in python)
    sampler = LegalSampler(9)
    fights = 0

    def start(k: int) -> None:
        nonlocal fights
        build = list(Build)[fights % len(Build)]
        params = FightParams(account_build=build, randomize_gear=True, randomize_fight_type=True,
                             opponent=OPPONENT_AGENT if fights % 2 else FightParams().opponent)
        for e in (core[k], python[k]):
            e.record_reward_components = True
            e.reset(seed=400 + fights, params=params)
        fights += 1

    for k in range(n):
        start(k)
    while fights < 16:
        actions = [[None if p.is_baseline else sampler.sample(py.masks[p.index]) for p in py.sim.players]
                   for py in python]
        got = core_engine.step_engines(core, actions)
        want = [py.step(a) for py, a in zip(python, actions, strict=True)]
        for k, (g, w) in enumerate(zip(got, want, strict=True)):
            assert g.rewards == w.rewards and g.signals == w.signals and g.reward_components == w.reward_components
            assert (g.outcomes, g.terminated, g.truncated) == (w.outcomes, w.terminated, w.truncated)
            _same(core[k].obs.copy(), python[k].obs.copy(), k)
            _same(core[k].masks.copy(), python[k].masks.copy(), k)
            assert core[k].hitsplats(0) == python[k].hitsplats(0) and core[k].tick == python[k].tick
            assert (core[k].build, core[k].fight_mode) == (python[k].build, python[k].fight_mode)
            if w.terminated or w.truncated:
                assert core[k].done and python[k].done
                assert core[k].rng.bit_generator.state == python[k].rng.bit_generator.state
                start(k)


def test_a_running_fight_left_out_of_a_batch_step_is_an_error() -> None:
    """The core steps every running fight of a batch: one without staged actions would silently repeat its last
    ones, so `step_staged` refuses instead and names it."""
    a, b = core_engine.make_engines("core", 2)
    a.reset(seed=1)
    b.reset(seed=2)
    a.stage([[0] * 12, None])
    with pytest.raises(RuntimeError, match=r"running fights \[1\]"):
        a.fights.step_staged()
    with pytest.raises(ValueError, match="already has its engine"):
        a.fights.engine(0)


@pytest.mark.parametrize("opponent", ["agent", "novice"])
def test_rllib_envs_on_one_batch_equal_envs_stepped_alone(opponent: str) -> None:
    """What the lockstep sampler does on the core (`share_core_batch`, then `step_envs` every tick) hands RLlib
    exactly what stepping Python-engine envs one by one does, episodes restarting at different ticks."""
    from envs.rllib_env import share_core_batch, step_envs

    config = {"params": {"randomize_gear": True, "randomize_fight_type": True}, "opponent": opponent}
    batched = [NHMultiAgentEnv({**config, "engine": "core"}) for _ in range(3)]
    alone = [NHMultiAgentEnv({**config, "engine": "python"}) for _ in range(3)]
    assert share_core_batch(batched) and not share_core_batch(alone)
    assert len({id(env.engine.fights) for env in batched}) == 1
    for env in (*batched, *alone):
        env.set_training_progress(7.0)
    samplers = [LegalSampler(70 + k) for k in range(3)]
    episodes = [0, 0, 0]
    last: list[Any] = [None] * 3
    for k in range(3):
        last[k] = alone[k].reset(seed=100 * k, options={"build": BUILDS[k]})
        _same(list(batched[k].reset(seed=100 * k, options={"build": BUILDS[k]})), list(last[k]), k)
    for _ in range(600):
        actions = [{a: samplers[k].sample(o["action_mask"]) for a, o in last[k][0].items()} for k in range(3)]
        got = step_envs(batched, actions)
        want = [env.step(a) for env, a in zip(alone, actions, strict=True)]
        for k in range(3):
            _same(list(got[k]), list(want[k]), (k, episodes[k]))
            last[k] = want[k]
            if want[k][2]["__all__"] or want[k][3]["__all__"]:
                episodes[k] += 1
                seed, options = 100 * k + episodes[k], {"build": BUILDS[(k + episodes[k]) % len(BUILDS)]}
                last[k] = alone[k].reset(seed=seed, options=options)
                _same(list(batched[k].reset(seed=seed, options=options)), list(last[k]), (k, "reset"))
    assert sum(episodes) >= 2, "episodes must end and restart while the others run"
