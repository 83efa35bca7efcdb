"""Generate the C tables of the compiled core from the Python engine's constants and data files.

Why a generator: game numbers live once, in the Python engine's named constants and in
`envs/nh/data/*`; the C core must never carry a hand-copied number. This script reads them and writes
`envs/nh/core/src/nh_tables.h`, which is checked in so that building the core needs nothing but a C
compiler (no numpy, no yaml at build time). `tests/envs/test_core_tables.py` regenerates it and fails
when the checked-in file is stale, so a changed constant cannot silently diverge between the engines.

It also writes `envs/nh/core/src/nh_data.c`, the rows of the data tables (items, consumables, builds,
gear randomisation) from the Python engine's parsed tables, so the Python loader's checks apply to both, and
`envs/nh/core/src/nh_fields.h`, the binding's field tables (reset parameters, player snapshot, events,
signals, reward-weight names) from the Python definitions through `mirrors.py`: a field added in Python
without a mirror stops the generation with its name.

Run from the repository root:

    python -m envs.nh.core.gen_tables          # rewrite the three files
    python -m envs.nh.core.gen_tables --check  # exit 1 when any is stale
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import importlib
import inspect
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from common.atomic_files import write_text_atomic
from envs.nh import baseline, observation
from envs.nh.combat import (
    _BOLT_CHANCE,
    _BOLT_KINDS,
    _PROTECTION_PRAYER,
    _SPECIAL_ACCURACY,
    _SPECIAL_DAMAGE_RANGE,
    _SPECIAL_DEFENCE_STYLE,
    _SPECIAL_MAX_HIT,
    SPECIALS,
    Method,
    _Bolt,
)
from envs.nh.contract import HEAD_OFFSETS, HEAD_SIZES
from envs.nh.core import mirrors
from envs.nh.core.mirrors import CField
from envs.nh.items import (
    AMMO_IGNORED_CLASSES,
    CONSUMABLES,
    ITEMS,
    RANGED_RANGE_TILES,
    CombatStyle,
    Ids,
    Stance,
    StyleType,
    WeaponClass,
)
from envs.nh.loadouts import (
    BASE_SETS,
    BUILD_SPECS,
    MELEE_SPECIAL_WEAPONS,
    RANDOMISATION,
    RANGED_SPECIAL_WEAPONS,
    Brews,
    Build,
    Count,
    DoseVary,
    EmptyMagic,
    GearSet,
    LunarBook,
    Op,
    PrimaryFood,
    RandomLine,
    SetSlot,
    SwapAll,
    SwapSet,
)
from envs.nh.loadouts.assembly import _inventory_rank
from envs.nh.loadouts.loadout import Loadout
from envs.nh.operations import anglerfish_heal, brew_hp_boost, combat_boost, ranging_boost, restore_amount
from envs.nh.params import FightParams
from envs.nh.prayers import CONFLICTS, PRAYERS, Prayer
from envs.nh.rewards import NULL_STYLE, REWARD_COMPONENTS, STYLE_NAMES, RewardWeights
from envs.nh.sim import Outcome
from envs.nh.spells import SPELLS, Spell
from envs.nh.state import PendingHit, PlayerState
from envs.nh.stats import HitRecord, TickEvents

HEADER_PATH = Path(__file__).parent / "src" / "nh_tables.h"
DATA_PATH = Path(__file__).parent / "src" / "nh_data.c"
FIELDS_PATH = Path(__file__).parent / "src" / "nh_fields.h"


@dataclass(frozen=True)
class ConstantSource:
    """One Python module whose module-level UPPER_CASE numbers become C constants."""

    module: str
    """Dotted module name."""
    prefix: str
    """C name prefix, so names from two modules cannot clash."""


@dataclass(frozen=True)
class EnumSource:
    """One enum of the Python engine whose members' integer values become C constants."""

    module: str
    """Dotted module name."""
    name: str
    """The enum class's name in that module (private ones included: the C core mirrors internals)."""
    prefix: str
    """C name prefix; each member becomes `<prefix><MEMBER>`."""
    count_name: str = ""
    """When set, `#define <count_name> <number of members>`."""


SOURCES: tuple[ConstantSource, ...] = (
    ConstantSource("envs.nh.formulas", "NH_"),
    ConstantSource("envs.nh.account", "NH_"),
    ConstantSource("envs.nh.state", "NH_"),
    ConstantSource("envs.nh.sim", "NH_"),
    ConstantSource("envs.nh.loadouts.loadout", "NH_"),
    ConstantSource("envs.nh.loadouts.assembly", "NH_"),
    ConstantSource("envs.nh.combat", "NH_"),
    ConstantSource("envs.nh.spells", "NH_"),
    ConstantSource("envs.nh.movement", "NH_"),
    ConstantSource("envs.nh.operations", "NH_"),
    ConstantSource("envs.nh.prayers", "NH_"),
    ConstantSource("envs.nh.actions", "NH_"),
    ConstantSource("envs.nh.baseline", "NH_"),
    ConstantSource("envs.nh.masks", "NH_"),
    ConstantSource("envs.nh.observation", "NH_"),
    ConstantSource("envs.nh.stats", "NH_"),
    ConstantSource("envs.nh.rewards", "NH_"),
)
"""The modules ported so far (docs/compiled-core.md, status table); later steps append theirs."""

