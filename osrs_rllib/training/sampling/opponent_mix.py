"""The opponent mix of training: each episode's opponent kind drawn by its share, and what the draw puts in
player 1's seat.

There is exactly one place (`OpponentMix`) that decides, which the league extends with its own kinds; the
training environment (`osrs_rllib/training/sampling/env.py`) draws at reset and the mapping function reads the draw
back. Seats: ``player_0`` is always the learner (``main``). ``player_1`` is the learner again in self-play, a
``scripted_<rung>`` policy (see `policies/scripted.py`) against a ladder rung, and absent against the
baseline.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from envs.opponents import LADDER, needs_opponent_action
from osrs_rllib.config import BASELINE, LEAGUE_KINDS, SELF_PLAY
from policies.scripted import SCRIPTED_PREFIX, scripted_policy_id

__all__ = ["LEAGUE_KINDS", "LEARNER_POLICY", "OpponentDraw", "OpponentMix", "draw_for_kind"]

LEARNER_POLICY = "main"
"""Policy id of the policy being trained."""


@dataclass(frozen=True)
class OpponentDraw:
    """The players of one episode: the learner in seat 0, and the opponent's kind, league id and the policy
    in seat 1 (None: the in-simulator bot)."""

    kind: str
    policy_id: str | None
    learner: str = LEARNER_POLICY
    opponent: str = ""
    generation: int = 0

    @property
    def env_opponent(self) -> str:
        """The environment's own ``opponent`` option: ``agent`` when a policy sits in seat 1, otherwise the
        opponent the environment plays itself (the baseline, or a ladder rung run in-process)."""
        if self.policy_id is not None:
            return "agent"
        if self.opponent.startswith(SCRIPTED_PREFIX):
            return self.opponent[len(SCRIPTED_PREFIX) :]
        return BASELINE


def draw_for_kind(kind: str, learner: str = LEARNER_POLICY, scripted_in_env: bool = True) -> OpponentDraw:
    """The draw of a fixed mix kind. Ladder rungs run inside the environment by default (one agent per env
    step instead of two, the cheaper path); with `scripted_in_env` false they act as RLlib policies."""
    if kind == BASELINE:
        return OpponentDraw(kind, None, opponent=BASELINE)
    if kind == SELF_PLAY:
        return OpponentDraw(kind, learner, opponent=learner)
    if kind in LADDER:
        if not scripted_in_env and needs_opponent_action(kind):
            raise ValueError(
                f"opponent {kind!r} is prescient: it must see the learner's action of the tick, which only the "
                "environment can show it; set opponents.scripted_in_env: true"
            )
        pid = scripted_policy_id(kind)
        return OpponentDraw(kind, None if scripted_in_env else pid, opponent=pid)
    raise ValueError(f"unknown opponent kind {kind!r}; valid choices: {[BASELINE, SELF_PLAY, *LADDER]}")


class OpponentMix:
    """Categorical draw over opponent kinds with fixed shares (the config's ``opponents.mix``)."""

    def __init__(
        self, shares: Mapping[str, float], learner: str = LEARNER_POLICY, scripted_in_env: bool = True
    ) -> None:
        shares = {k: float(v) for k, v in shares.items() if float(v) > 0}
        if not shares:
            raise ValueError("the opponent mix needs at least one kind with a positive share")
        total = sum(shares.values())
        self.kinds = tuple(shares)
        self.probabilities = np.array([shares[k] / total for k in self.kinds])
        self.draws = {k: draw_for_kind(k, learner, scripted_in_env) for k in self.kinds}

    def sample(self, rng: np.random.Generator) -> OpponentDraw:
        return self.draws[self.kinds[int(rng.choice(len(self.kinds), p=self.probabilities))]]

    def policy_ids(self) -> set[str]:
        """Every policy id a draw can put in player 1's seat."""
        return {d.policy_id for d in self.draws.values() if d.policy_id is not None}
