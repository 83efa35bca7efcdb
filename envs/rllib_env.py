"""RLlib `MultiAgentEnv` adapter of the NH fight: the only module of `envs/` that imports Ray.

Agents are ``"player_0"`` and ``"player_1"``. Each episode's opponent is chosen at reset
(``options={"opponent": ...}`` or the env config): ``"agent"`` makes both players learners (self-play,
both act every tick), ``"baseline"`` or a ladder name leaves only ``player_0`` acting against a
scripted opponent. Each agent's observation is a Dict carrying its action mask (and, with
``include_opponent_observation``, the 269-entry critic input of spec §15.3).

How to run::

    from envs.rllib_env import NHMultiAgentEnv
    env = NHMultiAgentEnv({"opponent": "agent", "params": {"training": True}})
    obs, infos = env.reset(seed=0)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from ray.rllib.env.multi_agent_env import MultiAgentEnv

from envs.nh.contract import (
    CRITIC_SIZE,
    HEAD_SIZES,
    NUM_HEADS,
    NUM_LOGITS,
    OBS_SIZE,
    PARTIAL_INDICES,
    FrameStack,
    check_action,
)
from envs.nh.core_engine import CoreEngine, CoreFights, make_engine, step_engines, use_rng
from envs.nh.engine import EngineStep
from envs.nh.params import OPPONENT_AGENT, OPPONENT_BASELINE, FightParams, ParamError
from envs.opponents import make_opponent
from envs.options import SCRIPTED_OPPONENTS, as_engine, as_params, as_weights

AGENT_IDS = ("player_0", "player_1")
ENV_CONFIG_KEYS = frozenset({"params", "reward_weights", "frame_stack", "opponent", "engine"})
"""The keys `NHMultiAgentEnv` reads from its config; any other is a mistake and an error."""
ENV_OPPONENTS = (OPPONENT_AGENT, *SCRIPTED_OPPONENTS)


class NHMultiAgentEnv(MultiAgentEnv):
    """Two-player NH fight for RLlib's old API stack. `config` keys:

    * ``params``: reset options used as defaults (FightParams fields, spec §13.1);
    * ``reward_weights``: spec §17 weights (constants or ``[a, b, n]`` schedules);
    * ``frame_stack``: int or list of offsets (spec §15.3);
    * ``opponent``: default opponent, ``"agent"`` (self-play), ``"baseline"`` or a ladder name.
    * ``engine``: ``"auto"`` (default: the compiled core where it is built, else Python), ``"core"`` (an error
      when not built) or ``"python"``.
    """

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        super().__init__()
        cfg = dict(config or {})
        unknown = sorted(set(cfg) - ENV_CONFIG_KEYS)
        if unknown:
            raise ParamError(f"unknown NHMultiAgentEnv config key(s) {unknown}; valid: {sorted(ENV_CONFIG_KEYS)}")
        self._base_params = as_params(cfg.get("params"))
        self._default_opponent = str(cfg.get("opponent", OPPONENT_AGENT))
        _check_opponent(self._default_opponent)
        weights = as_weights(cfg.get("reward_weights"))
        self.engine = make_engine(as_engine(cfg.get("engine")), self._base_params, weights)
        frames = cfg.get("frame_stack", 1)
        self._stacks = [FrameStack(frames, OBS_SIZE) for _ in AGENT_IDS]
        self._critic_stacks = [FrameStack(frames, CRITIC_SIZE) for _ in AGENT_IDS]
        self._with_critic = self._base_params.include_opponent_observation
        obs_spaces: dict[str, spaces.Space[Any]] = {
            "observations": spaces.Box(-np.inf, np.inf, (self._stacks[0].stacked_size,), np.float32),
            "action_mask": spaces.Box(0.0, 1.0, (NUM_LOGITS,), np.float32),
        }
        if self._with_critic:
            obs_spaces["critic"] = spaces.Box(-np.inf, np.inf, (self._critic_stacks[0].stacked_size,), np.float32)
        obs_space = spaces.Dict(obs_spaces)
        act_space = spaces.MultiDiscrete(np.array(HEAD_SIZES, dtype=np.int64))
        self.possible_agents = list(AGENT_IDS)
        self.agents = list(AGENT_IDS)
        self.observation_spaces = {a: obs_space for a in AGENT_IDS}
        self.action_spaces = {a: act_space for a in AGENT_IDS}
        self.observation_space = obs_space
        self.action_space = act_space
        self._rng = np.random.default_rng()
        self._scripted = None
        self._opponent = self._default_opponent
        self._done = True
        self._critic_buf = np.zeros(CRITIC_SIZE, dtype=np.float32)

    # ------------------------------------------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, dict[str, np.ndarray]], dict[str, Any]]:
        if seed is not None:
            if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
                raise ParamError(f"seed must be a non-negative integer or None, got {seed!r}")
            self._rng = np.random.default_rng(seed)
        opts = dict(options or {})
        opponent = str(opts.pop("opponent", self._default_opponent))
        _check_opponent(opponent)
        sim_opponent = OPPONENT_AGENT if opponent != OPPONENT_BASELINE else OPPONENT_BASELINE
        params = FightParams.from_options({**opts, "opponent": sim_opponent}, self._base_params)
        use_rng(self.engine, self._rng)
        self.engine.reset(None, params)
        self._opponent = opponent
        self._scripted = (
            make_opponent(opponent, int(self._rng.integers(0, 2**31 - 1)))
            if opponent not in (OPPONENT_AGENT, OPPONENT_BASELINE)
            else None
        )
        self.agents = list(AGENT_IDS) if opponent == OPPONENT_AGENT else [AGENT_IDS[0]]
        for s in (*self._stacks, *self._critic_stacks):
            s.reset()
        self._done = False
        obs = {a: self._obs(i) for i, a in enumerate(AGENT_IDS) if a in self.agents}
        infos = {a: {**self.engine.info(i), "opponent": opponent} for i, a in enumerate(AGENT_IDS) if a in self.agents}
        return obs, infos

    def _obs(self, i: int) -> dict[str, np.ndarray]:
        e = self.engine
        out = {
            "observations": self._stacks[i].push(e.obs[i]),
            "action_mask": e.masks[i].astype(np.float32),
        }
        if self._with_critic:
            out["critic"] = self._critic_stacks[i].push(e.critic_obs(i, self._critic_buf))
        return out

    def step(self, action_dict: Mapping[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        return self.end_step(self.engine.step(self.begin_step(action_dict)))

    def begin_step(self, action_dict: Mapping[str, Any]) -> list[Any]:
        """The first half of `step`: the tick's checked actions of both seats (the scripted opponent's included),
        ready for the engine. `step_envs` steps many environments' engines together between the halves."""
        if self._done:
            raise RuntimeError("the fight is over: call reset() before stepping again")
        actions: list[Any] = [None, None]
        for i, a in enumerate(AGENT_IDS):
            if a in self.agents:
                if a not in action_dict:
                    raise ValueError(f"missing action for {a}; every live agent acts every tick")
                actions[i] = check_action(action_dict[a])
        if self._scripted is not None:
            actions[1] = self.scripted_action(actions[0])
        return actions

    def scripted_action(self, learner_action: Any) -> Any:
        """The scripted opponent's action of the tick (seat 1), given the learner's checked action."""
        assert self._scripted is not None
        # a prescient rung (envs.opponents.nh_ladder) is shown the learner's action of the tick
        seen = {"opponent_action": learner_action} if self._scripted.needs_opponent_action else {}
        return self._scripted.act(self.engine.obs[1], self.engine.masks[1], **seen)

    def end_step(self, res: EngineStep) -> tuple[dict, dict, dict, dict, dict]:
        """The second half of `step`: RLlib's five dicts from the engine's result of the tick."""
        self.on_engine_step(res)
        self._done = res.terminated or res.truncated
        obs, rew, infos = {}, {}, {}
        for i, a in enumerate(AGENT_IDS):
            if a not in self.agents:
                continue
            obs[a] = self._obs(i)
            rew[a] = float(res.rewards[i])
            infos[a] = self.engine.info(i, res)
        terminateds = {a: res.terminated for a in self.agents}
        truncateds = {a: res.truncated for a in self.agents}
        terminateds["__all__"] = res.terminated
        truncateds["__all__"] = res.truncated
        return obs, rew, terminateds, truncateds, infos

    def on_engine_step(self, step: EngineStep) -> None:
        """Hook for subclasses that record per-tick results (e.g. episode metrics); does nothing here."""

    def on_core_tick(self) -> None:
        """`CoreEnvBatch`'s `on_engine_step` for a tick that did not end the fight (no `EngineStep` is built: read
        what the tick did from `self.engine`); does nothing here. The fight's last tick goes through `end_step`."""

    def array_step_ok(self) -> bool:
        """Whether `CoreEnvBatch` steps this environment exactly as `step` does: on the compiled core, one frame
        per observation (so no frame stack needs pushing every tick), and no per-tick work of a subclass that
        `on_core_tick` does not do."""
        cls = type(self)
        return (
            isinstance(self.engine, CoreEngine)
            and all(s.offsets == (0,) for s in (*self._stacks, *self._critic_stacks))
            and cls.end_step is NHMultiAgentEnv.end_step
            and cls.on_engine_step is NHMultiAgentEnv.on_engine_step
        )

    def set_training_progress(self, progress: float) -> None:
        """Training progress (completed rollouts) for scheduled reward weights (spec §17.4)."""
        self.engine.progress = float(progress)


