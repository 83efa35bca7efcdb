"""Encoding the 176-entry observation vector of spec §15.2 into a preallocated float32 buffer.

The layout (ids, offsets, flags) is declared once in `envs/nh/contract.py`; this module only fills
values, raw as §15.1 asks (any scaling belongs to the policy). Entries that are constant for an
episode (96–141, the loadout's flags and gear totals) are computed once per episode.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from envs.nh import movement
from envs.nh.combat import special_for_weapon
from envs.nh.contract import OBS_SIZE, Head, MageType, MeleeType, Obs, RangedType, logit_index
from envs.nh.fight_protocols import FightView
from envs.nh.items import ITEMS, RANGED_RANGE_TILES, Bonus, CombatStyle, Ids, PotionType, Slot
from envs.nh.loadouts import GearSet, Loadout, weapon_of
from envs.nh.operations import combat_boost, ranging_boost
from envs.nh.prayers import Prayer
from envs.nh.state import TIMER_NEVER_SET, FightMode, PlayerState, Skill, Spellbook, TimerId, weapon_family
from envs.nh.stats import RECENT_WINDOW, EpisodeStats, TickEvents, visible_bonuses

CONFIDENCE_HITS = 20  # §15.2 entries 66, 74: min(1, N / 20)
MAX_DISTANCE_OBS = 7  # §15.2 entries 60–62
DAMAGE_RATIO_CLAMP = (0.5, 2.0)  # §15.2 entry 65
FOOD_DELAY_NEVER = -100  # §15.2 entry 43: u = −100 if the timer does not exist
ICE_BARRAGE_LEVEL = 94  # §15.2 entry 58
BLOOD_BARRAGE_LEVEL = 92  # §15.2 entry 59
MAGIC_DAMAGE_TENTHS_PER_PERCENT = 10  # §15.2 entries 125, 142–159: magic damage bonus in tenths -> percent
MELEE_SPECIAL_CANDIDATES = (
    Ids.DRAGON_DAGGERS | {Ids.ARMADYL_GODSWORD, Ids.DRAGON_CLAWS, Ids.GRANITE_MAUL}
    | {Ids.VESTAS_LONGSWORD, Ids.ANCIENT_GODSWORD, Ids.STATIUS_WARHAMMER}
)  # §12.8
# Style order of entries 67–72 and 82–87, and protection order of 75–80 and 89–94 (§15.2); the C core's
# table generator (`envs/nh/core/gen_tables.py`) reads both, `_TARGET_SAMPLES` and `MELEE_SPECIAL_CANDIDATES`.
_STYLE_OBS = (int(CombatStyle.MELEE), int(CombatStyle.MAGIC), int(CombatStyle.RANGED))
_PRAYER_OBS = (int(CombatStyle.MAGIC), int(CombatStyle.RANGED), int(CombatStyle.MELEE))


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
    v[Obs.MAGIC_STRENGTH] = _set_sum(load, G.MAGIC, B.MAGIC_DAMAGE_TENTHS) / MAGIC_DAMAGE_TENTHS_PER_PERCENT
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


# ---- the per-tick encoder --------------------------------------------------------------------------
# One function per block of the §15.2 table, each writing its entries by name; `ObservationEncoder.encode`
# calls them in layout order over a copy of the episode's static entries (96–141, 160, 161, 164).

_ATTACK_AVAILABLE_FLAGS = (  # §15.2 entries 168–174: repeat the attack flags of the §14.3 mask
    (Obs.IS_BLOOD_MAGIC_ATTACK_AVAILABLE, logit_index(Head.MAGE_ATTACK_TYPE, MageType.BLOOD)),
    (Obs.IS_ICE_MAGIC_ATTACK_AVAILABLE, logit_index(Head.MAGE_ATTACK_TYPE, MageType.ICE)),
    (Obs.IS_MAGIC_SPEC_ATTACK_AVAILABLE, logit_index(Head.MAGE_ATTACK_TYPE, MageType.SPECIAL)),
    (Obs.IS_RANGE_ATTACK_AVAILABLE, logit_index(Head.RANGED_ATTACK_TYPE, RangedType.NORMAL)),
    (Obs.IS_RANGE_SPEC_ATTACK_AVAILABLE, logit_index(Head.RANGED_ATTACK_TYPE, RangedType.SPECIAL)),
    (Obs.IS_MELEE_ATTACK_AVAILABLE, logit_index(Head.MELEE_ATTACK_TYPE, MeleeType.NORMAL)),
    (Obs.IS_MELEE_SPEC_ATTACK_AVAILABLE, logit_index(Head.MELEE_ATTACK_TYPE, MeleeType.SPECIAL)),
)


# §15.2 entries that apply one rule to both players: (own entry, opponent's entry, what the rule checks)
_WEAPON_FAMILY_ENTRIES = (  # 0–2 and 12–14: the wielded weapon's style family (§6.1)
    (Obs.PLAYER_USING_MELEE, Obs.TARGET_USING_MELEE, CombatStyle.MELEE),
    (Obs.PLAYER_USING_RANGED, Obs.TARGET_USING_RANGED, CombatStyle.RANGED),
    (Obs.PLAYER_USING_MAGE, Obs.TARGET_USING_MAGE, CombatStyle.MAGIC),
)
_PRAYER_ENTRIES = (  # 5–9 and 16–20: the prayer is active
    (Obs.PLAYER_MELEE_PRAYER, Obs.TARGET_MELEE_PRAYER, Prayer.PROTECT_FROM_MELEE),
    (Obs.PLAYER_RANGED_PRAYER, Obs.TARGET_RANGED_PRAYER, Prayer.PROTECT_FROM_MISSILES),
    (Obs.PLAYER_MAGIC_PRAYER, Obs.TARGET_MAGIC_PRAYER, Prayer.PROTECT_FROM_MAGIC),
    (Obs.PLAYER_SMITE_PRAYER, Obs.TARGET_SMITE_PRAYER, Prayer.SMITE),
    (Obs.PLAYER_REDEMPTION_PRAYER, Obs.TARGET_REDEMPTION_PRAYER, Prayer.REDEMPTION),
)
# "remaining" (`max(ticks − 1, 0)`, §3) of one player's timer
_OWN_TIMER_ENTRIES = (
    (Obs.PLAYER_FROZEN_TICKS, TimerId.FREEZE),  # 29
    (Obs.PLAYER_FROZEN_IMMUNITY_TICKS, TimerId.FREEZE_IMMUNITY),  # 31
    (Obs.ATTACK_CYCLE_TICKS, TimerId.ATTACK),  # 39
    (Obs.FOOD_CYCLE_TICKS, TimerId.FOOD),  # 40
    (Obs.POTION_CYCLE_TICKS, TimerId.POTION),  # 41
    (Obs.KARAMBWAN_CYCLE_TICKS, TimerId.KARAMBWAN),  # 42
    (Obs.PLAYER_VENG_COOLDOWN_TICKS, TimerId.VENGEANCE_COOLDOWN),  # 166
)
_TARGET_TIMER_ENTRIES = (
    (Obs.TARGET_FROZEN_TICKS, TimerId.FREEZE),  # 30
    (Obs.TARGET_FROZEN_IMMUNITY_TICKS, TimerId.FREEZE_IMMUNITY),  # 32
    (Obs.TARGET_ATTACK_CYCLE_TICKS, TimerId.ATTACK),  # 44
    (Obs.TARGET_POTION_CYCLE_TICKS, TimerId.FOOD),  # 45: the target's FOOD timer, as named in §15.2
    (Obs.TARGET_VENG_COOLDOWN_TICKS, TimerId.VENGEANCE_COOLDOWN),  # 167
)
_DOSE_ENTRIES = (  # 22–25: doses carried
    (Obs.RANGE_POTION_DOSES, PotionType.RANGING),
    (Obs.COMBAT_POTION_DOSES, PotionType.COMBAT),
    (Obs.SUPER_RESTORE_DOSES, PotionType.RESTORE),
    (Obs.BREW_DOSES, PotionType.BREW),
)
_BOOSTED_LEVEL_ENTRIES = (  # 34–37: current level / (base + the potion's boost)
    (Obs.STRENGTH_LEVEL, Skill.STRENGTH),
    (Obs.ATTACK_LEVEL, Skill.ATTACK),
    (Obs.DEFENSE_LEVEL, Skill.DEFENCE),
    (Obs.RANGED_LEVEL, Skill.RANGED),
)


def _write_weapons_prayers_and_health(out: np.ndarray, p: PlayerState, q: PlayerState, mine: EpisodeStats) -> None:
    """Entries 0–21: both players' weapon family, special weapon, active prayers, energy; hitpoints."""
    family, target_family = weapon_family(p), weapon_family(q)
    for own, target, style in _WEAPON_FAMILY_ENTRIES:
        out[own] = family is style
        out[target] = target_family is style
    for own, target, prayer in _PRAYER_ENTRIES:
        out[own] = prayer in p.prayers
        out[target] = prayer in q.prayers
    out[Obs.PLAYER_SPEC_EQUIPPED] = p.equipment[Slot.WEAPON] in MELEE_SPECIAL_CANDIDATES
    out[Obs.TARGET_SPEC_EQUIPPED] = q.equipment[Slot.WEAPON] in MELEE_SPECIAL_CANDIDATES
    out[Obs.SPECIAL_ENERGY_PERCENT] = p.special_energy
    out[Obs.TARGET_SPECIAL_PERCENT] = q.special_energy
    out[Obs.PLAYER_HEALTH_PERCENT] = p.hp / p.base_hp
    out[Obs.TARGET_HEALTH_PERCENT] = mine.observed_opponent_hp  # sampled on hitsplats [QUIRK 1, DROP]