ENUMS: tuple[EnumSource, ...] = (
    EnumSource("envs.nh.combat", "_Bolt", "NH_BOLT_"),
    EnumSource("envs.nh.items", "Slot", "NH_SLOT_", "NH_NUM_SLOTS"),
    EnumSource("envs.nh.items", "Bonus", "NH_BONUS_", "NH_NUM_BONUSES"),
    EnumSource("envs.nh.items", "ConsumableKind", "NH_CONSUMABLE_KIND_"),
    EnumSource("envs.nh.items", "PotionType", "NH_POTION_"),
    EnumSource("envs.nh.state", "Skill", "NH_SKILL_", "NH_NUM_SKILLS"),
    EnumSource("envs.nh.state", "Spellbook", "NH_SPELLBOOK_"),
    EnumSource("envs.nh.state", "FightMode", "NH_FIGHT_MODE_"),
    EnumSource("envs.nh.loadouts", "Build", "NH_BUILD_", "NH_NUM_BUILDS"),
    EnumSource("envs.nh.loadouts", "GearSet", "NH_GEAR_SET_", "NH_NUM_GEAR_SETS"),
    EnumSource("envs.nh.items", "WeaponClass", "NH_WEAPON_CLASS_", "NH_NUM_WEAPON_CLASSES"),
    EnumSource("envs.nh.items", "Stance", "NH_STANCE_"),
    EnumSource("envs.nh.items", "StyleType", "NH_STYLE_TYPE_"),
    EnumSource("envs.nh.items", "CombatStyle", "NH_COMBAT_STYLE_"),
    EnumSource("envs.nh.prayers", "Prayer", "NH_PRAYER_", "NH_NUM_PRAYERS"),
    EnumSource("envs.nh.spells", "Spell", "NH_SPELL_", "NH_NUM_SPELLS"),
    EnumSource("envs.nh.state", "TimerId", "NH_TIMER_", "NH_NUM_TIMER_IDS"),
    EnumSource("envs.nh.combat", "Method", "NH_METHOD_", "NH_NUM_METHODS"),
    EnumSource("envs.nh.prayers", "Family", "NH_PRAYER_FAMILY_"),
    EnumSource("envs.nh.contract", "Obs", "NH_OBS_", "NH_OBS_SIZE"),
)
"""The enums the ported code switches on. Members whose value is not an int are numbered by position."""


@dataclass(frozen=True)
class _SourceNote:
    comment: str
    """The `# §…` comment on the assignment's line, so the C constant cites its spec section."""
    annotation: str
    """The annotation's text (`Factor` marks an exact fraction), empty when there is none."""


def _source_notes(module: ModuleType) -> dict[str, _SourceNote]:
    """Comment and annotation of each top-level assignment, read from the module's source."""
    source = inspect.getsource(module)
    lines = source.splitlines()
    notes: dict[str, _SourceNote] = {}
    for node in ast.parse(source).body:
        targets, annotation = [], ""
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            targets = [node.targets[0].id]
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Tuple):
            targets = [e.id for e in node.targets[0].elts if isinstance(e, ast.Name)]  # A, B = range(2)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            targets, annotation = [node.target.id], ast.unparse(node.annotation)
        line = lines[node.end_lineno - 1] if node.end_lineno else ""
        comment = line.split("#", 1)[1].strip() if "#" in line else ""
        for target in targets:
            notes[target] = _SourceNote(comment, annotation)
    return notes


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _c_comment(text: str) -> str:
    return f" /* {text.replace('*/', '* /')} */" if text else ""


def _constant_lines(name: str, value: object, source: _SourceNote) -> list[str]:
    """C lines for one constant; a `Factor` pair becomes `_NUM` / `_DEN`, an int tuple a static array."""
    note = _c_comment(source.comment)
    if _is_int(value):
        return [f"#define {name} INT64_C({value}){note}"]
    if isinstance(value, float):
        # repr round-trips, and C compilers parse decimal literals correctly rounded: the same double.
        return [f"#define {name} {value!r}{note}"]
    if isinstance(value, tuple) and value and all(_is_int(v) for v in value):
        if source.annotation == "Factor":
            num, den = value
            return [f"#define {name}_NUM INT64_C({num}){note}", f"#define {name}_DEN INT64_C({den})"]
        items = ", ".join(str(v) for v in value)
        return [
            f"#define {name}_LEN {len(value)}{note}",
            f"static const int64_t {name}[{len(value)}] = {{{items}}};",
        ]
    if isinstance(value, range) and value.step == 1:  # e.g. masks.FARCAST_DISTANCES
        return [f"#define {name}_START {value.start}{note}", f"#define {name}_STOP {value.stop}"]
    if isinstance(value, dict) and value and all(_is_int(k) for k in value):
        keys = sorted(value)
        if keys == list(range(keys[0], keys[0] + len(keys))) and all(
            isinstance(v, tuple) and len(v) == 2 for v in value.values()
        ):  # e.g. baseline.STEP_AWAY_DIRECTIONS {1: (dx, dy), ...}: an array indexed by key - FIRST_KEY
            pairs = ", ".join(f"{{{value[k][0]}, {value[k][1]}}}" for k in keys)
            return [
                f"#define {name}_FIRST_KEY {keys[0]}{note}",
                f"#define {name}_LEN {len(keys)}",
                f"static const int64_t {name}[{len(keys)}][2] = {{{pairs}}};",
            ]
        return []
    if isinstance(value, tuple) and value and all(isinstance(v, float) for v in value):  # e.g. a (low, high)
        items = ", ".join(repr(v) for v in value)
        return [f"#define {name}_LEN {len(value)}{note}", f"static const double {name}[{len(value)}] = {{{items}}};"]
    if isinstance(value, tuple) and value and all(isinstance(v, tuple) and len(v) == 2 for v in value):
        pairs = ", ".join(f"{{{a}, {b}}}" for a, b in value)  # e.g. movement.CARDINALS
        return [
            f"#define {name}_LEN {len(value)}{note}",
            f"static const int64_t {name}[{len(value)}][2] = {{{pairs}}};",
        ]
    return []


