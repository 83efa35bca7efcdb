"""A tiny two-agent environment whose reward needs the autoregressive heads (SB3's IdentityEnv, for NH).

Each tick each agent sees a one-hot "task" and must answer with the right main action AND the right
sub-action of it: the reward is 1 only for the pair (e.g. MELEE + SPECIAL, not MELEE + NORMAL), so a policy
with independent heads cannot do better than chance on the sub-action while the autoregressive one can
reach the maximum. Random environment masks (never hiding the answer) exercise the masking, and the
dependency rules of §14.2 force the unrelated sub-heads to NONE.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from ray.rllib.env.multi_agent_env import MultiAgentEnv

from envs.nh.contract import (
    HEAD_SIZES,
    NUM_LOGITS,
    AttackHead,
    FarcastHead,
    Head,
    MageType,
    MeleeType,
    MovementHead,
    RangedType,
    logit_index,
)

TASKS: tuple[tuple[tuple[Head, int], ...], ...] = (
    ((Head.ATTACK, AttackHead.MAGIC), (Head.MAGE_ATTACK_TYPE, MageType.BLOOD)),
    ((Head.ATTACK, AttackHead.RANGED), (Head.RANGED_ATTACK_TYPE, RangedType.SPECIAL)),
    ((Head.ATTACK, AttackHead.MELEE), (Head.MELEE_ATTACK_TYPE, MeleeType.NORMAL)),
    ((Head.ATTACK, AttackHead.MELEE), (Head.MELEE_ATTACK_TYPE, MeleeType.SPECIAL)),
    ((Head.MOVEMENT, MovementHead.FARCAST), (Head.FARCAST_DISTANCE, FarcastHead.DISTANCE_5)),
)
"""The right (head, value) pairs of each task: a main action and a sub-action that depends on it."""
OBS_SIZE = len(TASKS) + 3
EPISODE_TICKS = 8
AGENTS = ("a0", "a1")


class DependentHeadsEnv(MultiAgentEnv):
    """Reward 1 per tick for answering the task's pair of heads; the maximum return is `EPISODE_TICKS`."""

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        super().__init__()
        obs_space = spaces.Dict(
            {
                "observations": spaces.Box(-1.0, 1.0, (OBS_SIZE,), np.float32),
                "action_mask": spaces.Box(0.0, 1.0, (NUM_LOGITS,), np.float32),
                "critic": spaces.Box(-1.0, 1.0, (2 * OBS_SIZE,), np.float32),
            }
        )
        act_space = spaces.MultiDiscrete(np.array(HEAD_SIZES, dtype=np.int64))
        self.possible_agents = list(AGENTS)
        self.agents = list(AGENTS)
        self.observation_spaces = {a: obs_space for a in AGENTS}
        self.action_spaces = {a: act_space for a in AGENTS}
        self._rng = np.random.default_rng()
        self._tasks = np.zeros(len(AGENTS), dtype=np.int64)
        self._obs_raw = np.zeros((len(AGENTS), OBS_SIZE), dtype=np.float32)
        self._t = 0

    def _draw(self) -> dict[str, dict[str, np.ndarray]]:
        self._tasks = self._rng.integers(0, len(TASKS), size=len(AGENTS))
        self._obs_raw[:] = 0.0
        self._obs_raw[np.arange(len(AGENTS)), self._tasks] = 1.0
        self._obs_raw[:, len(TASKS) :] = self._rng.uniform(-1, 1, (len(AGENTS), 3))  # distractors
        out = {}
        for i, agent in enumerate(AGENTS):
            mask = (self._rng.random(NUM_LOGITS) < 0.7).astype(np.float32)
            for head, value in TASKS[int(self._tasks[i])]:
                mask[logit_index(head, value)] = 1.0
            critic = np.concatenate([self._obs_raw[i], self._obs_raw[1 - i]])
            out[agent] = {"observations": self._obs_raw[i].copy(), "action_mask": mask, "critic": critic}
        return out

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[dict, dict]:
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self._t = 0
        return self._draw(), {a: {} for a in AGENTS}

    def step(self, action_dict: dict[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        rewards = {}
        for i, agent in enumerate(AGENTS):
            action = np.asarray(action_dict[agent])
            rewards[agent] = float(all(int(action[h]) == int(v) for h, v in TASKS[int(self._tasks[i])]))
        self._t += 1
        done = self._t >= EPISODE_TICKS
        obs = self._draw()
        terminateds = {a: done for a in AGENTS}
        terminateds["__all__"] = done
        truncateds = {a: False for a in AGENTS}
        truncateds["__all__"] = False
        return obs, rewards, terminateds, truncateds, {a: {} for a in AGENTS}


PPO_TRAINING: dict[str, Any] = {
    "train_batch_size": 512,
    "minibatch_size": 128,
    "num_epochs": 8,
    "lr": 5e-3,
    "gamma": 0.5,
    "lambda_": 0.9,
    "entropy_coeff": 0.0,
    "kl_coeff": 0.0,
    "clip_param": 0.2,
    "vf_loss_coeff": 0.5,
    "grad_clip": 1.0,
}
"""PPO settings that solve this task in a handful of iterations (short episodes, a high learning rate)."""
