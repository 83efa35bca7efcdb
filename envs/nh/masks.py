"""The environment masks of spec §14.3: 45 booleans in head order, recomputed at the end of every tick.

The dependency rules of §14.2 are not applied here; they belong to the action sampler. A head may
come back with no legal value (e.g. head 11 with no prayer points left).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np

from envs.nh import movement
from envs.nh.combat import special_for_weapon
from envs.nh.contract import HEAD_SIZES, NUM_LOGITS
from envs.nh.fight_view import FightView
from envs.nh.items import ITEMS, POT_BREW, POT_COMBAT, POT_RANGING, POT_RESTORE, SLOT_SHIELD, Ids, PotionType
from envs.nh.loadouts import GearSet, Loadout, weapon_of
from envs.nh.operations import combat_boost, ranging_boost
from envs.nh.params import FightParams
from envs.nh.state import (
    EMPTY,
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
    T_KARAMBWAN,
    T_POTION,
    T_VENGEANCE_COOLDOWN,
    FightMode,
    PlayerState,
    Spellbook,
)

NUM_MASK = NUM_LOGITS
ICE_MIN_MAGIC = 58  # §14.3 iceOK (Ice Rush)
BLOOD_MIN_MAGIC = 56  # §14.3 bloodOK (Blood Rush)
FARCAST_DISTANCES = range(2, 8)  # §14.3: farOK(2) … farOK(7) [QUIRK 15, DROP]
GMAUL_SPEC_COST = 50  # §14.3 gmaulOK


@dataclass(frozen=True, slots=True)
class LoadoutFacts:
    """What the masks need to know about a loadout, computed once per episode."""

    magic_set: bool
    magic_special_cost: int | None  # Volatile nightmare staff in the magic set
    ranged_two_handed: bool
    ranged_special_cost: int | None
    melee_two_handed: bool
    spec_weapon: int | None
    spec_two_handed: bool
    spec_cost: int | None
    # boosted caps of the potion rules (§14.3 head 4, §8.3), from the loadout's base levels
    brew_defence_cap: int = 0
    """Base Defence + the brew's raise `2 + floor(0.20 × base)`."""
    combat_caps: tuple[int, int, int] = (0, 0, 0)
    """Attack, Strength, Defence: base + `combat_boost(base)`."""
    ranged_cap: int = 0
    """Ranged: base + `ranging_boost(base)`."""


def loadout_facts(load: Loadout) -> LoadoutFacts:
    """Per-episode constants of the masks (spec §14.3, §12.8)."""
    ranged = weapon_of(load.sets[GearSet.RANGED])
    melee = weapon_of(load.sets[GearSet.MELEE])
    spec = load.melee_special_weapon
    rs = special_for_weapon(ranged) if ranged is not None else None
    ss = special_for_weapon(spec) if spec is not None else None
    vns = special_for_weapon(Ids.VOLATILE_NIGHTMARE_STAFF)
    base = load.base_levels
    return LoadoutFacts(
        magic_set=bool(load.sets[GearSet.MAGIC]),
        magic_special_cost=vns[1] if (vns and Ids.VOLATILE_NIGHTMARE_STAFF in load.sets[GearSet.MAGIC]) else None,
        ranged_two_handed=ranged is not None and ITEMS[ranged].two_handed,
        ranged_special_cost=rs[1] if rs else None,
        melee_two_handed=melee is not None and ITEMS[melee].two_handed,
        spec_weapon=spec,
        spec_two_handed=spec is not None and ITEMS[spec].two_handed,
        spec_cost=ss[1] if ss else None,
        brew_defence_cap=base[SK_DEFENCE] + 2 + base[SK_DEFENCE] * 20 // 100,
        combat_caps=(
            base[SK_ATTACK] + combat_boost(base[SK_ATTACK]),
            base[SK_STRENGTH] + combat_boost(base[SK_STRENGTH]),
            base[SK_DEFENCE] + combat_boost(base[SK_DEFENCE]),
        ),
        ranged_cap=base[SK_RANGED] + ranging_boost(base[SK_RANGED]),
    )


def _ring_in_wilderness(tx: int, ty: int, k: int) -> bool:
    """The ring at distance k around T has a wilderness tile iff its square meets the (much larger) box."""
    wx, wy = movement.WILDERNESS_X, movement.WILDERNESS_Y
    return tx - k <= wx[1] and tx + k >= wx[0] and ty - k <= wy[1] and ty + k >= wy[0]