def render() -> str:
    """The whole header text, deterministic for the same constants."""
    out = [
        "/* nh_tables.h: GENERATED by envs/nh/core/gen_tables.py from the Python engine. Do not edit. */",
        "#ifndef NH_TABLES_H",
        "#define NH_TABLES_H",
        "",
        "#include <stdint.h>",
    ]
    seen: dict[str, tuple[str, object]] = {}
    for src in SOURCES:
        module = importlib.import_module(src.module)
        notes = _source_notes(module)
        out += ["", f"/* ---- {src.module} ---- */"]
        for name, value in vars(module).items():
            if not name.isupper() or name.startswith("_") or name not in notes:  # own names, not imports
                continue
            c_name = src.prefix + name
            lines = _constant_lines(c_name, value, notes[name])
            if not lines:  # not a number, a Factor or an int tuple: nothing to emit
                continue
            if c_name in seen:
                if seen[c_name][1] == value:  # the same number named in two modules (e.g. MELEE_RANGE_TILES)
                    continue
                raise ValueError(f"{src.module}.{name}: C name {c_name} is already taken by {seen[c_name][0]}")
            seen[c_name] = (f"{src.module}.{name}", value)
            out += lines
    for enum in ENUMS:
        members = getattr(importlib.import_module(enum.module), enum.name)
        out += ["", f"/* ---- {enum.module}.{enum.name} ---- */"]
        for position, m in enumerate(members):
            value = m.value if _is_int(m.value) else position
            out.append(f"#define {enum.prefix}{m.name} {value}")
        if enum.count_name:
            out.append(f"#define {enum.count_name} {len(members)}")
    out += ["", "/* ---- envs.nh.items.Ids (named item ids) ---- */"]
    out += [f"#define NH_ID_{n} {v}" for n, v in sorted(vars(Ids).items()) if n.isupper() and _is_int(v)]
    for n, v in sorted(vars(Ids).items()):
        if n.isupper() and isinstance(v, frozenset):
            ids = ", ".join(map(str, sorted(v)))
            out += [f"#define NH_IDS_{n}_LEN {len(v)}", f"static const int32_t NH_IDS_{n}[{len(v)}] = {{{ids}}};"]
    out += ["", "/* ---- envs.nh.baseline private tables (§18.2, §18.3 rule 6 [QUIRK 20]) ---- */"]
    out += [f"#define NH_BASELINE_F32_SPEED {float(baseline._F32_SPEED).hex()}f /* baseline._F32_SPEED, float32 */"]
    out += [
        f"#define NH_BASELINE_PENDING_HIT_HORIZON {baseline._PENDING_HIT_HORIZON}"
        " /* baseline._PENDING_HIT_HORIZON: pending hits whose delay is below it (§18.2) */"
    ]
    styles = ", ".join(str(int(baseline._DEFENCE_STYLE[st].value)) for st in CombatStyle)
    out += [f"static const int32_t NH_BASELINE_DEFENCE_STYLE[3] = {{{styles}}}; /* baseline._DEFENCE_STYLE */"]
    out += ["", "/* ---- envs.nh.observation / contract layout tables (§15.2, §14.1) ---- */"]
    offsets = ", ".join(map(str, HEAD_OFFSETS))
    out += [f"static const int32_t NH_HEAD_OFFSETS[{len(HEAD_OFFSETS)}] = {{{offsets}}}; /* contract.HEAD_OFFSETS */"]
    for name in ("_STYLE_OBS", "_PRAYER_OBS"):
        values = ", ".join(map(str, getattr(observation, name)))
        out += [f"static const int32_t NH_OBS{name}[3] = {{{values}}}; /* observation.{name} */"]
    samples = ", ".join(
        f"{{{idx}, {int(style)}, {int(bonus)}, {dflt}}}" for idx, style, bonus, dflt in observation._TARGET_SAMPLES
    )
    out += [
        f"static const int32_t NH_OBS_TARGET_SAMPLES[{len(observation._TARGET_SAMPLES)}][4] = {{{samples}}};"
        " /* observation._TARGET_SAMPLES: (entry, style, bonus, default entry) */"
    ]
    cands = sorted(observation.MELEE_SPECIAL_CANDIDATES)
    out += [f"#define NH_MELEE_SPECIAL_CANDIDATES_LEN {len(cands)} /* observation.MELEE_SPECIAL_CANDIDATES, §12.8 */"]
    out += [f"static const int32_t NH_MELEE_SPECIAL_CANDIDATES[{len(cands)}] = {{{', '.join(map(str, cands))}}};"]
    out += _derived_lines()
    out += _mirror_numbering()
    out += ["", "/* ---- sizes of the data tables (nh_data.h) ---- */"]
    out += [f"#define {name} {value}" for name, value in _table_sizes().items()]
    out += ["", "#endif /* NH_TABLES_H */", ""]
    return "\n".join(out)


