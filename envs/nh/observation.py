"""Encoding the 176-entry observation vector of spec §15.2 into a preallocated float32 buffer.

The layout (ids, offsets, flags) is declared once in `envs/nh/contract.py`; this module only fills
values, raw as §15.1 asks (any scaling belongs to the policy). Entries that are constant for an
episode (96–141, the loadout's flags and gear totals) are computed once per episode.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import Any

import numpy as np

from envs.nh import movement
from envs.nh.combat import special_for_weapon
from envs.nh.contract import HEAD_OFFSETS, OBS_SIZE, Obs
from envs.nh.fight_view import FightView
from envs.nh.items import (
    B_MAGIC_DEFENCE,
    B_RANGED_DEFENCE,
    B_SLASH_DEFENCE,
    ITEMS,
    POT_BREW,
    POT_COMBAT,
    POT_RANGING,
    POT_RESTORE,
    RANGED_RANGE_TILES,
    SLOT_WEAPON,
    Bonus,
    CombatStyle,
    Ids,
)
from envs.nh.loadouts import GearSet, Loadout, weapon_of
from envs.nh.operations import combat_boost, ranging_boost
from envs.nh.prayers import Prayer
from envs.nh.state import (
    SK_ATTACK,
    SK_DEFENCE,
    SK_HITPOINTS,
    SK_MAGIC,
    SK_PRAYER,
    SK_RANGED,
    SK_STRENGTH,
    T_ATTACK,
    T_FOOD,
    T_FREEZE,
    T_FREEZE_IMMUNITY,
    T_KARAMBWAN,
    T_POTION,
    T_VENGEANCE_COOLDOWN,
    TIMER_NEVER_SET,
    WEAPON_FAMILY,
    FightMode,
    PlayerState,
    Skill,
    Spellbook,
)
from envs.nh.stats import RECENT_WINDOW, EpisodeStats, visible_bonuses

CONFIDENCE_HITS = 20  # §15.2 entries 66, 74: min(1, N / 20)
MAX_DISTANCE_OBS = 7  # §15.2 entries 60–62
DAMAGE_RATIO_CLAMP = (0.5, 2.0)  # §15.2 entry 65
FOOD_DELAY_NEVER = -100  # §15.2 entry 43: u = −100 if the timer does not exist
ICE_BARRAGE_LEVEL = 94  # §15.2 entry 58
BLOOD_BARRAGE_LEVEL = 92  # §15.2 entry 59
MELEE_SPECIAL_CANDIDATES = (
    Ids.DRAGON_DAGGERS | {Ids.ARMADYL_GODSWORD, Ids.DRAGON_CLAWS, Ids.GRANITE_MAUL}
    | {Ids.VESTAS_LONGSWORD, Ids.ANCIENT_GODSWORD, Ids.STATIUS_WARHAMMER}
)  # §12.8
_STYLE_OBS = (int(CombatStyle.MELEE), int(CombatStyle.MAGIC), int(CombatStyle.RANGED))  # order of 67–72, 82–87
_PRAYER_OBS = (int(CombatStyle.MAGIC), int(CombatStyle.RANGED), int(CombatStyle.MELEE))  # order of 75–80, 89–94


def _set_sum(load: Loadout, gear: GearSet, bonus: Bonus) -> int:
    return sum(ITEMS[i].bonuses[bonus] for i in load.sets[gear])


def static_block(load: Loadout, fight_mode: FightMode) -> np.ndarray:
    """Entries that are fixed for an episode (96–141, 160, 161, 164; spec §15.2)."""
    v = np.zeros(OBS_SIZE, dtype=np.float32)
    b = load.base_levels
    v[Obs.ABSOLUTE_ATTACK_LEVEL] = b[Skill.ATTACK]
    v[Obs.ABSOLUTE_STRENGTH_LEVEL] = b[Skill.STRENGTH]
    v[Obs.ABSOLUTE_DEFENSE_LEVEL] = b[Skill.DEFENCE]
    v[Obs.ABSOLUTE_RANGED_LEVEL] = b[Skill.RANGED]
    v[Obs.ABSOLUTE_MAGIC_LEVEL] = b[Skill.MAGIC]
    v[Obs.ABSOLUTE_PRAYER_LEVEL] = b[Skill.PRAYER]
    v[Obs.ABSOLUTE_HITPOINTS_LEVEL] = b[Skill.HITPOINTS]
    ranged, magic, melee = load.sets[GearSet.RANGED], load.sets[GearSet.MAGIC], load.sets[GearSet.MELEE]
    v[Obs.IS_ENCHANTED_DRAGON_BOLT] = any(i in Ids.DRAGONSTONE_BOLTS for i in ranged)
    v[Obs.IS_ENCHANTED_OPAL_BOLT] = any(i in Ids.OPAL_BOLTS for i in ranged)
    v[Obs.IS_ENCHANTED_DIAMOND_BOLT] = any(i in Ids.DIAMOND_BOLTS for i in ranged)
    nightmare = Ids.VOLATILE_NIGHTMARE_STAFF in magic
    v[Obs.IS_MAGE_SPEC_WEAPON_LOADOUT] = nightmare
    v[Obs.IS_MAGE_SPEC_WEAPON_NIGHTMARE_STAFF] = nightmare
    rw = weapon_of(load.sets[GearSet.RANGED])
    v[Obs.IS_RANGED_SPEC_WEAPON_LOADOUT] = rw is not None and special_for_weapon(rw) is not None
    v[Obs.IS_RANGED_SPEC_WEAPON_ZARYTE_CBOW] = Ids.ZARYTE_CROSSBOW in ranged
    v[Obs.IS_RANGED_SPEC_WEAPON_BALLISTA] = Ids.LIGHT_BALLISTA in ranged or Ids.HEAVY_BALLISTA in ranged
    v[Obs.IS_RANGED_SPEC_WEAPON_MORRIGANS_JAVELIN] = Ids.MORRIGANS_JAVELIN in ranged
    v[Obs.IS_RANGED_SPEC_WEAPON_DRAGON_KNIFE] = any(i in Ids.DRAGON_KNIVES for i in ranged)
    v[Obs.IS_RANGED_SPEC_WEAPON_DARK_BOW] = Ids.DARK_BOW in ranged
    spec = load.melee_special_weapon
    v[Obs.IS_MELEE_SPEC_DCLAWS] = spec == Ids.DRAGON_CLAWS
    v[Obs.IS_MELEE_SPEC_DDS] = spec in Ids.DRAGON_DAGGERS
    v[Obs.IS_MELEE_SPEC_AGS] = spec == Ids.ARMADYL_GODSWORD
    v[Obs.IS_MELEE_SPEC_VLS] = spec == Ids.VESTAS_LONGSWORD
    v[Obs.IS_MELEE_SPEC_STAT_HAMMER] = spec == Ids.STATIUS_WARHAMMER
    v[Obs.IS_MELEE_SPEC_ANCIENT_GODSWORD] = spec == Ids.ANCIENT_GODSWORD
    v[Obs.IS_MELEE_SPEC_GMAUL] = spec == Ids.GRANITE_MAUL
    v[Obs.IS_BLOOD_FURY] = Ids.AMULET_OF_BLOOD_FURY in melee
    v[Obs.IS_DHAROKS_SET] = Ids.DHAROKS_GREATAXE in melee
    v[Obs.IS_ZURIEL_STAFF] = Ids.ZURIELS_STAFF in magic
    G, B = GearSet, Bonus
    v[Obs.MAGIC_ACCURACY] = _set_sum(load, G.MAGIC, B.MAGIC_ATTACK)
    v[Obs.MAGIC_STRENGTH] = _set_sum(load, G.MAGIC, B.MAGIC_DAMAGE_TENTHS) / 10
    v[Obs.RANGED_ACCURACY] = _set_sum(load, G.RANGED, B.RANGED_ATTACK)
    v[Obs.RANGED_STRENGTH] = _set_sum(load, G.RANGED, B.RANGED_STRENGTH)
    if rw is not None:
        wclass = ITEMS[rw].weapon_class
        v[Obs.RANGED_ATTACK_SPEED] = ITEMS[rw].attack_speed - 1
        v[Obs.RANGED_ATTACK_RANGE] = RANGED_RANGE_TILES.get(wclass, 0) if wclass else 0
    v[Obs.MELEE_ACCURACY] = _set_sum(load, G.MELEE, B.SLASH_ATTACK)
    v[Obs.MELEE_STRENGTH] = _set_sum(load, G.MELEE, B.MELEE_STRENGTH)
    mw = weapon_of(load.sets[GearSet.MELEE])
    v[Obs.MELEE_ATTACK_SPEED] = ITEMS[mw].attack_speed if mw is not None else 0
    for gear, (r, m, s) in (
        (G.MAGIC, (Obs.MAGIC_GEAR_RANGED_DEFENCE, Obs.MAGIC_GEAR_MAGE_DEFENCE, Obs.MAGIC_GEAR_MELEE_DEFENCE)),
        (G.RANGED, (Obs.RANGED_GEAR_RANGED_DEFENCE, Obs.RANGED_GEAR_MAGE_DEFENCE, Obs.RANGED_GEAR_MELEE_DEFENCE)),
        (G.MELEE, (Obs.MELEE_GEAR_RANGED_DEFENCE, Obs.MELEE_GEAR_MAGE_DEFENCE, Obs.MELEE_GEAR_MELEE_DEFENCE)),
    ):
        v[r] = _set_sum(load, gear, B.RANGED_DEFENCE)
        v[m] = _set_sum(load, gear, B.MAGIC_DEFENCE)
        v[s] = _set_sum(load, gear, B.SLASH_DEFENCE)
    v[Obs.IS_LMS_RESTRICTIONS] = fight_mode is FightMode.LMS
    v[Obs.IS_PVP_ARENA_RULES] = fight_mode is FightMode.PVP_ARENA
    v[Obs.IS_PLAYER_LUNAR_SPELLBOOK] = load.spellbook is Spellbook.LUNAR
    return v


class _ObsIndex:
    """Plain-int copy of `Obs` for per-tick code.

    Attribute access on an enum class costs ~200 ns on Python 3.11 (the metaclass `__getattr__`
    hook), ten times a plain attribute.
    """

    def __init__(self) -> None:
        for entry in Obs:
            setattr(self, entry.name, int(entry))

    def __getattr__(self, name: str) -> int:  # only reached for a name Obs does not have
        raise AttributeError(f"no observation entry {name!r}")


OI: Any = _ObsIndex()

# (sample style, bonus) for entries 145–159, with the observer's own default entry
_TARGET_SAMPLES = (
    (OI.TARGET_MAGIC_ACCURACY, CombatStyle.MAGIC, Bonus.MAGIC_ATTACK, OI.MAGIC_ACCURACY),
    (OI.TARGET_MAGIC_STRENGTH, CombatStyle.MAGIC, Bonus.MAGIC_DAMAGE_TENTHS, OI.MAGIC_STRENGTH),
    (OI.TARGET_RANGED_ACCURACY, CombatStyle.RANGED, Bonus.RANGED_ATTACK, OI.RANGED_ACCURACY),
    (OI.TARGET_RANGED_STRENGTH, CombatStyle.RANGED, Bonus.RANGED_STRENGTH, OI.RANGED_STRENGTH),
    (OI.TARGET_MELEE_ACCURACY, CombatStyle.MELEE, Bonus.SLASH_ATTACK, OI.MELEE_ACCURACY),
    (OI.TARGET_MELEE_STRENGTH, CombatStyle.MELEE, Bonus.MELEE_STRENGTH, OI.MELEE_STRENGTH),
    (OI.TARGET_MAGIC_GEAR_RANGED_DEFENCE, CombatStyle.MAGIC, Bonus.RANGED_DEFENCE, OI.MAGIC_GEAR_RANGED_DEFENCE),
    (OI.TARGET_MAGIC_GEAR_MAGE_DEFENCE, CombatStyle.MAGIC, Bonus.MAGIC_DEFENCE, OI.MAGIC_GEAR_MAGE_DEFENCE),
    (OI.TARGET_MAGIC_GEAR_MELEE_DEFENCE, CombatStyle.MAGIC, Bonus.SLASH_DEFENCE, OI.MAGIC_GEAR_MELEE_DEFENCE),
    (OI.TARGET_RANGED_GEAR_RANGED_DEFENCE, CombatStyle.RANGED, Bonus.RANGED_DEFENCE, OI.RANGED_GEAR_RANGED_DEFENCE),
    (OI.TARGET_RANGED_GEAR_MAGE_DEFENCE, CombatStyle.RANGED, Bonus.MAGIC_DEFENCE, OI.RANGED_GEAR_MAGE_DEFENCE),
    (OI.TARGET_RANGED_GEAR_MELEE_DEFENCE, CombatStyle.RANGED, Bonus.SLASH_DEFENCE, OI.RANGED_GEAR_MELEE_DEFENCE),
    (OI.TARGET_MELEE_GEAR_RANGED_DEFENCE, CombatStyle.MELEE, Bonus.RANGED_DEFENCE, OI.MELEE_GEAR_RANGED_DEFENCE),
    (OI.TARGET_MELEE_GEAR_MAGE_DEFENCE, CombatStyle.MELEE, Bonus.MAGIC_DEFENCE, OI.MELEE_GEAR_MAGE_DEFENCE),
    (OI.TARGET_MELEE_GEAR_MELEE_DEFENCE, CombatStyle.MELEE, Bonus.SLASH_DEFENCE, OI.MELEE_GEAR_MELEE_DEFENCE),
)
if [idx for idx, *_ in _TARGET_SAMPLES] != list(
    range(OI.TARGET_MAGIC_ACCURACY, OI.TARGET_MELEE_GEAR_MELEE_DEFENCE + 1)
):
    raise AssertionError("entries 145–159 must be listed in layout order (§15.2)")

# ---- the per-tick encoder --------------------------------------------------------------------------
# The dynamic entries form five contiguous runs of the §15.2 layout; each run is written with one
# `struct.pack_into` of its values in layout order (one C call instead of one numpy store per entry).
# `_run` checks at import that a run's first and last ids are where the encoder expects them, so a
# layout change fails loudly here instead of shifting values silently.


def _run(first: str, last: str, length: int) -> tuple[int, struct.Struct]:
    start, end = Obs[first.upper()], Obs[last.upper()]
    if end - start + 1 != length:
        raise AssertionError(f"observation run {first}..{last} is no longer {length} entries (§15.2 layout)")
    return int(start) * _FLOAT32_BYTES, struct.Struct(f"{length}f")


_FLOAT32_BYTES = 4
_RUN_TICK = _run("player_using_melee", "total_damage_dealt_scale", 66)  # entries 0–65
_RUN_HIT_STATS = _run("target_attack_confidence", "recent_target_correct_pray_percent", 30)  # 66–95
_RUN_TARGET_GEAR = _run("target_current_gear_ranged_defence", "target_melee_gear_melee_defence", 18)  # 142–159
_RUN_VENG = _run("is_veng_active", "is_target_veng_active", 2)  # 162–163
_RUN_TAIL = _run("is_target_lunar_spellbook", "is_food_anglerfish", 11)  # 165–175
if OI.IS_PLAYER_LUNAR_SPELLBOOK != OI.IS_TARGET_LUNAR_SPELLBOOK - 1:  # the one static entry between runs
    raise AssertionError("entry 164 must sit between the Vengeance run and the tail run (§15.2 layout)")

# plain ints and members bound once (see `_ObsIndex`)
_MELEE, _RANGED, _MAGIC = CombatStyle.MELEE, CombatStyle.RANGED, CombatStyle.MAGIC
_PROTECT_MELEE, _PROTECT_MISSILES, _PROTECT_MAGIC = (
    Prayer.PROTECT_FROM_MELEE, Prayer.PROTECT_FROM_MISSILES, Prayer.PROTECT_FROM_MAGIC
)
_SMITE, _REDEMPTION = Prayer.SMITE, Prayer.REDEMPTION
_MAGIC_DAMAGE_TENTHS = Bonus.MAGIC_DAMAGE_TENTHS
_MASK_BLOOD, _MASK_ICE, _MASK_MAGE_SPEC = HEAD_OFFSETS[3] + 2, HEAD_OFFSETS[3] + 1, HEAD_OFFSETS[3] + 3
_MASK_RANGED, _MASK_RANGED_SPEC = HEAD_OFFSETS[2] + 1, HEAD_OFFSETS[2] + 2
_MASK_MELEE, _MASK_MELEE_SPEC = HEAD_OFFSETS[1] + 1, HEAD_OFFSETS[1] + 2
_RATIO_LOW, _RATIO_HIGH = DAMAGE_RATIO_CLAMP
_ANGLERFISH = Ids.ANGLERFISH


def _remaining(ticks: int) -> int:
    """`PlayerState.remaining` on a raw timer value (spec §3); inlined in `encode` where it is hot."""
    return ticks - 1 if ticks > 1 else 0


def _pending_on(q: PlayerState) -> tuple[int, int]:
    """(pending total damage, ticks until the first hit) on a player (spec §15.2 entries 46–48)."""
    if not q.hit_queue and not q.damage_queue:
        return 0, -1
    total = sum(h.total for h in q.hit_queue) + sum(q.damage_queue)
    if q.damage_queue:
        first = 0
    elif q.hit_queue:
        first = q.hit_queue[0].delay
    else:
        first = -1
    return total, first


def _fractions(counts: list[int], n: int, order: tuple[int, int, int]) -> tuple[float, float, float]:
    if not n:
        return 0.0, 0.0, 0.0
    a, b, c = order
    return counts[a] / n, counts[b] / n, counts[c] / n


class ObservationEncoder:
    """Player `p`'s §15.2 observation for one episode, with its per-episode constants resolved once.

    Built at reset (the players, their statistics and tick events live for the whole episode).
    Entries that only change when a hit is created (66–95, 145–159) are recomputed only then,
    keyed by the hit counters of `EpisodeStats`.
    """

    __slots__ = (
        "_ancient",
        "_att_cap",
        "_def_cap",
        "_default_samples",
        "_ev_me",
        "_ev_them",
        "_mine",
        "_p",
        "_q",
        "_rng_cap",
        "_samples",
        "_samples_key",
        "_static",
        "_stats",
        "_stats_key",
        "_str_cap",
        "_summaries",
        "_theirs",
    )

    def __init__(
        self, sim: FightView, p: PlayerState, static: np.ndarray, shared: dict[int, Any] | None = None
    ) -> None:
        """`shared`: a dict both players' encoders of the episode share (per-attacker hit summaries)."""
        q = sim.opponent(p)
        self._summaries: dict[int, Any] = {} if shared is None else shared
        self._p, self._q = p, q
        self._mine, self._theirs = sim.stats[p.index], sim.stats[q.index]
        self._ev_me, self._ev_them = sim.events[p.index], sim.events[q.index]
        self._static = static
        values = static.tolist()
        self._default_samples = [values[default] for _, _, _, default in _TARGET_SAMPLES]
        base = p.base
        # denominators of entries 34–37: base + the potion's boost (spec §15.2, §8.3)
        self._str_cap = base[SK_STRENGTH] + combat_boost(base[SK_STRENGTH])
        self._att_cap = base[SK_ATTACK] + combat_boost(base[SK_ATTACK])
        self._def_cap = base[SK_DEFENCE] + combat_boost(base[SK_DEFENCE])
        self._rng_cap = base[SK_RANGED] + ranging_boost(base[SK_RANGED])
        self._ancient = p.spellbook is Spellbook.ANCIENT
        self._stats_key: tuple[int, int] | None = None
        self._stats: tuple[float, ...] = ()
        self._samples_key = -1
        self._samples: tuple[float, ...] = ()

    def encode(self, mask: Sequence[bool], out: np.ndarray) -> np.ndarray:
        """Fill `out` with the observation at the end of the tick (spec §15.2).

        `mask` is `p`'s environment mask of this tick (entries 168–174 repeat its attack flags).
        """
        p, q = self._p, self._q
        mine, theirs = self._mine, self._theirs
        lv, base = p.level, p.base
        ticks, qticks = p.timer_ticks, q.timer_ticks
        wid, qwid = p.equipment[SLOT_WEAPON], q.equipment[SLOT_WEAPON]
        fam, tfam = WEAPON_FAMILY.get(wid, _MELEE), WEAPON_FAMILY.get(qwid, _MELEE)
        pr, tpr = p.prayers, q.prayers
        inv = p.inventory_facts()
        doses = inv.doses
        base_hp, q_base_hp = base[SK_HITPOINTS], q.base[SK_HITPOINTS]
        px, py, qx, qy = p.x, p.y, q.x, q.y
        dx, dy = px - qx, py - qy
        adx, ady = (dx if dx >= 0 else -dx), (dy if dy >= 0 else -dy)
        distance = adx if adx > ady else ady  # movement.distance(p, q)
        u = p.timer_uncapped[T_ATTACK]
        if u == TIMER_NEVER_SET:
            u = FOOD_DELAY_NEVER
        pend_t, first_t = _pending_on(q)
        first_p = _pending_on(p)[1]
        my_hits, their_hits = self._ev_me.hits, self._ev_them.hits
        magic = lv[SK_MAGIC]
        ancient = self._ancient
        if p.walk_queue:
            ex, ey = p.walk_queue[-1]
            dest_to_target = min(MAX_DISTANCE_OBS, movement.cheb(ex, ey, qx, qy))
            to_dest = min(MAX_DISTANCE_OBS, movement.cheb(px, py, ex, ey))
        else:
            dest_to_target = min(MAX_DISTANCE_OBS, distance)
            to_dest = 0
        ratio = (mine.dealt_scale_sum + 1) / (mine.received_scale_sum + 1)
        t = ticks[T_FREEZE]
        frozen = t - 1 if t > 1 else 0
        t = qticks[T_FREEZE]
        target_frozen = t - 1 if t > 1 else 0
        t = ticks[T_FREEZE_IMMUNITY]
        immune = t - 1 if t > 1 else 0
        t = qticks[T_FREEZE_IMMUNITY]
        target_immune = t - 1 if t > 1 else 0
        t = ticks[T_ATTACK]
        attack_cycle = t - 1 if t > 1 else 0
        t = ticks[T_FOOD]
        food_cycle = t - 1 if t > 1 else 0
        t = ticks[T_POTION]
        potion_cycle = t - 1 if t > 1 else 0
        t = ticks[T_KARAMBWAN]
        karambwan_cycle = t - 1 if t > 1 else 0
        t = qticks[T_ATTACK]
        target_attack_cycle = t - 1 if t > 1 else 0
        t = qticks[T_FOOD]
        target_food_cycle = t - 1 if t > 1 else 0
        out[:] = self._static
        off, run = _RUN_TICK
        run.pack_into(
            out,
            off,
            fam is _MELEE,  # 0 player_using_melee
            fam is _RANGED,
            fam is _MAGIC,
            wid in MELEE_SPECIAL_CANDIDATES,  # 3 player_spec_equipped
            p.special_energy,
            _PROTECT_MELEE in pr,  # 5 player_melee_prayer
            _PROTECT_MISSILES in pr,
            _PROTECT_MAGIC in pr,
            _SMITE in pr,
            _REDEMPTION in pr,
            lv[SK_HITPOINTS] / base_hp,  # 10 player_health_percent
            mine.observed_opponent_hp,
            tfam is _MELEE,  # 12 target_using_melee
            tfam is _RANGED,
            tfam is _MAGIC,
            qwid in MELEE_SPECIAL_CANDIDATES,
            _PROTECT_MELEE in tpr,  # 16 target_melee_prayer
            _PROTECT_MISSILES in tpr,
            _PROTECT_MAGIC in tpr,
            _SMITE in tpr,
            _REDEMPTION in tpr,
            q.special_energy,  # 21 target_special_percent
            doses[POT_RANGING],  # 22 range_potion_doses
            doses[POT_COMBAT],
            doses[POT_RESTORE],
            doses[POT_BREW],
            inv.anglerfish + inv.sharks,  # 26 food_count
            inv.karambwans,
            lv[SK_PRAYER] / base[SK_PRAYER],  # 28 prayer_points
            frozen,  # 29 player_frozen_ticks
            target_frozen,
            immune,
            target_immune,
            adx + ady == 1,  # 33 player_location_can_melee: `movement.in_melee_range`
            lv[SK_STRENGTH] / self._str_cap,  # 34 strength_level
            lv[SK_ATTACK] / self._att_cap,
            lv[SK_DEFENCE] / self._def_cap,
            lv[SK_RANGED] / self._rng_cap,
            magic / base[SK_MAGIC],  # 38 magic_level
            attack_cycle,  # 39 attack_cycle_ticks
            food_cycle,
            potion_cycle,
            karambwan_cycle,
            min(max(u - 1, -3), 0) + 3,  # 43 food_attack_delay
            target_attack_cycle,  # 44 target_attack_cycle_ticks
            target_food_cycle,  # 45 target_potion_cycle_ticks: the target's FOOD timer (§15.2)
            pend_t / q_base_hp,  # 46 pending_damage_on_target
            first_t,
            first_p,
            bool(my_hits),  # 49 player_just_attacked
            bool(their_hits),
            my_hits[-1].hit.total / q_base_hp if my_hits else 0.0,  # 51 tick_new_attack_damage
            sum(p.hitsplats) / base_hp,  # 52 damage_on_player_tick
            sum(q.hitsplats) / q_base_hp,
            p.target is q,  # 54 player_attacking_target
            p.moving,
            q.moving,
            p.pid < q.pid,  # 57 player_has_pid
            ancient and magic >= ICE_BARRAGE_LEVEL,  # 58 ice_barrage_usable
            ancient and magic >= BLOOD_BARRAGE_LEVEL,
            dest_to_target,  # 60 destination_to_target_distance
            to_dest,
            min(MAX_DISTANCE_OBS, distance),  # 62 player_to_target_distance
            bool(their_hits) and any(r.defender_protection is r.hit.style for r in their_hits),  # 63
            bool(my_hits) and any(r.defender_protection is r.hit.style for r in my_hits),  # 64
            min(max(ratio, _RATIO_LOW), _RATIO_HIGH),  # 65 total_damage_dealt_scale
        )
        key = (mine.n_hits, theirs.n_hits)
        if key != self._stats_key:
            self._stats_key = key
            self._stats = _hit_statistics(self._summary(mine), self._summary(theirs))
        off, run = _RUN_HIT_STATS
        run.pack_into(out, off, *self._stats)
        if theirs.n_hits != self._samples_key:
            self._samples_key, self._samples = theirs.n_hits, self._target_samples()
        vis = visible_bonuses(q)
        off, run = _RUN_TARGET_GEAR
        run.pack_into(
            out, off, vis[B_RANGED_DEFENCE], vis[B_MAGIC_DEFENCE], vis[B_SLASH_DEFENCE], *self._samples
        )  # 142–144, then 145–159
        off, run = _RUN_VENG
        run.pack_into(out, off, p.vengeance, q.vengeance)  # 162, 163
        t = ticks[T_VENGEANCE_COOLDOWN]
        veng_cooldown = t - 1 if t > 1 else 0
        t = qticks[T_VENGEANCE_COOLDOWN]
        target_veng_cooldown = t - 1 if t > 1 else 0
        off, run = _RUN_TAIL
        run.pack_into(
            out,
            off,
            mine.known_lunar_opponent,  # 165 is_target_lunar_spellbook
            veng_cooldown,
            target_veng_cooldown,
            mask[_MASK_BLOOD],  # 168 is_blood_magic_attack_available
            mask[_MASK_ICE],
            mask[_MASK_MAGE_SPEC],
            mask[_MASK_RANGED],
            mask[_MASK_RANGED_SPEC],
            mask[_MASK_MELEE],
            mask[_MASK_MELEE_SPEC],
            inv.primary_food == _ANGLERFISH,  # 175 is_food_anglerfish
        )
        return out

    def _summary(self, st: EpisodeStats) -> tuple[Any, ...]:
        """`_attack_summary(st)`, shared with the opponent's encoder and recomputed per new hit."""
        cached = self._summaries.get(id(st))
        if cached is None or cached[0] is not st or cached[1] != st.n_hits:
            cached = (st, st.n_hits, _attack_summary(st))
            self._summaries[id(st)] = cached
        return cached[2]

    def _target_samples(self) -> tuple[float, ...]:
        """Entries 145–159: the opponent's offensive gear samples, else the observer's own totals."""
        samples = self._theirs.gear_samples
        values: list[float] = []
        for (_, style, bonus, _), default in zip(_TARGET_SAMPLES, self._default_samples, strict=True):
            sample = samples[style]
            if sample is None:
                values.append(default)
            else:
                values.append(sample[bonus] / 10 if bonus is _MAGIC_DAMAGE_TENTHS else sample[bonus])
        return tuple(values)


