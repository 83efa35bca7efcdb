"""The environment masks of spec §14.3: 45 booleans in head order, recomputed at the end of every tick.

The dependency rules of §14.2 are not applied here; they belong to the action sampler. A head may
come back with no legal value (e.g. head 11 with no prayer points left).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from envs.nh import movement
from envs.nh.combat import special_for_weapon
from envs.nh.contract import HEAD_OFFSETS, NUM_LOGITS
from envs.nh.items import ITEMS, Ids, PotionType, Slot
from envs.nh.loadouts import GearSet, Loadout, weapon_of
from envs.nh.operations import combat_boost, primary_food, ranging_boost
from envs.nh.params import FightParams
from envs.nh.state import EMPTY, FightMode, PlayerState, Skill, Spellbook, TimerId

if TYPE_CHECKING:
    from envs.nh.sim import FightSim

NUM_MASK = NUM_LOGITS
ICE_MIN_MAGIC = 58  # §14.3 iceOK (Ice Rush)
BLOOD_MIN_MAGIC = 56  # §14.3 bloodOK (Blood Rush)
FARCAST_DISTANCES = range(2, 8)  # §14.3: farOK(2) … farOK(7) [QUIRK 15, DROP]
GMAUL_SPEC_COST = 50  # §14.3 gmaulOK
_RESTORABLE = (Skill.ATTACK, Skill.DEFENCE, Skill.STRENGTH, Skill.RANGED, Skill.MAGIC, Skill.PRAYER)  # §14.3


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



def loadout_facts(load: Loadout) -> LoadoutFacts:
    """Per-episode constants of the masks (spec §14.3, §12.8)."""
    ranged = weapon_of(load.sets[GearSet.RANGED])
    melee = weapon_of(load.sets[GearSet.MELEE])
    spec = load.melee_special_weapon
    rs = special_for_weapon(ranged) if ranged is not None else None
    ss = special_for_weapon(spec) if spec is not None else None
    vns = special_for_weapon(Ids.VOLATILE_NIGHTMARE_STAFF)
    return LoadoutFacts(
        magic_set=bool(load.sets[GearSet.MAGIC]),
        magic_special_cost=vns[1] if (vns and Ids.VOLATILE_NIGHTMARE_STAFF in load.sets[GearSet.MAGIC]) else None,
        ranged_two_handed=ranged is not None and ITEMS[ranged].two_handed,
        ranged_special_cost=rs[1] if rs else None,
        melee_two_handed=melee is not None and ITEMS[melee].two_handed,
        spec_weapon=spec,
        spec_two_handed=spec is not None and ITEMS[spec].two_handed,
        spec_cost=ss[1] if ss else None,
    )


def _ring_in_wilderness(tx: int, ty: int, k: int) -> bool:
    """The ring at distance k around T has a wilderness tile iff its square meets the (much larger) box."""
    wx, wy = movement.WILDERNESS_X, movement.WILDERNESS_Y
    return tx - k <= wx[1] and tx + k >= wx[0] and ty - k <= wy[1] and ty + k >= wy[0]


def _candidate_ok(p: PlayerState, t: PlayerState, offsets: tuple[tuple[int, int], ...]) -> bool:
    """A §5.8 candidate exists and differs from the agent's tile (it is the unique best if it is one)."""
    for ox, oy in offsets:
        if p.x == t.x + ox and p.y == t.y + oy and movement.in_wilderness(p.x, p.y):
            return False
    return any(movement.in_wilderness(t.x + ox, t.y + oy) for ox, oy in offsets)


def has_potion(p: PlayerState, potion: PotionType) -> bool:
    return p.potion_doses(potion) > 0