def _derived_lines() -> list[str]:
    """Numbers the Python engine derives rather than names: evaluated here so that C never retypes them."""
    out = ["", "/* ---- derived from the Python engine's definitions ---- */"]
    out.append(f"#define NH_NUM_HEADS {len(HEAD_SIZES)} /* len(contract.HEAD_SIZES), §14.1 */")
    styles = sorted(StyleType, key=lambda t: t.value)
    if [int(t.value) for t in styles] != list(range(len(styles))):
        raise ValueError("StyleType values are not 0..n-1: NH_DEFENCE_BONUS_OF_STYLE_TYPE needs another index")
    bonuses = ", ".join(str(int(t.defence_bonus)) for t in styles)
    out.append(
        f"static const int32_t NH_DEFENCE_BONUS_OF_STYLE_TYPE[{len(styles)}] = {{{bonuses}}};"
        " /* items.StyleType.defence_bonus by style type value (§10.3) */"
    )
    max_id = max(max(ITEMS), max(CONSUMABLES))
    out.append(f"#define NH_MAX_ITEM_ID {max_id} /* the largest item or consumable id (items.ITEMS, CONSUMABLES) */")
    gear_rank = _inventory_rank(next(i for i in ITEMS if i not in CONSUMABLES))
    ranks = {_inventory_rank(c) for c in CONSUMABLES} | {gear_rank}
    out.append(f"#define NH_GEAR_INVENTORY_RANK {gear_rank} /* loadouts._inventory_rank of worn gear (§12.4) */")
    out.append(f"#define NH_INVENTORY_RANKS {max(ranks) + 1} /* ranks loadouts._inventory_rank gives (§12.4) */")
    return out


def _enum_define(prefix: str, name: str, value: int) -> str:
    return f"#define {prefix}{(name or 'NONE').upper()} {value}"


def _mirror_numbering() -> list[str]:
    """The numbering of names the core keeps as numbers: reward weights by kind (mirrors.WEIGHT_GROUPS),
    reward components, outcomes, hit effects."""
    out = ["", "/* ---- rewards.RewardWeights by declared type (mirrors.WEIGHT_GROUPS), §17.3 ---- */"]
    for kind, names in _weight_groups().items():
        group = mirrors.WEIGHT_GROUPS[kind]
        out += [_enum_define(group.prefix, name, k) for k, name in enumerate(names)]
        out.append(f"#define {group.count} {len(names)}")
    out += ["", "/* ---- rewards.REWARD_COMPONENTS ---- */"]
    out += [_enum_define("NH_RC_", name, k) for k, name in enumerate(REWARD_COMPONENTS)]
    out.append(f"#define NH_NUM_REWARD_COMPONENTS {len(REWARD_COMPONENTS)}")
    out += ["", "/* ---- sim.Outcome (0: the fight goes on) ---- */", "#define NH_OUTCOME_NONE 0"]
    out += [_enum_define("NH_OUTCOME_", o.name, k + 1) for k, o in enumerate(Outcome)]
    out += ["", "/* ---- PendingHit.effect tags (mirrors.EFFECTS, combat._effect) ---- */"]
    out += [_enum_define("NH_EFFECT_", name, k) for k, name in enumerate(mirrors.EFFECTS)]
    return out


def _weight_groups() -> dict[str, list[str]]:
    """`RewardWeights` field names by declared type, in field order; a type without a C group is an error."""
    groups: dict[str, list[str]] = {kind: [] for kind in mirrors.WEIGHT_GROUPS}
    for f in dataclasses.fields(RewardWeights):
        kind = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", str(f.type))
        if kind not in groups:
            raise MirrorError(
                f"RewardWeights.{f.name} has type {kind!r}, which the core cannot hold: give it a group in "
                "envs/nh/core/mirrors.py WEIGHT_GROUPS, a place in nh_reward_weights (nh_rewards.h) and its use "
                "in nh_rewards.c"
            )
        groups[kind].append(f.name)
    return groups


# ---- the binding's field tables (nh_fields.h) -------------------------------------------------------------


class MirrorError(ValueError):
    """A field of a Python definition the core mirrors has no entry in `envs/nh/core/mirrors.py`."""


def check_mirror(cls: type, table: Mapping[str, object], what: str) -> list[str]:
    """The field names of dataclass `cls` in order, once `table` (a mirrors.py table) names each exactly.

    Raises:
        MirrorError: a field without an entry (the core would silently lack it) or an entry for no field.
    """
    names = [f.name for f in dataclasses.fields(cls)]
    missing = [n for n in names if n not in table]
    extra = [n for n in table if n not in names]
    if missing or extra:
        raise MirrorError(
            f"{cls.__name__} and its core mirror ({what}) differ: "
            + (f"fields the core does not mirror: {missing}; " if missing else "")
            + (f"entries for no field: {extra}; " if extra else "")
            + f"add each field to {what} in envs/nh/core/mirrors.py (a C member, or Outside with the reason), to "
            "the C struct and to the core code that reads it, then run `python -m envs.nh.core.gen_tables` and "
            "rebuild (`pip install -e .`)"
        )
    return names


def _c_field(owner: str, name: str, f: CField) -> str:
    """One `nh_field` initialiser: the member of `owner` that holds field `name`, and how to marshal it."""
    member = f.member or name
    parts = [f'.name = "{name}"', f".kind = NH_FK_{f.kind.upper()}", f".offset = offsetof({owner}, {member})"]
    if f.length:
        parts.append(f".length = {f.length}")
    if f.count:
        parts.append(f".count = offsetof({owner}, {f.count})")
    if f.aux:
        parts.append(f".aux = offsetof({owner}, {f.aux})")
    if f.none:
        parts.append(f".none = {f.none}")
    if f.table:
        parts += [f".table = {f.table}", f".n_table = {f.table.replace('NH_', 'NH_NUM_', 1)}"]
        parts.append(f".size = sizeof({f.struct})")
    if f.present:
        parts += [".optional = 1", f".present = offsetof({owner}, {f.present})"]
    return "    {" + ", ".join(parts) + "},"


