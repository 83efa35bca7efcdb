"""Applying an agent's 12-head action in phase A (spec §5), in the fixed order of the spec.

The environment does not enforce the masks: every step simply fails where the game would not allow
it (spec §5, intro).
"""

from __future__ import annotations

from collections.abc import Sequence

from envs.nh import movement, operations
from envs.nh.combat import special_for_weapon
from envs.nh.equipment import equip_set
from envs.nh.fight_protocols import FightControl
from envs.nh.items import Ids, PotionType, Slot
from envs.nh.loadouts import GearSet
from envs.nh.prayers import OVERHEADS
from envs.nh.spells import BLOOD_TIERS, ICE_TIERS, best_castable
from envs.nh.state import PlayerState, Skill
from envs.nh.stats import TickEvents

# Head indices and values (spec §14.1); the contract module names them for policies.
H_ATTACK, H_MELEE, H_RANGED, H_MAGE, H_POTION, H_FOOD, H_KARAMBWAN, H_VENG, H_GEAR, H_MOVE, H_FAR, H_PRAYER = range(12)
ATTACK_MAGIC, ATTACK_RANGED, ATTACK_MELEE = 1, 2, 3
MAGE_ICE, MAGE_BLOOD, MAGE_SPECIAL = 1, 2, 3
MOVE_ADJACENT, MOVE_UNDER, MOVE_FARCAST, MOVE_DIAGONAL = 1, 2, 3, 4
GMAUL_SPEC_COST = 50  # §5.7


def apply_action(sim: FightControl, p: PlayerState, a: Sequence[int]) -> None:
    """Spec §5: prayer, food, potion, karambwan, tank gear, Vengeance, attack, movement."""
    ev = sim.events[p.index]
    if a[H_PRAYER]:
        _overhead(sim, p, int(a[H_PRAYER]))
    if a[H_FOOD] == 1:
        _food(p, ev)
    if a[H_POTION]:
        _potion(sim, p, int(a[H_POTION]), ev)
    if a[H_KARAMBWAN] == 1:
        _karambwan(p, ev)
    if a[H_GEAR] == 1:
        _tank(sim, p)
    if a[H_VENG] == 1:
        operations.cast_vengeance(p)
    if a[H_ATTACK]:
        _attack(sim, p, a)
    if a[H_MOVE]:
        _move(sim, p, int(a[H_MOVE]), int(a[H_FAR]))


# ---- §5.1 --------------------------------------------------------------------------------------
def _overhead(sim: FightControl, p: PlayerState, value: int) -> None:
    if 1 <= value <= len(OVERHEADS):
        sim.activate_prayer(p, OVERHEADS[value - 1])


# ---- §5.2–5.4: consumables, with the eat/drink signals of §17.1 ---------------------------------
def _food(p: PlayerState, ev: TickEvents) -> None:
    food = operations.primary_food(p)
    if food is None:
        return
    _record_eat(p, ev, food)
    operations.eat_food(p, food)


def _karambwan(p: PlayerState, ev: TickEvents) -> None:
    if Ids.KARAMBWAN not in p.inventory:
        return
    _record_eat(p, ev, Ids.KARAMBWAN)
    operations.eat_karambwan(p)


def _record_eat(p: PlayerState, ev: TickEvents, food: int) -> None:
    """eatAtFoodScale / wastedFoodScale are computed when the action finds its item (spec §17.1)."""
    hp, base = p.hp, p.base_hp
    heal = operations.nominal_heal(food, base)
    ev.eat_at_hp = hp
    ev.wasted_food += max(0, (hp + heal) - (base + (heal if food == Ids.ANGLERFISH else 0)))


def _potion(sim: FightControl, p: PlayerState, value: int, ev: TickEvents) -> None:
    if not 1 <= value <= len(PotionType):
        return
    potion = PotionType(value)
    if operations.find_potion(p, potion) is None:
        return
    if potion is PotionType.BREW:
        h = operations.brew_hp_boost(p.base_hp)
        ev.wasted_brew += max(0, (p.hp + h) - (p.base_hp + h))
    operations.drink_potion(p, potion)


