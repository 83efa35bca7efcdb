"""The environment masks of spec §14.3: 45 booleans in head order, recomputed at the end of every tick.

The dependency rules of §14.2 are not applied here; they belong to the action sampler. A head may
come back with no legal value (e.g. head 11 with no prayer points left).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from envs.nh import movement
from envs.nh.combat import special_for_weapon
from envs.nh.contract import HEAD_SIZES, NUM_LOGITS
from envs.nh.fight_protocols import FightView
from envs.nh.items import ITEMS, Ids, PotionType, Slot
from envs.nh.loadouts import GearSet, Loadout, weapon_of
from envs.nh.operations import brew_defence_raise, combat_boost, ranging_boost
from envs.nh.params import FightParams
from envs.nh.state import EMPTY, FightMode, InventoryFacts, PlayerState, Skill, Spellbook, TimerId

NUM_MASK = NUM_LOGITS
ICE_MIN_MAGIC = 58  # §14.3 iceOK (Ice Rush)
BLOOD_MIN_MAGIC = 56  # §14.3 bloodOK (Blood Rush)
FARCAST_DISTANCES = range(2, 8)  # §14.3: farOK(2) … farOK(7) [QUIRK 15, DROP]
GMAUL_SPEC_COST = 50  # §14.3 gmaulOK
_RESTORE_CHECKED_SKILLS = (Skill.ATTACK, Skill.DEFENCE, Skill.STRENGTH, Skill.RANGED, Skill.MAGIC, Skill.PRAYER)
"""§14.3 head 4: a super restore is useful while any of these is below base."""


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
        brew_defence_cap=base[Skill.DEFENCE] + brew_defence_raise(base[Skill.DEFENCE]),
        combat_caps=(
            base[Skill.ATTACK] + combat_boost(base[Skill.ATTACK]),
            base[Skill.STRENGTH] + combat_boost(base[Skill.STRENGTH]),
            base[Skill.DEFENCE] + combat_boost(base[Skill.DEFENCE]),
        ),
        ranged_cap=base[Skill.RANGED] + ranging_boost(base[Skill.RANGED]),
    )


def _ring_in_wilderness(tx: int, ty: int, k: int) -> bool:
    """The ring at distance k around T has a wilderness tile iff its square meets the (much larger) box."""
    wx, wy = movement.WILDERNESS_X, movement.WILDERNESS_Y
    return tx - k <= wx[1] and tx + k >= wx[0] and ty - k <= wy[1] and ty + k >= wy[0]


def _candidate_ok(p: PlayerState, q: PlayerState, offsets: tuple[tuple[int, int], ...]) -> bool:
    """adjOK / diagOK (§14.3): a §5.8 candidate around the opponent exists and differs from the agent's tile.

    The agent's own tile, when it is a candidate, is the unique best one (Chebyshev distance 0 to the agent).
    """
    candidates = [(q.x + ox, q.y + oy) for ox, oy in offsets if movement.in_wilderness(q.x + ox, q.y + oy)]
    return bool(candidates) and (p.x, p.y) not in candidates


def farcast_flags(p: PlayerState, q: PlayerState) -> list[bool]:
    """farOK(k) for k = 2..7 (§14.3): a farcast candidate at distance k from the opponent exists and is not
    the agent's tile.

    One exists iff the ring meets the wilderness; the agent's tile is the best one iff the agent stands on
    that ring inside the wilderness.
    """
    distance = movement.distance(p, q)
    agent_in_wilderness = movement.in_wilderness(p.x, p.y)
    return [
        _ring_in_wilderness(q.x, q.y, k) and not (distance == k and agent_in_wilderness) for k in FARCAST_DISTANCES
    ]


if HEAD_SIZES != (4, 3, 3, 4, 5, 2, 2, 2, 2, 5, 7, 6) or len(FARCAST_DISTANCES) != HEAD_SIZES[10] - 1:
    raise AssertionError("the §14.1 head layout changed: update `mask_values`, which lists the 45 values in order")


def pack_masks(values: list[bool], out: np.ndarray) -> None:
    """Write `mask_values`' list into a 45-entry bool array."""
    out[:] = values