def _field_table(c_name: str, owner: str, names: list[str], table: Mapping[str, object], source: str) -> list[str]:
    rows = [(name, table[name]) for name in names if isinstance(table[name], CField)]
    out = [f"/* {source} -> {owner} */", f"#define NH_NUM_{c_name[3:]} {len(rows)}"]
    out.append(f"static const nh_field {c_name}[NH_NUM_{c_name[3:]}] = {{")
    out += [_c_field(owner, name, f) for name, f in rows]  # type: ignore[arg-type]
    return [*out, "};", ""]


def _names_table(c_name: str, names: list[str] | tuple[str, ...], count: str, source: str) -> list[str]:
    items = ", ".join(f'"{n}"' for n in names)
    return [f"static const char *const {c_name}[{count}] = {{{items}}}; /* {source} */"]


def render_fields() -> str:
    """nh_fields.h: the binding's field tables, from the Python definitions through mirrors.py.

    Each table is checked against its dataclass first (`check_mirror`), so a field added in Python without
    a mirror stops the generation with its name; a mirror naming a C member that does not exist stops the
    compile (`offsetof`).
    """
    params = check_mirror(FightParams, mirrors.RESET_PARAMS, "RESET_PARAMS")
    for name in params:
        entry = mirrors.RESET_PARAMS[name]
        keys = (name,) if entry == mirrors.COPIED else entry if isinstance(entry, tuple) else ()
        unknown = [k for k in keys if k not in mirrors.RESET_INTS + mirrors.RESET_LISTS]
        if unknown:
            raise MirrorError(f"RESET_PARAMS[{name!r}] names {unknown}, no member of RESET_INTS / RESET_LISTS")
    hit = check_mirror(PendingHit, mirrors.PENDING_HIT_FIELDS, "PENDING_HIT_FIELDS")
    loadout = check_mirror(Loadout, mirrors.LOADOUT_FIELDS, "LOADOUT_FIELDS")
    player = check_mirror(PlayerState, mirrors.PLAYER_FIELDS, "PLAYER_FIELDS")
    record = check_mirror(HitRecord, mirrors.HIT_RECORD_FIELDS, "HIT_RECORD_FIELDS")
    record_table = {**mirrors.HIT_RECORD_HIT_FIELDS, **mirrors.HIT_RECORD_FIELDS}
    record = [n for n in hit if n in mirrors.HIT_RECORD_HIT_FIELDS] + record
    events = check_mirror(TickEvents, mirrors.TICK_EVENTS_FIELDS, "TICK_EVENTS_FIELDS")
    out = [
        "/* nh_fields.h: GENERATED by envs/nh/core/gen_tables.py from envs/nh/core/mirrors.py and the Python",
        " * definitions it mirrors. Do not edit. Included by the binding only (nhcore_binding.h). */",
        "#ifndef NH_FIELDS_H",
        "#define NH_FIELDS_H",
        "",
        "#include <stddef.h>",
        "",
        '#include "nh_rewards.h"',
        '#include "nh_state.h"',
        "",
        "/* params.FightParams -> nh_reset_params: the int members reset_params() fills (mirrors.RESET_INTS) */",
        f"#define NH_NUM_RESET_INT_FIELDS {len(mirrors.RESET_INTS)}",
        "static const nh_field NH_RESET_INT_FIELDS[NH_NUM_RESET_INT_FIELDS] = {",
        *(_c_field("nh_reset_params", n, CField("int")) for n in mirrors.RESET_INTS),
        "};",
        "",
    ]
    out += _field_table("NH_PENDING_HIT_FIELDS", "nh_pending_hit", hit, mirrors.PENDING_HIT_FIELDS, "state.PendingHit")
    out += _field_table("NH_LOADOUT_FIELDS", "nh_loadout", loadout, mirrors.LOADOUT_FIELDS, "loadouts.Loadout")
    out += _field_table("NH_PLAYER_FIELDS", "nh_player", player, mirrors.PLAYER_FIELDS, "state.PlayerState")
    out += _field_table("NH_HIT_RECORD_FIELDS", "nh_hit_record", record, record_table, "stats.HitRecord")
    out += _field_table("NH_TICK_EVENTS_FIELDS", "nh_tick_events", events, mirrors.TICK_EVENTS_FIELDS,
                        "stats.TickEvents")
    signals = list(mirrors.SIGNALS)
    out += _field_table("NH_SIGNAL_FIELDS", "nh_signals", signals, mirrors.SIGNALS, "rewards.signals_for")
    for kind, names in _weight_groups().items():
        group = mirrors.WEIGHT_GROUPS[kind]
        out += _names_table(group.names, names, group.count, f"RewardWeights' {kind} fields")
    out += _names_table("NH_REWARD_COMPONENT_NAMES", REWARD_COMPONENTS, "NH_NUM_REWARD_COMPONENTS",
                        "rewards.REWARD_COMPONENTS")
    styles = [STYLE_NAMES[st] for st in CombatStyle]
    out += _names_table("NH_STYLE_NAMES", styles, str(len(styles)), "rewards.STYLE_NAMES by CombatStyle")
    out.append(f'#define NH_NULL_STYLE_NAME "{NULL_STYLE}" /* rewards.NULL_STYLE */')
    out += _names_table("NH_OUTCOME_NAMES", [o.value for o in Outcome], str(len(Outcome)), "sim.Outcome values")
    out += ["", "#endif /* NH_FIELDS_H */", ""]
    return "\n".join(out)


