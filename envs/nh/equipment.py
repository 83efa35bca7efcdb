"""Equipment handling: the equip routine of spec §10.1 and the bonus vector of §10.3."""

from __future__ import annotations

from collections.abc import Iterable

from envs.nh.items import (
    AMMO_IGNORED_CLASSES,
    ITEMS,
    NUM_BONUSES,
    SLOT_AMMO,
    SLOT_SHIELD,
    SLOT_WEAPON,
    Ids,
    Slot,
    WeaponClass,
)
from envs.nh.state import EMPTY, PlayerState

# Enum members bound once as module globals (the plain-int indices live in `state.py`, `items.py`): reading
# `Enum.MEMBER` runs a Python-level descriptor on Python 3.11 (~130 ns), a global ~15 ns, and the tick
# reads hundreds. The members are the same objects, so `is` checks still hold; ints index lists alike.
_WEAPON_CLASS_UNARMED = WeaponClass.UNARMED

_BONUS_CACHE: dict[tuple[int, ...], list[int]] = {}
_BONUS_CACHE_LIMIT = 1 << 14


def equipment_bonuses(equipment: tuple[int, ...]) -> list[int]:
    """Element-wise sum over worn items; ammo ignored for knives and javelins (spec §10.3).

    Memoised by the worn ids: fights switch between a handful of gear sets, and this runs on
    every equip.
    """
    cached = _BONUS_CACHE.get(equipment)
    if cached is not None:
        return cached
    total = [0] * NUM_BONUSES
    wid = equipment[SLOT_WEAPON]
    wclass = ITEMS[wid].weapon_class if wid != EMPTY else None
    skip_ammo = wclass in AMMO_IGNORED_CLASSES
    for slot, iid in enumerate(equipment):
        if iid == EMPTY or (skip_ammo and slot == SLOT_AMMO):
            continue
        b = ITEMS[iid].bonuses
        for i in range(NUM_BONUSES):
            total[i] += b[i]
    if len(_BONUS_CACHE) >= _BONUS_CACHE_LIMIT:
        _BONUS_CACHE.clear()
    _BONUS_CACHE[equipment] = total
    return total


def recompute_bonuses(p: PlayerState) -> None:
    """Refresh the player's bonus vector after an equipment change (spec §10.1, last step)."""
    p.bonuses = list(equipment_bonuses(tuple(p.equipment)))


def on_weapon_changed(p: PlayerState) -> None:
    """Disarm the special, re-derive class and default style (spec §10.1, §6.2)."""
    p.special_armed = False
    weapon = p.weapon
    wclass = weapon.weapon_class if weapon is not None and weapon.weapon_class else _WEAPON_CLASS_UNARMED
    p.style = wclass.default_style


def equip_item(p: PlayerState, inv_slot: int) -> bool:
    """Single-item equip of the inventory item in `inv_slot` (spec §10.1). Returns success.

    Skill requirements are never binding with the loadouts of §12 (every item is wearable by its
    build, Appendix A), so they are not modelled; see docs/simulator.md.
    """
    iid = p.inventory[inv_slot]
    item = ITEMS[iid]
    slot = item.slot
    eq, inv = p.equipment, p.inventory
    old_weapon = eq[SLOT_WEAPON]
    if item.two_handed and eq[SLOT_WEAPON] != EMPTY and eq[SLOT_SHIELD] != EMPTY:
        if EMPTY not in inv:
            return False
        eq[SLOT_WEAPON], inv[inv_slot] = iid, eq[SLOT_WEAPON]
        free = inv.index(EMPTY)
        inv[free], eq[SLOT_SHIELD] = eq[SLOT_SHIELD], EMPTY
    elif item.two_handed and eq[SLOT_SHIELD] != EMPTY:
        # no weapon worn: the shield comes off into the item's own slot
        eq[SLOT_WEAPON], inv[inv_slot], eq[SLOT_SHIELD] = iid, eq[SLOT_SHIELD], EMPTY
    elif slot is Slot.SHIELD and eq[Slot.WEAPON] != EMPTY and ITEMS[eq[Slot.WEAPON]].two_handed:
        eq[SLOT_SHIELD], inv[inv_slot] = iid, eq[SLOT_WEAPON]
        eq[SLOT_WEAPON] = EMPTY
    else:
        eq[slot], inv[inv_slot] = iid, eq[slot]
    if eq[SLOT_WEAPON] != old_weapon:
        on_weapon_changed(p)
    if eq[SLOT_WEAPON] != Ids.GRANITE_MAUL:
        clear_target(p)
    recompute_bonuses(p)
    return True


def unequip(p: PlayerState, slot: int) -> bool:
    """Move a worn item to the first free inventory slot; nothing happens when the bag is full."""
    if EMPTY not in p.inventory:
        return False
    free = p.inventory.index(EMPTY)
    p.inventory[free], p.equipment[slot] = p.equipment[slot], EMPTY
    if slot == SLOT_WEAPON:
        on_weapon_changed(p)
    recompute_bonuses(p)
    return True


def equip_set(p: PlayerState, gear: Iterable[int], unequip_rest: bool = True) -> bool:
    """Switch to a gear set (spec §10.1). Returns whether any single-item equip succeeded.

    `unequip_rest=False` is the scripted baseline's variant (spec §18.3: no unequip pass).
    """
    wanted = tuple(gear)
    changed = False
    for iid in wanted:
        if iid in p.equipment:
            continue
        try:
            inv_slot = p.inventory.index(iid)
        except ValueError:
            continue
        changed |= equip_item(p, inv_slot)
    if unequip_rest:
        for slot, iid in enumerate(p.equipment):
            if iid != EMPTY and iid not in wanted:
                unequip(p, slot)
    return changed


def clear_target(p: PlayerState) -> None:
    """Stop attacking and following (spec §6.1)."""
    p.target = None