def compute_masks(
    sim: FightSim, p: PlayerState, facts: LoadoutFacts, known_lunar: bool, out: np.ndarray | None = None
) -> np.ndarray:
    """Fill the 45 environment mask booleans for player `p` (spec §14.3)."""
    m = out if out is not None else np.zeros(NUM_MASK, dtype=bool)
    m[:] = False
    prm: FightParams = sim.params
    q = sim.opponent(p)
    lv, base = p.level, p.base
    can_attack = p.remaining(TimerId.ATTACK) == 0
    gate = can_attack or not prm.only_switch_gear_when_attack_soon
    can_move = p.remaining(TimerId.FREEZE) == 0
    target_can_move = q.remaining(TimerId.FREEZE) == 0
    in_melee = movement.in_melee_range(p, q)
    can_melee = in_melee or can_move
    can_2h = EMPTY in p.inventory or p.equipment[Slot.SHIELD] == EMPTY
    energy = p.special_energy
    ancient = p.spellbook is Spellbook.ANCIENT
    magic = lv[Skill.MAGIC]
    hp, base_hp = lv[Skill.HITPOINTS], base[Skill.HITPOINTS]

    ice = gate and facts.magic_set and ancient and magic >= ICE_MIN_MAGIC
    blood = gate and facts.magic_set and ancient and magic >= BLOOD_MIN_MAGIC and hp < base_hp
    mage_spec = gate and facts.magic_special_cost is not None and energy >= facts.magic_special_cost
    ranged = gate and (not facts.ranged_two_handed or can_2h)
    ranged_spec = ranged and facts.ranged_special_cost is not None and energy >= facts.ranged_special_cost
    melee = gate and can_melee and (not facts.melee_two_handed or can_2h)
    gmaul = facts.spec_weapon == Ids.GRANITE_MAUL and energy >= GMAUL_SPEC_COST
    melee_spec = (
        (gmaul or gate)
        and can_melee
        and (not facts.spec_two_handed or can_2h)
        and facts.spec_cost is not None
        and energy >= facts.spec_cost
    )
    # head 0–3: attack
    m[0], m[1], m[2], m[3] = not can_attack, ice or blood or mage_spec, ranged or ranged_spec, melee or melee_spec
    m[4], m[5], m[6] = True, melee, melee_spec
    m[7], m[8], m[9] = True, ranged, ranged_spec
    m[10], m[11], m[12], m[13] = True, ice, blood, mage_spec
    # head 4: potions
    potion_free = p.remaining(TimerId.POTION) == 0
    m[14] = True
    if potion_free:
        d_cap = base[Skill.DEFENCE] + 2 + base[Skill.DEFENCE] * 20 // 100
        brew_useful = lv[Skill.DEFENCE] < d_cap - 1 or hp <= base_hp
        m[15] = brew_useful and has_potion(p, PotionType.BREW)
        below = any(lv[s] < base[s] for s in _RESTORABLE)
        m[16] = below and has_potion(p, PotionType.RESTORE)
        combat_useful = any(
            base[s] + combat_boost(base[s]) > lv[s] + 1 for s in (Skill.ATTACK, Skill.STRENGTH, Skill.DEFENCE)
        )
        m[17] = combat_useful and has_potion(p, PotionType.COMBAT)
        r = Skill.RANGED
        m[18] = base[r] + ranging_boost(base[r]) > lv[r] + 1 and has_potion(p, PotionType.RANGING)
    # head 5: food; head 6: karambwan
    m[19] = True
    food = primary_food(p)
    if p.remaining(TimerId.FOOD) == 0 and food is not None:
        m[20] = hp <= base_hp if food == Ids.ANGLERFISH else hp < base_hp
    m[21] = True
    m[22] = p.remaining(TimerId.KARAMBWAN) == 0 and Ids.KARAMBWAN in p.inventory and hp < base_hp
    # head 7: vengeance; head 8: tank gear
    m[23] = True
    m[24] = p.remaining(TimerId.VENGEANCE_COOLDOWN) == 0 and p.spellbook is Spellbook.LUNAR
    m[25] = True
    m[26] = q.remaining(TimerId.ATTACK) == 0
    # head 9–10: movement
    move_ok = can_move and (prm.allow_moving_if_can_attack or not can_attack)
    o9, o10 = HEAD_OFFSETS[9], HEAD_OFFSETS[10]
    m[o9] = True
    m[o10] = True
    far_any = False
    d = movement.cheb(p.x, p.y, q.x, q.y)
    p_wild = movement.in_wilderness(p.x, p.y)
    for i, k in enumerate(FARCAST_DISTANCES, start=1):
        ok = _ring_in_wilderness(q.x, q.y, k) and not (d == k and p_wild)
        m[o10 + i] = ok
        far_any |= ok
    if move_ok:
        m[o9 + 1] = _candidate_ok(p, q, movement.CARDINALS)
        m[o9 + 2] = q.remaining(TimerId.FREEZE) > 0 and d != 0
        m[o9 + 3] = far_any
        m[o9 + 4] = _candidate_ok(p, q, movement.DIAGONALS)
    # head 11: prayer
    prayer_left = lv[Skill.PRAYER] > 0
    protect = prayer_left and (q.remaining(TimerId.ATTACK) == 0 or not prm.only_switch_prayer_when_about_to_attack)
    lms = sim.fight_mode is FightMode.LMS
    _prayer_head(m, sim, p, q, protect, known_lunar, can_move, target_can_move, in_melee, can_attack, lms)
    return m


def _prayer_head(
    m: np.ndarray,
    sim: FightSim,
    p: PlayerState,
    q: PlayerState,
    protect: bool,
    known_lunar: bool,
    can_move: bool,
    target_can_move: bool,
    in_melee: bool,
    can_attack: bool,
    lms: bool,
) -> None:
    """Head 11 (spec §14.3): value 0 never legal; protections, Smite and Redemption."""
    o = HEAD_OFFSETS[11]
    prm = sim.params
    prayer_left = p.level[Skill.PRAYER] > 0
    m[o] = False
    m[o + 1] = protect and not known_lunar
    m[o + 2] = protect
    m[o + 3] = protect and (can_move or target_can_move or in_melee)
    m[o + 4] = prm.allow_smite and not lms and can_attack and prayer_left
    no_food = not any(f in p.inventory for f in (Ids.SHARK, Ids.KARAMBWAN, Ids.ANGLERFISH))
    m[o + 5] = (
        prm.allow_redemption
        and not lms
        and no_food
        and not has_potion(p, PotionType.BREW)
        and (bool(p.hit_queue) or q.remaining(TimerId.ATTACK) == 0)
        and prayer_left
    )