# ---- §5.5 --------------------------------------------------------------------------------------
def _tank(sim: FightControl, p: PlayerState) -> None:
    tank = p.loadout.sets[GearSet.TANK]
    if tank:
        equip_set(p, tank)
    sim.activate_prayers(p, p.loadout.set_prayers[GearSet.TANK])


# ---- §5.7 --------------------------------------------------------------------------------------
def _arm_special(p: PlayerState) -> None:
    """Arm only if the wielded weapon has a special (spec §6.9)."""
    if not p.special_armed and special_for_weapon(p.equipment[Slot.WEAPON]) is not None:
        p.special_armed = True


def _attack(sim: FightControl, p: PlayerState, a: Sequence[int]) -> None:
    style = int(a[H_ATTACK])
    sets = p.loadout.sets
    prayers = p.loadout.set_prayers
    if style == ATTACK_MAGIC:
        sub = int(a[H_MAGE])
        if not sub:
            return
        if sets[GearSet.MAGIC]:
            equip_set(p, sets[GearSet.MAGIC])
        sim.activate_prayers(p, prayers[GearSet.MAGIC])
        magic = p.level[Skill.MAGIC]
        if sub == MAGE_ICE:
            p.selected_spell = best_castable(ICE_TIERS, magic)
            p.special_armed = False
        elif sub == MAGE_BLOOD:
            p.selected_spell = best_castable(BLOOD_TIERS, magic)
            p.special_armed = False
        else:
            p.selected_spell = None
            _arm_special(p)
    elif style == ATTACK_RANGED:
        sub = int(a[H_RANGED])
        if not sub:
            return
        equip_set(p, sets[GearSet.RANGED])
        p.selected_spell = None
        sim.activate_prayers(p, prayers[GearSet.RANGED])
        if sub == 1:
            p.special_armed = False
        else:
            _arm_special(p)
    elif style == ATTACK_MELEE:
        sub = int(a[H_MELEE])
        if not sub:
            return
        sim.activate_prayers(p, prayers[GearSet.MELEE])
        p.selected_spell = None
        if sub == 1:
            equip_set(p, sets[GearSet.MELEE])
            p.special_armed = False
        else:
            equip_set(p, sets[GearSet.SPEC])
            if p.equipment[Slot.WEAPON] == Ids.GRANITE_MAUL:
                _toggle_gmaul(p)
            else:
                _arm_special(p)
    else:
        return
    p.target = sim.opponent(p)


def _toggle_gmaul(p: PlayerState) -> None:
    """`floor(energy / 50)` toggles; each queues a spec if energy covers it, then flips the flag (§5.7)."""
    for _ in range(p.special_energy // GMAUL_SPEC_COST):
        if p.special_energy >= GMAUL_SPEC_COST * (p.gmaul_queued + 1):
            p.gmaul_queued += 1
        p.special_armed = not p.special_armed


# ---- §5.8 --------------------------------------------------------------------------------------
def movement_destination(sim: FightControl, p: PlayerState, value: int, farcast: int) -> tuple[int, int] | None:
    """Destination of a movement action, or None when it does nothing (spec §5.8)."""
    t = sim.opponent(p)
    tx, ty = t.x, t.y
    if value == MOVE_UNDER:
        return tx, ty
    if value == MOVE_ADJACENT:
        offsets, extent = movement.CARDINALS, 1
    elif value == MOVE_DIAGONAL:
        offsets, extent = movement.DIAGONALS, 1
    elif value == MOVE_FARCAST:
        extent = farcast + 1
        offsets = movement.ring_offsets(extent)
    else:
        return None
    cands = movement.movement_candidates(p.x, p.y, tx, ty, offsets)
    if not cands:
        return None
    if len(cands) == 1:
        dest = cands[0]
    else:
        dest = cands[int(sim.rng.integers(0, len(cands)))]
    if dest == (p.x, p.y):
        return None
    return dest


def _move(sim: FightControl, p: PlayerState, value: int, farcast: int) -> None:
    dest = movement_destination(sim, p, value, farcast)
    if dest is None:
        return
    movement.reset_walk(p)
    p.target = None
    p.selected_spell = None
    if dest != (p.x, p.y):
        movement.append_path(p, *dest)