def _write_supplies(out: np.ndarray, p: PlayerState) -> None:
    """Entries 22–28: potion doses, food, karambwans and prayer points."""
    inv = p.inventory_facts()
    for entry, potion in _DOSE_ENTRIES:
        out[entry] = inv.doses[potion]
    out[Obs.FOOD_COUNT] = inv.anglerfish + inv.sharks  # karambwans are entry 27 [QUIRK 2, DROP]
    out[Obs.KARAMBWAN_COUNT] = inv.karambwans
    out[Obs.PRAYER_POINTS] = p.level[Skill.PRAYER] / p.base[Skill.PRAYER]


def _write_timers(out: np.ndarray, p: PlayerState, q: PlayerState) -> None:
    """Entries 29–32, 39–45, 166, 167: timers remaining, and the food-attack delay."""
    for entry, timer in _OWN_TIMER_ENTRIES:
        out[entry] = p.remaining(timer)
    for entry, timer in _TARGET_TIMER_ENTRIES:
        out[entry] = q.remaining(timer)
    out[Obs.FOOD_ATTACK_DELAY] = food_attack_delay(p)


def _write_levels(out: np.ndarray, p: PlayerState, boosted_caps: dict[Skill, int]) -> None:
    """Entries 34–38: current levels over their potion-boosted caps (Magic over its base)."""
    for entry, skill in _BOOSTED_LEVEL_ENTRIES:
        out[entry] = p.level[skill] / boosted_caps[skill]
    out[Obs.MAGIC_LEVEL] = p.level[Skill.MAGIC] / p.base[Skill.MAGIC]


