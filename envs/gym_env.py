"""Single-agent gymnasium environment: one learner (player 0) against a scripted opponent.

How to run::

    import gymnasium as gym, envs.gym_env  # importing the adapter registers the id
    env = gym.make("osrs-rllib/NH-v0")
    obs, info = env.reset(seed=1, options={"opponent": "baseline", "build": "PURE"})

Description
    An NH fight of spec `nh-mechanics.md`: one step is one 0.6 s game tick.

Action space
    `MultiDiscrete([4, 3, 3, 4, 5, 2, 2, 2, 2, 5, 7, 6])`, the 12 heads of spec §14.1. The env does
    not enforce masks (spec §5): an illegal choice simply fails where the game would not allow it.

Observation space
    `Dict(observations=Box(176·frames), action_mask=MultiBinary(45))` and, with
    `include_opponent_observation`, `critic=Box(269·frames)` (spec §15.3). Values are raw.

Rewards
    Spec §17.2 with configurable weights (`reward_weights`); defaults are spec §17.3.

Starting state
    Spec §16.1–16.2; `reset(seed, options)` picks build, fight mode, gear randomisation and opponent.

Episode end
    1. Termination: a player dies, or both (tie), or no food left without death match (§16.3).
    2. Truncation: `max_episode_ticks` (default 2000, §16.4).

Arguments
    `params` (FightParams or mapping of reset options used as defaults), `reward_weights`,
    `frame_stack` (int or offsets, §15.3), `opponent` (default opponent: "baseline" or a ladder name).
    `engine`: "auto" (default: the compiled core where it is built, else Python), "core" (an error when not built)
    or "python".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from envs.nh.contract import CRITIC_SIZE, HEAD_SIZES, NUM_LOGITS, OBS_SIZE, FrameStack, check_action
from envs.nh.core_engine import make_engine, use_rng
from envs.nh.params import OPPONENT_AGENT, OPPONENT_BASELINE, FightParams, ParamError
from envs.nh.rewards import RewardWeights
from envs.opponents import make_opponent
from envs.options import SCRIPTED_OPPONENTS, as_engine, as_params, as_weights


def split_opponent_option(options: Mapping[str, Any] | None, default: str) -> tuple[dict[str, Any], str]:
    """Separate the env-level `opponent` choice from the simulator's reset options."""
    opts = dict(options or {})
    name = opts.pop("opponent", default)
    if name not in SCRIPTED_OPPONENTS:
        raise ParamError(f"unknown opponent {name!r}; valid choices: {list(SCRIPTED_OPPONENTS)}")
    return opts, name


class NHGymEnv(gym.Env[dict[str, np.ndarray], np.ndarray]):
    """See the module docstring: the gymnasium contract of the NH fight."""

    metadata = {"render_modes": []}  # noqa: RUF012 - gymnasium's convention

    def __init__(
        self,
        params: FightParams | Mapping[str, Any] | None = None,
        reward_weights: RewardWeights | Mapping[str, Any] | None = None,
        frame_stack: int | list[int] = 1,
        opponent: str = OPPONENT_BASELINE,
        engine: str | None = None,
    ) -> None:
        self._base_params = as_params(params)
        _, self._default_opponent = split_opponent_option({"opponent": opponent}, OPPONENT_BASELINE)
        self.engine = make_engine(as_engine(engine), self._base_params, as_weights(reward_weights))
        self._stack = FrameStack(frame_stack, OBS_SIZE)
        self._critic_stack = FrameStack(frame_stack, CRITIC_SIZE)
        self.action_space = spaces.MultiDiscrete(np.array(HEAD_SIZES, dtype=np.int64))
        obs_spaces: dict[str, spaces.Space[Any]] = {
            "observations": spaces.Box(-np.inf, np.inf, (self._stack.stacked_size,), np.float32),
            "action_mask": spaces.MultiBinary(NUM_LOGITS),
        }
        if self._base_params.include_opponent_observation:
            obs_spaces["critic"] = spaces.Box(-np.inf, np.inf, (self._critic_stack.stacked_size,), np.float32)
        self.observation_space = spaces.Dict(obs_spaces)
        self._opponent_policy = None
        self._opponent_name = self._default_opponent
        self._critic_buf = np.zeros(CRITIC_SIZE, dtype=np.float32)
        self._needs_reset = True

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0):
            raise ParamError(f"seed must be a non-negative integer or None, got {seed!r}")
        super().reset(seed=seed)
        sim_opts, name = split_opponent_option(options, self._default_opponent)
        params = FightParams.from_options(sim_opts, self._base_params)
        opponent = OPPONENT_BASELINE if name == OPPONENT_BASELINE else OPPONENT_AGENT
        params = FightParams.from_options({"opponent": opponent}, params)
        if params.include_opponent_observation != self._base_params.include_opponent_observation:
            raise ParamError("include_opponent_observation changes the observation space; set it at construction")
        use_rng(self.engine, self.np_random)
        self.engine.reset(None, params)
        self._opponent_name = name
        if name != OPPONENT_BASELINE:
            self._opponent_policy = make_opponent(name, int(self.np_random.integers(0, 2**31 - 1)))
        else:
            self._opponent_policy = None
        self._stack.reset()
        self._critic_stack.reset()
        self._needs_reset = False
        return self._obs(), self.engine.info(0)

    def _obs(self) -> dict[str, np.ndarray]:
        e = self.engine
        out = {"observations": self._stack.push(e.obs[0]), "action_mask": e.masks[0].astype(np.int8)}
        if "critic" in self.observation_space.spaces:
            out["critic"] = self._critic_stack.push(e.critic_obs(0, self._critic_buf))
        return out

    def step(self, action: np.ndarray) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        if self._needs_reset:
            raise RuntimeError("Call reset before using step method (the fight is over or never started).")
        act = check_action(action)
        opp_action = None
        if self._opponent_policy is not None:
            # a prescient rung (envs.opponents.nh_ladder) is shown the learner's action of the tick
            seen = {"opponent_action": act} if self._opponent_policy.needs_opponent_action else {}
            opp_action = self._opponent_policy.act(self.engine.obs[1], self.engine.masks[1], **seen)
        res = self.engine.step([act, opp_action])
        done = res.terminated or res.truncated
        self._needs_reset = done
        info = self.engine.info(0, res)
        info["opponent"] = self._opponent_name
        return self._obs(), float(res.rewards[0]), res.terminated, res.truncated, info


ENV_ID = "osrs-rllib/NH-v0"


def register() -> None:
    """Register the gymnasium id (safe to call repeatedly)."""
    if ENV_ID not in gym.registry:
        gym.register(id=ENV_ID, entry_point="envs.gym_env:NHGymEnv")


register()
