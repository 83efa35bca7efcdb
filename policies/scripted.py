"""The ladder's scripted opponents (`envs/opponents`) as non-trainable RLlib policies (old API stack).

A multi-agent episode can then pit a learner against any rung of the ladder by mapping the opponent's
agent id to, say, ``"scripted_tribrid"``. The in-simulator baseline of spec §18 is not here: it plays
from the full game state inside the simulator and is chosen with the environment's ``opponent`` option.

Each policy acts from the same 176-entry observation and 45-entry mask a learner gets, one row at a
time, through `apply_dependencies_and_force`, so it never sends an illegal action.

How to use::

    from policies.scripted import scripted_policy_spec
    policies = {"main": PolicySpec(), **{f"scripted_{n}": scripted_policy_spec(n) for n in LADDER}}

The prescient rung (`envs.opponents.PRESCIENT`) refuses to act here: it must see the other agent's action of
the tick, and RLlib computes each policy's actions apart; the environment hosts it instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import numpy as np
from ray.rllib.policy.policy import PolicySpec

from envs.opponents import LADDER, act_rows, make_opponent
from policies.fixed_policy import FixedPolicy

SCRIPTED_PREFIX = "scripted_"
"""Policy ids of scripted opponents are this prefix plus the ladder name, e.g. ``scripted_tribrid``
(RLlib forbids ":" in policy ids)."""


def scripted_policy_id(name: str) -> str:
    return SCRIPTED_PREFIX + name


def scripted_policy_spec(name: str, seed: int | None = None) -> PolicySpec:
    """A `PolicySpec` for the ladder opponent `name` (spaces are inferred from the environment)."""
    if name not in LADDER:
        raise ValueError(f"unknown scripted opponent {name!r}; valid choices: {list(LADDER)}")
    return PolicySpec(policy_class=ScriptedRLlibPolicy, config={"scripted_opponent": name, "scripted_seed": seed})


class ScriptedRLlibPolicy(FixedPolicy):
    """A ladder opponent behind RLlib's `Policy` interface; never trained, no weights.

    The hand-written rungs are stateless between ticks apart from the random rung's generator, so one
    instance serves every episode and every row of a batch. Graded levels that react with a delay
    (`NHSkill.prayer_delay_ticks`, novice and apprentice) keep a few ticks of what they saw; one instance
    serving interleaved episodes mixes those histories, so they play faithfully only inside the environment
    (``opponents.scripted_in_env: true``, the default).
    """

    def __init__(self, observation_space: gym.Space, action_space: gym.Space, config: dict[str, Any]) -> None:
        super().__init__(observation_space, action_space, config)
        name = config.get("scripted_opponent")
        if name not in LADDER:
            raise ValueError(f"unknown scripted opponent {name!r}; valid choices: {list(LADDER)}")
        self.name = str(name)
        seed = config.get("scripted_seed")
        worker_index = int(config.get("worker_index", 0) or 0)
        self.bot = make_opponent(self.name, None if seed is None else int(seed) + worker_index)

    def act_batch(self, obs: Mapping[str, np.ndarray]) -> np.ndarray:
        if self.bot.needs_opponent_action:
            raise ValueError(
                f"{self.name!r} is prescient: it must see the other agent's action of the tick, and RLlib computes "
                "each policy's actions apart; run it inside the environment instead (opponents.scripted_in_env: true)"
            )
        observations = np.asarray(obs["observations"], dtype=np.float32)
        return act_rows([self.bot] * len(observations), observations, obs["action_mask"])

    def get_state(self) -> dict[str, Any]:
        state = super().get_state()
        state["scripted_opponent"] = self.name
        return state