def boosted_level_caps(p: PlayerState) -> dict[Skill, int]:
    """Denominators of entries 34–37: base + the boost of the potion for that skill (spec §15.2, §8.3)."""
    base = p.base
    return {
        Skill.STRENGTH: base[Skill.STRENGTH] + combat_boost(base[Skill.STRENGTH]),
        Skill.ATTACK: base[Skill.ATTACK] + combat_boost(base[Skill.ATTACK]),
        Skill.DEFENCE: base[Skill.DEFENCE] + combat_boost(base[Skill.DEFENCE]),
        Skill.RANGED: base[Skill.RANGED] + ranging_boost(base[Skill.RANGED]),
    }


def food_attack_delay(p: PlayerState) -> int:
    """Entry 43: how far eating now would delay the next attack, 0..3 (spec §15.2)."""
    u = p.timer_uncapped[TimerId.ATTACK]
    if u == TIMER_NEVER_SET:
        u = FOOD_DELAY_NEVER
    return min(max(u - 1, -3), 0) + 3


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


def _write_pending_and_new_hits(
    out: np.ndarray, p: PlayerState, q: PlayerState, ev_me: TickEvents, ev_them: TickEvents
) -> None:
    """Entries 46–53: damage queued on both players, the hits created and the hitsplats of this tick."""
    pending_on_target, first_on_target = _pending_on(q)
    out[Obs.PENDING_DAMAGE_ON_TARGET] = pending_on_target / q.base_hp
    out[Obs.TICKS_UNTIL_HIT_ON_TARGET] = first_on_target
    out[Obs.TICKS_UNTIL_HIT_ON_PLAYER] = _pending_on(p)[1]
    out[Obs.PLAYER_JUST_ATTACKED] = bool(ev_me.hits)
    out[Obs.TARGET_JUST_ATTACKED] = bool(ev_them.hits)
    out[Obs.TICK_NEW_ATTACK_DAMAGE] = ev_me.hits[-1].hit.total / q.base_hp if ev_me.hits else 0.0
    out[Obs.DAMAGE_ON_PLAYER_TICK] = sum(p.hitsplats) / p.base_hp
    out[Obs.DAMAGE_ON_TARGET_TICK] = sum(q.hitsplats) / q.base_hp


