"""Encoding the 176-entry observation vector of spec §15.2 into a preallocated float32 buffer.

The layout (ids, offsets, flags) is declared once in `envs/nh/contract.py`; this module only fills
values, raw as §15.1 asks (any scaling belongs to the policy). Entries that are constant for an
episode (96–141, the loadout's flags and gear totals) are computed once per episode.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from envs.nh import movement
from envs.nh.combat import special_for_weapon
from envs.nh.contract import HEAD_OFFSETS, OBS_SIZE, Obs
from envs.nh.items import ITEMS, RANGED_RANGE_TILES, Bonus, CombatStyle, Ids, PotionType, Slot
from envs.nh.loadouts import GearSet, Loadout, weapon_of
from envs.nh.operations import combat_boost, primary_food, ranging_boost
from envs.nh.prayers import Prayer
from envs.nh.state import TIMER_NEVER_SET, FightMode, PlayerState, Skill, Spellbook, TimerId, weapon_family
from envs.nh.stats import RECENT_WINDOW, EpisodeStats, visible_bonuses

if TYPE_CHECKING:
    from envs.nh.sim import FightSim

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
_STYLE_OBS = (CombatStyle.MELEE, CombatStyle.MAGIC, CombatStyle.RANGED)  # entry order of 67–72, 82–87
_PRAYER_OBS = (CombatStyle.MAGIC, CombatStyle.RANGED, CombatStyle.MELEE)  # entry order of 75–80, 89–94


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
    """Plain-int copy of `Obs` for the per-tick encoder.

    Attribute access on an enum class costs ~200 ns on Python 3.11 (the metaclass `__getattr__`
    hook), ten times a plain attribute; the encoder makes ~250 such accesses per call.
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


def _pending_on(q: PlayerState) -> tuple[int, int]:
    """(pending total damage, ticks until the first hit) on a player (spec §15.2 entries 46–48)."""
    total = sum(h.total for h in q.hit_queue) + sum(q.damage_queue)
    if q.damage_queue:
        first = 0
    elif q.hit_queue:
        first = q.hit_queue[0].delay
    else:
        first = -1
    return total, first


def _fractions(counts: list[int], n: int, order: tuple[CombatStyle, ...]) -> tuple[float, ...]:
    return tuple(counts[s] / n for s in order) if n else (0.0, 0.0, 0.0)


