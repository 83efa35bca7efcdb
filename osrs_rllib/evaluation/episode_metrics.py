"""What a fight looked like from the learner's seat, summed over one episode, for TensorBoard.

The environment calls `record` once per tick with the engine's result and `summary` once at the end; the
figures come from the §17.1 reward signals of player 0 (the learner) and the simulator state, so they
mean the same thing the reward does. Counts are plain ints and sums plain floats: the summary goes through
RLlib's episode info into its per-iteration means.

Figures (all from the learner's point of view):

* ``won`` / ``lost`` / ``tied`` (0 or 1; a truncated fight is a tie and sets ``truncated``) and ``fight_ticks``;
* ``damage_dealt`` / ``damage_received`` in hitpoints (hitsplats on the opponent / on the learner);
* ``hits_off_prayer`` / ``hits_on_prayer``: the learner's hits the opponent was not / was protecting
  against; ``off_prayer_rate`` their ratio;
* ``hits_received_protected`` and ``correct_prayer_rate``: hits received while praying the right protection;
* ``food_wasted_hp`` / ``brew_wasted_hp``: healing lost to overheal (§17.1 wasted food / brew);
* ``target_frozen_ticks`` / ``player_frozen_ticks``: ticks the opponent / learner spent frozen;
* ``reward_<component>``: the episode sum of each weighted reward term (see `envs.nh.rewards`), when the
  engine reports them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

import numpy as np

from envs.nh.engine import EngineStep
from envs.nh.rewards import REWARD_COMPONENTS
from envs.nh.sim import Outcome

LEARNER = 0


class HasBaseHp(Protocol):
    """What the metrics read from an engine (either engine: `NHEngine` or the compiled core's `CoreEngine`)."""

    def base_hp(self, i: int) -> int: ...


class EpisodeMetrics:
    """Running sums for one episode of the learner (player 0)."""

    def __init__(self) -> None:
        self.kind = ""
        self.base_hp = (0, 0)
        self._reset_sums()

    def _reset_sums(self) -> None:
        self.ticks = 0
        self.dealt_scale = 0.0
        self.received_scale = 0.0
        self.hits_off = 0
        self.hits_on = 0
        self.received_hits = 0
        self.received_protected = 0
        self.food_wasted_scale = 0.0
        self.brew_wasted_scale = 0.0
        self.target_frozen_ticks = 0
        self.player_frozen_ticks = 0
        self.outcome: Outcome | None = None
        self.components: dict[str, float] = {}
        self._part_sums: np.ndarray | None = None
        """`record_tick`'s running sums of the components (in `REWARD_COMPONENTS` order), folded into `components`
        by the next `record` or `summary`: the same float64 additions in the same order."""

    def reset(self, engine: HasBaseHp, kind: str) -> None:
        """Start an episode; the signals count damage and healing as fractions of base hitpoints (§17.1),
        so the players' base hitpoints are read once here to report hitpoints."""
        self.kind = kind
        self._reset_sums()
        self.base_hp = (engine.base_hp(LEARNER), engine.base_hp(1 - LEARNER))

    def record(self, step: EngineStep) -> None:
        self._fold_parts()
        self.ticks += 1
        outcome = step.outcomes[LEARNER]
        if outcome is not None:
            self.outcome = outcome
        s: Mapping[str, Any] | None = step.signals[LEARNER]
        if s is None:
            return
        self._record_signals(s)
        parts = getattr(step, "reward_components", None)
        if parts:
            comps = parts[LEARNER] or {}
            for key, value in comps.items():
                self.components[key] = self.components.get(key, 0.0) + float(value)

    def record_tick(self, signals: Mapping[str, Any] | None, parts: np.ndarray | None) -> None:
        """`record` of a tick that did not end the fight, from the learner's signals and reward components
        (`REWARD_COMPONENTS` order) as the compiled core's arrays hold them: the array path of
        `envs.rllib_env.CoreEnvBatch`, which builds no `EngineStep` for such ticks."""
        self.ticks += 1
        if signals is None:
            return
        self._record_signals(signals)
        if parts is not None:
            if self._part_sums is None:
                self._part_sums = np.array([self.components.get(k, 0.0) for k in REWARD_COMPONENTS], dtype=np.float64)
                self.components = {}
            self._part_sums += parts

    def _fold_parts(self) -> None:
        if self._part_sums is not None:
            self.components = dict(zip(REWARD_COMPONENTS, self._part_sums.tolist(), strict=True))
            self._part_sums = None

    def _record_signals(self, s: Mapping[str, Any]) -> None:
        self.dealt_scale += float(s.get("damageDealt", 0.0))
        self.received_scale += float(s.get("damageReceived", 0.0))
        off = s.get("hitOffPrayer")
        if off is not None:
            if off:
                self.hits_off += 1
            else:
                self.hits_on += 1
        protected = s.get("protectedPrayer")
        if protected is not None:
            self.received_hits += 1
            self.received_protected += int(bool(protected))
        self.food_wasted_scale += float(s.get("wastedFoodScale", 0.0))
        self.brew_wasted_scale += float(s.get("wastedBrewScale", 0.0))
        self.target_frozen_ticks += int(s.get("targetFrozenTicks", 0) > 0)
        self.player_frozen_ticks += int(s.get("playerFrozenTicks", 0) > 0)

    def summary(self) -> dict[str, float]:
        self._fold_parts()
        me_hp, them_hp = self.base_hp
        out: dict[str, float] = {
            "won": float(self.outcome is Outcome.WON),
            "lost": float(self.outcome is Outcome.LOST),
            # A truncated fight (§16.4) has no winner: it counts as a tie, as in `osrs-rllib fight`.
            "tied": float(self.outcome is Outcome.TIED or self.outcome is None),
            "truncated": float(self.outcome is None),
            "fight_ticks": float(self.ticks),
            "damage_dealt": self.dealt_scale * them_hp,
            "damage_received": self.received_scale * me_hp,
            "hits_off_prayer": float(self.hits_off),
            "hits_on_prayer": float(self.hits_on),
            "hits_received_protected": float(self.received_protected),
            "food_wasted_hp": self.food_wasted_scale * me_hp,
            "brew_wasted_hp": self.brew_wasted_scale * me_hp,
            "target_frozen_ticks": float(self.target_frozen_ticks),
            "player_frozen_ticks": float(self.player_frozen_ticks),
        }
        hits = self.hits_off + self.hits_on
        if hits:
            out["off_prayer_rate"] = self.hits_off / hits
        if self.received_hits:
            out["correct_prayer_rate"] = self.received_protected / self.received_hits
        for key, value in self.components.items():
            out[f"reward_{key}"] = value
        return out