def _write_movement_and_spells(out: np.ndarray, p: PlayerState, q: PlayerState) -> None:
    """Entries 33 and 54–62: melee range, targeting, movement, PID, barrage levels and distances (capped at 7)."""
    ancient = p.spellbook is Spellbook.ANCIENT
    distance = movement.distance(p, q)
    if p.walk_queue:
        ex, ey = p.walk_queue[-1]
        destination_to_target = movement.cheb(ex, ey, q.x, q.y)
        player_to_destination = movement.cheb(p.x, p.y, ex, ey)
    else:
        destination_to_target, player_to_destination = distance, 0
    out[Obs.PLAYER_LOCATION_CAN_MELEE] = movement.in_melee_range(p, q)
    out[Obs.PLAYER_ATTACKING_TARGET] = p.target is q
    out[Obs.PLAYER_IS_MOVING] = p.moving
    out[Obs.TARGET_IS_MOVING] = q.moving
    out[Obs.PLAYER_HAS_PID] = p.pid < q.pid
    out[Obs.ICE_BARRAGE_USABLE] = ancient and p.level[Skill.MAGIC] >= ICE_BARRAGE_LEVEL
    out[Obs.BLOOD_BARRAGE_USABLE] = ancient and p.level[Skill.MAGIC] >= BLOOD_BARRAGE_LEVEL
    out[Obs.DESTINATION_TO_TARGET_DISTANCE] = min(MAX_DISTANCE_OBS, destination_to_target)
    out[Obs.PLAYER_TO_DESTINATION_DISTANCE] = min(MAX_DISTANCE_OBS, player_to_destination)
    out[Obs.PLAYER_TO_TARGET_DISTANCE] = min(MAX_DISTANCE_OBS, distance)


def _protected_hit_created(ev: TickEvents) -> bool:
    """A hit created this tick met its defender's matching protection prayer (entries 63, 64)."""
    return any(r.defender_protection is r.hit.style for r in ev.hits)