def encode(sim: FightSim, p: PlayerState, static: np.ndarray, mask: np.ndarray, out: np.ndarray) -> np.ndarray:
    """Fill `out` with player `p`'s observation at the end of the tick (spec §15.2).

    `mask` is `p`'s environment mask of this tick (entries 168–174 repeat its attack flags).
    """
    q = sim.opponent(p)
    mine: EpisodeStats = sim.stats[p.index]
    theirs: EpisodeStats = sim.stats[q.index]
    ev_me, ev_them = sim.events[p.index], sim.events[q.index]
    o: list = static.tolist()  # filled as a Python list, converted once: element writes to numpy are slow
    lv, base = p.level, p.base
    fam, tfam = weapon_family(p), weapon_family(q)
    o[OI.PLAYER_USING_MELEE] = fam is CombatStyle.MELEE
    o[OI.PLAYER_USING_RANGED] = fam is CombatStyle.RANGED
    o[OI.PLAYER_USING_MAGE] = fam is CombatStyle.MAGIC
    o[OI.PLAYER_SPEC_EQUIPPED] = p.equipment[Slot.WEAPON] in MELEE_SPECIAL_CANDIDATES
    o[OI.SPECIAL_ENERGY_PERCENT] = p.special_energy
    pr, tpr = p.prayers, q.prayers
    o[OI.PLAYER_MELEE_PRAYER] = Prayer.PROTECT_FROM_MELEE in pr
    o[OI.PLAYER_RANGED_PRAYER] = Prayer.PROTECT_FROM_MISSILES in pr
    o[OI.PLAYER_MAGIC_PRAYER] = Prayer.PROTECT_FROM_MAGIC in pr
    o[OI.PLAYER_SMITE_PRAYER] = Prayer.SMITE in pr
    o[OI.PLAYER_REDEMPTION_PRAYER] = Prayer.REDEMPTION in pr
    o[OI.PLAYER_HEALTH_PERCENT] = lv[Skill.HITPOINTS] / base[Skill.HITPOINTS]
    o[OI.TARGET_HEALTH_PERCENT] = mine.observed_opponent_hp
    o[OI.TARGET_USING_MELEE] = tfam is CombatStyle.MELEE
    o[OI.TARGET_USING_RANGED] = tfam is CombatStyle.RANGED
    o[OI.TARGET_USING_MAGE] = tfam is CombatStyle.MAGIC
    o[OI.TARGET_SPEC_EQUIPPED] = q.equipment[Slot.WEAPON] in MELEE_SPECIAL_CANDIDATES
    o[OI.TARGET_MELEE_PRAYER] = Prayer.PROTECT_FROM_MELEE in tpr
    o[OI.TARGET_RANGED_PRAYER] = Prayer.PROTECT_FROM_MISSILES in tpr
    o[OI.TARGET_MAGIC_PRAYER] = Prayer.PROTECT_FROM_MAGIC in tpr
    o[OI.TARGET_SMITE_PRAYER] = Prayer.SMITE in tpr
    o[OI.TARGET_REDEMPTION_PRAYER] = Prayer.REDEMPTION in tpr
    o[OI.TARGET_SPECIAL_PERCENT] = q.special_energy
    o[OI.RANGE_POTION_DOSES] = p.potion_doses(PotionType.RANGING)
    o[OI.COMBAT_POTION_DOSES] = p.potion_doses(PotionType.COMBAT)
    o[OI.SUPER_RESTORE_DOSES] = p.potion_doses(PotionType.RESTORE)
    o[OI.BREW_DOSES] = p.potion_doses(PotionType.BREW)
    inv = p.inventory
    o[OI.FOOD_COUNT] = inv.count(Ids.ANGLERFISH) + inv.count(Ids.SHARK)
    o[OI.KARAMBWAN_COUNT] = inv.count(Ids.KARAMBWAN)
    o[OI.PRAYER_POINTS] = lv[Skill.PRAYER] / base[Skill.PRAYER]
    o[OI.PLAYER_FROZEN_TICKS] = p.remaining(TimerId.FREEZE)
    o[OI.TARGET_FROZEN_TICKS] = q.remaining(TimerId.FREEZE)
    o[OI.PLAYER_FROZEN_IMMUNITY_TICKS] = p.remaining(TimerId.FREEZE_IMMUNITY)
    o[OI.TARGET_FROZEN_IMMUNITY_TICKS] = q.remaining(TimerId.FREEZE_IMMUNITY)
    o[OI.PLAYER_LOCATION_CAN_MELEE] = movement.in_melee_range(p, q)
    o[OI.STRENGTH_LEVEL] = lv[Skill.STRENGTH] / (base[Skill.STRENGTH] + combat_boost(base[Skill.STRENGTH]))
    o[OI.ATTACK_LEVEL] = lv[Skill.ATTACK] / (base[Skill.ATTACK] + combat_boost(base[Skill.ATTACK]))
    o[OI.DEFENSE_LEVEL] = lv[Skill.DEFENCE] / (base[Skill.DEFENCE] + combat_boost(base[Skill.DEFENCE]))
    o[OI.RANGED_LEVEL] = lv[Skill.RANGED] / (base[Skill.RANGED] + ranging_boost(base[Skill.RANGED]))
    o[OI.MAGIC_LEVEL] = lv[Skill.MAGIC] / base[Skill.MAGIC]
    o[OI.ATTACK_CYCLE_TICKS] = p.remaining(TimerId.ATTACK)
    o[OI.FOOD_CYCLE_TICKS] = p.remaining(TimerId.FOOD)
    o[OI.POTION_CYCLE_TICKS] = p.remaining(TimerId.POTION)
    o[OI.KARAMBWAN_CYCLE_TICKS] = p.remaining(TimerId.KARAMBWAN)
    u = p.timer_uncapped[TimerId.ATTACK]
    if u == TIMER_NEVER_SET:
        u = FOOD_DELAY_NEVER
    o[OI.FOOD_ATTACK_DELAY] = min(max(u - 1, -3), 0) + 3
    o[OI.TARGET_ATTACK_CYCLE_TICKS] = q.remaining(TimerId.ATTACK)
    o[OI.TARGET_POTION_CYCLE_TICKS] = q.remaining(TimerId.FOOD)
    pend_t, first_t = _pending_on(q)
    _, first_p = _pending_on(p)
    o[OI.PENDING_DAMAGE_ON_TARGET] = pend_t / q.base_hp
    o[OI.TICKS_UNTIL_HIT_ON_TARGET] = first_t
    o[OI.TICKS_UNTIL_HIT_ON_PLAYER] = first_p
    my_hits, their_hits = ev_me.hits, ev_them.hits
    o[OI.PLAYER_JUST_ATTACKED] = bool(my_hits)
    o[OI.TARGET_JUST_ATTACKED] = bool(their_hits)
    o[OI.TICK_NEW_ATTACK_DAMAGE] = my_hits[-1].hit.total / q.base_hp if my_hits else 0.0
    o[OI.DAMAGE_ON_PLAYER_TICK] = sum(p.hitsplats) / p.base_hp
    o[OI.DAMAGE_ON_TARGET_TICK] = sum(q.hitsplats) / q.base_hp
    o[OI.PLAYER_ATTACKING_TARGET] = p.target is q
    o[OI.PLAYER_IS_MOVING] = p.moving
    o[OI.TARGET_IS_MOVING] = q.moving
    o[OI.PLAYER_HAS_PID] = p.pid < q.pid
    ancient = p.spellbook is Spellbook.ANCIENT
    o[OI.ICE_BARRAGE_USABLE] = ancient and lv[Skill.MAGIC] >= ICE_BARRAGE_LEVEL
    o[OI.BLOOD_BARRAGE_USABLE] = ancient and lv[Skill.MAGIC] >= BLOOD_BARRAGE_LEVEL
    if p.walk_queue:
        ex, ey = p.walk_queue[-1]
        o[OI.DESTINATION_TO_TARGET_DISTANCE] = min(MAX_DISTANCE_OBS, movement.cheb(ex, ey, q.x, q.y))
        o[OI.PLAYER_TO_DESTINATION_DISTANCE] = min(MAX_DISTANCE_OBS, movement.cheb(p.x, p.y, ex, ey))
    else:
        o[OI.DESTINATION_TO_TARGET_DISTANCE] = min(MAX_DISTANCE_OBS, movement.distance(p, q))
        o[OI.PLAYER_TO_DESTINATION_DISTANCE] = 0
    o[OI.PLAYER_TO_TARGET_DISTANCE] = min(MAX_DISTANCE_OBS, movement.distance(p, q))
    o[OI.PLAYER_PRAYER_CORRECT] = any(r.defender_protection is r.hit.style for r in their_hits)
    o[OI.TARGET_PRAYER_CORRECT] = any(r.defender_protection is r.hit.style for r in my_hits)
    ratio = (mine.dealt_scale_sum + 1) / (mine.received_scale_sum + 1)
    o[OI.TOTAL_DAMAGE_DEALT_SCALE] = min(max(ratio, DAMAGE_RATIO_CLAMP[0]), DAMAGE_RATIO_CLAMP[1])
    _hit_statistics(o, mine, theirs)
    for idx, style, bonus, default in _TARGET_SAMPLES:
        sample = theirs.gear_samples[style]
        if sample is None:
            o[idx] = o[default]
        else:
            o[idx] = sample[bonus] / 10 if bonus is Bonus.MAGIC_DAMAGE_TENTHS else sample[bonus]
    vis = visible_bonuses(q)
    o[OI.TARGET_CURRENT_GEAR_RANGED_DEFENCE] = vis[Bonus.RANGED_DEFENCE]
    o[OI.TARGET_CURRENT_GEAR_MAGE_DEFENCE] = vis[Bonus.MAGIC_DEFENCE]
    o[OI.TARGET_CURRENT_GEAR_MELEE_DEFENCE] = vis[Bonus.SLASH_DEFENCE]
    o[OI.IS_LMS_RESTRICTIONS] = sim.fight_mode is FightMode.LMS
    o[OI.IS_PVP_ARENA_RULES] = sim.fight_mode is FightMode.PVP_ARENA
    o[OI.IS_VENG_ACTIVE] = p.vengeance
    o[OI.IS_TARGET_VENG_ACTIVE] = q.vengeance
    o[OI.IS_PLAYER_LUNAR_SPELLBOOK] = p.spellbook is Spellbook.LUNAR
    o[OI.IS_TARGET_LUNAR_SPELLBOOK] = mine.known_lunar_opponent
    o[OI.PLAYER_VENG_COOLDOWN_TICKS] = p.remaining(TimerId.VENGEANCE_COOLDOWN)
    o[OI.TARGET_VENG_COOLDOWN_TICKS] = q.remaining(TimerId.VENGEANCE_COOLDOWN)
    o[OI.IS_BLOOD_MAGIC_ATTACK_AVAILABLE] = mask[HEAD_OFFSETS[3] + 2]
    o[OI.IS_ICE_MAGIC_ATTACK_AVAILABLE] = mask[HEAD_OFFSETS[3] + 1]
    o[OI.IS_MAGIC_SPEC_ATTACK_AVAILABLE] = mask[HEAD_OFFSETS[3] + 3]
    o[OI.IS_RANGE_ATTACK_AVAILABLE] = mask[HEAD_OFFSETS[2] + 1]
    o[OI.IS_RANGE_SPEC_ATTACK_AVAILABLE] = mask[HEAD_OFFSETS[2] + 2]
    o[OI.IS_MELEE_ATTACK_AVAILABLE] = mask[HEAD_OFFSETS[1] + 1]
    o[OI.IS_MELEE_SPEC_ATTACK_AVAILABLE] = mask[HEAD_OFFSETS[1] + 2]
    o[OI.IS_FOOD_ANGLERFISH] = primary_food(p) == Ids.ANGLERFISH
    out[:] = o
    return out