def share_core_batch(envs: Sequence[NHMultiAgentEnv]) -> bool:
    """Put the fights of several environments on one compiled batch, so that `step_envs` steps them all in one
    core call; call it before their first reset. Returns False (and changes nothing) unless every environment
    runs the compiled core with the same reward weights: the batch holds one set of weights and one training
    progress, which `set_training_progress` sets for all of them alike."""
    if not envs or not all(isinstance(e, NHMultiAgentEnv) and isinstance(e.engine, CoreEngine) for e in envs):
        return False
    weights = envs[0].engine.reward_weights
    if any(e.engine.reward_weights != weights for e in envs):
        return False
    fights = CoreFights(len(envs), weights)
    fights.batch.progress = envs[0].engine.progress
    for k, env in enumerate(envs):
        old = env.engine
        assert isinstance(old, CoreEngine)
        env.engine = fights.engine(k, old.params, observe_all=old.observe_all)
        env.engine.record_reward_components = old.record_reward_components
    return True


def step_envs(
    envs: Sequence[NHMultiAgentEnv], action_dicts: Sequence[Mapping[str, Any]]
) -> list[tuple[dict, dict, dict, dict, dict]]:
    """`env.step(actions)` for every environment, with one core call for all of them when their fights share a
    batch (`share_core_batch`); the results are exactly those of stepping each in turn."""
    actions = [env.begin_step(a) for env, a in zip(envs, action_dicts, strict=True)]
    steps = step_engines([env.engine for env in envs], actions)
    return [env.end_step(res) for env, res in zip(envs, steps, strict=True)]