def damage_dealt_scale(mine: EpisodeStats) -> float:
    """Entry 65: `clamp((Σdealt + 1) / (Σreceived + 1), 0.5, 2)` over the episode (spec §15.2)."""
    low, high = DAMAGE_RATIO_CLAMP
    ratio = (mine.dealt_scale_sum + 1) / (mine.received_scale_sum + 1)
    return min(max(ratio, low), high)


def _write_prayer_correctness_and_damage_ratio(
    out: np.ndarray, mine: EpisodeStats, ev_me: TickEvents, ev_them: TickEvents
) -> None:
    """Entries 63–65."""
    out[Obs.PLAYER_PRAYER_CORRECT] = _protected_hit_created(ev_them)
    out[Obs.TARGET_PRAYER_CORRECT] = _protected_hit_created(ev_me)
    out[Obs.TOTAL_DAMAGE_DEALT_SCALE] = damage_dealt_scale(mine)


def _write_target_gear(out: np.ndarray, q: PlayerState) -> None:
    """Entries 142–144: the defence bonuses of what the opponent wears now (ring and ammo excluded)."""
    visible = visible_bonuses(q)
    out[Obs.TARGET_CURRENT_GEAR_RANGED_DEFENCE] = visible[Bonus.RANGED_DEFENCE]
    out[Obs.TARGET_CURRENT_GEAR_MAGE_DEFENCE] = visible[Bonus.MAGIC_DEFENCE]
    out[Obs.TARGET_CURRENT_GEAR_MELEE_DEFENCE] = visible[Bonus.SLASH_DEFENCE]


def _write_vengeance_and_spellbooks(out: np.ndarray, p: PlayerState, q: PlayerState, mine: EpisodeStats) -> None:
    """Entries 162, 163, 165 (164, the own spellbook, is static; 166 and 167 are timers)."""
    out[Obs.IS_VENG_ACTIVE] = p.vengeance
    out[Obs.IS_TARGET_VENG_ACTIVE] = q.vengeance
    out[Obs.IS_TARGET_LUNAR_SPELLBOOK] = mine.known_lunar_opponent


def _write_attack_availability_and_food(out: np.ndarray, p: PlayerState, mask: Sequence[bool]) -> None:
    """Entries 168–175: the attack flags of this tick's environment mask; whether the food is anglerfish."""
    for entry, mask_index in _ATTACK_AVAILABLE_FLAGS:
        out[entry] = mask[mask_index]
    out[Obs.IS_FOOD_ANGLERFISH] = p.inventory_facts().primary_food == Ids.ANGLERFISH


class AttackSummary(NamedTuple):
    """What entries 66–95 read from the hits one player created this episode (spec §15.2, counting details).

    Each value appears once in the attacker's own observation and once in its opponent's, at different
    entries (`_write_hit_statistics` places them). Shares keyed by `CombatStyle` are of the attacker's hits;
    `defender_prayer_share` keys by the style the defender's protection prayer covered.
    """

    confidence: float
    """min(1, hits / 20)."""
    style_share: dict[CombatStyle, float]
    off_prayer_share: float
    """Hits the defender was not protecting against."""
    defender_prayer_share: dict[CombatStyle, float]
    protected_share: float
    recent_style_share: dict[CombatStyle, float]
    """Over the last `RECENT_WINDOW` hits, always divided by the window."""
    recent_off_prayer_share: float
    recent_protected_share: float
    recent_defender_prayer_share: dict[CombatStyle, float]


def _shares(counts: list[int], n: int) -> dict[CombatStyle, float]:
    """Each style's count over `n` hits (all 0 with no hit)."""
    return {style: counts[style] / n if n else 0.0 for style in CombatStyle}


