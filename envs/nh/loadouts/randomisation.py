"""The gear randomisation language of spec §12.6 (`data/randomisation.yml`).

Each build has an ordered list of `RandomLine`s; a line is a chance with operations (`SetSlot`, `SwapSet`,
`Count`, `Brews` ...) applied to a `_Draft` of the loadout. `RANDOMISATION` is read once at import and
checked there (`load_randomisation`); `assembly` applies the lines and builds the `Loadout`.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

import numpy as np

from envs.nh.account import EMPTY, Spellbook
from envs.nh.items import (
    CONSUMABLES,
    DATA_DIR,
    ITEMS,
    ConsumableKind,
    DataError,
    Slot,
    potion_id,
)
from envs.nh.loadouts.build_table import BuildSpec
from envs.nh.loadouts.loadout import BASE_SETS, TABLE_SLOT_ORDER, Build, GearSet
from envs.nh.loadouts.tables import (
    _check_keys,
    _consumable_id,
    _enum_value,
    _gear_id,
    _load_yaml,
    _Located,
    _suggest,
    _where_of,
)

RANDOMISATION_FILE = DATA_DIR / "randomisation.yml"


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


RANDOMISATION: Mapping[Build, tuple[RandomLine, ...]] = MappingProxyType(
    load_randomisation(RANDOMISATION_FILE)
)
"""§12.6 per build (table order), from data/randomisation.yml; MAXED has no lines."""