# ---- data rows (nh_data.c) -----------------------------------------------------------------------------


def _int_or_range(value: int | tuple[int, int]) -> str:
    """`{lo, hi, is_range}` of a loadouts.IntOrRange."""
    if isinstance(value, tuple):
        return f"{{{value[0]}, {value[1]}, 1}}"
    return f"{{{value}, {value}, 0}}"


def _set_mask(sets: tuple[GearSet, ...]) -> int:

    order = list(GearSet)
    return sum(1 << order.index(gs) for gs in sets)


def _max_supply_entries(build: Build) -> int:
    """A bound on a build's supply entries: the defaults plus one per count and two per brews operation,
    the only operations that append (swaps and dose changes rename entries in place)."""

    n = len(BUILD_SPECS[build].supplies)
    for line in _all_lines(RANDOMISATION[build]):
        n += sum(1 if isinstance(op, Count) else 2 if isinstance(op, Brews) else 0 for op in line.ops)
    return n


def _all_lines(lines: tuple[RandomLine, ...]) -> list[RandomLine]:
    out: list[RandomLine] = []
    for line in lines:
        while line is not None:
            out.append(line)
            line = line.then
    return out


def _table_sizes() -> dict[str, int]:

    return {
        "NH_LEVEL_TABLE_SIZE": LEVEL_TABLE_SIZE,
        "NH_MAX_STYLES": max(len(wc.styles) for wc in WeaponClass),
        "NH_NUM_BASE_SETS": len(BASE_SETS),
        "NH_MAX_SET_PRAYERS": max(len(spec.prayers[gs]) for spec in BUILD_SPECS.values() for gs in BASE_SETS),
        "NH_MAX_SUPPLIES": max(_max_supply_entries(b) for b in Build),
        "NH_MAX_DOSE_CHOICES": max(
            len(op.doses)
            for b in Build
            for ln in _all_lines(RANDOMISATION[b])
            for op in ln.ops
            if isinstance(op, DoseVary)
        ),
    }


def _op_row(op: Op) -> str:

    f: dict[str, str] = {}
    if isinstance(op, SetSlot):
        f = {"kind": "NH_OP_SET_SLOT", "sets": str(_set_mask(op.sets)), "slot": str(int(op.slot)), "item": str(op.item)}
    elif isinstance(op, SwapSet):
        f = {
            "kind": "NH_OP_SWAP_SET",
            "sets": str(_set_mask(op.sets)),
            "old_item": str(op.old),
            "new_item": str(op.new),
        }
    elif isinstance(op, SwapAll):
        f = {"kind": "NH_OP_SWAP_ALL", "old_item": str(op.old), "new_item": str(op.new)}
    elif isinstance(op, Count):
        f = {"kind": "NH_OP_COUNT", "item": str(op.item), "n": _int_or_range(op.n)}
    elif isinstance(op, DoseVary):
        doses = ", ".join(map(str, op.doses))
        f = {"kind": "NH_OP_DOSE_VARY", "item": str(op.item), "n_doses": str(len(op.doses)), "doses": f"{{{doses}}}"}
    elif isinstance(op, Brews):
        f = {
            "kind": "NH_OP_BREWS",
            "item": str(op.brew),
            "n": _int_or_range(op.b),
            "restore": str(op.restore),
            "restore_min": str(op.restore_min),
            "restore_round_up": str(int(op.restore_round_up)),
            "restore_plus": _int_or_range(op.restore_plus),
        }
    elif isinstance(op, PrimaryFood):
        f = {"kind": "NH_OP_PRIMARY_FOOD", "item": str(op.item)}
    elif isinstance(op, LunarBook):
        f = {"kind": "NH_OP_LUNAR_BOOK"}
    elif isinstance(op, EmptyMagic):
        f = {"kind": "NH_OP_EMPTY_MAGIC"}
    else:
        raise TypeError(f"no C encoding for randomisation operation {op!r}: add one to gen_tables and nh_loadout.c")
    return "{" + ", ".join(f".{k} = {v}" for k, v in f.items()) + "}"