def attack_summary(st: EpisodeStats) -> AttackSummary:
    """`AttackSummary` of one player's created-hit records (spec §15.2 entries 66–95)."""
    n = st.n_hits
    window = RECENT_WINDOW
    recent_styles = [style for style, _ in st.recent]
    recent_protected = [protected for _, protected in st.recent]
    return AttackSummary(
        confidence=min(1.0, n / CONFIDENCE_HITS),
        style_share=_shares(st.style_counts, n),
        off_prayer_share=(n - st.protected_count) / n if n else 0.0,
        defender_prayer_share=_shares(st.defender_prayer_counts, n),
        protected_share=st.protected_count / n if n else 0.0,
        recent_style_share={style: recent_styles.count(style) / window for style in CombatStyle},
        recent_off_prayer_share=recent_protected.count(False) / window,
        recent_protected_share=recent_protected.count(True) / window,
        recent_defender_prayer_share={style: st.recent_prayed.count(style) / window for style in CombatStyle},
    )


def _write_hit_statistics(out: np.ndarray, mine: AttackSummary, theirs: AttackSummary) -> None:
    """Entries 66–95 from both players' `AttackSummary` ("target" is the opponent's, "player" the own)."""
    melee, magic, ranged = CombatStyle.MELEE, CombatStyle.MAGIC, CombatStyle.RANGED
    out[Obs.TARGET_ATTACK_CONFIDENCE] = theirs.confidence
    out[Obs.TARGET_MELEE_HIT_PERCENT] = theirs.style_share[melee]
    out[Obs.TARGET_MAGIC_HIT_PERCENT] = theirs.style_share[magic]
    out[Obs.TARGET_RANGED_HIT_PERCENT] = theirs.style_share[ranged]
    out[Obs.PLAYER_MELEE_HIT_PERCENT] = mine.style_share[melee]
    out[Obs.PLAYER_MAGIC_HIT_PERCENT] = mine.style_share[magic]
    out[Obs.PLAYER_RANGED_HIT_PERCENT] = mine.style_share[ranged]
    out[Obs.TARGET_NUMBER_OF_HITS_OFF_PRAYER] = theirs.off_prayer_share
    out[Obs.TARGET_PRAYER_CONFIDENCE] = mine.confidence
    out[Obs.TARGET_MAGIC_PRAYER_PERCENT] = mine.defender_prayer_share[magic]
    out[Obs.TARGET_RANGED_PRAYER_PERCENT] = mine.defender_prayer_share[ranged]
    out[Obs.TARGET_MELEE_PRAYER_PERCENT] = mine.defender_prayer_share[melee]
    out[Obs.PLAYER_MAGIC_PRAYER_PERCENT] = theirs.defender_prayer_share[magic]
    out[Obs.PLAYER_RANGED_PRAYER_PERCENT] = theirs.defender_prayer_share[ranged]
    out[Obs.PLAYER_MELEE_PRAYER_PERCENT] = theirs.defender_prayer_share[melee]
    out[Obs.TARGET_CORRECT_PRAY_PERCENT] = mine.protected_share
    out[Obs.RECENT_TARGET_MELEE_HIT_PERCENT] = theirs.recent_style_share[melee]
    out[Obs.RECENT_TARGET_MAGIC_HIT_PERCENT] = theirs.recent_style_share[magic]
    out[Obs.RECENT_TARGET_RANGED_HIT_PERCENT] = theirs.recent_style_share[ranged]
    out[Obs.RECENT_PLAYER_MELEE_HIT_PERCENT] = mine.recent_style_share[melee]
    out[Obs.RECENT_PLAYER_MAGIC_HIT_PERCENT] = mine.recent_style_share[magic]
    out[Obs.RECENT_PLAYER_RANGED_HIT_PERCENT] = mine.recent_style_share[ranged]
    out[Obs.RECENT_TARGET_NUMBER_OF_HITS_OFF_PRAYER] = theirs.recent_off_prayer_share
    out[Obs.RECENT_TARGET_MAGIC_PRAYER_PERCENT] = mine.recent_defender_prayer_share[magic]
    out[Obs.RECENT_TARGET_RANGED_PRAYER_PERCENT] = mine.recent_defender_prayer_share[ranged]
    out[Obs.RECENT_TARGET_MELEE_PRAYER_PERCENT] = mine.recent_defender_prayer_share[melee]
    out[Obs.RECENT_PLAYER_MAGIC_PRAYER_PERCENT] = theirs.recent_defender_prayer_share[magic]
    out[Obs.RECENT_PLAYER_RANGED_PRAYER_PERCENT] = theirs.recent_defender_prayer_share[ranged]
    out[Obs.RECENT_PLAYER_MELEE_PRAYER_PERCENT] = theirs.recent_defender_prayer_share[melee]
    out[Obs.RECENT_TARGET_CORRECT_PRAY_PERCENT] = mine.recent_protected_share


