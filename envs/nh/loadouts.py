"""Loadouts: account builds, gear sets, starting inventories, gear randomisation and build choice.

Implements spec §12 (12.1 builds, 12.2 gear sets, 12.3 set prayers, 12.4 starting equipment and
inventory, 12.5 tank set, 12.6 gear randomisation, 12.7 build selection, 12.8 derived flags) and the
baseline's supply changes of §18.1.

The game data are tables, not code: `data/builds.yml` holds §12.1–12.4 and `data/randomisation.yml`
holds every line of §12.6. Both are read once at import into frozen dataclasses (`BuildSpec`,
`RandomLine` and its operations) and checked there: an unknown item, prayer, slot, set, operation or
key is a `DataError` naming the file and line. The default loadout of every build is assembled at
import too, so a table that cannot make a valid loadout fails at once rather than mid-training.

Randomness: `make_loadout(build, rng)` makes exactly the draws of §16.6 step 2 from the generator it
is given, in table order — a chance as `rng.random() < p`, `U[a, b]` as `rng.integers(a, b + 1)`,
and the numbers of a line (counts, doses, brews, the "then 50 %" chance) right after the chance they
depend on. Where the spec's prose leaves a choice, docs/loadouts.md records the reading taken.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import Any, TypeVar

import numpy as np
import yaml

from envs.nh.items import (
    CONSUMABLES,
    DATA_DIR,
    ITEMS,
    NUM_BONUSES,
    NUM_SLOTS,
    Bonus,
    ConsumableKind,
    DataError,
    Ids,
    PotionType,
    Slot,
    item_by_name,
    potion_id,
)
from envs.nh.prayers import Prayer
from envs.nh.state import EMPTY, INVENTORY_SIZE, FightMode, Skill, Spellbook

BUILDS_FILE = DATA_DIR / "builds.yml"
RANDOMISATION_FILE = DATA_DIR / "randomisation.yml"


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


# ---------------------------------------------------------------------------------------------------
# Data tables: builds (§12.1–12.4)
# ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BuildSpec:
    """One build's row of §12.1 with its default sets (§12.2), set prayers (§12.3) and supplies (§12.4)."""

    build: Build
    base_levels: tuple[int, ...]
    """In `Skill` order."""
    spellbook: Spellbook
    fight_mode: FightMode
    primary_food: int
    supplies: tuple[tuple[int, int], ...]
    """(item id, count) in inventory order; a count of 0 is allowed."""
    sets: Mapping[GearSet, tuple[int, ...]]
    """The four base sets, each 11 ids in `TABLE_SLOT_ORDER`, `EMPTY` where the table has "—"."""
    prayers: Mapping[GearSet, tuple[Prayer, ...]]
    """The four base sets' prayers."""
    source: str
    """File and line of the block, e.g. "builds.yml:13"."""


class _Located(dict[str, Any]):
    """A YAML mapping that remembers the file and line it starts on, for error messages."""

    where: str = "?"


class _LocatedList(list[Any]):
    """A YAML sequence that remembers the file and line it starts on, for error messages."""

    where: str = "?"


class _LineLoader(yaml.SafeLoader):
    """Safe loader whose mappings and sequences carry their position and reject duplicate keys."""


def _where(node: yaml.Node) -> str:
    return f"{Path(str(node.start_mark.name)).name}:{node.start_mark.line + 1}"


def _construct_mapping(loader: _LineLoader, node: yaml.MappingNode) -> _Located:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = key_node.value
        if key in seen:
            raise DataError(f"{_where(key_node)}: duplicate key {key!r}")
        seen.add(key)
    out = _Located(loader.construct_mapping(node, deep=True))
    out.where = _where(node)
    return out


def _construct_sequence(loader: _LineLoader, node: yaml.SequenceNode) -> _LocatedList:
    out = _LocatedList(loader.construct_sequence(node, deep=True))
    out.where = _where(node)
    return out


_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG, _construct_sequence)


def _load_yaml(path: Path) -> _Located:
    with path.open(encoding="utf-8") as fh:
        doc = yaml.load(fh, Loader=_LineLoader)  # a SafeLoader subclass
    if not isinstance(doc, _Located):
        raise DataError(f"{path.name}: expected a mapping of build name to block")
    return doc


def _where_of(obj: object, fallback: str) -> str:
    return getattr(obj, "where", fallback)


