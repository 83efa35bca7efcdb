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

from envs.nh.contract import CRITIC_SIZE, HEAD_SIZES, NUM_LOGITS, OBS_SIZE, FrameStack, check_action
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
            # a prescient rung (envs.opponents.nh_ladder) is shown the learner's action of the tick
            seen = {"opponent_action": actions[0]} if self._scripted.needs_opponent_action else {}
            actions[1] = self._scripted.act(self.engine.obs[1], self.engine.masks[1], **seen)
        return actions

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


def _check_opponent(name: str) -> None:
    if name not in ENV_OPPONENTS:
        raise ParamError(f"unknown opponent {name!r}; valid choices: {list(ENV_OPPONENTS)}")