def mask_values(sim: FightView, p: PlayerState, facts: LoadoutFacts, known_lunar: bool) -> list[bool]:
    """The 45 environment mask booleans for player `p` in head order, as a list (spec §14.3).

    The definitions of §14.3 first, in the spec's order, then its table, one line per head.
    """
    q = sim.opponent(p)
    prm: FightParams = sim.params
    inv = p.inventory_facts()
    energy = p.special_energy
    # definitions
    can_attack = p.remaining(TimerId.ATTACK) == 0
    attack_gate = can_attack or not prm.only_switch_gear_when_attack_soon
    can_move = p.remaining(TimerId.FREEZE) == 0
    target_can_move = q.remaining(TimerId.FREEZE) == 0
    in_melee_range = movement.in_melee_range(p, q)
    can_melee = in_melee_range or can_move
    can_equip_2h = inv.has_free_slot or p.equipment[Slot.SHIELD] == EMPTY
    ancient_magic = facts.magic_set and p.spellbook is Spellbook.ANCIENT and attack_gate
    ice_ok = ancient_magic and p.level[Skill.MAGIC] >= ICE_MIN_MAGIC
    blood_ok = ancient_magic and p.level[Skill.MAGIC] >= BLOOD_MIN_MAGIC and p.hp < p.base_hp
    mage_spec_ok = attack_gate and facts.magic_special_cost is not None and energy >= facts.magic_special_cost
    ranged_ok = attack_gate and (not facts.ranged_two_handed or can_equip_2h)
    ranged_spec_ok = ranged_ok and facts.ranged_special_cost is not None and energy >= facts.ranged_special_cost
    melee_ok = attack_gate and can_melee and (not facts.melee_two_handed or can_equip_2h)
    gmaul_ok = facts.spec_weapon == Ids.GRANITE_MAUL and energy >= GMAUL_SPEC_COST
    melee_spec_ok = (
        (gmaul_ok or attack_gate)
        and can_melee
        and (not facts.spec_two_handed or can_equip_2h)
        and facts.spec_cost is not None
        and energy >= facts.spec_cost
    )
    target_attack_ready = q.remaining(TimerId.ATTACK) == 0
    prayer_left = p.level[Skill.PRAYER] > 0
    protect_ok = prayer_left and (target_attack_ready or not prm.only_switch_prayer_when_about_to_attack)
    move_ok = can_move and (prm.allow_moving_if_can_attack or not can_attack)
    far_ok = farcast_flags(p, q)
    return [
        # head 0: attack
        not can_attack, ice_ok or blood_ok or mage_spec_ok, ranged_ok or ranged_spec_ok, melee_ok or melee_spec_ok,
        True, melee_ok, melee_spec_ok,  # head 1: melee type
        True, ranged_ok, ranged_spec_ok,  # head 2: ranged type
        True, ice_ok, blood_ok, mage_spec_ok,  # head 3: magic type
        True, *potion_flags(p, inv, facts),  # head 4: brew, restore, super combat, ranging
        True, _eat_ok(p, inv),  # head 5: food
        True, p.remaining(TimerId.KARAMBWAN) == 0 and inv.karambwans > 0 and p.hp < p.base_hp,  # head 6
        True, p.remaining(TimerId.VENGEANCE_COOLDOWN) == 0 and p.spellbook is Spellbook.LUNAR,  # head 7
        True, target_attack_ready,  # head 8: tank gear
        True,  # head 9: movement [QUIRK 15, DROP: farcast checks distances 2–7]
        move_ok and _candidate_ok(p, q, movement.CARDINALS),
        move_ok and not target_can_move and movement.distance(p, q) != 0,
        move_ok and any(far_ok),
        move_ok and _candidate_ok(p, q, movement.DIAGONALS),
        True, *far_ok,  # head 10: farcast distance 2..7
        False,  # head 11: prayer; value 0 (keep) is never legal
        protect_ok and not known_lunar,
        protect_ok,
        protect_ok and (can_move or target_can_move or in_melee_range),
        _smite_ok(sim, p, can_attack),
        _redemption_ok(sim, p, inv, target_attack_ready),
    ]


def potion_flags(p: PlayerState, inv: InventoryFacts, facts: LoadoutFacts) -> tuple[bool, bool, bool, bool]:
    """Head 4 values 1–4 (§14.3): brew, restore, super combat, ranging; each needs POTION free and a dose."""
    if p.remaining(TimerId.POTION) > 0:
        return False, False, False, False
    lv, base = p.level, p.base
    doses = inv.doses
    brew_useful = lv[Skill.DEFENCE] < facts.brew_defence_cap - 1 or p.hp <= p.base_hp
    below_base = any(lv[s] < base[s] for s in _RESTORE_CHECKED_SKILLS)
    attack_cap, strength_cap, defence_cap = facts.combat_caps
    combat_useful = (
        attack_cap > lv[Skill.ATTACK] + 1
        or strength_cap > lv[Skill.STRENGTH] + 1
        or defence_cap > lv[Skill.DEFENCE] + 1
    )
    ranging_useful = facts.ranged_cap > lv[Skill.RANGED] + 1
    return (
        brew_useful and doses[PotionType.BREW] > 0,
        below_base and doses[PotionType.RESTORE] > 0,
        combat_useful and doses[PotionType.COMBAT] > 0,
        ranging_useful and doses[PotionType.RANGING] > 0,
    )


def _eat_ok(p: PlayerState, inv: InventoryFacts) -> bool:
    """Head 5 value 1: FOOD free and primary food carried; anglerfish may overheal (HP ≤ base), sharks not."""
    food = inv.primary_food
    if p.remaining(TimerId.FOOD) > 0 or food is None:
        return False
    return p.hp <= p.base_hp if food == Ids.ANGLERFISH else p.hp < p.base_hp


def _smite_ok(sim: FightView, p: PlayerState, can_attack: bool) -> bool:
    """smiteOK (§14.3)."""
    return sim.params.allow_smite and sim.fight_mode is not FightMode.LMS and can_attack and p.level[Skill.PRAYER] > 0


def _redemption_ok(sim: FightView, p: PlayerState, inv: InventoryFacts, target_attack_ready: bool) -> bool:
    """redemptionOK (§14.3): no food of any kind [QUIRK 2, DROP: sharks count] and no brew left."""
    no_food = not (inv.sharks or inv.karambwans or inv.anglerfish)
    return (
        sim.params.allow_redemption
        and sim.fight_mode is not FightMode.LMS
        and no_food
        and inv.doses[PotionType.BREW] <= 0
        and (bool(p.hit_queue) or target_attack_ready)
        and p.level[Skill.PRAYER] > 0
    )