_HEAD_LIMITS = np.asarray(HEAD_SIZES, dtype=np.int64)
_PARTIAL = np.asarray(PARTIAL_INDICES, dtype=np.intp)
EnvResult = tuple[dict, dict, dict, dict, dict]
"""RLlib's five dicts of one environment's step."""


class CoreEnvBatch:
    """The array path of `step_envs`: environments whose fights are one compiled batch (`share_core_batch`), stepped
    with their actions, rewards and done flags as arrays and their observations written as flat rows into one
    array, with no per-seat dict on a tick that does not end a fight. A fight's last tick goes through `end_step`
    (its five dicts, its episode-end work), so that what the environment hands out at the end is what `step`
    hands out. Only for environments whose `array_step_ok` holds: then every result is exactly that of `step_envs`
    (tested against it, tests/osrs_rllib/test_lockstep_arrays.py).
    """

    def __init__(self, envs: Sequence[NHMultiAgentEnv]) -> None:
        engines = [e.engine for e in envs]
        first = engines[0] if engines else None
        in_order = isinstance(first, CoreEngine) and all(
            isinstance(e, CoreEngine) and e.fights is first.fights and e.index == k for k, e in enumerate(engines)
        )
        if not in_order or first.fights.n != len(engines):
            raise ValueError("CoreEnvBatch needs every fight of one batch, in its order (see share_core_batch)")
        if not all(env.array_step_ok() for env in envs):
            raise ValueError("CoreEnvBatch steps environments whose array_step_ok() holds only")
        self.envs = list(envs)
        self.engines: list[CoreEngine] = engines  # type: ignore[assignment]
        self.fights = first.fights
        space = envs[0].observation_space
        self.keys: tuple[str, ...] = tuple(sorted(space.spaces))
        """The flat rows' layout: the Dict's keys sorted, as RLlib's `DictFlatteningPreprocessor` concatenates."""
        self._slices: dict[str, slice] = {}
        start = 0
        for key in self.keys:
            size = int(np.prod(space.spaces[key].shape))
            self._slices[key] = slice(start, start + size)
            start += size
        self.flat_size = start

    def write_obs(self, out: np.ndarray) -> None:
        """Every fight's observations of both seats as flat float32 rows (`out`: (fights, 2, flat_size)), the
        values `NHMultiAgentEnv._obs` gives (one frame). A seat that does not act holds a row nobody reads."""
        f = self.fights
        for key, cut in self._slices.items():
            dst = out[:, :, cut]
            if key == "action_mask":
                dst[...] = f.seen_masks
            elif key == "observations":
                dst[...] = f.seen_obs
            elif key == "critic":
                dst[:, :, :OBS_SIZE] = f.seen_obs
                tail = dst[:, :, OBS_SIZE:]  # each seat's opponent's partial row (spec §15.3), or zeros
                tail[:, 0] = f.seen_obs[:, 1, _PARTIAL]
                tail[:, 1] = f.seen_obs[:, 0, _PARTIAL]
                if not f.critic_sees_opponent.all():
                    tail[~f.critic_sees_opponent] = 0.0
            else:
                raise KeyError(f"no array path for observation key {key!r}")

    def step(self, actions: np.ndarray, acting: np.ndarray) -> tuple[np.ndarray, np.ndarray, dict[int, EnvResult]]:
        """One tick of every fight, in one core call: `actions` (fights, 2, 12) for the seats in `acting` (fights, 2),
        which must be every running fight's live agents. Returns each fight's rewards (fights, 2; float64, valid for
        acting seats), which fights ended, and the five dicts of `step` for each fight that ended (by index)."""
        f, envs = self.fights, self.envs
        acts = np.asarray(actions)
        if acts.shape != (len(envs), 2, NUM_HEADS) or acts.dtype.kind not in "iu":
            raise ValueError(f"actions must be integers of shape ({len(envs)}, 2, {NUM_HEADS}), got {acts.dtype} "
                             f"{acts.shape}")  # fmt: skip
        live = acting.any(axis=1)
        if not np.array_equal(live, f.running):
            raise RuntimeError("every running fight acts every tick, and a fight that is over needs reset() first")
        bad = acting[:, :, None] & ((acts < 0) | (acts >= _HEAD_LIMITS))
        if bad.any():
            k, i, _ = np.argwhere(bad)[0]
            check_action(acts[k, i])  # raises, naming the head and its range
        np.copyto(f.actions, acts, where=acting[:, :, None], casting="unsafe")
        f.has[...] = acting
        checked = acts.dtype == np.int64  # in range (above) and already what `check_action` would hand the rung
        for k, env in enumerate(envs):
            if env._scripted is not None:
                learner = acts[k, 0] if checked else check_action(acts[k, 0])
                f.actions[k, 1] = check_action(env.scripted_action(learner))
                f.has[k, 1] = 1
        for engine in self.engines:
            engine.push_rng()
        stepped = f.running.copy()
        f.staged[...] = stepped
        f.step_staged()
        f.copy_observed(stepped)
        ended = stepped & ((f.results[:, 1] != 0) | (f.results[:, 3] != 0))
        results: dict[int, EnvResult] = {}
        for k in np.flatnonzero(stepped).tolist():
            if ended[k]:
                results[k] = envs[k].end_step(self.engines[k].finish())
            else:
                envs[k].on_core_tick()
        return f.rewards.copy(), ended, results


def _check_opponent(name: str) -> None:
    if name not in ENV_OPPONENTS:
        raise ParamError(f"unknown opponent {name!r}; valid choices: {list(ENV_OPPONENTS)}")
