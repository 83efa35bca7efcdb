"""What the per-player rules read from a fight in progress, as small protocols.

Why: the rules that act for one player (`actions`, the scripted baseline of spec §18) and those that read one
player's view of the fight (`masks` §14.3, `observation` §15.2, `rewards` §17.1) need a handful of the fight's
fields, not the whole `FightSim`. Typing them with `FightSim` made each of them import `sim` (under
``TYPE_CHECKING``) while `sim` imports them to run the tick: an import cycle in all but name.
`FightSim` satisfies both protocols structurally; `tests/test_import_cycles.py` checks that it does and that
the cycles stay gone.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np

from envs.nh.account import FightMode
from envs.nh.params import FightParams
from envs.nh.prayers import Prayer
from envs.nh.state import PlayerState
from envs.nh.stats import EpisodeStats, TickEvents


class FightView(Protocol):
    """A fight as the encoders read it: its rules, both players, this tick's events and the episode's counters.

    Lists are indexed by `PlayerState.index` (0 or 1).
    """

    params: FightParams
    """The fight's reset options (spec §13.1)."""
    fight_mode: FightMode
    """NORMAL, LMS or PVP_ARENA (spec §13.2)."""
    players: list[PlayerState]
    stats: list[EpisodeStats]
    """Per-episode counters the observation reads (§15.2)."""
    events: list[TickEvents]
    """What happened to each player this tick (§15.2, §17.1)."""

    def opponent(self, p: PlayerState) -> PlayerState:
        """The other player."""
        ...


class FightControl(FightView, Protocol):
    """A fight as the rules that act for a player use it: the view plus the fight's one random generator
    (spec §16.6) and prayer switching, which starts the drain task (§7.2, §7.3)."""

    rng: np.random.Generator

    def activate_prayer(self, p: PlayerState, prayer: Prayer) -> None: ...

    def activate_prayers(self, p: PlayerState, prayers: Sequence[Prayer]) -> None: ...