def _candidate_ok(px: int, py: int, tx: int, ty: int, offsets: tuple[tuple[int, int], ...]) -> bool:
    """A §5.8 candidate exists and differs from the agent's tile (it is the unique best if it is one).

    `movement.in_wilderness` is inlined: this runs twice per player and tick.
    """
    if _WX0 <= px <= _WX1 and _WY0 <= py <= _WY1:
        for ox, oy in offsets:
            if px == tx + ox and py == ty + oy:
                return False
    for ox, oy in offsets:
        x, y = tx + ox, ty + oy
        if _WX0 <= x <= _WX1 and _WY0 <= y <= _WY1:
            return True
    return False


def has_potion(p: PlayerState, potion: PotionType) -> bool:
    return p.potion_doses(potion) > 0


# members bound once: enum attribute access costs ~200 ns on Python 3.11, the masks read ~40
_ANCIENT, _LUNAR, _LMS = Spellbook.ANCIENT, Spellbook.LUNAR, FightMode.LMS
_GRANITE_MAUL, _ANGLERFISH = Ids.GRANITE_MAUL, Ids.ANGLERFISH
_WX0, _WX1 = movement.WILDERNESS_X
_WY0, _WY1 = movement.WILDERNESS_Y
_FAR_MIN, _FAR_MAX = FARCAST_DISTANCES[0], FARCAST_DISTANCES[-1]
_MASK = struct.Struct(f"{NUM_MASK}?")
if HEAD_SIZES != (4, 3, 3, 4, 5, 2, 2, 2, 2, 5, 7, 6) or len(FARCAST_DISTANCES) != HEAD_SIZES[10] - 1:
    raise AssertionError("the §14.1 head layout changed: update `mask_values`, which lists the 45 values in order")


def compute_masks(
    sim: FightView, p: PlayerState, facts: LoadoutFacts, known_lunar: bool, out: np.ndarray | None = None
) -> np.ndarray:
    """Fill the 45 environment mask booleans for player `p` (spec §14.3)."""
    m = out if out is not None else np.zeros(NUM_MASK, dtype=bool)
    m[:] = mask_values(sim, p, facts, known_lunar)
    return m


def pack_masks(values: list[bool], out: np.ndarray) -> None:
    """Write `mask_values`' list into a contiguous 45-entry bool array with one C call."""
    _MASK.pack_into(out, 0, *values)