def _hit_statistics(o: list, mine: EpisodeStats, theirs: EpisodeStats) -> None:
    """Entries 66–95 from both players' created-hit records (spec §15.2, counting details)."""
    n_own, n_opp = mine.n_hits, theirs.n_hits
    o[OI.TARGET_ATTACK_CONFIDENCE] = min(1.0, n_opp / CONFIDENCE_HITS)
    (o[OI.TARGET_MELEE_HIT_PERCENT], o[OI.TARGET_MAGIC_HIT_PERCENT], o[OI.TARGET_RANGED_HIT_PERCENT]) = (
        _fractions(theirs.style_counts, n_opp, _STYLE_OBS)
    )
    (o[OI.PLAYER_MELEE_HIT_PERCENT], o[OI.PLAYER_MAGIC_HIT_PERCENT], o[OI.PLAYER_RANGED_HIT_PERCENT]) = (
        _fractions(mine.style_counts, n_own, _STYLE_OBS)
    )
    o[OI.TARGET_NUMBER_OF_HITS_OFF_PRAYER] = (n_opp - theirs.protected_count) / n_opp if n_opp else 0.0
    o[OI.TARGET_PRAYER_CONFIDENCE] = min(1.0, n_own / CONFIDENCE_HITS)
    (o[OI.TARGET_MAGIC_PRAYER_PERCENT], o[OI.TARGET_RANGED_PRAYER_PERCENT], o[OI.TARGET_MELEE_PRAYER_PERCENT]) = (
        _fractions(mine.defender_prayer_counts, n_own, _PRAYER_OBS)
    )
    (o[OI.PLAYER_MAGIC_PRAYER_PERCENT], o[OI.PLAYER_RANGED_PRAYER_PERCENT], o[OI.PLAYER_MELEE_PRAYER_PERCENT]) = (
        _fractions(theirs.defender_prayer_counts, n_opp, _PRAYER_OBS)
    )
    o[OI.TARGET_CORRECT_PRAY_PERCENT] = mine.protected_count / n_own if n_own else 0.0
    w = RECENT_WINDOW
    rt = [s for s, _ in theirs.recent]
    rp = [s for s, _ in mine.recent]
    o[OI.RECENT_TARGET_MELEE_HIT_PERCENT] = rt.count(CombatStyle.MELEE) / w
    o[OI.RECENT_TARGET_MAGIC_HIT_PERCENT] = rt.count(CombatStyle.MAGIC) / w
    o[OI.RECENT_TARGET_RANGED_HIT_PERCENT] = rt.count(CombatStyle.RANGED) / w
    o[OI.RECENT_PLAYER_MELEE_HIT_PERCENT] = rp.count(CombatStyle.MELEE) / w
    o[OI.RECENT_PLAYER_MAGIC_HIT_PERCENT] = rp.count(CombatStyle.MAGIC) / w
    o[OI.RECENT_PLAYER_RANGED_HIT_PERCENT] = rp.count(CombatStyle.RANGED) / w
    o[OI.RECENT_TARGET_NUMBER_OF_HITS_OFF_PRAYER] = sum(1 for _, c in theirs.recent if not c) / w
    tp, pp = mine.recent_prayed, theirs.recent_prayed
    o[OI.RECENT_TARGET_MAGIC_PRAYER_PERCENT] = tp.count(CombatStyle.MAGIC) / w
    o[OI.RECENT_TARGET_RANGED_PRAYER_PERCENT] = tp.count(CombatStyle.RANGED) / w
    o[OI.RECENT_TARGET_MELEE_PRAYER_PERCENT] = tp.count(CombatStyle.MELEE) / w
    o[OI.RECENT_PLAYER_MAGIC_PRAYER_PERCENT] = pp.count(CombatStyle.MAGIC) / w
    o[OI.RECENT_PLAYER_RANGED_PRAYER_PERCENT] = pp.count(CombatStyle.RANGED) / w
    o[OI.RECENT_PLAYER_MELEE_PRAYER_PERCENT] = pp.count(CombatStyle.MELEE) / w
    o[OI.RECENT_TARGET_CORRECT_PRAY_PERCENT] = sum(1 for _, c in mine.recent if c) / w