def _combat_rows() -> list[str]:
    """combat.py's method, special, bolt tables; spells.SPELLS; prayers.PRAYERS."""
    methods = list(Method)
    rows = ["/* combat.Method in member order, with the §6.9 rules of each (combat._SPECIAL_* tables) */"]
    rows.append("const nh_method NH_METHOD_TABLE[NH_NUM_METHODS] = {")
    for m in methods:
        acc = _SPECIAL_ACCURACY.get(m, (0, 0))
        defence = _SPECIAL_DEFENCE_STYLE.get(m)
        max_rule = _SPECIAL_MAX_HIT.get(m)
        own_range = _SPECIAL_DAMAGE_RANGE.get(m)
        fields = [
            str(int(m.style)),
            str(int(m.is_special)),
            f"{{{acc[0]}, {acc[1]}}}",
            str(int(defence.value) if defence is not None else -1),
            f"nh_{max_rule.__name__}" if max_rule is not None else "NULL",
            f"nh_{own_range.__name__}" if own_range is not None else "NULL",
        ]
        rows.append(f"    {{{', '.join(fields)}}}, /* {m.name} */")
    rows += ["};", ""]
    rows.append("/* combat.SPECIALS: weapon id -> (method, energy cost), §6.9 */")
    rows.append("const nh_special NH_SPECIAL_TABLE[] = {")
    rows += [f"    {{{wid}, {methods.index(m)}, {cost}}}," for wid, (m, cost) in sorted(SPECIALS.items())]
    rows += ["};", f"const int32_t NH_N_SPECIALS = {len(SPECIALS)};", ""]
    bolts = list(_Bolt)
    rows.append("/* combat._BOLT_KINDS: ammo id -> bolt kind, and combat._BOLT_CHANCE (§6.8) */")
    rows.append("const int32_t NH_BOLT_KIND_TABLE[][2] = {")
    rows += [f"    {{{aid}, {bolts.index(k)}}}," for aid, k in sorted(_BOLT_KINDS.items())]
    rows += ["};", f"const int32_t NH_N_BOLT_KINDS = {len(_BOLT_KINDS)};"]
    chances = ", ".join(repr(_BOLT_CHANCE[k]) for k in bolts)
    rows += [f"const double NH_BOLT_CHANCE_TABLE[{len(bolts)}] = {{{chances}}};", ""]
    styles = list(CombatStyle)
    protection = ", ".join(str(int(_PROTECTION_PRAYER[st])) for st in styles)
    rows += [f"const int32_t NH_PROTECTION_PRAYER[{len(styles)}] = {{{protection}}}; /* combat._PROTECTION_PRAYER */"]
    rows += ["", "/* spells.SPELLS (§6.7) */", "const nh_spell NH_SPELL_TABLE[NH_NUM_SPELLS] = {"]
    for sp in Spell:
        d = SPELLS[sp]
        rows.append(f"    {{{d.level}, {d.max_hit}, {d.freeze_ticks}, {d.heal_pct}}}, /* {d.name} */")
    rows += ["};", "", "/* prayers.PRAYERS (§7.1, §6.3, §6.4) */"]
    rows += ["const nh_prayer NH_PRAYER_TABLE[NH_NUM_PRAYERS] = {"]
    for pr in Prayer:
        d = PRAYERS[pr]
        families = sum(1 << int(f) for f in d.families)
        fields = [
            d.level,
            d.drain_per_minute,
            families,
            d.attack_pct,
            d.strength_pct,
            d.defence_pct,
            d.ranged_acc_pct,
            d.ranged_str_pct,
            d.magic_pct,
            d.magic_damage_tenths,
            int(d.needs_defence_70),
        ]
        rows.append(f"    {{{', '.join(map(str, fields))}}}, /* {pr.name} */")
    rows += ["};", ""]
    return rows


LEVEL_TABLE_SIZE = 128
"""Entries of the per-level tables below: levels 0..127 (builds are 1..99, boosts stay far below 128)."""

LEVEL_FUNCTIONS: dict[str, Callable[[int], int]] = {
    "NH_ANGLERFISH_HEAL_BY_BASE": anglerfish_heal,
    "NH_BREW_HP_BOOST_BY_BASE": brew_hp_boost,
    "NH_RESTORE_AMOUNT_BY_BASE": restore_amount,
    "NH_COMBAT_BOOST_BY_BASE": combat_boost,
    "NH_RANGING_BOOST_BY_BASE": ranging_boost,
}
"""operations.py's one-level formulas, tabulated by evaluating the Python functions themselves: the
numbers inside them (thresholds, percentages) then exist once, in Python."""


def _level_rows() -> list[str]:
    rows = ["/* operations.py's per-level formulas, evaluated over levels 0..127 (gen_tables.LEVEL_FUNCTIONS) */"]
    for name, fn in LEVEL_FUNCTIONS.items():
        values = ", ".join(str(fn(level)) for level in range(LEVEL_TABLE_SIZE))
        rows.append(f"const int32_t {name}[NH_LEVEL_TABLE_SIZE] = {{{values}}}; /* operations.{fn.__name__} */")
    conflicts = ", ".join(str(sum(1 << int(q) for q in CONFLICTS[pr])) for pr in Prayer)
    rows += ["", f"const uint32_t NH_PRAYER_CONFLICTS[NH_NUM_PRAYERS] = {{{conflicts}}}; /* prayers.CONFLICTS */", ""]
    return rows


