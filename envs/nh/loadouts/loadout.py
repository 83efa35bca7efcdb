"""The loadout model: what one player brings to a fight, and the rules every loadout keeps (spec §12).

`Build` and `GearSet` name the rows and sets of the §12 tables; `Loadout` is one assembled loadout, checked
on construction (`LoadoutError` names the build and the broken rule); `set_bonuses` and `tank_set` are the
small derived facts of §12.5 and §12.8. Where the loadouts come from: `builds` (the tables),
`randomisation` (§12.6) and `assembly` (putting them together).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum

from envs.nh.account import EMPTY, INVENTORY_SIZE, FightMode, Skill, Spellbook
from envs.nh.items import (
    CONSUMABLES,
    ITEMS,
    NUM_BONUSES,
    NUM_SLOTS,
    Bonus,
    ConsumableKind,
    Ids,
    Slot,
)
from envs.nh.prayers import Prayer


class Build(Enum):
    """Account builds of spec §12.1 (the value is the `accountBuild` parameter's name, §13.1)."""

    PURE = "PURE"
    ZERKER = "ZERKER"
    MED = "MED"
    MAXED = "MAXED"
    LMS_PURE = "LMS_PURE"
    LMS_ZERKER = "LMS_ZERKER"
    LMS_MED = "LMS_MED"


class GearSet(Enum):
    """The four gear sets of spec §12.2 and the derived tank set of §12.5 (values as in the data files)."""

    MAGIC = "magic"
    RANGED = "ranged"
    MELEE = "melee"
    SPEC = "spec"
    TANK = "tank"


BASE_SETS: tuple[GearSet, ...] = (GearSet.MAGIC, GearSet.RANGED, GearSet.MELEE, GearSet.SPEC)
"""The sets a build defines (§12.2), in table column order; the tank set is derived (§12.5)."""

TABLE_SLOT_ORDER: tuple[Slot, ...] = (
    Slot.WEAPON,
    Slot.SHIELD,
    Slot.HEAD,
    Slot.BODY,
    Slot.LEGS,
    Slot.NECK,
    Slot.CAPE,
    Slot.HANDS,
    Slot.FEET,
    Slot.RING,
    Slot.AMMO,
)
"""Row order of the §12.2 tables: the order of the ids in `Loadout.sets` (§10.1 allows any order)."""

MELEE_SPECIAL_WEAPONS: frozenset[int] = Ids.DRAGON_DAGGERS | {
    Ids.ARMADYL_GODSWORD,
    Ids.DRAGON_CLAWS,
    Ids.GRANITE_MAUL,
    Ids.VESTAS_LONGSWORD,
    Ids.ANCIENT_GODSWORD,
    Ids.STATIUS_WARHAMMER,
}
"""Candidates for the "melee special weapon" of the melee-special set (§12.8)."""

RANGED_SPECIAL_WEAPONS: frozenset[int] = Ids.DRAGON_KNIVES | {
    Ids.DARK_BOW,
    Ids.ARMADYL_CROSSBOW,
    Ids.ZARYTE_CROSSBOW,
    Ids.LIGHT_BALLISTA,
    Ids.HEAVY_BALLISTA,
    Ids.MORRIGANS_JAVELIN,
}
"""Ranged weapons that have a special attack (§6.9 table); the Rune crossbow has none."""


class LoadoutError(ValueError):
    """A loadout breaks an invariant of §12 (see `Loadout`); the message names the build and the rule."""


# ---------------------------------------------------------------------------------------------------
# The loadout
# ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Loadout:
    """Everything a player starts a fight with (spec §12), plus the §12.8 flags derived from it.

    The derived fields are computed from `sets` on construction (so `dataclasses.replace` keeps them
    consistent), and the invariants below are checked there; a broken one raises `LoadoutError`:
    28 inventory items with known ids, 11 worn slots holding items of that slot, one item per slot in
    every set in §12.2 row order, no shield beside a two-handed weapon, a ranged weapon, and an empty
    magic set on the Lunar book.
    """

    build: Build
    base_levels: tuple[int, ...]
    """Base levels in `Skill` order (§12.1)."""
    spellbook: Spellbook
    fight_mode: FightMode
    """The build's fight mode (§12.1); the environment may override it (§13.1)."""
    sets: Mapping[GearSet, tuple[int, ...]]
    """Item ids of each set, one per occupied slot, in §12.2 row order; MAGIC is () with no magic."""
    set_prayers: Mapping[GearSet, tuple[Prayer, ...]]
    """Prayers switched on with each set, in order (§12.3); TANK has the magic-set prayers."""
    equipment: tuple[int, ...]
    """Worn item ids at reset by `Slot` index, `EMPTY` where none (§12.4)."""
    inventory: tuple[int, ...]
    """28 item ids: gear, then food, then potions, then the rune pouch (§12.4)."""
    primary_food: int
    """Id of the food that fills the inventory (Shark or Anglerfish, §12.1, §12.6)."""
    melee_special_weapon: int | None = field(init=False)
    """First melee-special-set item of the §12.8 candidate list, None if there is none."""
    ranged_weapon: int = field(init=False)
    """The ranged set's weapon (§12.8, §15.2 entries 107–113)."""
    ranged_special: bool = field(init=False)
    """Whether the ranged weapon has a special attack (§12.8, §6.9)."""
    magic_weapon: int | None = field(init=False)
    """The magic set's weapon, None when the magic set is empty."""
    has_nightmare_staff: bool = field(init=False)
    """Volatile nightmare staff in the magic set: the "magic special weapon" of §12.8."""

    def __post_init__(self) -> None:
        _check_loadout(self)
        spec_set, ranged, magic = self.sets[GearSet.SPEC], self.sets[GearSet.RANGED], self.sets[GearSet.MAGIC]
        ranged_weapon = weapon_of(ranged)
        assert ranged_weapon is not None  # checked by _check_loadout
        object.__setattr__(
            self, "melee_special_weapon", next((i for i in spec_set if i in MELEE_SPECIAL_WEAPONS), None)
        )
        object.__setattr__(self, "ranged_weapon", ranged_weapon)
        object.__setattr__(self, "ranged_special", ranged_weapon in RANGED_SPECIAL_WEAPONS)
        object.__setattr__(self, "magic_weapon", weapon_of(magic))
        object.__setattr__(self, "has_nightmare_staff", Ids.VOLATILE_NIGHTMARE_STAFF in magic)

    @property
    def magic_enabled(self) -> bool:
        """False when the magic set is empty (mage disabled or Lunar book, §12.6 notes)."""
        return bool(self.sets[GearSet.MAGIC])


def weapon_of(gear: Iterable[int]) -> int | None:
    """The weapon of a gear set, if it has one (every set lists at most one, §12.2)."""
    return next((i for i in gear if ITEMS[i].slot is Slot.WEAPON), None)


def _check_loadout(lo: Loadout) -> None:
    """The invariants documented on `Loadout`."""

    def fail(msg: str) -> LoadoutError:
        return LoadoutError(f"{lo.build.value} loadout: {msg}")

    if len(lo.base_levels) != len(Skill):
        raise fail(f"{len(lo.base_levels)} base levels, expected {len(Skill)} (Skill order)")
    if set(lo.sets) != set(GearSet) or set(lo.set_prayers) != set(GearSet):
        raise fail("sets and set_prayers need an entry for every GearSet")
    for gs, gear in lo.sets.items():
        unknown = [i for i in gear if i not in ITEMS]
        if unknown:
            raise fail(f"{gs.value} set has unknown item ids {unknown}")
        order = [TABLE_SLOT_ORDER.index(ITEMS[i].slot) for i in gear]
        if order != sorted(set(order)):
            raise fail(f"{gs.value} set {gear} is not one item per slot in §12.2 row order")
        weapon = weapon_of(gear)
        if (
            weapon is not None
            and ITEMS[weapon].two_handed
            and any(ITEMS[i].slot is Slot.SHIELD for i in gear)
        ):
            raise fail(f"{gs.value} set holds a shield beside the two-handed {ITEMS[weapon].name}")
    if weapon_of(lo.sets[GearSet.RANGED]) is None:
        raise fail("the ranged set has no weapon")
    if lo.spellbook is Spellbook.LUNAR and lo.sets[GearSet.MAGIC]:
        raise fail("the Lunar book needs an empty magic set (§12.6 notes)")
    if len(lo.equipment) != NUM_SLOTS:
        raise fail(f"{len(lo.equipment)} equipment slots, expected {NUM_SLOTS}")
    for slot, iid in enumerate(lo.equipment):
        if iid != EMPTY and (iid not in ITEMS or ITEMS[iid].slot != slot):
            raise fail(f"item {iid} worn in the {Slot(slot).name} slot")
    if len(lo.inventory) != INVENTORY_SIZE:
        raise fail(f"{len(lo.inventory)} inventory items, expected {INVENTORY_SIZE} (§12.4)")
    unknown = [i for i in lo.inventory if i not in ITEMS and i not in CONSUMABLES]
    if unknown:
        raise fail(f"unknown inventory ids {unknown}")
    food = CONSUMABLES.get(lo.primary_food)
    if food is None or food.kind is not ConsumableKind.FOOD:
        raise fail(f"primary food {lo.primary_food} is not a food")


def set_bonuses(gear: Iterable[int]) -> tuple[int, ...]:
    """Element-wise bonus sum over a set's items, ammo included (Appendix B; §10.3 bonus order).

    Magic damage is in tenths of a percent (`Bonus.MAGIC_DAMAGE_TENTHS`). This is the set total of
    observations 124–141; the worn bonus vector skips ammo for knives and javelins (§10.3).
    """
    total = [0] * NUM_BONUSES
    for iid in gear:
        for i, v in enumerate(ITEMS[iid].bonuses):
            total[i] += v
    return tuple(total)


def _tank_defence(iid: int) -> int:
    """Three times the §12.5 average: slash + magic + ranged defence (the /3 cancels in the comparison)."""
    item = ITEMS[iid]
    return (
        item.bonus(Bonus.SLASH_DEFENCE) + item.bonus(Bonus.MAGIC_DEFENCE) + item.bonus(Bonus.RANGED_DEFENCE)
    )


def tank_set(ranged: Sequence[int], magic: Sequence[int]) -> tuple[int, ...]:
    """The tank set of spec §12.5, from the (possibly randomised) ranged and magic sets.

    `W` is the ranged set's weapon and `S` the magic set's first one-handed weapon (none when the
    magic set is empty or its weapon is two-handed). If `S` has the higher mean of slash, magic and
    ranged defence, the tank set is the ranged set with `W` replaced by `S`; otherwise it is the
    ranged set itself.

    Raises:
        LoadoutError: the ranged set has no weapon.
    """
    w = weapon_of(ranged)
    if w is None:
        raise LoadoutError(f"tank set: the ranged set {tuple(ranged)} has no weapon (§12.5)")
    s = next((i for i in magic if ITEMS[i].slot is Slot.WEAPON and not ITEMS[i].two_handed), None)
    if s is not None and _tank_defence(s) > _tank_defence(w):
        return tuple(s if i == w else i for i in ranged)
    return tuple(ranged)