def encode(sim: FightView, p: PlayerState, static: np.ndarray, mask: np.ndarray, out: np.ndarray) -> np.ndarray:
    """Fill `out` with player `p`'s observation at the end of the tick (spec §15.2).

    `mask` is `p`'s environment mask of this tick (entries 168–174 repeat its attack flags). One-off
    form of `ObservationEncoder`; the engine keeps one encoder per player for the episode.
    """
    return ObservationEncoder(sim, p, static).encode(mask, out)


def _attack_summary(st: EpisodeStats) -> tuple[Any, ...]:
    """What entries 66–95 read from one player's created-hit records (spec §15.2, counting details).

    Each value appears once in the attacker's own observation and once in its opponent's, at
    different entries; `_hit_statistics` places them. Returns (confidence, style fractions,
    off-prayer fraction, defender-prayer fractions, protected fraction, recent style fractions,
    recent off-prayer fraction, recent protected fraction, recent defender-prayer fractions).
    """
    n = st.n_hits
    w = RECENT_WINDOW
    recent_styles = [s for s, _ in st.recent]
    recent_correct = [c for _, c in st.recent]
    prayed = st.recent_prayed
    return (
        min(1.0, n / CONFIDENCE_HITS),
        _fractions(st.style_counts, n, _STYLE_OBS),
        (n - st.protected_count) / n if n else 0.0,
        _fractions(st.defender_prayer_counts, n, _PRAYER_OBS),
        st.protected_count / n if n else 0.0,
        (recent_styles.count(_MELEE) / w, recent_styles.count(_MAGIC) / w, recent_styles.count(_RANGED) / w),
        recent_correct.count(False) / w,
        recent_correct.count(True) / w,
        (prayed.count(_MAGIC) / w, prayed.count(_RANGED) / w, prayed.count(_MELEE) / w),
    )