def render_data() -> str:
    """nh_data.c: the rows of nh_data.h's tables, from the Python engine's parsed data."""

    classes = list(WeaponClass)

    stances = list(Stance)
    class_rows = []
    for wc in classes:
        styles = ", ".join(f"{{{stances.index(st.stance)}, {int(st.style_type.value)}}}" for st in wc.styles)
        default = wc.styles.index(wc.default_style)
        row = (
            f"{int(wc.family)}, {len(wc.styles)}, {{{styles}}}, {default}, {int(wc in AMMO_IGNORED_CLASSES)}, "
            f"{RANGED_RANGE_TILES.get(wc, 0)}"
        )
        class_rows.append(f"    {{{row}}}, /* {wc.name} */")
    out = [
        "/* nh_data.c: GENERATED by envs/nh/core/gen_tables.py from the Python engine's data. Do not edit. */",
        '#include "nh_data.h"',
        "",
        "#include <stddef.h>",
        "",
        '#include "nh_formulas.h"',
        "",
        "/* items.ITEMS (data/items.csv, items_manual.csv), sorted by id */",
        "const nh_item NH_ITEMS[] = {",
    ]
    for iid in sorted(ITEMS):
        it = ITEMS[iid]
        wc = classes.index(it.weapon_class) if it.weapon_class is not None else -1
        bonuses = ", ".join(map(str, it.bonuses))
        row = f"{iid}, {int(it.slot)}, {int(it.two_handed)}, {{{bonuses}}}, {wc}, {it.attack_speed}"
        out.append(f"    {{{row}}}, /* {it.name} */")
    out += ["};", f"const int32_t NH_N_ITEMS = {len(ITEMS)};", ""]
    out += ["/* items.WeaponClass in member order: style lists (§6.2), families (§6.1) */"]
    out += ["const nh_weapon_class NH_WEAPON_CLASS_TABLE[NH_NUM_WEAPON_CLASSES] = {", *class_rows, "};", ""]
    kinds = [k for k in type(next(iter(CONSUMABLES.values())).kind)]
    out += ["/* items.CONSUMABLES (data/consumables.csv), sorted by id */", "const nh_consumable NH_CONSUMABLES[] = {"]
    for cid in sorted(CONSUMABLES):
        c = CONSUMABLES[cid]
        potion = int(c.potion) if c.potion is not None else 0
        row = f"{cid}, {kinds.index(c.kind)}, {potion}, {c.doses}, {c.heal}, {_inventory_rank(cid)}"
        out.append(f"    {{{row}}}, /* {c.name} */")
    out += ["};", f"const int32_t NH_N_CONSUMABLES = {len(CONSUMABLES)};", ""]

    lines: list[RandomLine] = []
    line_index: dict[int, int] = {}
    ops: list[Op] = []
    build_ranges: dict[Build, tuple[int, int]] = {}

    def add(line: RandomLine) -> None:
        line_index[id(line)] = len(lines)
        lines.append(line)

    for build in Build:
        table = RANDOMISATION[build]
        first = len(lines)
        for line in table:  # the main lines of a build are contiguous
            add(line)
        build_ranges[build] = (first, len(table))
    pending = list(lines)
    while pending:  # then-lines after all main lines
        line = pending.pop(0)
        if line.then is not None and id(line.then) not in line_index:
            add(line.then)
            pending.append(line.then)
    out += _combat_rows()
    out += _level_rows()
    out += ["/* loadouts.RANDOMISATION (data/randomisation.yml): every build's lines, then the then-lines */"]
    line_rows = []
    for line in lines:
        first_op = len(ops)
        ops.extend(line.ops)
        then = line_index[id(line.then)] if line.then is not None else -1
        line_rows.append(
            f"    {{{line.p!r}, {int(line.is_else)}, {then}, {first_op}, {len(line.ops)}}}, /* {line.source} */"
        )
    out += ["const nh_rand_line NH_RANDOM_LINES[] = {", *line_rows, "};", ""]
    out += ["const nh_rand_op NH_RANDOM_OPS[] = {", *[f"    {_op_row(op)}," for op in ops], "};", ""]

    out += ["/* loadouts.BUILD_SPECS (data/builds.yml), in Build order */", "const nh_build_spec NH_BUILD_SPECS[] = {"]
    for build in Build:
        spec = BUILD_SPECS[build]
        levels = ", ".join(map(str, spec.base_levels))
        supplies = ", ".join(f"{{{iid}, {n}}}" for iid, n in spec.supplies)
        sets = ", ".join("{" + ", ".join(map(str, spec.sets[gs])) + "}" for gs in BASE_SETS)
        n_prayers = ", ".join(str(len(spec.prayers[gs])) for gs in BASE_SETS)
        prayers = ", ".join("{" + (", ".join(str(int(pr)) for pr in spec.prayers[gs]) or "0") + "}" for gs in BASE_SETS)
        spellbook = list(type(spec.spellbook)).index(spec.spellbook)
        mode = list(type(spec.fight_mode)).index(spec.fight_mode)
        first, n = build_ranges[build]
        out.append(
            f"    {{{{{levels}}}, {spellbook}, {mode}, {spec.primary_food}, {len(spec.supplies)}, {{{supplies}}}, "
            f"{{{sets}}}, {{{n_prayers}}}, {{{prayers}}}, {first}, {n}}}, /* {build.value}, {spec.source} */"
        )
    out += ["};", ""]
    melee = sorted(MELEE_SPECIAL_WEAPONS)
    ranged = sorted(RANGED_SPECIAL_WEAPONS)
    out += [
        f"const int32_t NH_MELEE_SPECIAL_WEAPONS[] = {{{', '.join(map(str, melee))}}};",
        f"const int32_t NH_N_MELEE_SPECIAL_WEAPONS = {len(melee)};",
        f"const int32_t NH_RANGED_SPECIAL_WEAPONS[] = {{{', '.join(map(str, ranged))}}};",
        f"const int32_t NH_N_RANGED_SPECIAL_WEAPONS = {len(ranged)};",
        "",
    ]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the checked-in header is stale")
    args = parser.parse_args(argv)
    stale = 0
    for path, text in ((HEADER_PATH, render()), (DATA_PATH, render_data()), (FIELDS_PATH, render_fields())):
        if args.check:
            if not path.exists() or path.read_text() != text:
                print(f"{path} is stale: run `python -m envs.nh.core.gen_tables`", file=sys.stderr)
                stale = 1
            continue
        write_text_atomic(path, text)  # a compiler run at the same time never sees half a file
        print(f"wrote {path}")
    return stale


if __name__ == "__main__":
    sys.exit(main())