def mask_values(sim: FightView, p: PlayerState, facts: LoadoutFacts, known_lunar: bool) -> list[bool]:
    """The 45 environment mask booleans for player `p` in head order, as a list (spec §14.3).

    "Remaining ticks = 0" (spec §3: `max(ticks − 1, 0)`) is written `ticks <= 1` throughout.
    """
    prm: FightParams = sim.params
    q = sim.players[1 - p.index]
    lv, base = p.level, p.base
    ticks, qticks = p.timer_ticks, q.timer_ticks
    can_attack = ticks[T_ATTACK] <= 1
    gate = can_attack or not prm.only_switch_gear_when_attack_soon
    can_move = ticks[T_FREEZE] <= 1
    target_can_move = qticks[T_FREEZE] <= 1
    target_attack_ready = qticks[T_ATTACK] <= 1
    px, py, qx, qy = p.x, p.y, q.x, q.y
    dx, dy = px - qx, py - qy
    adx, ady = (dx if dx >= 0 else -dx), (dy if dy >= 0 else -dy)
    in_melee = adx + ady == 1  # movement.in_melee_range
    can_melee = in_melee or can_move
    inv = p.inventory_facts()
    doses = inv.doses
    can_2h = inv.has_free_slot or p.equipment[SLOT_SHIELD] == EMPTY
    energy = p.special_energy
    ancient = p.spellbook is _ANCIENT
    magic = lv[SK_MAGIC]
    hp, base_hp = lv[SK_HITPOINTS], base[SK_HITPOINTS]

    ice = gate and facts.magic_set and ancient and magic >= ICE_MIN_MAGIC
    blood = gate and facts.magic_set and ancient and magic >= BLOOD_MIN_MAGIC and hp < base_hp
    mage_spec = gate and facts.magic_special_cost is not None and energy >= facts.magic_special_cost
    ranged = gate and (not facts.ranged_two_handed or can_2h)
    ranged_spec = ranged and facts.ranged_special_cost is not None and energy >= facts.ranged_special_cost
    melee = gate and can_melee and (not facts.melee_two_handed or can_2h)
    gmaul = facts.spec_weapon == _GRANITE_MAUL and energy >= GMAUL_SPEC_COST
    melee_spec = (
        (gmaul or gate)
        and can_melee
        and (not facts.spec_two_handed or can_2h)
        and facts.spec_cost is not None
        and energy >= facts.spec_cost
    )
    # head 4: potions
    brew_ok = restore_ok = combat_ok = ranging_ok = False
    if ticks[T_POTION] <= 1:
        brew_useful = lv[SK_DEFENCE] < facts.brew_defence_cap - 1 or hp <= base_hp
        brew_ok = brew_useful and doses[POT_BREW] > 0
        below = (  # §14.3: any of Att/Def/Str/Rng/Mag/Prayer below base
            lv[SK_ATTACK] < base[SK_ATTACK]
            or lv[SK_DEFENCE] < base[SK_DEFENCE]
            or lv[SK_STRENGTH] < base[SK_STRENGTH]
            or lv[SK_RANGED] < base[SK_RANGED]
            or lv[SK_MAGIC] < base[SK_MAGIC]
            or lv[SK_PRAYER] < base[SK_PRAYER]
        )
        restore_ok = below and doses[POT_RESTORE] > 0
        a_cap, s_cap, d_cap = facts.combat_caps
        combat_useful = a_cap > lv[SK_ATTACK] + 1 or s_cap > lv[SK_STRENGTH] + 1 or d_cap > lv[SK_DEFENCE] + 1
        combat_ok = combat_useful and doses[POT_COMBAT] > 0
        ranging_ok = facts.ranged_cap > lv[SK_RANGED] + 1 and doses[POT_RANGING] > 0
    # head 5: food
    food = inv.primary_food
    eat_ok = False
    if ticks[T_FOOD] <= 1 and food is not None:
        eat_ok = hp <= base_hp if food == _ANGLERFISH else hp < base_hp
    # heads 9–10: movement; farOK(k) for k = 2..7 (the ring at distance k around the target)
    move_ok = can_move and (prm.allow_moving_if_can_attack or not can_attack)
    d = adx if adx > ady else ady
    p_wild = _WX0 <= px <= _WX1 and _WY0 <= py <= _WY1  # movement.in_wilderness
    if _WX0 <= qx <= _WX1 and _WY0 <= qy <= _WY1:  # every ring around a target inside the box meets it
        far = [True] * len(FARCAST_DISTANCES)
        if p_wild and _FAR_MIN <= d <= _FAR_MAX:
            far[d - _FAR_MIN] = False
    else:
        far = [
            qx - k <= _WX1 and qx + k >= _WX0 and qy - k <= _WY1 and qy + k >= _WY0 and not (d == k and p_wild)
            for k in FARCAST_DISTANCES
        ]
    far_any = any(far)
    if move_ok:
        adjacent_ok = _candidate_ok(px, py, qx, qy, movement.CARDINALS)
        under_ok = not target_can_move and d != 0
        diagonal_ok = _candidate_ok(px, py, qx, qy, movement.DIAGONALS)
    else:
        adjacent_ok = under_ok = diagonal_ok = False
    far_any_ok = move_ok and far_any
    # head 11: prayer
    prayer_left = lv[SK_PRAYER] > 0
    protect = prayer_left and (target_attack_ready or not prm.only_switch_prayer_when_about_to_attack)
    lms = sim.fight_mode is _LMS
    no_food = not (inv.sharks or inv.karambwans or inv.anglerfish)
    return [
        # head 0: attack
        not can_attack, ice or blood or mage_spec, ranged or ranged_spec, melee or melee_spec,
        True, melee, melee_spec,  # head 1: melee type
        True, ranged, ranged_spec,  # head 2: ranged type
        True, ice, blood, mage_spec,  # head 3: mage type
        True, brew_ok, restore_ok, combat_ok, ranging_ok,  # head 4: potion
        True, eat_ok,  # head 5: food
        True, ticks[T_KARAMBWAN] <= 1 and inv.karambwans > 0 and hp < base_hp,  # head 6: karambwan
        True, ticks[T_VENGEANCE_COOLDOWN] <= 1 and p.spellbook is _LUNAR,  # head 7: vengeance
        True, target_attack_ready,  # head 8: tank gear
        True, adjacent_ok, under_ok, far_any_ok, diagonal_ok,  # head 9: movement
        True, *far,  # head 10: farcast distance
        # head 11: prayer; value 0 is never legal
        False,
        protect and not known_lunar,
        protect,
        protect and (can_move or target_can_move or in_melee),
        prm.allow_smite and not lms and can_attack and prayer_left,
        (
            prm.allow_redemption
            and not lms
            and no_food
            and doses[POT_BREW] <= 0
            and (bool(p.hit_queue) or target_attack_ready)
            and prayer_left
        ),
    ]
