"""Assembling loadouts (spec §12.4): a build's table row plus its §12.6 draws become a checked `Loadout`.

`make_loadout` is the one way a fight gets a loadout; `DEFAULT_LOADOUTS` assembles every build at import,
so a table that cannot make a valid loadout fails at once rather than mid-training. `baseline_loadout`
applies the scripted baseline's supply changes of §18.1.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import replace
from functools import cache
from types import MappingProxyType

import numpy as np

from envs.nh.account import EMPTY, INVENTORY_SIZE, Spellbook
from envs.nh.items import (
    CONSUMABLES,
    ITEMS,
    NUM_SLOTS,
    ConsumableKind,
    Ids,
    PotionType,
)
from envs.nh.loadouts.build_table import BUILD_SPECS, BuildSpec
from envs.nh.loadouts.loadout import (
    BASE_SETS,
    TABLE_SLOT_ORDER,
    Build,
    GearSet,
    Loadout,
    LoadoutError,
    tank_set,
)
from envs.nh.loadouts.randomisation import RANDOMISATION, RandomLine, _chance, _Draft


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



# Assemble every default loadout now: a table that cannot make a valid loadout fails at import.
DEFAULT_LOADOUTS: Mapping[Build, Loadout] = MappingProxyType({b: _default_loadout(b) for b in Build})
"""The non-randomised loadout of every build (§12.1–12.5)."""
