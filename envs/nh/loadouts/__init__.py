"""Loadouts: account builds, gear sets, starting inventories, gear randomisation and build choice.

Implements spec §12 (12.1 builds, 12.2 gear sets, 12.3 set prayers, 12.4 starting equipment and
inventory, 12.5 tank set, 12.6 gear randomisation, 12.7 build selection, 12.8 derived flags) and the
baseline's supply changes of §18.1.

The game data are tables, not code: `data/builds.yml` holds §12.1–12.4 and `data/randomisation.yml`
holds every line of §12.6. Both are read once at import into frozen dataclasses (`BuildSpec`,
`RandomLine` and its operations) and checked there: an unknown item, prayer, slot, set, operation or
key is a `DataError` naming the file and line. The default loadout of every build is assembled at
import too, so a table that cannot make a valid loadout fails at once rather than mid-training.

Where things live: `loadout` (the `Loadout` model and its rules, `Build`, `GearSet`), `builds` (the builds
table and build choice of §12.7), `randomisation` (the §12.6 language and its table), `assembly` (a build
plus its draws made into a checked `Loadout`, `make_loadout`, the baseline's supplies), and `tables` (the
YAML reading both tables share). This package re-exports their public names, so
``from envs.nh.loadouts import make_loadout`` is the way in.

Randomness: `make_loadout(build, rng)` makes exactly the draws of §16.6 step 2 from the generator it
is given, in table order — a chance as `rng.random() < p`, `U[a, b]` as `rng.integers(a, b + 1)`,
and the numbers of a line (counts, doses, brews, the "then 50 %" chance) right after the chance they
depend on. Where the spec's prose leaves a choice, docs/loadouts.md records the reading taken.
"""

from __future__ import annotations

from envs.nh.loadouts.assembly import (
    BASELINE_RESTORES_KEPT,
    DEFAULT_LOADOUTS,
    baseline_loadout,
    loadout_with_lines,
    make_loadout,
)
from envs.nh.loadouts.build_table import (
    BUILD_SPECS,
    BUILDS_FILE,
    BuildSpec,
    build_key,
    choose_build,
    draw_build,
    java_string_hash,
    load_builds,
)
from envs.nh.loadouts.loadout import (
    BASE_SETS,
    MELEE_SPECIAL_WEAPONS,
    RANGED_SPECIAL_WEAPONS,
    TABLE_SLOT_ORDER,
    Build,
    GearSet,
    Loadout,
    LoadoutError,
    set_bonuses,
    tank_set,
    weapon_of,
)
from envs.nh.loadouts.randomisation import (
    RANDOMISATION,
    RANDOMISATION_FILE,
    Brews,
    Count,
    DoseVary,
    EmptyMagic,
    IntOrRange,
    LunarBook,
    Op,
    PrimaryFood,
    RandomLine,
    SetSlot,
    SwapAll,
    SwapSet,
    load_randomisation,
)

__all__ = [
    "BASELINE_RESTORES_KEPT",
    "BASE_SETS",
    "BUILDS_FILE",
    "BUILD_SPECS",
    "DEFAULT_LOADOUTS",
    "MELEE_SPECIAL_WEAPONS",
    "RANDOMISATION",
    "RANDOMISATION_FILE",
    "RANGED_SPECIAL_WEAPONS",
    "TABLE_SLOT_ORDER",
    "Brews",
    "Build",
    "BuildSpec",
    "Count",
    "DoseVary",
    "EmptyMagic",
    "GearSet",
    "IntOrRange",
    "Loadout",
    "LoadoutError",
    "LunarBook",
    "Op",
    "PrimaryFood",
    "RandomLine",
    "SetSlot",
    "SwapAll",
    "SwapSet",
    "baseline_loadout",
    "build_key",
    "choose_build",
    "draw_build",
    "java_string_hash",
    "load_builds",
    "load_randomisation",
    "loadout_with_lines",
    "make_loadout",
    "set_bonuses",
    "tank_set",
    "weapon_of",
]