_TARGET_SAMPLES = (
    # entry, style of the opponent's hit that samples it, bonus, the own entry used until then (§15.2 145–159)
    (Obs.TARGET_MAGIC_ACCURACY, CombatStyle.MAGIC, Bonus.MAGIC_ATTACK, Obs.MAGIC_ACCURACY),
    (Obs.TARGET_MAGIC_STRENGTH, CombatStyle.MAGIC, Bonus.MAGIC_DAMAGE_TENTHS, Obs.MAGIC_STRENGTH),
    (Obs.TARGET_RANGED_ACCURACY, CombatStyle.RANGED, Bonus.RANGED_ATTACK, Obs.RANGED_ACCURACY),
    (Obs.TARGET_RANGED_STRENGTH, CombatStyle.RANGED, Bonus.RANGED_STRENGTH, Obs.RANGED_STRENGTH),
    (Obs.TARGET_MELEE_ACCURACY, CombatStyle.MELEE, Bonus.SLASH_ATTACK, Obs.MELEE_ACCURACY),
    (Obs.TARGET_MELEE_STRENGTH, CombatStyle.MELEE, Bonus.MELEE_STRENGTH, Obs.MELEE_STRENGTH),
    (Obs.TARGET_MAGIC_GEAR_RANGED_DEFENCE, CombatStyle.MAGIC, Bonus.RANGED_DEFENCE, Obs.MAGIC_GEAR_RANGED_DEFENCE),
    (Obs.TARGET_MAGIC_GEAR_MAGE_DEFENCE, CombatStyle.MAGIC, Bonus.MAGIC_DEFENCE, Obs.MAGIC_GEAR_MAGE_DEFENCE),
    (Obs.TARGET_MAGIC_GEAR_MELEE_DEFENCE, CombatStyle.MAGIC, Bonus.SLASH_DEFENCE, Obs.MAGIC_GEAR_MELEE_DEFENCE),
    (Obs.TARGET_RANGED_GEAR_RANGED_DEFENCE, CombatStyle.RANGED, Bonus.RANGED_DEFENCE, Obs.RANGED_GEAR_RANGED_DEFENCE),
    (Obs.TARGET_RANGED_GEAR_MAGE_DEFENCE, CombatStyle.RANGED, Bonus.MAGIC_DEFENCE, Obs.RANGED_GEAR_MAGE_DEFENCE),
    (Obs.TARGET_RANGED_GEAR_MELEE_DEFENCE, CombatStyle.RANGED, Bonus.SLASH_DEFENCE, Obs.RANGED_GEAR_MELEE_DEFENCE),
    (Obs.TARGET_MELEE_GEAR_RANGED_DEFENCE, CombatStyle.MELEE, Bonus.RANGED_DEFENCE, Obs.MELEE_GEAR_RANGED_DEFENCE),
    (Obs.TARGET_MELEE_GEAR_MAGE_DEFENCE, CombatStyle.MELEE, Bonus.MAGIC_DEFENCE, Obs.MELEE_GEAR_MAGE_DEFENCE),
    (Obs.TARGET_MELEE_GEAR_MELEE_DEFENCE, CombatStyle.MELEE, Bonus.SLASH_DEFENCE, Obs.MELEE_GEAR_MELEE_DEFENCE),
)


