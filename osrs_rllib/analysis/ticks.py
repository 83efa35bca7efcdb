"""One tick of an analysed fight as numbers: the per-player counters summed into the fight's row, and the
per-tick state row (hit points, gear, prayers, timers).

Why apart from `osrs_rllib/analysis/fights.py`: this is what is *read* from the simulator each tick; the
fights module decides who plays and how the rows are gathered.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from envs.nh.items import POT_BREW, SLOT_WEAPON, CombatStyle
from envs.nh.prayers import OVERHEADS
from envs.nh.state import (
    SK_PRAYER,
    T_ATTACK,
    T_FOOD,
    T_FREEZE,
    T_FREEZE_IMMUNITY,
    T_KARAMBWAN,
    T_POTION,
    T_VENGEANCE_COOLDOWN,
    PlayerState,
    weapon_family,
)
from osrs_rllib.replay import EventsLike, PlayerLike
from osrs_rllib.replay.state import gear_set

STYLES = tuple(s.name.lower() for s in CombatStyle)
"""``melee``, ``ranged``, ``magic``: the style families of spec §6.1, in `CombatStyle` order."""
_OVERHEAD_NAMES = {p: p.name.lower() for p in OVERHEADS}


_COUNTS = (
    "hits",
    *(f"hits_{s}" for s in STYLES),
    "hit_damage",
    *(f"hit_damage_{s}" for s in STYLES),
    "hits_on_prayer",
    "hits_off_prayer",
    "hits_received",
    "hits_received_protected",
    "damage_taken",
    "food_eaten",
    "karambwans_eaten",
    "brew_doses",
    "food_wasted_hp",
    "brew_wasted_hp",
    "specials_used",
    "special_energy_used",
    "frozen_ticks",
)
"""Per player, what one tick adds to the fight's totals (the per-fight row sums these over the ticks)."""


class _TickReader:
    """Per fight: the previous tick's supplies and special energy, to turn the state into per-tick deltas."""

    __slots__ = ("brews", "food", "karambwans", "special")

    def __init__(self, players: Sequence[PlayerLike]) -> None:
        facts = [p.inventory_facts() for p in players]
        self.food = [f.sharks + f.anglerfish for f in facts]
        self.karambwans = [f.karambwans for f in facts]
        self.brews = [f.doses[POT_BREW] for f in facts]
        self.special = [p.special_energy for p in players]

    def counts(self, state: Sequence[PlayerLike], tick_events: Sequence[EventsLike], i: int) -> list[int]:
        """This tick's `_COUNTS` of player i, in order (`state` and `tick_events`: `engine_views.players` and
        `engine_views.events` of the tick)."""
        p = state[i]
        ev, opp_ev = tick_events[i], tick_events[1 - i]
        hits = [0, 0, 0]
        damage = [0, 0, 0]
        on = 0
        for r in ev.hits:
            style = int(r.hit.style)
            hits[style] += 1
            damage[style] += r.hit.total
            on += r.defender_protection is r.hit.style
        protected = sum(r.defender_protection is r.hit.style for r in opp_ev.hits)
        facts = p.inventory_facts()
        food, kara, brews = facts.sharks + facts.anglerfish, facts.karambwans, facts.doses[POT_BREW]
        # A special costs ≥ 25 energy and regeneration adds 10 (§6.9, §6.11): a net drop is a special.
        spent = self.special[i] - p.special_energy
        out = [
            len(ev.hits),
            *hits,
            sum(damage),
            *damage,
            on,
            len(ev.hits) - on,
            len(opp_ev.hits),
            protected,
            sum(p.hitsplats),
            max(0, self.food[i] - food),
            max(0, self.karambwans[i] - kara),
            max(0, self.brews[i] - brews),
            ev.wasted_food,
            ev.wasted_brew,
            int(spent > 0),
            max(0, spent),
            int(p.timer_ticks[T_FREEZE] > 0),
        ]
        self.food[i], self.karambwans[i], self.brews[i], self.special[i] = food, kara, brews, p.special_energy
        return out


def _state_row(p: PlayerState | PlayerLike) -> dict[str, Any]:
    """The visible state of one player after a tick (what a replay shows)."""
    facts = p.inventory_facts()
    overhead = next((name for prayer, name in _OVERHEAD_NAMES.items() if prayer in p.prayers), "")
    return {
        "hp": p.hp,
        "prayer_points": p.level[SK_PRAYER],
        "overhead": overhead,
        "prayers": "+".join(sorted(pr.name.lower() for pr in p.prayers)),
        "gear": gear_set(p),
        "weapon": p.equipment[SLOT_WEAPON],
        "weapon_style": weapon_family(p).name.lower(),
        "special_energy": p.special_energy,
        "special_armed": p.special_armed,
        "vengeance": p.vengeance,
        "freeze_ticks": p.timer_ticks[T_FREEZE],
        "freeze_immunity_ticks": p.timer_ticks[T_FREEZE_IMMUNITY],
        "attack_timer": p.timer_ticks[T_ATTACK],
        "food_timer": p.timer_ticks[T_FOOD],
        "potion_timer": p.timer_ticks[T_POTION],
        "karambwan_timer": p.timer_ticks[T_KARAMBWAN],
        "veng_cooldown": p.timer_ticks[T_VENGEANCE_COOLDOWN],
        "food_left": facts.sharks + facts.anglerfish,
        "karambwans_left": facts.karambwans,
        "brew_doses_left": facts.doses[POT_BREW],
        "x": p.x,
        "y": p.y,
    }
