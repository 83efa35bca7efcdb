"""What a replay stores of one tick, read from the simulator (`envs/nh/state.py`, `envs/nh/sim.py`).

One function per thing read, so that the recorder and `verify` produce the tick the same way: the
verifier re-runs the fight and compares these dicts key by key.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from envs.nh.formulas import MELEE_HIT_DELAY
from envs.nh.items import ITEMS, CombatStyle, PotionType, Slot
from envs.nh.loadouts import GearSet
from envs.nh.prayers import OVERHEADS
from envs.nh.sim import FightSim
from envs.nh.state import (
    EMPTY,
    SK_HITPOINTS,
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
from osrs_rllib.replay.engine_views import CorePlayerView

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


def gear_set(p: PlayerState | CorePlayerView) -> str:
    """Name of the gear set fully worn (spec §12.2, §12.5), else ``mixed``."""
    worn = p.equipment
    for gs in _SET_ORDER:
        ids = p.loadout.sets.get(gs)
        if ids and all(iid < 0 or iid in worn for iid in ids):
            return gs.value
    return "mixed"


def overhead(p: PlayerState | CorePlayerView) -> str:
    """The active overhead prayer's name (``protect_from_magic``, ``smite``, ...), or ``""``."""
    for prayer in OVERHEADS:
        if prayer in p.prayers:
            return prayer.name.lower()
    return ""


def player_state(p: PlayerState | CorePlayerView) -> dict[str, Any]:
    """One player's state after a tick: everything an onlooker sees, plus the timers a viewer shows (from the
    Python simulator's `PlayerState` or a core fight's `CorePlayerView`, which has the same attributes)."""
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


# ---------------------------------------------------------------------------------------------------------
# The same ticks read from the compiled core
# ---------------------------------------------------------------------------------------------------------
EFFECT_NAMES = ("", "statius", "ags_sacrifice", "morrigan_bleed")
"""A pending hit's effect tag by the core's number (enum nh_effect, `nh_state.h`)."""


def _core_hit_matches(queued: dict[str, Any], record: dict[str, Any]) -> bool:
    return (
        queued["attacker"] == record["attacker"]
        and list(queued["damages"]) == list(record["damages"])
        and bool(queued["accurate"]) == bool(record["accurate"])
        and queued["style"] == record["style"]
        and queued["effect"] == record["effect"]
    )


def _queued_new_hits(queue: Sequence[dict[str, Any]], records: Sequence[dict[str, Any]]) -> bool:
    """Whether the hits created this tick (`records`, all on one victim) still wait in its queue (`queue`, after
    the tick).

    The simulator appends a new hit to its victim's queue; the victim's pass of the same tick (when the attacker
    moved first by PID) executes those whose delay is 0 and counts the others down, keeping them in order. An
    attack's hits share their delay kind (melee: 0; ranged and magic: at least 1), so either all of a tick's new
    hits wait at the end of the queue or none does. Hits queued on earlier ticks are never melee (a delay of 0
    executes at the next pass), so a melee suffix that matches is this tick's.
    """
    n = len(records)
    if n == 0 or len(queue) < n:
        return False
    return all(_core_hit_matches(q, r) for q, r in zip(queue[len(queue) - n :], records, strict=True))


class CoreTickReader:
    """`created_hits`, `LandingTracker` and `player_state` on a compiled-core fight (`CoreEngine`).

    The core hands out plain snapshots (`player_state(i)`, `events(i)`), not the simulator's objects, so a hit
    cannot be followed by identity from one tick to the next. It is followed by position instead: a victim's
    queue keeps its order, the hits queued before the tick either leave it (delay run out, attacker dead, or
    victim dead) or stay one tick closer, and the tick's new hits are appended last (`_queued_new_hits`). From
    that, each created hit's delay after the tick and effect, and the hits that landed, are exactly what the
    Python engine's objects say (the tests compare whole replays recorded on both engines).
    """

    def __init__(self, engine: Any) -> None:
        self.engine = engine
        self.before = [engine.player_state(i) for i in (0, 1)]
        self.after = self.before

    def players(self) -> list[dict[str, Any]]:
        """Both players' replay state (`player_state`) after the last tick."""
        return [player_state(CorePlayerView.from_core(s)) for s in self.after]

    def splats(self) -> list[list[int]]:
        return [list(s["hitsplats"]) for s in self.after]

    def step(self) -> tuple[list[list[dict[str, Any]]], list[list[dict[str, Any]]]]:
        """After a tick: (hits each player created, hits that landed on each player), as `created_hits` and
        `LandingTracker.landed` give them on the Python engine."""
        self.before, self.after = self.after, [self.engine.player_state(i) for i in (0, 1)]
        events = [self.engine.events(i) for i in (0, 1)]
        created: list[list[dict[str, Any]]] = [[], []]
        landed: list[list[dict[str, Any]]] = [[], []]
        for a in (0, 1):
            v = 1 - a
            records = events[a]["hits"]
            queue = self.after[v]["hit_queue"]
            waiting = _queued_new_hits(queue, records)
            attacker_alive = self.after[a]["level"][SK_HITPOINTS] > 0
            for j, r in enumerate(records):
                style = CombatStyle(r["style"])
                # A hit record carries the hit as created; its delay after the tick is its queue entry's, or 0 once
                # executed in its own tick (a melee hit, §6.2).
                delay = int(queue[len(queue) - len(records) + j]["delay"]) if waiting else MELEE_HIT_DELAY
                effect = EFFECT_NAMES[r["effect"]]
                created[a].append(
                    {
                        "style": style.name.lower(),
                        "damage": sum(r["damages"]),
                        "damages": list(r["damages"]),
                        "accurate": bool(r["accurate"]),
                        "delay": delay,
                        "prayer_right": r["defender_protection"] == r["style"],
                        "effect": effect,
                    }
                )
            if not attacker_alive:
                continue
            # Landed (LandingTracker's rule): left the queue with its delay run out while the attacker lives. A hit
            # queued before the tick leaves with its delay unchanged, so those with delay <= 0 are the ones.
            for q in self.before[v]["hit_queue"]:
                if q["delay"] <= 0:
                    landed[v].append(_landed_hit(q))
            if not waiting:
                for r in records:
                    landed[v].append(_landed_hit(r))
        return created, landed


def _landed_hit(hit: dict[str, Any]) -> dict[str, Any]:
    """`landed_hit` of a core hit (a queue entry or a hit record)."""
    style = CombatStyle(hit["style"])
    splash = not hit["accurate"] and style is CombatStyle.MAGIC
    return {"style": style.name.lower(), "damages": [] if splash else list(hit["damages"]), "splash": splash}


def core_rng_digest(engine: Any) -> str:
    """`rng_digest` of a core fight: the same generator state, handed back by the core (`CoreEngine.rng`)."""
    return hashlib.blake2b(repr(engine.rng.bit_generator.state).encode(), digest_size=6).hexdigest()
