"""Builders of `PlayerState`s for combat tests: gear by slot and item name, levels, prayers."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from envs.nh.equipment import on_weapon_changed, recompute_bonuses
from envs.nh.items import NUM_SLOTS, Slot, item_by_name
from envs.nh.prayers import Prayer
from envs.nh.spells import Spell
from envs.nh.state import EMPTY, INVENTORY_SIZE, FightMode, PlayerState, Skill, Spellbook

SKILL_NAMES = {skill.name.lower(): skill for skill in Skill}


def prayer_named(name: str) -> Prayer:
    """`"Protect from Missiles"` → `Prayer.PROTECT_FROM_MISSILES`."""
    return Prayer[name.upper().replace(" ", "_")]


def spell_named(name: str) -> Spell:
    return Spell[name.upper().replace(" ", "_")]


def make_player(
    gear: Mapping[str, str],
    levels: Mapping[str, int],
    prayers: Iterable[str] = (),
    *,
    index: int = 0,
    base_levels: Mapping[str, int] | None = None,
) -> PlayerState:
    """A player wearing `gear` (slot name → item name, "" = empty) with current `levels` and `prayers`.

    Bonuses and the default fight style are derived the way the equip routine does (§10.1).
    """
    level = [0] * len(Skill)
    for name, value in levels.items():
        level[SKILL_NAMES[name]] = value
    base = list(level)
    for name, value in (base_levels or {}).items():
        base[SKILL_NAMES[name]] = value
    equipment = [EMPTY] * NUM_SLOTS
    for slot_name, item_name in gear.items():
        if not item_name:  # an empty slot
            continue
        slot = Slot[slot_name.upper()]
        equipment[slot] = item_by_name(item_name, slot).id
    p = PlayerState(
        index=index,
        loadout=None,  # type: ignore[arg-type]
        base=base,
        level=level,
        equipment=equipment,
        inventory=[EMPTY] * INVENTORY_SIZE,
        spellbook=Spellbook.ANCIENT,
        fight_mode=FightMode.NORMAL,
    )
    on_weapon_changed(p)
    recompute_bonuses(p)
    p.prayers = {prayer_named(n) for n in prayers}
    return p
