"""The builds table (spec §12.1–12.4, `data/builds.yml`) and build choice (§12.7).

`BUILD_SPECS` is read once at import and checked there (`load_builds`). `choose_build` picks a build the
way the game's matchmaking does (from the agent and target ids), `draw_build` draws one from weights.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

import numpy as np

from envs.nh.account import EMPTY, FightMode, Skill, Spellbook
from envs.nh.items import (
    DATA_DIR,
    ConsumableKind,
    DataError,
)
from envs.nh.loadouts.loadout import BASE_SETS, TABLE_SLOT_ORDER, Build, GearSet
from envs.nh.loadouts.tables import (
    _check_keys,
    _consumable_id,
    _enum_value,
    _gear_id,
    _load_yaml,
    _prayer,
    _suggest,
    _where_of,
)
from envs.nh.prayers import Prayer

BUILDS_FILE = DATA_DIR / "builds.yml"


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



BUILD_SPECS: Mapping[Build, BuildSpec] = MappingProxyType(load_builds(BUILDS_FILE))
"""§12.1–12.4 per build, from data/builds.yml."""


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
