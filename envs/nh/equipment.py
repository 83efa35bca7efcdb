"""Equipment handling: the equip routine of spec §10.1 and the bonus vector of §10.3."""

from __future__ import annotations

import functools
from collections.abc import Iterable

from envs.nh.items import (
    AMMO_IGNORED_CLASSES,
    ITEMS,
    NUM_BONUSES,
    Ids,
    Slot,
    WeaponClass,
)
from envs.nh.state import EMPTY, PlayerState


@functools.lru_cache(maxsize=1 << 14)
def equipment_bonuses(equipment: tuple[int, ...]) -> list[int]:
    """Element-wise sum over worn items; ammo ignored for knives and javelins (spec §10.3).

    Memoised by the worn ids (the result is shared: read only): fights switch between a handful of gear
    sets, and this runs on every equip.
    """
    total = [0] * NUM_BONUSES
    wid = equipment[Slot.WEAPON]
    wclass = ITEMS[wid].weapon_class if wid != EMPTY else None
    skip_ammo = wclass in AMMO_IGNORED_CLASSES
    for slot, iid in enumerate(equipment):
        if iid == EMPTY or (skip_ammo and slot == Slot.AMMO):
            continue
        b = ITEMS[iid].bonuses
        for i in range(NUM_BONUSES):
            total[i] += b[i]
    return total


def recompute_bonuses(p: PlayerState) -> None:
    """Refresh the player's bonus vector after an equipment change (spec §10.1, last step)."""
    p.bonuses = list(equipment_bonuses(tuple(p.equipment)))


def on_weapon_changed(p: PlayerState) -> None:
    """Disarm the special, re-derive class and default style (spec §10.1, §6.2)."""
    p.special_armed = False
    weapon = p.weapon
    wclass = weapon.weapon_class if weapon is not None and weapon.weapon_class else WeaponClass.UNARMED
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
    old_weapon = eq[Slot.WEAPON]
    if item.two_handed and eq[Slot.WEAPON] != EMPTY and eq[Slot.SHIELD] != EMPTY:
        if EMPTY not in inv:
            return False
        eq[Slot.WEAPON], inv[inv_slot] = iid, eq[Slot.WEAPON]
        free = inv.index(EMPTY)
        inv[free], eq[Slot.SHIELD] = eq[Slot.SHIELD], EMPTY
    elif item.two_handed and eq[Slot.SHIELD] != EMPTY:
        # no weapon worn: the shield comes off into the item's own slot
        eq[Slot.WEAPON], inv[inv_slot], eq[Slot.SHIELD] = iid, eq[Slot.SHIELD], EMPTY
    elif slot is Slot.SHIELD and eq[Slot.WEAPON] != EMPTY and ITEMS[eq[Slot.WEAPON]].two_handed:
        eq[Slot.SHIELD], inv[inv_slot] = iid, eq[Slot.WEAPON]
        eq[Slot.WEAPON] = EMPTY
    else:
        eq[slot], inv[inv_slot] = iid, eq[slot]
    if eq[Slot.WEAPON] != old_weapon:
        on_weapon_changed(p)
    if eq[Slot.WEAPON] != Ids.GRANITE_MAUL:
        clear_target(p)
    recompute_bonuses(p)
    return True


def unequip(p: PlayerState, slot: int) -> bool:
    """Move a worn item to the first free inventory slot; nothing happens when the bag is full."""
    if EMPTY not in p.inventory:
        return False
    free = p.inventory.index(EMPTY)
    p.inventory[free], p.equipment[slot] = p.equipment[slot], EMPTY
    if slot == Slot.WEAPON:
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