def _suggest(word: str, choices: Iterable[str]) -> str:
    close = difflib.get_close_matches(word, list(choices), n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


def _check_keys(m: object, where: str, required: Collection[str], optional: Collection[str] = ()) -> _Located:
    if not isinstance(m, _Located):
        raise DataError(f"{where}: expected a mapping, got {m!r}")
    allowed = set(required) | set(optional)
    for key in m:
        if key not in allowed:
            raise DataError(f"{m.where}: unknown key {key!r}{_suggest(str(key), allowed)}")
    missing = [k for k in required if k not in m]
    if missing:
        raise DataError(f"{m.where}: missing key(s) {missing}")
    return m


def _gear_id(name: object, where: str, slot: Slot | None = None) -> int:
    """Item id of a wearable by its items.csv name (and slot, where a name is shared)."""
    try:
        return item_by_name(str(name), slot).id
    except KeyError:
        names = {it.name for it in ITEMS.values() if slot is None or it.slot is slot}
        in_slot = f" in the {slot.name.lower()} slot" if slot is not None else ""
        raise DataError(
            f"{where}: unknown item {name!r}{in_slot}{_suggest(str(name), names)} "
            "(names are those of envs/nh/data/items.csv)"
        ) from None


def _consumable_id(name: object, where: str, kinds: Collection[ConsumableKind] | None = None) -> int:
    """Id of a consumable by its consumables.csv name, optionally restricted to some kinds."""
    for c in CONSUMABLES.values():
        if c.name.lower() == str(name).lower() and (kinds is None or c.kind in kinds):
            return c.id
    names = {c.name for c in CONSUMABLES.values() if kinds is None or c.kind in kinds}
    raise DataError(
        f"{where}: unknown consumable {name!r}{_suggest(str(name), names)} "
        "(names are those of envs/nh/data/consumables.csv)"
    )


_E = TypeVar("_E", bound=Enum)


def _enum_value(enum: type[_E], value: object, where: str, *, by_name: bool = False) -> _E:
    choices = [e.name if by_name else str(e.value) for e in enum]
    if value not in choices:
        raise DataError(f"{where}: {value!r} is not one of {choices}")
    return enum[str(value)] if by_name else enum(value)


def _prayer(name: object, where: str) -> Prayer:
    key = str(name).upper().replace(" ", "_")
    if key not in Prayer.__members__:
        choices = [p.name.replace("_", " ").title() for p in Prayer]
        raise DataError(f"{where}: unknown prayer {name!r}{_suggest(str(name), choices)}")
    return Prayer[key]


_EMPTY_CELL = "—"  # the §12.2 tables' mark of an empty slot


def load_builds(path: Path) -> dict[Build, BuildSpec]:
    """Read and check a builds table (format: the header of data/builds.yml; §12.1–12.4).

    Raises:
        DataError: naming the file and line of the first problem (unknown item, prayer, key ...).
    """
    doc = _load_yaml(path)
    names = [b.value for b in Build]
    for name in doc:
        if name not in names:
            raise DataError(f"{path.name}: unknown build {name!r}{_suggest(str(name), names)}")
    specs: dict[Build, BuildSpec] = {}
    for build in Build:
        if build.value not in doc:
            raise DataError(f"{path.name}: no block for build {build.value} (§12.1)")
        block = _check_keys(
            doc[build.value],
            doc.where,
            ["section", "levels", "spellbook", "fight_mode", "primary_food", "supplies", "prayers", "gear"],
        )
        where = block.where
        skills = [s.name.lower() for s in Skill]
        levels = _check_keys(block["levels"], where, skills)
        base_levels = tuple(levels[s] for s in skills)
        if not all(isinstance(lv, int) and not isinstance(lv, bool) and 1 <= lv <= 99 for lv in base_levels):
            raise DataError(f"{levels.where}: levels must lie in 1..99, got {base_levels}")
        supplies: list[tuple[int, int]] = []
        for row in block["supplies"]:
            row_where = _where_of(row, _where_of(block["supplies"], where))
            if not isinstance(row, list) or len(row) != 2 or not isinstance(row[1], int) or row[1] < 0:
                raise DataError(f"{row_where}: a supply is [name, count ≥ 0], got {row!r}")
            supplies.append((_consumable_id(row[0], row_where), row[1]))
        prayers_block = _check_keys(block["prayers"], where, [gs.value for gs in BASE_SETS])
        prayers = {
            gs: tuple(_prayer(p, _where_of(prayers_block[gs.value], where)) for p in prayers_block[gs.value])
            for gs in BASE_SETS
        }
        gear = _check_keys(block["gear"], where, [s.name.lower() for s in TABLE_SLOT_ORDER])
        columns: dict[GearSet, list[int]] = {gs: [] for gs in BASE_SETS}
        for slot in TABLE_SLOT_ORDER:
            row = gear[slot.name.lower()]
            row_where = _where_of(row, gear.where)
            if not isinstance(row, list) or len(row) != len(BASE_SETS):
                raise DataError(f"{row_where}: a gear row lists the [magic, ranged, melee, spec] items")
            for gs, cell in zip(BASE_SETS, row, strict=True):
                columns[gs].append(EMPTY if cell == _EMPTY_CELL else _gear_id(cell, row_where, slot))
        specs[build] = BuildSpec(
            build=build,
            base_levels=base_levels,
            spellbook=_enum_value(Spellbook, block["spellbook"], where),
            fight_mode=_enum_value(FightMode, block["fight_mode"], where, by_name=True),
            primary_food=_consumable_id(block["primary_food"], where, [ConsumableKind.FOOD]),
            supplies=tuple(supplies),
            sets=MappingProxyType({gs: tuple(ids) for gs, ids in columns.items()}),
            prayers=MappingProxyType(prayers),
            source=where,
        )
    return specs


# ---------------------------------------------------------------------------------------------------
# Data tables: gear randomisation (§12.6)
# ---------------------------------------------------------------------------------------------------


class _Draft:
    """Mutable working copy of one loadout while the §12.6 lines are applied to it."""

    def __init__(self, spec: BuildSpec) -> None:
        self.sets: dict[GearSet, dict[Slot, int]] = {
            gs: {s: i for s, i in zip(TABLE_SLOT_ORDER, spec.sets[gs], strict=True) if i != EMPTY}
            for gs in BASE_SETS
        }
        self.supplies: list[list[int]] = [[iid, n] for iid, n in spec.supplies]
        self.primary_food = spec.primary_food
        self.spellbook = spec.spellbook
        self.magic_emptied = False

    def set_count(self, item: int, n: int) -> None:
        """count(item, n): the supplies hold exactly n of `item` (appended when absent)."""
        for entry in self.supplies:
            if entry[0] == item:
                entry[1] = n
                return
        self.supplies.append([item, n])


def _uniform(rng: np.random.Generator, low: int, high: int) -> int:
    """`U[low, high]` (closed range) as one bounded-integer draw (§16.6)."""
    return int(rng.integers(low, high + 1))


def _chance(rng: np.random.Generator, p: float) -> bool:
    """A chance `p` as `R() < p` (§16.6)."""
    return bool(rng.random() < p)


IntOrRange = int | tuple[int, int]
"""A constant, or `(a, b)` for a `U[a, b]` draw."""


def _draw(rng: np.random.Generator, value: IntOrRange) -> int:
    return value if isinstance(value, int) else _uniform(rng, *value)


def _name(iid: int) -> str:
    return ITEMS[iid].name if iid in ITEMS else CONSUMABLES[iid].name


def _sets_text(sets: tuple[GearSet, ...]) -> str:
    return "all" if sets == BASE_SETS else ", ".join(gs.value for gs in sets)


def _value_text(value: IntOrRange) -> str:
    return str(value) if isinstance(value, int) else f"U[{value[0]},{value[1]}]"


@dataclass(frozen=True, slots=True)
class SetSlot:
    """set{Sets}(slot, b): put `item` in `slot` of each set; a two-handed weapon drops the shield."""

    sets: tuple[GearSet, ...]
    slot: Slot
    item: int

    def apply(self, d: _Draft, rng: np.random.Generator) -> None:
        for gs in self.sets:
            d.sets[gs][self.slot] = self.item
            if ITEMS[self.item].two_handed:
                d.sets[gs].pop(Slot.SHIELD, None)

    def describe(self) -> str:
        return f"set{{{_sets_text(self.sets)}}}({self.slot.name.lower()}, {_name(self.item)})"


@dataclass(frozen=True, slots=True)
class SwapSet:
    """swap{Sets}(a→b): replace `old` by `new` in the listed sets only."""

    sets: tuple[GearSet, ...]
    old: int
    new: int

    def apply(self, d: _Draft, rng: np.random.Generator) -> None:
        slot = ITEMS[self.old].slot
        for gs in self.sets:
            if d.sets[gs].get(slot) == self.old:
                d.sets[gs][slot] = self.new

    def describe(self) -> str:
        return f"swap{{{_sets_text(self.sets)}}}({_name(self.old)} → {_name(self.new)})"


@dataclass(frozen=True, slots=True)
class SwapAll:
    """swapAll(a→b): replace `old` by `new` in every set and in the default supplies."""

    old: int
    new: int

    def apply(self, d: _Draft, rng: np.random.Generator) -> None:
        SwapSet(BASE_SETS, self.old, self.new).apply(d, rng)
        for entry in d.supplies:
            if entry[0] == self.old:
                entry[0] = self.new

    def describe(self) -> str:
        return f"swapAll({_name(self.old)} → {_name(self.new)})"


@dataclass(frozen=True, slots=True)
class Count:
    """count(item, n): the default supplies hold exactly `n` of `item` (`n` may be a `U[a, b]` draw)."""

    item: int
    n: IntOrRange

    def apply(self, d: _Draft, rng: np.random.Generator) -> None:
        d.set_count(self.item, _draw(rng, self.n))

    def describe(self) -> str:
        return f"count({_name(self.item)}, {_value_text(self.n)})"


@dataclass(frozen=True, slots=True)
class DoseVary:
    """The "dose varied" line: the potion becomes the same potion with `doses[U[0, len − 1]]` doses."""

    item: int
    doses: tuple[int, ...]

    def apply(self, d: _Draft, rng: np.random.Generator) -> None:
        doses = self.doses[_uniform(rng, 0, len(self.doses) - 1)]
        potion = CONSUMABLES[self.item].potion
        assert potion is not None  # checked on load
        for entry in d.supplies:
            if entry[0] == self.item:
                entry[0] = potion_id(potion, doses)

    def describe(self) -> str:
        return f"dose({_name(self.item)}, U{{{','.join(map(str, self.doses))}}})"


@dataclass(frozen=True, slots=True)
class Brews:
    """`b = U[b0, b1]`: count(brew, b), count(restore, max(min, round(b/2) + plus)); plus drawn after b."""

    brew: int
    restore: int
    b: tuple[int, int]
    restore_min: int
    restore_round_up: bool
    restore_plus: IntOrRange

    def apply(self, d: _Draft, rng: np.random.Generator) -> None:
        b = _uniform(rng, *self.b)
        plus = _draw(rng, self.restore_plus)
        half = -(-b // 2) if self.restore_round_up else b // 2
        d.set_count(self.brew, b)
        d.set_count(self.restore, max(self.restore_min, half + plus))

    def describe(self) -> str:
        half = "ceil(b/2)" if self.restore_round_up else "floor(b/2)"
        restores = f"{half} + {_value_text(self.restore_plus)}"
        if self.restore_min:
            restores = f"max({self.restore_min}, {restores})"
        brews = f"count({_name(self.brew)}, b)"
        return f"b = {_value_text(self.b)}: {brews}, count({_name(self.restore)}, {restores})"


@dataclass(frozen=True, slots=True)
class PrimaryFood:
    """primary food = `item`: the food that fills the inventory (§12.4)."""

    item: int

    def apply(self, d: _Draft, rng: np.random.Generator) -> None:
        d.primary_food = self.item

    def describe(self) -> str:
        return f"primary food = {_name(self.item)}"


@dataclass(frozen=True, slots=True)
class LunarBook:
    """spellbook = Lunar; the magic set is then treated as empty (§12.6 notes)."""

    def apply(self, d: _Draft, rng: np.random.Generator) -> None:
        d.spellbook = Spellbook.LUNAR

    def describe(self) -> str:
        return "spellbook = Lunar"


@dataclass(frozen=True, slots=True)
class EmptyMagic:
    """The "magic set emptied (no magic)" line."""

    def apply(self, d: _Draft, rng: np.random.Generator) -> None:
        d.magic_emptied = True

    def describe(self) -> str:
        return "magic set emptied"


Op = SetSlot | SwapSet | SwapAll | Count | DoseVary | Brews | PrimaryFood | LunarBook | EmptyMagic


@dataclass(frozen=True, slots=True)
class RandomLine:
    """One row of a §12.6 table: a chance `p`, the operations it applies, and its chain links.

    An `is_else` line is reached only when the line directly above it was reached and failed. `then`
    is a sub-line whose chance is drawn right after this line succeeded (the "then 50 %" rows).
    """

    p: float
    ops: tuple[Op, ...]
    is_else: bool = False
    then: RandomLine | None = None
    source: str = ""
    """File and line, e.g. "randomisation.yml:42" (for a YAML alias: where its anchor is defined)."""

    def apply(self, d: _Draft, rng: np.random.Generator) -> None:
        """Apply the operations (after the line's own chance succeeded), then draw the `then` line."""
        for op in self.ops:
            op.apply(d, rng)
        if self.then is not None and _chance(rng, self.then.p):
            self.then.apply(d, rng)

    def describe(self) -> str:
        """The line as the §12.6 tables write it, e.g. "else 10 %: set{ranged}(weapon, Armadyl crossbow)"."""
        text = f"{'else ' if self.is_else else ''}{self.p * 100:g} %: " + "; ".join(
            o.describe() for o in self.ops
        )
        if self.then is not None:
            text += f"; then {self.then.describe()}"
        return text


_LINE_KEYS = ("p", "else", "then", "op", "ops")
_OP_KEYS: dict[str, tuple[str, ...]] = {
    "set_slot": ("sets", "slot", "item"),
    "swap_all": ("from", "to"),
    "swap_set": ("sets", "from", "to"),
    "count": ("item", "n"),
    "dose_vary": ("item", "doses"),
    "brews": ("brew", "restore", "b", "restores"),
    "food": ("item",),
    "lunar": (),
    "empty_magic": (),
}


def _int_or_range(value: object, where: str, what: str) -> IntOrRange:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    if (
        isinstance(value, list)
        and len(value) == 2
        and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
        and 0 <= value[0] <= value[1]
    ):
        return (value[0], value[1])
    raise DataError(f"{where}: {what} must be an integer ≥ 0 or [a, b] with 0 ≤ a ≤ b, got {value!r}")


def _set_list(value: object, where: str) -> tuple[GearSet, ...]:
    if value == "all":
        return BASE_SETS
    names = [gs.value for gs in BASE_SETS]
    if not isinstance(value, list) or not value or any(v not in names for v in value):
        raise DataError(f"{where}: sets is `all` or a list of {names}, got {value!r}")
    return tuple(GearSet(v) for v in value)


def _swap_ids(m: _Located) -> tuple[int, int]:
    old, new = _gear_id(m["from"], m.where), _gear_id(m["to"], m.where)
    if ITEMS[old].slot is not ITEMS[new].slot:
        raise DataError(f"{m.where}: a swap keeps the slot: {m['from']!r} and {m['to']!r} differ")
    return old, new


def _parse_op(m: _Located, kind: object) -> Op:
    where = m.where
    if kind not in _OP_KEYS:
        raise DataError(f"{where}: unknown operation {kind!r}{_suggest(str(kind), _OP_KEYS)}")
    if kind == "set_slot":
        slot = _enum_value(Slot, str(m["slot"]).upper(), where, by_name=True)
        return SetSlot(_set_list(m["sets"], where), slot, _gear_id(m["item"], where, slot))
    if kind == "swap_set":
        return SwapSet(_set_list(m["sets"], where), *_swap_ids(m))
    if kind == "swap_all":
        return SwapAll(*_swap_ids(m))
    if kind == "count":
        return Count(_consumable_id(m["item"], where), _int_or_range(m["n"], where, "n"))
    if kind == "dose_vary":
        item = _consumable_id(m["item"], where, [ConsumableKind.POTION])
        potion = CONSUMABLES[item].potion
        doses = m["doses"]
        if not isinstance(doses, list) or not doses:
            raise DataError(f"{where}: doses is a non-empty list, got {doses!r}")
        for dose in doses:
            assert potion is not None
            try:
                potion_id(potion, dose)
            except KeyError:
                raise DataError(f"{where}: no {dose}-dose {CONSUMABLES[item].name}") from None
        return DoseVary(item, tuple(doses))
    if kind == "brews":
        restores = _check_keys(m["restores"], where, ["min", "round", "plus"])
        if restores["round"] not in ("floor", "ceil"):
            raise DataError(f"{restores.where}: round is floor or ceil, got {restores['round']!r}")
        b = _int_or_range(m["b"], where, "b")
        return Brews(
            brew=_consumable_id(m["brew"], where, [ConsumableKind.POTION]),
            restore=_consumable_id(m["restore"], where, [ConsumableKind.POTION]),
            b=b if isinstance(b, tuple) else (b, b),
            restore_min=int(restores["min"]),
            restore_round_up=restores["round"] == "ceil",
            restore_plus=_int_or_range(restores["plus"], restores.where, "plus"),
        )
    if kind == "food":
        return PrimaryFood(_consumable_id(m["item"], where, [ConsumableKind.FOOD]))
    if kind == "lunar":
        return LunarBook()
    return EmptyMagic()


def _parse_inline_op(m: object, where: str, ignore: Collection[str]) -> Op:
    """An operation written as the keys `op`, operands... of a mapping (minus the `ignore` keys)."""
    if not isinstance(m, _Located):
        raise DataError(f"{where}: an operation is a mapping {{op: ..., operands}}, got {m!r}")
    kind = m.get("op")
    if kind not in _OP_KEYS:
        raise DataError(f"{m.where}: unknown operation {kind!r}{_suggest(str(kind), _OP_KEYS)}")
    _check_keys(m, m.where, ["op", *_OP_KEYS[str(kind)]], ignore)
    return _parse_op(m, kind)


def _parse_line(m: object, where: str, *, sub: bool = False) -> RandomLine:
    line_keys = ("p", "then", "ops", "op") if sub else _LINE_KEYS
    if not isinstance(m, _Located):
        raise DataError(f"{where}: a line is a mapping, got {m!r}")
    p = m.get("p")
    if isinstance(p, bool) or not isinstance(p, int | float) or not 0 < p <= 1:
        raise DataError(f"{m.where}: p is the line's chance in (0, 1], got {p!r}")
    if "ops" in m:
        _check_keys(m, m.where, ["p", "ops"], [k for k in line_keys if k not in ("op", "ops")])
        if not isinstance(m["ops"], list) or not m["ops"]:
            raise DataError(f"{m.where}: ops is a non-empty list of operations")
        ops = tuple(_parse_inline_op(o, _where_of(m["ops"], m.where), ()) for o in m["ops"])
    else:
        ops = (_parse_inline_op(m, m.where, [k for k in line_keys if k not in ("op", "ops")]),)
    then = _parse_line(m["then"], m.where, sub=True) if "then" in m else None
    is_else = m.get("else", False)
    if not isinstance(is_else, bool):
        raise DataError(f"{m.where}: else is true or false, got {is_else!r}")
    return RandomLine(p=float(p), ops=ops, is_else=is_else, then=then, source=m.where)


def load_randomisation(path: Path) -> dict[Build, tuple[RandomLine, ...]]:
    """Read and check a randomisation table (format: the header of data/randomisation.yml; §12.6).

    Raises:
        DataError: naming the file and line of the first problem (unknown item, operation, key ...).
    """
    doc = _load_yaml(path)
    names = [b.value for b in Build]
    for name in doc:
        if name not in names:
            raise DataError(f"{path.name}: unknown build {name!r}{_suggest(str(name), names)}")
    out: dict[Build, tuple[RandomLine, ...]] = {}
    for build in Build:
        if build.value not in doc:
            raise DataError(f"{path.name}: no block for build {build.value} (§12.6; MAXED has `lines: []`)")
        block = _check_keys(doc[build.value], doc.where, ["section", "lines"])
        raw = block["lines"]
        if not isinstance(raw, list):
            raise DataError(f"{block.where}: lines is a list")
        lines = tuple(_parse_line(m, block.where) for m in raw)
        if lines and lines[0].is_else:
            raise DataError(f"{lines[0].source}: the first line cannot be an else line")
        out[build] = lines
    return out


BUILD_SPECS: Mapping[Build, BuildSpec] = MappingProxyType(load_builds(BUILDS_FILE))
"""§12.1–12.4 per build, from data/builds.yml."""

RANDOMISATION: Mapping[Build, tuple[RandomLine, ...]] = MappingProxyType(
    load_randomisation(RANDOMISATION_FILE)
)
"""§12.6 per build (table order), from data/randomisation.yml; MAXED has no lines."""


# ---------------------------------------------------------------------------------------------------
# Assembling loadouts (§12.4)
# ---------------------------------------------------------------------------------------------------


def _inventory_rank(iid: int) -> int:
    """§12.4 re-ordering: gear 0, food 1, potions 2, rune pouch 3."""
    c = CONSUMABLES.get(iid)
    if c is None:
        return 0
    return {ConsumableKind.FOOD: 1, ConsumableKind.POTION: 2, ConsumableKind.EMPTY: 2}.get(c.kind, 3)


def _ordered(items: Iterable[int]) -> tuple[int, ...]:
    """Stable re-order: gear first, then food, then potions, then the rune pouch (§12.4)."""
    return tuple(sorted(items, key=_inventory_rank))


def _assemble(spec: BuildSpec, d: _Draft) -> Loadout:
    """Sets, worn equipment and inventory of §12.4 from a (possibly randomised) draft."""
    sets: dict[GearSet, tuple[int, ...]] = {
        gs: tuple(d.sets[gs][s] for s in TABLE_SLOT_ORDER if s in d.sets[gs]) for gs in BASE_SETS
    }
    if d.magic_emptied or d.spellbook is Spellbook.LUNAR:
        sets[GearSet.MAGIC] = ()
    sets[GearSet.TANK] = tank_set(sets[GearSet.RANGED], sets[GearSet.MAGIC])

    equipment = [EMPTY] * NUM_SLOTS
    for iid in sets[GearSet.MAGIC] or sets[GearSet.RANGED]:
        equipment[ITEMS[iid].slot] = iid
    carried = (
        (GearSet.RANGED, GearSet.MELEE, GearSet.SPEC)
        if sets[GearSet.MAGIC]
        else (GearSet.MELEE, GearSet.SPEC)
    )
    gear: list[int] = []
    for gs in carried:
        gear.extend(i for i in sets[gs] if i not in equipment and i not in gear)
    supplies = [iid for iid, n in d.supplies for _ in range(n)]
    fill = INVENTORY_SIZE - len(gear) - len(supplies)
    if fill < 0:
        raise LoadoutError(
            f"{spec.build.value} loadout: {len(gear)} gear items and {len(supplies)} supplies exceed "
            f"{INVENTORY_SIZE} inventory slots (§12.4)"
        )
    prayers = dict(spec.prayers)
    prayers[GearSet.TANK] = spec.prayers[GearSet.MAGIC]
    return Loadout(
        build=spec.build,
        base_levels=spec.base_levels,
        spellbook=d.spellbook,
        fight_mode=spec.fight_mode,
        sets=MappingProxyType(sets),
        set_prayers=MappingProxyType(prayers),
        equipment=tuple(equipment),
        inventory=_ordered([*gear, *supplies, *[d.primary_food] * fill]),
        primary_food=d.primary_food,
    )


def _randomise(
    d: _Draft, lines: Sequence[RandomLine], rng: np.random.Generator, forced: Collection[int] | None
) -> None:
    """Apply §12.6 lines in table order; an else line only when the line above was reached and failed."""
    above_failed = False
    for index, line in enumerate(lines):
        if line.is_else and not above_failed:
            above_failed = False  # not reached: the lines chained below it are not reached either
            continue
        fired = index in forced if forced is not None else _chance(rng, line.p)
        if fired:
            line.apply(d, rng)
        above_failed = not fired


@cache
def _default_loadout(build: Build) -> Loadout:
    return _assemble(BUILD_SPECS[build], _Draft(BUILD_SPECS[build]))


def make_loadout(build: Build, rng: np.random.Generator | None = None) -> Loadout:
    """The loadout of `build` (spec §12.1–12.5, §12.8), randomised by §12.6 when `rng` is given.

    Args:
        build: the account build.
        rng: the episode generator (§16.6) when `randomizeGear` is on, else None for the default
            loadout. The lines of the build's §12.6 table are drawn in table order: one chance per
            line reached (`rng.random() < p`), then that line's numbers (`U[a, b]` as
            `rng.integers(a, b + 1)`) and its "then" chance, left to right.

    Returns:
        The frozen loadout; for a given generator state the result and the draws made are fixed.
    """
    if rng is None:
        return _default_loadout(build)
    draft = _Draft(BUILD_SPECS[build])
    _randomise(draft, RANDOMISATION[build], rng, forced=None)
    return _assemble(BUILD_SPECS[build], draft)


def loadout_with_lines(
    build: Build, lines: Collection[int], rng: np.random.Generator | None = None
) -> Loadout:
    """The loadout of `build` with chosen §12.6 lines forced to succeed and all others failing.

    A test and debugging aid: `lines` are 0-based indices into `RANDOMISATION[build]` (table order).
    Chains still apply — a forced else line is only reached if the line above it failed. The numbers
    of the forced lines (counts, doses, brews, "then" chances) are drawn from `rng` (a generator
    seeded with 0 when None).

    Raises:
        IndexError: an index outside the build's table.
    """
    table = RANDOMISATION[build]
    bad = [i for i in lines if not 0 <= i < len(table)]
    if bad:
        raise IndexError(
            f"{build.value} has {len(table)} randomisation lines (0..{len(table) - 1}); got {bad}"
        )
    draft = _Draft(BUILD_SPECS[build])
    _randomise(draft, table, rng if rng is not None else np.random.default_rng(0), forced=frozenset(lines))
    return _assemble(BUILD_SPECS[build], draft)


# ---------------------------------------------------------------------------------------------------
# Scripted baseline supplies (§18.1)
# ---------------------------------------------------------------------------------------------------

BASELINE_RESTORES_KEPT = 2  # §18.1: "every Super restore beyond the second" becomes an anglerfish


def baseline_loadout(agent: Loadout) -> Loadout:
    """The scripted baseline's loadout: the agent's, with the supply changes of spec §18.1.

    Every Saradomin brew and every Super restore beyond the second (any dose, in inventory order) is
    replaced by an anglerfish in its slot, then the inventory is re-ordered as in §12.4 (so the new
    anglerfish follow the existing food). Equipment, sets, levels and primary food are the agent's.
    """
    restores = 0
    inventory: list[int] = []
    for iid in agent.inventory:
        c = CONSUMABLES.get(iid)
        potion = c.potion if c is not None else None
        if potion is PotionType.BREW:
            iid = Ids.ANGLERFISH
        elif potion is PotionType.RESTORE:
            restores += 1
            if restores > BASELINE_RESTORES_KEPT:
                iid = Ids.ANGLERFISH
        inventory.append(iid)
    return replace(agent, inventory=_ordered(inventory))


# ---------------------------------------------------------------------------------------------------
# Build selection (§12.7)
# ---------------------------------------------------------------------------------------------------

_DECIMAL = re.compile(r"[0-9]+")


def java_string_hash(text: str) -> int:
    """Java's `String.hashCode`: `h := 31·h + c` over UTF-16 code units, as a signed 32-bit int (§12.7)."""
    units = text.encode("utf-16-be")
    h = 0
    for i in range(0, len(units), 2):
        h = (31 * h + int.from_bytes(units[i : i + 2], "big")) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def build_key(agent_id: str, target_id: str) -> int:
    """The `k` of §12.7: the smallest integer found in the two player identifiers.

    The smallest of the identifiers made of decimal digits only; else the smallest space-separated
    part made of digits only; else the Java string hash of the two identifiers sorted (by UTF-16
    code units, as Java sorts) and concatenated. Numbers are exact (no 32/64-bit overflow).
    """
    whole = [int(s) for s in (agent_id, target_id) if _DECIMAL.fullmatch(s)]
    if whole:
        return min(whole)
    parts = [int(p) for s in (agent_id, target_id) for p in s.split(" ") if _DECIMAL.fullmatch(p)]
    if parts:
        return min(parts)
    first, second = sorted((agent_id, target_id), key=lambda s: s.encode("utf-16-be"))
    return java_string_hash(first + second)


def choose_build(options: Sequence[Build], agent_id: str, target_id: str) -> Build:
    """`randomBuildOptions[|k| mod len]` with `k = build_key(agent_id, target_id)` (spec §12.7).

    The build is a function of the identifiers, not a draw; both players of a fight get it. Empty
    identifiers hash to 0, so they pick the first option.

    Raises:
        ValueError: `options` is empty.
    """
    if not options:
        raise ValueError("randomBuildOptions is empty: list at least one build (§12.7, §13.1)")
    return options[abs(build_key(agent_id, target_id)) % len(options)]


def draw_build(options: Sequence[Build], weights: Sequence[float] | None, rng: np.random.Generator) -> Build:
    """One per-episode draw over `options` (spec §12.7, project decision; §16.6 draw 0).

    Uniform: one `U[0, len - 1]`. Weighted: one `R()` located in the cumulative normalised weights, so
    that a build of weight 0 is never drawn. Why a draw rather than the identifier rule: a caller that
    does not number its environments would otherwise get the first option in every fight.

    Raises:
        ValueError: `options` is empty.
    """
    if not options:
        raise ValueError("randomBuildOptions is empty: list at least one build (§12.7, §13.1)")
    if weights is None:
        return options[int(rng.integers(0, len(options)))]
    total = float(sum(weights))
    u = float(rng.random()) * total
    acc = 0.0
    for build, w in zip(options, weights, strict=True):
        acc += w
        if u < acc and w > 0:
            return build
    return next(b for b, w in zip(reversed(options), reversed(weights), strict=True) if w > 0)


# Assemble every default loadout now: a table that cannot make a valid loadout fails at import.
DEFAULT_LOADOUTS: Mapping[Build, Loadout] = MappingProxyType({b: _default_loadout(b) for b in Build})
"""The non-randomised loadout of every build (§12.1–12.5)."""