def _hit_statistics(mine: tuple[Any, ...], theirs: tuple[Any, ...]) -> tuple[float, ...]:
    """Entries 66–95 from both players' `_attack_summary` (spec §15.2, counting details)."""
    m_conf, m_style, _, m_prayed, m_protected, m_recent, _, m_recent_correct, m_recent_prayed = mine
    t_conf, t_style, t_off, t_prayed, _, t_recent, t_recent_off, _, t_recent_prayed = theirs
    return (
        t_conf,  # 66 target_attack_confidence
        *t_style,  # 67–69 target_{melee,magic,ranged}_hit_percent
        *m_style,  # 70–72 player_{melee,magic,ranged}_hit_percent
        t_off,  # 73 target_number_of_hits_off_prayer
        m_conf,  # 74 target_prayer_confidence
        *m_prayed,  # 75–77 target_{magic,ranged,melee}_prayer_percent
        *t_prayed,  # 78–80 player_{magic,ranged,melee}_prayer_percent
        m_protected,  # 81 target_correct_pray_percent
        *t_recent,  # 82–84 recent_target_{melee,magic,ranged}_hit_percent
        *m_recent,  # 85–87 recent_player_{melee,magic,ranged}_hit_percent
        t_recent_off,  # 88 recent_target_number_of_hits_off_prayer
        *m_recent_prayed,  # 89–91 recent_target_{magic,ranged,melee}_prayer_percent
        *t_recent_prayed,  # 92–94 recent_player_{magic,ranged,melee}_prayer_percent
        m_recent_correct,  # 95 recent_target_correct_pray_percent
    )
