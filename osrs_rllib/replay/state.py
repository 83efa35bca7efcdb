"""What a replay stores of one tick, read from the simulator (`envs/nh/state.py`, `envs/nh/sim.py`).

One function per thing read, so that the recorder and `verify` produce the tick the same way: the
verifier re-runs the fight and compares these dicts key by key.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from envs.nh.items import ITEMS, CombatStyle, PotionType, Slot
from envs.nh.loadouts import GearSet
from envs.nh.prayers import OVERHEADS
from envs.nh.sim import FightSim
from envs.nh.state import (
    EMPTY,
    SK_PRAYER,
    T_ATTACK,
    T_FOOD,
    T_FREEZE,
    T_FREEZE_IMMUNITY,
    T_KARAMBWAN,
    T_POTION,
    T_VENGEANCE_COOLDOWN,
    PendingHit,
    PlayerState,
    Skill,
    weapon_family,
)

SLOT_NAMES = tuple(s.name.lower() for s in Slot)
"""Equipment slots in `Slot` order: the order of a player's ``equipment`` list."""
SKILL_NAMES = tuple(s.name.lower() for s in Skill)
"""Skills in `Skill` order: the order of ``levels`` and ``base_levels``."""
TIMERS = {
    "freeze": T_FREEZE,
    "freeze_immunity": T_FREEZE_IMMUNITY,
    "attack": T_ATTACK,
    "food": T_FOOD,
    "potion": T_POTION,
    "karambwan": T_KARAMBWAN,
    "veng_cooldown": T_VENGEANCE_COOLDOWN,
}
"""Timers a replay shows (spec §3), in ticks left as the simulator counts them."""
POTIONS = {p.name.lower(): p for p in PotionType}
_SET_ORDER = (GearSet.SPEC, GearSet.MAGIC, GearSet.RANGED, GearSet.MELEE, GearSet.TANK)


def gear_set(p: PlayerState) -> str:
    """Name of the gear set fully worn (spec §12.2, §12.5), else ``mixed``."""
    worn = p.equipment
    for gs in _SET_ORDER:
        ids = p.loadout.sets.get(gs)
        if ids and all(iid < 0 or iid in worn for iid in ids):
            return gs.value
    return "mixed"


def overhead(p: PlayerState) -> str:
    """The active overhead prayer's name (``protect_from_magic``, ``smite``, ...), or ``""``."""
    for prayer in OVERHEADS:
        if prayer in p.prayers:
            return prayer.name.lower()
    return ""


def player_state(p: PlayerState) -> dict[str, Any]:
    """One player's state after a tick: everything an onlooker sees, plus the timers a viewer shows."""
    facts = p.inventory_facts()
    return {
        "hp": p.hp,
        "max_hp": p.base_hp,
        "prayer": p.level[SK_PRAYER],
        "max_prayer": p.base[SK_PRAYER],
        "levels": list(p.level),
        "overhead": overhead(p),
        "prayers": sorted(pr.name.lower() for pr in p.prayers),
        "gear": gear_set(p),
        "equipment": list(p.equipment),
        "weapon_style": weapon_family(p).name.lower(),
        "special_energy": p.special_energy,
        "special_armed": p.special_armed,
        "vengeance": p.vengeance,
        "timers": {name: p.timer_ticks[t] for name, t in TIMERS.items()},
        "food_left": facts.sharks + facts.anglerfish,
        "karambwans_left": facts.karambwans,
        "doses": {name: facts.doses[pt] for name, pt in POTIONS.items()},
        "x": p.x,
        "y": p.y,
        "run_energy": p.run_energy,
        "poison": p.poison_damage,
        "has_target": p.target is not None,
    }


def created_hits(sim: FightSim, i: int) -> list[dict[str, Any]]:
    """The hits player i created this tick (spec §6.1): style, rolled damage, accuracy, and whether the
    defender prayed against the style (``prayer_right``)."""
    out = []
    for r in sim.events[i].hits:
        h = r.hit
        out.append(
            {
                "style": h.style.name.lower(),
                "damage": h.total,
                "damages": list(h.damages),
                "accurate": h.accurate,
                "delay": h.delay,
                "prayer_right": r.defender_protection is h.style,
                "effect": h.effect,
            }
        )
    return out


def landed_hit(hit: PendingHit) -> dict[str, Any]:
    """A hit as it lands: inaccurate magic splashes (no hitsplat), everything else queues its damages (§4.5)."""
    splash = not hit.accurate and hit.style is CombatStyle.MAGIC
    return {"style": hit.style.name.lower(), "damages": [] if splash else list(hit.damages), "splash": splash}


class LandingTracker:
    """Which pending hits landed on each player this tick, to colour hitsplats by style.

    The simulator removes a hit from its victim's queue when it executes (delay elapsed) or is dropped
    (its attacker died); a hit that left the queue with its delay at 0 while its attacker lives landed.
    Hitsplats not explained by a landed hit (vengeance, poison, bleed, sacrifice) have no style.
    """

    def __init__(self, sim: FightSim) -> None:
        self.queued: list[list[PendingHit]] = [list(p.hit_queue) for p in sim.players]

    def landed(self, sim: FightSim) -> list[list[dict[str, Any]]]:
        """Per player, the hits that landed on it during the tick just simulated (then remembers the queues)."""
        out: list[list[dict[str, Any]]] = [[], []]
        for v in sim.players:
            attacker = sim.players[1 - v.index]
            candidates = self.queued[v.index] + [r.hit for r in sim.events[attacker.index].hits]
            still = {id(h) for h in v.hit_queue}
            for h in candidates:
                if id(h) not in still and h.delay <= 0 and h.attacker.hp > 0:
                    out[v.index].append(landed_hit(h))
        self.queued = [list(p.hit_queue) for p in sim.players]
        return out


def rng_digest(sim: FightSim) -> str:
    """A short fingerprint of the simulator's generator: equal digests mean the same random draws so far."""
    return hashlib.blake2b(repr(sim.rng.bit_generator.state).encode(), digest_size=6).hexdigest()


def item_names(equipment_lists: Sequence[Sequence[int]]) -> dict[str, str]:
    """Item id → name for every id worn in the replay (the viewer shows names; ids stay the state)."""
    ids = {iid for eq in equipment_lists for iid in eq if iid != EMPTY}
    return {str(iid): ITEMS[iid].name for iid in sorted(ids)}