def _write_target_gear_samples(out: np.ndarray, theirs: EpisodeStats) -> None:
    """Entries 145–159: the opponent's gear sampled at its last hit of each style, else the own static value.

    Reads the own values (124–141) from `out`, so it runs after the static entries are copied in.
    """
    for entry, style, bonus, own_entry in _TARGET_SAMPLES:
        sample = theirs.gear_samples[style]
        if sample is None:
            out[entry] = out[own_entry]
        elif bonus is Bonus.MAGIC_DAMAGE_TENTHS:
            out[entry] = sample[bonus] / MAGIC_DAMAGE_TENTHS_PER_PERCENT  # in percent, as entry 125
        else:
            out[entry] = sample[bonus]


class ObservationEncoder:
    """Player `p`'s §15.2 observation for one episode, built at reset (players, statistics and tick events
    live for the whole episode)."""

    __slots__ = ("_boosted_caps", "_ev_me", "_ev_them", "_mine", "_p", "_q", "_static", "_summaries", "_theirs")

    def __init__(
        self, sim: FightView, p: PlayerState, static: np.ndarray, shared: dict[int, Any] | None = None
    ) -> None:
        """`shared`: a dict both players' encoders of the episode share, so that each player's
        `AttackSummary` is computed once per hit it creates rather than by both encoders every tick."""
        q = sim.opponent(p)
        self._summaries: dict[int, Any] = {} if shared is None else shared
        self._p, self._q = p, q
        self._mine, self._theirs = sim.stats[p.index], sim.stats[q.index]
        self._ev_me, self._ev_them = sim.events[p.index], sim.events[q.index]
        self._static = static
        self._boosted_caps = boosted_level_caps(p)

    def encode(self, mask: Sequence[bool], out: np.ndarray) -> np.ndarray:
        """Fill `out` with the observation at the end of the tick (spec §15.2), block by block.

        `mask` is `p`'s environment mask of this tick (entries 168–174 repeat its attack flags).
        """
        p, q, mine, theirs = self._p, self._q, self._mine, self._theirs
        out[:] = self._static  # 96–141, 160, 161, 164
        _write_weapons_prayers_and_health(out, p, q, mine)  # 0–21
        _write_supplies(out, p)  # 22–28
        _write_timers(out, p, q)  # 29–32, 39–45, 166, 167
        _write_levels(out, p, self._boosted_caps)  # 34–38
        _write_pending_and_new_hits(out, p, q, self._ev_me, self._ev_them)  # 46–53
        _write_movement_and_spells(out, p, q)  # 33, 54–62
        _write_prayer_correctness_and_damage_ratio(out, mine, self._ev_me, self._ev_them)  # 63–65
        _write_hit_statistics(out, self._summary(mine), self._summary(theirs))  # 66–95
        _write_target_gear(out, q)  # 142–144
        _write_target_gear_samples(out, theirs)  # 145–159
        _write_vengeance_and_spellbooks(out, p, q, mine)  # 162, 163, 165
        _write_attack_availability_and_food(out, p, mask)  # 168–175
        return out

    def _summary(self, st: EpisodeStats) -> AttackSummary:
        """`attack_summary(st)`, recomputed when `st` has a new hit (shared with the opponent's encoder)."""
        cached = self._summaries.get(id(st))
        if cached is None or cached[0] is not st or cached[1] != st.n_hits:
            cached = (st, st.n_hits, attack_summary(st))
            self._summaries[id(st)] = cached
        return cached[2]


def encode(sim: FightView, p: PlayerState, static: np.ndarray, mask: np.ndarray, out: np.ndarray) -> np.ndarray:
    """Fill `out` with player `p`'s observation at the end of the tick (spec §15.2).

    `mask` is `p`'s environment mask of this tick (entries 168–174 repeat its attack flags). One-off
    form of `ObservationEncoder`; the engine keeps one encoder per player for the episode.
    """
    return ObservationEncoder(sim, p, static).encode(mask, out)
