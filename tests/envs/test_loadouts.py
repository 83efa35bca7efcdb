"""Loadouts (spec §12, §18.1): default sets against Appendix B, §12.4 inventories, §12.5 tank sets,
§12.6 randomisation (draw order, every line's effect, validity over many seeds), §12.7 build choice.

The Appendix B numbers are copied into this file (nothing is read from ../shared at test time).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np
import pytest

from envs.nh.items import (
    CONSUMABLES,
    ITEMS,
    NUM_SLOTS,
    ConsumableKind,
    DataError,
    Ids,
    PotionType,
    Slot,
    item_id,
)
from envs.nh.loadouts import (
    BASE_SETS,
    BUILD_SPECS,
    RANDOMISATION,
    TABLE_SLOT_ORDER,
    Build,
    GearSet,
    Loadout,
    LoadoutError,
    baseline_loadout,
    build_key,
    choose_build,
    java_string_hash,
    load_builds,
    load_randomisation,
    loadout_with_lines,
    make_loadout,
    set_bonuses,
    tank_set,
)
from envs.nh.prayers import Prayer
from envs.nh.state import EMPTY, INVENTORY_SIZE, FightMode, Skill, Spellbook

G = GearSet
ANGLERFISH, SHARK, KARAMBWAN, POUCH = Ids.ANGLERFISH, Ids.SHARK, Ids.KARAMBWAN, Ids.RUNE_POUCH
COMBAT4, RANGING4 = item_id("Super combat potion(4)"), item_id("Ranging potion(4)")
RESTORE4, BREW4 = item_id("Super restore(4)"), item_id("Saradomin brew(4)")


def iid(name: str, slot: Slot | None = None) -> int:
    return item_id(name, slot)


def potions(lo: Loadout, potion: PotionType) -> list[int]:
    return [i for i in lo.inventory if i in CONSUMABLES and CONSUMABLES[i].potion is potion]


def in_slot(gear: tuple[int, ...], slot: Slot) -> int | None:
    return next((i for i in gear if ITEMS[i].slot is slot), None)


def gear_in_inventory(lo: Loadout) -> list[int]:
    return [i for i in lo.inventory if i in ITEMS]


def line_index(build: Build, description: str) -> int:
    """Index of the §12.6 line of `build` whose description contains `description` (exactly one)."""
    hits = [i for i, line in enumerate(RANDOMISATION[build]) if description in line.describe()]
    assert len(hits) == 1, (build, description, hits)
    return hits[0]


# ---- Appendix B: gear-set bonus totals of the default loadouts -------------------------------------
# stabA slashA crushA magA rngA stabD slashD crushD magD rngD str rstr mdmg% pray
APPENDIX_B: list[tuple[str, str, tuple[float, ...]]] = [
    ("PURE", "mage", (8, 8, 8, 110, 7, 9, 12, 12, 87, 6, 7, 122, 27.5, 2)),
    ("PURE", "ranged", (22, 22, 22, 50, 145, 78, 72, 78, 116, 80, 23, 122, 4.5, 9)),
    ("PURE", "melee", (30, 89, 20, 50, 35, 64, 59, 66, 101, 64, 89, 122, 4.5, 8)),
    ("PURE", "spec", (63, 79, 18, 35, 35, 77, 84, 73, 86, 64, 79, 122, 2.5, 8)),
    ("PURE", "tank", (22, 22, 22, 50, 145, 78, 72, 78, 116, 80, 23, 122, 4.5, 9)),
    ("ZERKER", "mage", (12, 12, 12, 120, 15, 84, 91, 95, 108, 87, 12, 122, 24.5, 3)),
    ("ZERKER", "ranged", (26, 26, 26, 12, 183, 208, 198, 221, 154, 216, 28, 122, 0.5, 11)),
    ("ZERKER", "melee", (54, 112, 42, 9, 71, 175, 163, 177, 135, 153, 99, 122, 0.5, 9)),
    ("ZERKER", "spec", (67, 83, 22, 12, 73, 168, 169, 166, 138, 155, 84, 122, 0.5, 9)),
    ("ZERKER", "tank", (26, 26, 26, 12, 183, 208, 198, 221, 154, 216, 28, 122, 0.5, 11)),
    ("MED", "mage", (70, 82, 12, 128, 0, 202, 196, 236, 104, 131, 84, 122, 28.5, 5)),
    ("MED", "ranged", (22, 19, 19, -10, 158, 312, 306, 332, 136, 315, 28, 122, 0.5, 16)),
    ("MED", "melee", (52, 138, 47, -15, 44, 275, 266, 275, 114, 243, 122, 122, 0.5, 12)),
    ("MED", "spec", (22, 151, 99, -10, 48, 245, 237, 247, 119, 247, 160, 122, 0.5, 20)),
    ("MED", "tank", (22, 19, 19, -10, 158, 312, 306, 332, 136, 315, 28, 122, 0.5, 16)),
    ("MAXED", "mage", (70, 82, 12, 128, 0, 202, 196, 236, 104, 131, 84, 122, 28.5, 5)),
    ("MAXED", "ranged", (18, 15, 15, 4, 157, 303, 297, 323, 139, 303, 20, 122, 2.5, 14)),
    ("MAXED", "melee", (18, 147, 95, 4, 47, 236, 228, 238, 122, 235, 152, 122, 2.5, 18)),
    ("MAXED", "spec", (18, 147, 95, 4, 47, 236, 228, 238, 122, 235, 152, 122, 2.5, 18)),
    ("MAXED", "tank", (18, 15, 15, 4, 157, 303, 297, 323, 139, 303, 20, 122, 2.5, 14)),
    ("LMS_PURE", "mage", (24, 13, 54, 65, 14, 11, 14, 16, 45, 6, 62, 105, 7, 6)),
    ("LMS_PURE", "ranged", (24, 24, 24, 34, 131, 30, 34, 44, 52, 35, 18, 105, 2, 8)),
    ("LMS_PURE", "melee", (32, 91, 22, 34, 41, 30, 35, 44, 52, 35, 84, 105, 2, 8)),
    ("LMS_PURE", "spec", (64, 49, 20, 35, 41, 30, 34, 44, 53, 35, 58, 105, 2, 8)),
    ("LMS_PURE", "tank", (34, 23, 64, 49, 41, 32, 37, 45, 67, 35, 68, 105, 2, 7)),
    ("LMS_ZERKER", "mage", (34, 21, 87, 76, 17, 91, 95, 109, 75, 90, 95, 105, 7, 4)),
    ("LMS_ZERKER", "ranged", (22, 22, 22, -10, 126, 169, 177, 199, 66, 189, 27, 105, 2, 4)),
    ("LMS_ZERKER", "melee", (42, 123, 40, -13, 34, 150, 155, 167, 62, 142, 114, 105, 2, 3)),
    ("LMS_ZERKER", "spec", (82, 66, 36, -12, 34, 150, 155, 167, 63, 142, 72, 105, 2, 3)),
    ("LMS_ZERKER", "tank", (34, 21, 87, 5, 36, 172, 182, 201, 81, 189, 95, 105, 7, 4)),
    ("LMS_MED", "mage", (34, 21, 87, 81, 22, 91, 95, 110, 78, 90, 95, 105, 7, 7)),
    ("LMS_MED", "ranged", (22, 22, 22, -5, 131, 169, 177, 200, 69, 189, 27, 105, 2, 7)),
    ("LMS_MED", "melee", (47, 128, 45, -8, 39, 155, 160, 173, 65, 142, 115, 105, 2, 6)),
    ("LMS_MED", "spec", (87, 71, 41, -7, 39, 155, 160, 173, 66, 142, 73, 105, 2, 6)),
    ("LMS_MED", "tank", (34, 21, 87, 10, 41, 172, 182, 202, 84, 189, 95, 105, 7, 7)),
]
_APPENDIX_B_SET = {"mage": G.MAGIC, "ranged": G.RANGED, "melee": G.MELEE, "spec": G.SPEC, "tank": G.TANK}


def test_appendix_b_has_every_set_of_every_build() -> None:
    assert len(APPENDIX_B) == 35
    assert {(b, s) for b, s, _ in APPENDIX_B} == {(b.value, s) for b in Build for s in _APPENDIX_B_SET}


@pytest.mark.parametrize(
    ("build", "gear_set", "totals"), APPENDIX_B, ids=[f"{b}-{s}" for b, s, _ in APPENDIX_B]
)
def test_default_set_bonus_totals_match_appendix_b(
    build: str, gear_set: str, totals: tuple[float, ...]
) -> None:
    expected = tuple(round(v * 10) if i == 12 else int(v) for i, v in enumerate(totals))  # mdmg in tenths
    assert set_bonuses(make_loadout(Build(build)).sets[_APPENDIX_B_SET[gear_set]]) == expected


# ---- §12.1–12.3: levels, book, mode, food, prayers, flags -----------------------------------------
@pytest.mark.parametrize(
    ("build", "levels", "mode", "food"),
    [
        (Build.PURE, (60, 99, 1, 99, 99, 99, 52), FightMode.NORMAL, ANGLERFISH),
        (Build.ZERKER, (60, 99, 45, 99, 99, 99, 55), FightMode.NORMAL, ANGLERFISH),
        (Build.MED, (75, 99, 70, 99, 99, 99, 77), FightMode.NORMAL, ANGLERFISH),
        (Build.MAXED, (99, 99, 99, 99, 99, 99, 99), FightMode.NORMAL, ANGLERFISH),
        (Build.LMS_PURE, (75, 99, 1, 99, 99, 99, 99), FightMode.LMS, SHARK),
        (Build.LMS_ZERKER, (75, 99, 45, 99, 99, 99, 99), FightMode.LMS, SHARK),
        (Build.LMS_MED, (99, 99, 75, 99, 99, 99, 99), FightMode.LMS, SHARK),
    ],
)
def test_build_table(build: Build, levels: tuple[int, ...], mode: FightMode, food: int) -> None:
    lo = make_loadout(build)
    assert lo.base_levels == levels
    assert lo.base_levels[Skill.DEFENCE] == levels[2]
    assert lo.spellbook is Spellbook.ANCIENT
    assert lo.fight_mode is mode
    assert lo.primary_food == food


def test_set_prayers() -> None:
    low = make_loadout(Build.LMS_ZERKER).set_prayers
    assert low[G.MAGIC] == (Prayer.MYSTIC_MIGHT, Prayer.STEEL_SKIN)
    assert low[G.RANGED] == (Prayer.EAGLE_EYE, Prayer.STEEL_SKIN)
    melee = (Prayer.INCREDIBLE_REFLEXES, Prayer.ULTIMATE_STRENGTH, Prayer.STEEL_SKIN)
    assert low[G.MELEE] == low[G.SPEC] == melee
    high = make_loadout(Build.LMS_MED).set_prayers
    assert (high[G.MAGIC], high[G.RANGED], high[G.MELEE], high[G.SPEC]) == (
        (Prayer.AUGURY,),
        (Prayer.RIGOUR,),
        (Prayer.PIETY,),
        (Prayer.PIETY,),
    )
    for build in Build:
        prayers = make_loadout(build).set_prayers
        assert prayers[G.TANK] == prayers[G.MAGIC]
        assert prayers == (high if build in (Build.MED, Build.MAXED, Build.LMS_MED) else low)


def test_sets_follow_the_table_row_order() -> None:
    pure = make_loadout(Build.PURE)
    names = ["Dragon claws", "Elder chaos hood", "Elder chaos top", "Ancient chaps", "Amulet of blood fury"]
    names += ["Infernal cape", "Regen bracelet", "Wizard boots", "Seers ring (i)", "Opal dragon bolts (e)"]
    assert pure.sets[G.SPEC] == tuple(iid(n) for n in names)
    ghostly = make_loadout(Build.LMS_PURE).sets[G.MAGIC]
    assert ghostly[3:5] == (iid("Ghostly robe", Slot.BODY), iid("Ghostly robe", Slot.LEGS))


@pytest.mark.parametrize(
    ("build", "melee_spec", "ranged", "ranged_special", "magic"),
    [
        (Build.PURE, "Dragon claws", "Zaryte crossbow", True, "Kodai wand"),
        (Build.MED, "Armadyl godsword", "Zaryte crossbow", True, "Toxic staff of the dead"),
        (Build.LMS_PURE, "Dragon dagger", "Rune crossbow", False, "Ancient staff"),
        (Build.LMS_MED, "Dragon dagger", "Rune crossbow", False, "Ahrim's staff 100"),
    ],
)
def test_derived_flags(build: Build, melee_spec: str, ranged: str, ranged_special: bool, magic: str) -> None:
    lo = make_loadout(build)
    assert lo.melee_special_weapon == iid(melee_spec)
    assert lo.ranged_weapon == iid(ranged)
    assert lo.ranged_special is ranged_special
    assert lo.magic_weapon == iid(magic)
    assert lo.has_nightmare_staff is False
    assert lo.magic_enabled


# ---- §12.5 tank set --------------------------------------------------------------------------------
def test_default_tank_sets() -> None:
    for build in (Build.PURE, Build.ZERKER, Build.MED, Build.MAXED):
        lo = make_loadout(build)
        assert lo.sets[G.TANK] == lo.sets[G.RANGED]
    for build, staff in ((Build.LMS_PURE, "Ancient staff"), (Build.LMS_ZERKER, "Ahrim's staff 100")):
        lo = make_loadout(build)
        expected = tuple(iid(staff) if i == iid("Rune crossbow") else i for i in lo.sets[G.RANGED])
        assert lo.sets[G.TANK] == expected
    lms_med = make_loadout(Build.LMS_MED)
    assert lms_med.sets[G.TANK][0] == iid("Ahrim's staff 100")
    assert lms_med.sets[G.TANK][1:] == lms_med.sets[G.RANGED][1:]


def test_tank_set_rules() -> None:
    ranged = make_loadout(Build.LMS_PURE).sets[G.RANGED]
    assert tank_set(ranged, ()) == ranged  # no magic set
    assert tank_set(ranged, (iid("Dragon claws"),)) == ranged  # two-handed: not a candidate
    assert tank_set(ranged, (iid("Volatile nightmare staff"),))[0] == iid("Volatile nightmare staff")
    zaryte = (iid("Zaryte crossbow"),)  # 14 + 15 + 16 = 45 beats every staff of the loadouts
    assert tank_set(zaryte, (iid("Zuriel's staff"),)) == zaryte
    # equal averages keep the ranged weapon: the test is strictly greater
    assert tank_set((iid("Toxic staff of the dead"),), (iid("Staff of light"),)) == (
        iid("Toxic staff of the dead"),
    )
    with pytest.raises(LoadoutError, match="no weapon"):
        tank_set((iid("Rune platelegs"),), ())


# ---- §12.4 starting equipment and inventory --------------------------------------------------------
@pytest.mark.parametrize(
    ("build", "gear_items", "food_fill"),
    [
        (Build.PURE, 6, 11),
        (Build.ZERKER, 8, 9),
        (Build.MED, 8, 9),
        (Build.MAXED, 5, 12),
        (Build.LMS_PURE, 5, 16),
        (Build.LMS_ZERKER, 6, 15),
        (Build.LMS_MED, 6, 14),
    ],
)
def test_inventory_counts(build: Build, gear_items: int, food_fill: int) -> None:
    lo = make_loadout(build)
    assert len(lo.inventory) == INVENTORY_SIZE
    assert len(gear_in_inventory(lo)) == gear_items
    assert lo.inventory.count(lo.primary_food) == food_fill
    assert lo.inventory.count(POUCH) == 1


def test_pure_inventory_in_order() -> None:
    gear = ["Zaryte crossbow", "Ancient chaps", "Amulet of blood fury", "Infernal cape", "Dragon scimitar"]
    expected = [iid(n) for n in [*gear, "Dragon claws"]]
    expected += [ANGLERFISH] * 11 + [COMBAT4, RANGING4] + [RESTORE4] * 3 + [BREW4] * 5 + [POUCH]
    assert make_loadout(Build.PURE).inventory == tuple(expected)


def test_lms_inventory_in_order() -> None:
    gear = ["Rune crossbow", "Black d'hide body", "Rune platelegs", "Abyssal whip", "Dragon defender"]
    expected = [iid(n) for n in [*gear, "Dragon dagger"]] + [KARAMBWAN] * 2 + [SHARK] * 14
    expected += [COMBAT4, RANGING4, RESTORE4, RESTORE4, BREW4, POUCH]
    assert make_loadout(Build.LMS_MED).inventory == tuple(expected)


@pytest.mark.parametrize("build", list(Build))
def test_worn_at_reset_is_the_magic_set(build: Build) -> None:
    lo = make_loadout(build)
    assert sorted(i for i in lo.equipment if i != EMPTY) == sorted(lo.sets[G.MAGIC])
    assert all(lo.equipment[ITEMS[i].slot] == i for i in lo.sets[G.MAGIC])


def test_no_magic_set_wears_the_ranged_set_and_carries_melee_then_spec() -> None:
    lo = loadout_with_lines(Build.PURE, [line_index(Build.PURE, "magic set emptied")])
    assert lo.sets[G.MAGIC] == () and not lo.magic_enabled and lo.magic_weapon is None
    assert sorted(i for i in lo.equipment if i != EMPTY) == sorted(lo.sets[G.RANGED])
    assert gear_in_inventory(lo) == [iid("Dragon scimitar"), iid("Dragon claws")]
    assert lo.inventory.count(ANGLERFISH) == 15
    assert lo.sets[G.TANK] == lo.sets[G.RANGED]
    assert lo.set_prayers[G.TANK] == lo.set_prayers[G.MAGIC]


def test_lunar_book_empties_the_magic_set() -> None:
    lo = loadout_with_lines(Build.LMS_MED, [line_index(Build.LMS_MED, "spellbook = Lunar")])
    assert lo.spellbook is Spellbook.LUNAR and lo.sets[G.MAGIC] == ()
    assert lo.equipment[Slot.WEAPON] == iid("Rune crossbow")
    assert lo.sets[G.TANK] == lo.sets[G.RANGED]  # the tank set uses the ranged weapon
    assert gear_in_inventory(lo) == [iid(n) for n in ("Abyssal whip", "Dragon defender", "Dragon dagger")]


# ---- §18.1 baseline supplies -----------------------------------------------------------------------
def test_pure_baseline_supplies() -> None:
    agent = make_loadout(Build.PURE)
    base = baseline_loadout(agent)
    assert Counter(i for i in base.inventory if i not in ITEMS) == Counter(
        {ANGLERFISH: 17, RESTORE4: 2, COMBAT4: 1, RANGING4: 1, POUCH: 1}
    )
    assert base.inventory[:6] == agent.inventory[:6]
    assert base.inventory[6:] == tuple([ANGLERFISH] * 17 + [COMBAT4, RANGING4, RESTORE4, RESTORE4, POUCH])
    assert (base.equipment, base.sets, base.base_levels) == (agent.equipment, agent.sets, agent.base_levels)


def test_lms_med_baseline_supplies() -> None:
    base = baseline_loadout(make_loadout(Build.LMS_MED))
    assert base.inventory[6:] == tuple(
        [KARAMBWAN] * 2 + [SHARK] * 14 + [ANGLERFISH] + [COMBAT4, RANGING4, RESTORE4, RESTORE4, POUCH]
    )
    assert base.primary_food == SHARK


def test_baseline_of_a_randomised_loadout_drops_every_brew_and_extra_restore() -> None:
    rng = np.random.default_rng(7)
    for _ in range(300):
        agent = make_loadout(Build.PURE, rng)
        base = baseline_loadout(agent)
        assert potions(base, PotionType.BREW) == []
        kept = min(2, len(potions(agent, PotionType.RESTORE)))
        assert len(potions(base, PotionType.RESTORE)) == kept
        assert base.inventory.count(ANGLERFISH) == (
            agent.inventory.count(ANGLERFISH)
            + len(potions(agent, PotionType.BREW))
            + len(potions(agent, PotionType.RESTORE))
            - kept
        )


# ---- §12.7 build choice ----------------------------------------------------------------------------
OPTIONS = [Build.PURE, Build.ZERKER, Build.MED]


def test_java_string_hash() -> None:
    assert java_string_hash("") == 0
    assert java_string_hash("ab") == 97 * 31 + 98
    assert java_string_hash("hello") == 99162322
    assert java_string_hash("Aa") == java_string_hash("BB") == 2112
    assert java_string_hash("polygenelubricants") == -(2**31)  # wraps to Integer.MIN_VALUE
    assert java_string_hash("\U0001f600") == 0xD83D * 31 + 0xDE00  # UTF-16 code units


def test_choose_build() -> None:
    assert choose_build(OPTIONS, "", "") is Build.PURE  # hash of "" = 0
    assert build_key("12", "7") == 7
    assert choose_build(OPTIONS, "12", "7") is Build.ZERKER  # 7 mod 3 = 1
    assert build_key("agent 12", "x 5 y") == 5  # digit-only parts
    assert build_key("8", "agent 3") == 8  # a whole numeric identifier wins over parts
    assert build_key("b", "a") == build_key("a", "b") == java_string_hash("ab")  # sorted, concatenated
    assert build_key("-5", "") == java_string_hash("-5")  # "-5" is not digits only
    assert choose_build(OPTIONS, "polygenelubricants", "") is Build.MED  # |−2³¹| mod 3 = 2
    assert choose_build([Build.LMS_MED], "anything", "else") is Build.LMS_MED
    with pytest.raises(ValueError, match="randomBuildOptions"):
        choose_build([], "1", "2")


# ---- §12.6 randomisation: determinism, draw order, validity ----------------------------------------
def test_randomisation_is_deterministic_per_seed() -> None:
    for build in Build:
        a = [make_loadout(build, np.random.default_rng(seed)) for seed in range(50)]
        b = [make_loadout(build, np.random.default_rng(seed)) for seed in range(50)]
        assert a == b
        if build is not Build.MAXED:
            assert len({(lo.inventory, tuple(lo.sets.values())) for lo in a}) > 1


def test_maxed_draws_nothing_and_never_changes() -> None:
    rng = np.random.default_rng(3)
    state = rng.bit_generator.state
    for _ in range(20):
        assert make_loadout(Build.MAXED, rng) == make_loadout(Build.MAXED)
    assert rng.bit_generator.state == state


def check_valid(lo: Loadout) -> None:
    """Invariants every randomised loadout keeps (beyond those `Loadout` itself checks)."""
    assert len(lo.inventory) == INVENTORY_SIZE and EMPTY not in lo.inventory
    assert all(i in ITEMS or i in CONSUMABLES for i in lo.inventory)
    assert len(lo.equipment) == NUM_SLOTS
    for gs in GearSet:
        slots = [ITEMS[i].slot for i in lo.sets[gs]]
        assert len(slots) == len(set(slots)), (gs, lo.sets[gs])
        weapons = [i for i in lo.sets[gs] if ITEMS[i].slot is Slot.WEAPON]
        if gs is not G.MAGIC or lo.sets[gs]:
            assert len(weapons) == 1, (gs, lo.sets[gs])
        if weapons and ITEMS[weapons[0]].two_handed:
            assert Slot.SHIELD not in slots, (gs, lo.sets[gs])
    if lo.spellbook is Spellbook.LUNAR:
        assert lo.sets[G.MAGIC] == ()
    assert sorted(i for i in lo.equipment if i != EMPTY) == sorted(lo.sets[G.MAGIC] or lo.sets[G.RANGED])
    assert lo.sets[G.TANK] == tank_set(lo.sets[G.RANGED], lo.sets[G.MAGIC])
    carried = set(lo.sets[G.RANGED]) | set(lo.sets[G.MELEE]) | set(lo.sets[G.SPEC])
    assert set(gear_in_inventory(lo)) == carried - set(lo.equipment)
    assert len(gear_in_inventory(lo)) == len(set(gear_in_inventory(lo)))
    assert lo.inventory.count(POUCH) == 1
    assert lo.inventory == tuple(sorted(lo.inventory, key=_rank))


def _rank(i: int) -> int:
    if i in ITEMS:
        return 0
    kind = CONSUMABLES[i].kind
    return 1 if kind is ConsumableKind.FOOD else 3 if kind is ConsumableKind.POUCH else 2


@pytest.mark.parametrize("build", list(Build))
def test_randomised_loadouts_are_valid(build: Build) -> None:
    rng = np.random.default_rng(2024)
    for _ in range(2000):
        lo = make_loadout(build, rng)
        check_valid(lo)
        if build is Build.MAXED:
            assert lo == make_loadout(Build.MAXED)
        if build in (Build.PURE, Build.MAXED, Build.LMS_PURE):
            assert lo.spellbook is Spellbook.ANCIENT  # no Lunar line (§12.1)
        check_valid(baseline_loadout(lo))


@pytest.mark.parametrize("build", [b for b in Build if b is not Build.MAXED])
def test_any_combination_of_lines_fits_the_inventory(build: Build) -> None:
    """Forcing random subsets of lines (far likelier than the real chances) never overflows 28 slots."""
    rng = np.random.default_rng(11)
    n = len(RANDOMISATION[build])
    for _ in range(1500):
        chosen = [i for i in range(n) if rng.random() < 0.5]
        check_valid(loadout_with_lines(build, chosen, rng))
    check_valid(loadout_with_lines(build, range(n), rng))


class ScriptedRng:
    """Stands in for `numpy.random.Generator`: logs every draw; chances fail except the listed calls."""

    def __init__(self, succeed: set[int], integers: list[int]) -> None:
        self.succeed = succeed
        self.ints = list(integers)
        self.log: list[Any] = []
        self.chances = 0

    def random(self) -> float:
        self.log.append("R")
        self.chances += 1
        return 0.0 if self.chances - 1 in self.succeed else 0.999999

    def integers(self, low: int, high: int) -> int:
        self.log.append(("U", low, high - 1))
        value = self.ints.pop(0)
        assert low <= value < high
        return value


def test_draw_order_one_chance_per_line_reached_and_numbers_right_after() -> None:
    build = Build.LMS_PURE
    n = len(RANDOMISATION[build])
    # chances 0 (karambwans) and 3 (Armadyl crossbow, an else line reached because line 2 failed) pass
    rng = ScriptedRng(succeed={0, 3, 4}, integers=[3])
    lo = make_loadout(build, rng)  # type: ignore[arg-type]
    # karambwan: chance, U[0,3]; ballista fails; ACB passes, its "then 50 %" is chance #4 and passes;
    # the knife, javelin and dark-bow else lines are not reached
    assert rng.log[:5] == ["R", ("U", 0, 3), "R", "R", "R"]
    assert rng.log[5:] == ["R"] * (n - 3 - 3)
    assert lo.inventory.count(KARAMBWAN) == 3
    assert lo.ranged_weapon == iid("Armadyl crossbow")
    assert lo.equipment[Slot.AMMO] == iid("Opal dragon bolts (e)")


def test_draw_order_of_the_lms_brews_line() -> None:
    build = Build.LMS_MED
    brews = line_index(build, "count(Saradomin brew(4), b)")
    rng = ScriptedRng(succeed={brews}, integers=[2, 1])  # every line reached: chance index = line index
    lo = make_loadout(build, rng)  # type: ignore[arg-type]
    assert rng.log[brews : brews + 4] == ["R", ("U", 0, 2), ("U", 0, 1), "R"]
    assert len(potions(lo, PotionType.BREW)) == 2
    assert len(potions(lo, PotionType.RESTORE)) == 2  # ceil(2/2) + 1


# ---- §12.6 randomisation: the lines themselves -----------------------------------------------------
EXPECTED_LINES: dict[Build, list[str]] = {
    Build.PURE: [
        "20 %: set{magic}(weapon, Volatile nightmare staff)",
        "20 %: swapAll(Elder chaos hood → Guthix halo)",
        "10 %: swapAll(Seers ring (i) → Archers ring (i))",
        "10 %: swapAll(Seers ring (i) → Berserker ring (i))",
        "10 %: swapAll(Occult necklace → Amulet of blood fury)",
        "10 %: swapAll(Amulet of blood fury → Amulet of fury)",
        "10 %: swapAll(Infernal cape → Fire cape)",
        "10 %: swapAll(Infernal cape → Imbued guthix cape); swapAll(Fire cape → Imbued guthix cape)",
        "10 %: set{spec}(weapon, Dragon dagger(p++))",
        "10 %: set{all}(ammo, Dragonstone dragon bolts (e))",
        "5 %: set{ranged}(weapon, Dragon knife)",
        "5 %: count(Super combat potion(4), 0)",
        "else 5 %: dose(Super combat potion(4), U{4,3,2,1})",
        "5 %: count(Ranging potion(4), 0)",
        "else 5 %: dose(Ranging potion(4), U{4,3,2,1})",
        "20 %: b = U[0,8]: count(Saradomin brew(4), b), count(Super restore(4), max(2, floor(b/2) + 1))",
        "10 %: primary food = Shark",
        "5 %: magic set emptied",
    ],
    Build.LMS_ZERKER: [
        "20 %: count(Cooked karambwan, U[0,3])",
        "10 %: set{spec}(weapon, Armadyl godsword)",
        "10 %: set{ranged}(weapon, Heavy ballista); set{all}(ammo, Dragon javelin)",
        "else 10 %: set{ranged}(weapon, Armadyl crossbow); then 50 %: set{all}(ammo, Opal dragon bolts (e))",
        "else 5 %: set{ranged}(weapon, Morrigan's javelin)",
        "else 3 %: set{ranged}(weapon, Dark bow); set{all}(ammo, Dragon arrow)",
        "5 %: set{spec}(weapon, Dragon claws)",
        "5 %: set{spec}(weapon, Vesta's longsword)",
        "5 %: set{melee}(weapon, Vesta's longsword)",
        "5 %: set{melee}(weapon, Elder maul)",
        "3 %: set{melee}(weapon, Armadyl godsword)",
        "5 %: set{spec}(weapon, Granite maul)",
        "5 %: set{ranged, melee, spec}(cape, Infernal cape)",
        "5 %: set{magic}(weapon, Kodai wand)",
        "5 %: set{magic}(weapon, Zuriel's staff)",
        "5 %: set{magic}(neck, Occult necklace)",
        "5 %: set{magic}(shield, Mage's book)",
        "5 %: set{magic}(ring, Seers ring (i))",
        "5 %: set{magic}(weapon, Staff of the dead)",
        "5 %: set{magic}(weapon, Volatile nightmare staff)",
        "5 %: swapAll(Amulet of glory → Amulet of fury)",
        "5 %: set{melee, spec}(neck, Amulet of torture)",
        "5 %: set{ranged}(neck, Necklace of anguish)",
        "5 %: set{magic}(hands, Tormented bracelet)",
        "5 %: set{magic}(head, 3rd age mage hat)",
        "5 %: set{magic}(body, 3rd age robe top)",
        "5 %: set{magic}(legs, 3rd age robe)",
        "5 %: set{ranged}(head, 3rd age range coif)",
        "5 %: swapAll(Black d'hide body → 3rd age range top)",
        "5 %: swapAll(Rune platelegs → 3rd age range legs)",
        "5 %: set{magic}(feet, Infinity boots)",
        "5 %: count(Super combat potion(4), 0)",
        "else 5 %: dose(Super combat potion(4), U{4,3,2,1})",
        "5 %: count(Ranging potion(4), 0)",
        "else 5 %: dose(Ranging potion(4), U{4,3,2,1})",
        "10 %: b = U[0,2]: count(Saradomin brew(4), b), count(Super restore(4), ceil(b/2) + U[0,1])",
        "10 %: spellbook = Lunar",
        "10 %: primary food = Anglerfish",
    ],
    Build.LMS_MED: [
        "20 %: count(Cooked karambwan, U[0,3])",
        "10 %: set{spec}(weapon, Armadyl godsword)",
        "10 %: set{ranged}(weapon, Heavy ballista); set{all}(ammo, Dragon javelin)",
        "else 10 %: set{ranged}(weapon, Armadyl crossbow); then 50 %: set{all}(ammo, Opal dragon bolts (e))",
        "else 5 %: set{ranged}(weapon, Zaryte crossbow); then 50 %: set{all}(ammo, Opal dragon bolts (e))",
        "else 5 %: set{ranged}(weapon, Morrigan's javelin)",
        "else 3 %: set{ranged}(weapon, Dark bow); set{all}(ammo, Dragon arrow)",
        "5 %: set{spec}(weapon, Dragon claws)",
        "5 %: set{spec}(weapon, Vesta's longsword)",
        "5 %: set{melee}(weapon, Vesta's longsword)",
        "5 %: set{spec}(weapon, Statius's warhammer)",
        "3 %: set{melee}(weapon, Statius's warhammer)",
        "5 %: set{melee}(weapon, Ghrazi rapier)",
        "5 %: set{melee}(weapon, Elder maul)",
        "3 %: set{melee}(weapon, Armadyl godsword)",
        "5 %: set{spec}(weapon, Granite maul)",
        "5 %: set{spec}(weapon, Ancient godsword)",
        "5 %: set{ranged, melee, spec}(cape, Infernal cape)",
        "5 %: set{magic}(weapon, Kodai wand)",
        "5 %: set{magic}(weapon, Zuriel's staff)",
        "5 %: set{magic}(neck, Occult necklace)",
        "5 %: set{magic}(shield, Mage's book)",
        "5 %: set{magic}(ring, Seers ring (i))",
        "5 %: set{magic}(weapon, Staff of the dead)",
        "5 %: set{magic}(weapon, Volatile nightmare staff)",
        "5 %: set{magic}(body, Ahrim's robetop 100)",
        "5 %: set{magic}(legs, Ahrim's robeskirt 100)",
        "5 %: set{magic}(neck, Amulet of fury)",
        "5 %: set{magic}(head, Ancestral hat)",
        "5 %: set{magic}(body, Ancestral robe top)",
        "5 %: set{magic}(legs, Ancestral robe bottom)",
        "5 %: set{ranged, melee, spec}(legs, Bandos tassets)",
        "5 %: set{ranged, melee, spec}(legs, Verac's plateskirt 100)",
        "5 %: swapAll(Spirit shield → Blessed spirit shield)",
        "5 %: set{magic}(feet, Eternal boots)",
        "5 %: swapAll(Helm of neitiznot → Guthan's helm)",
        "5 %: swapAll(Black d'hide body → Karil's leathertop 100)",
        "5 %: swapAll(Helm of neitiznot → Verac's helm)",
        "5 %: set{melee}(head, Dharok's helm); set{melee}(body, Dharok's platebody); "
        "set{melee}(legs, Dharok's platelegs); set{melee}(weapon, Dharok's greataxe)",
        "5 %: count(Super combat potion(4), 0)",
        "else 5 %: dose(Super combat potion(4), U{4,3,2,1})",
        "5 %: count(Ranging potion(4), 0)",
        "else 5 %: dose(Ranging potion(4), U{4,3,2,1})",
        "10 %: b = U[0,2]: count(Saradomin brew(4), b), count(Super restore(4), ceil(b/2) + U[0,1])",
        "10 %: spellbook = Lunar",
        "10 %: primary food = Anglerfish",
    ],
}


@pytest.mark.parametrize("build", list(EXPECTED_LINES))
def test_randomisation_tables_read_as_the_spec(build: Build) -> None:
    assert [line.describe() for line in RANDOMISATION[build]] == EXPECTED_LINES[build]


def test_table_sizes_and_shared_lines() -> None:
    assert {b: len(RANDOMISATION[b]) for b in Build} == {
        Build.PURE: 18,
        Build.ZERKER: 14,
        Build.MED: 15,
        Build.MAXED: 0,
        Build.LMS_PURE: 35,
        Build.LMS_ZERKER: 38,
        Build.LMS_MED: 46,
    }
    lunar = {b for b in Build if any("Lunar" in line.describe() for line in RANDOMISATION[b])}
    assert lunar == {Build.ZERKER, Build.MED, Build.LMS_ZERKER, Build.LMS_MED}
    lms_pure = [line.describe() for line in RANDOMISATION[Build.LMS_PURE]]
    assert "else 5 %: set{ranged}(weapon, Dragon knife)" in lms_pure
    assert "20 %: set{all}(head, Guthix halo)" in lms_pure
    assert lms_pure[2] == "10 %: set{ranged}(weapon, Light ballista); set{all}(ammo, Dragon javelin)"
    # LMS_ZERKER = LMS_PURE's structure: its lines not named in the prose do not exist there
    zerker = set(EXPECTED_LINES[Build.LMS_ZERKER])
    for gone in (
        "Spiked manacles",
        "Ancient chaps",
        "Rangers' tunic",
        "Wizard boots",
        "Guthix halo",
        "Dragon knife",
    ):
        assert not any(gone in d for d in zerker), gone


def test_pure_gear_lines() -> None:
    b = Build.PURE
    lo = loadout_with_lines(b, [0])
    assert lo.magic_weapon == iid("Volatile nightmare staff") and lo.has_nightmare_staff
    assert iid("Kodai wand") not in lo.inventory + lo.equipment
    lo = loadout_with_lines(b, [1])
    assert {in_slot(lo.sets[gs], Slot.HEAD) for gs in GearSet} == {iid("Guthix halo")}
    lo = loadout_with_lines(b, [2, 3])  # Archers, then the Berserker line finds no Seers ring left
    assert {lo.sets[gs][-2] for gs in BASE_SETS} == {iid("Archers ring (i)")}
    lo = loadout_with_lines(b, [4, 5])  # occult → blood fury, then every blood fury → fury
    assert {i for gs in BASE_SETS for i in lo.sets[gs] if ITEMS[i].slot is Slot.NECK} == {
        iid("Amulet of fury")
    }
    assert len(gear_in_inventory(lo)) == 5
    lo = loadout_with_lines(b, [6, 7])  # fire cape, then fire and infernal capes → imbued
    assert {i for gs in BASE_SETS for i in lo.sets[gs] if ITEMS[i].slot is Slot.CAPE} == {
        iid("Imbued guthix cape")
    }
    lo = loadout_with_lines(b, [8])
    assert lo.sets[G.SPEC][0] == lo.melee_special_weapon == Ids.DRAGON_DAGGER_PPP
    lo = loadout_with_lines(b, [9])
    assert {lo.sets[gs][-1] for gs in BASE_SETS} == {iid("Dragonstone dragon bolts (e)")}
    lo = loadout_with_lines(b, [10])
    assert lo.ranged_weapon == iid("Dragon knife") and lo.ranged_special
    assert lo.sets[G.RANGED][1] == iid("Mage's book")  # one-handed: the shield stays


def test_two_handed_weapons_remove_the_shield() -> None:
    b = Build.LMS_PURE
    lo = loadout_with_lines(b, [1])  # AGS spec
    assert lo.sets[G.SPEC][0] == iid("Armadyl godsword")
    assert all(ITEMS[i].slot is not Slot.SHIELD for i in lo.sets[G.SPEC])
    assert iid("Unholy book") in lo.sets[G.MELEE]
    lo = loadout_with_lines(b, [2])  # ballista + javelins everywhere
    assert lo.ranged_weapon == iid("Light ballista") and lo.ranged_special
    assert all(ITEMS[i].slot is not Slot.SHIELD for i in lo.sets[G.RANGED])
    assert {lo.sets[gs][-1] for gs in BASE_SETS} == {iid("Dragon javelin")}
    # tank = ranged set with the Ancient staff instead of the ballista, still without a shield
    assert lo.sets[G.TANK] == (iid("Ancient staff"), *lo.sets[G.RANGED][1:])
    # a later one-handed weapon does not bring the shield back
    lo = loadout_with_lines(b, [1, line_index(b, "set{spec}(weapon, Vesta's longsword)")])
    assert lo.sets[G.SPEC][0] == iid("Vesta's longsword")
    assert all(ITEMS[i].slot is not Slot.SHIELD for i in lo.sets[G.SPEC])


def test_ranged_weapon_chain_is_exclusive() -> None:
    b = Build.LMS_PURE
    lo = loadout_with_lines(b, [2, 3, 4, 5, 6])  # the first line of the chain wins
    assert lo.ranged_weapon == iid("Light ballista")
    lo = loadout_with_lines(b, [5, 6])  # Morrigan's javelin reached after ballista, ACB, knife fail
    assert lo.ranged_weapon == iid("Morrigan's javelin")
    lo = loadout_with_lines(b, [6])
    assert lo.ranged_weapon == iid("Dark bow") and {lo.sets[gs][-1] for gs in BASE_SETS} == {
        iid("Dragon arrow")
    }


def test_then_line_draws_its_own_chance() -> None:
    ammo = set()
    for seed in range(40):
        lo = loadout_with_lines(Build.LMS_MED, [4], np.random.default_rng(seed))  # Zaryte (+50 % opal)
        assert lo.ranged_weapon == iid("Zaryte crossbow")
        ammo.add(ITEMS[lo.sets[G.RANGED][-1]].name)
    assert ammo == {"Opal dragon bolts (e)", "Diamond bolts (e)"}


def test_potion_lines() -> None:
    b = Build.PURE
    lo = loadout_with_lines(b, [11, 12])  # removal; the dose line (else) is not reached
    assert potions(lo, PotionType.COMBAT) == [] and lo.inventory.count(ANGLERFISH) == 12
    doses = set()
    for seed in range(60):
        lo = loadout_with_lines(b, [12, 14], np.random.default_rng(seed))
        combat, ranging = potions(lo, PotionType.COMBAT), potions(lo, PotionType.RANGING)
        assert len(combat) == len(ranging) == 1
        doses.add(CONSUMABLES[combat[0]].doses)
    assert doses == {1, 2, 3, 4}
    lo = loadout_with_lines(b, [13])
    assert potions(lo, PotionType.RANGING) == [] and len(potions(lo, PotionType.COMBAT)) == 1


@pytest.mark.parametrize(
    ("build", "b_max", "restores"),
    [
        (Build.PURE, 8, lambda b: {max(2, b // 2 + 1)}),
        (Build.LMS_PURE, 2, lambda b: {-(-b // 2), -(-b // 2) + 1}),
    ],
)
def test_brews_line(build: Build, b_max: int, restores: Any) -> None:
    index = line_index(build, "count(Saradomin brew(4), b)")
    seen = set()
    for seed in range(200):
        lo = loadout_with_lines(build, [index], np.random.default_rng(seed))
        b = len(potions(lo, PotionType.BREW))
        r = len(potions(lo, PotionType.RESTORE))
        assert 0 <= b <= b_max and r in restores(b)
        seen.add((b, r))
        check_valid(lo)
    assert {b for b, _ in seen} == set(range(b_max + 1))


def test_food_and_karambwan_lines() -> None:
    lo = loadout_with_lines(Build.PURE, [16])
    assert lo.primary_food == SHARK and lo.inventory.count(SHARK) == 11 and ANGLERFISH not in lo.inventory
    lo = loadout_with_lines(Build.LMS_ZERKER, [line_index(Build.LMS_ZERKER, "primary food = Anglerfish")])
    assert lo.primary_food == ANGLERFISH and lo.inventory.count(ANGLERFISH) == 15
    assert lo.inventory.count(KARAMBWAN) == 2
    counts = {
        loadout_with_lines(Build.LMS_PURE, [0], np.random.default_rng(s)).inventory.count(KARAMBWAN)
        for s in range(60)
    }
    assert counts == {0, 1, 2, 3}


def test_med_lines() -> None:
    b = Build.MED
    lo = loadout_with_lines(b, [4])  # QUIRK 5 DROP: the legs swap
    for gs in (G.RANGED, G.MELEE, G.SPEC):
        assert iid("Karil's leatherskirt 100") in lo.sets[gs] and iid("Armadyl chestplate") in lo.sets[gs]
    lo = loadout_with_lines(b, [2, 4])  # chainskirt first: the leatherskirt line finds no plateskirt
    assert (
        iid("Armadyl chainskirt") in lo.sets[G.RANGED] and iid("Karil's leatherskirt 100") not in lo.inventory
    )
    lo = loadout_with_lines(b, [5, 6])  # VNS first: the staff-of-light line finds no toxic staff
    assert lo.magic_weapon == iid("Volatile nightmare staff")
    lo = loadout_with_lines(b, [0])
    assert lo.equipment[Slot.SHIELD] == iid("Mage's book") and iid("Blessed spirit shield") in lo.inventory
    lo = loadout_with_lines(b, [1])
    assert lo.melee_special_weapon == iid("Dragon claws") and iid("Armadyl godsword") not in lo.inventory


def test_lms_med_dharok_and_swaps() -> None:
    b = Build.LMS_MED
    lo = loadout_with_lines(b, [line_index(b, "Dharok's greataxe")])
    names = [ITEMS[i].name for i in lo.sets[G.MELEE]]
    assert names[:4] == ["Dharok's greataxe", "Dharok's helm", "Dharok's platebody", "Dharok's platelegs"]
    assert "Dragon defender" not in names and iid("Dragon defender") in lo.inventory  # still in spec
    # ranged 3 (crossbow, body, legs), melee 4 Dharok's pieces (the whip is gone), spec dagger + defender
    assert len(gear_in_inventory(lo)) == 9 and iid("Abyssal whip") not in lo.inventory
    lo = loadout_with_lines(b, [line_index(b, "Guthan's helm"), line_index(b, "Verac's helm")])
    assert {in_slot(lo.sets[gs], Slot.HEAD) for gs in GearSet} == {iid("Guthan's helm")}
    lo = loadout_with_lines(b, [line_index(b, "Blessed spirit shield")])
    assert lo.equipment[Slot.SHIELD] == iid("Blessed spirit shield")


# ---- data tables: checked on load -------------------------------------------------------------------
def test_build_specs_are_frozen() -> None:
    spec = BUILD_SPECS[Build.PURE]
    assert isinstance(spec.sets, MappingProxyType)
    assert all(len(spec.sets[gs]) == len(TABLE_SLOT_ORDER) for gs in BASE_SETS)
    with pytest.raises(AttributeError):
        spec.primary_food = SHARK  # type: ignore[misc]


def test_unknown_item_names_file_and_line(tmp_path: Path) -> None:
    src = Path(__file__).parents[2] / "envs" / "nh" / "data" / "builds.yml"
    text = src.read_text(encoding="utf-8")
    bad = tmp_path / "builds.yml"
    bad.write_text(text.replace("Dragon scimitar, ", "Dragon scimmy, ", 1), encoding="utf-8")
    line = next(n for n, s in enumerate(bad.read_text().splitlines(), 1) if "Dragon scimmy" in s)
    with pytest.raises(
        DataError, match=rf"builds\.yml:{line}: unknown item 'Dragon scimmy'.*Dragon scimitar"
    ):
        load_builds(bad)


def test_randomisation_errors_name_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "randomisation.yml"
    blocks = "".join(f"{b.value}:\n  section: x\n  lines: []\n" for b in Build if b is not Build.PURE)
    bad.write_text(
        "PURE:\n  section: x\n  lines:\n"
        "    - {p: 0.1, op: set_slot, sets: [magic], slot: weapon, item: Kodai wand}\n"
        "    - {p: 0.1, op: set_slot, sets: [magic], slot: weapon, itme: Kodai wand}\n" + blocks,
        encoding="utf-8",
    )
    with pytest.raises(DataError, match=r"randomisation\.yml:5: unknown key 'itme'; did you mean 'item'"):
        load_randomisation(bad)
    bad.write_text(
        "PURE:\n  section: x\n  lines:\n"
        "    - {p: 0.1, op: set_slot, sets: [magic], slot: shield, item: Kodai wand}\n" + blocks,
        encoding="utf-8",
    )
    with pytest.raises(
        DataError, match=r"randomisation\.yml:4: unknown item 'Kodai wand' in the shield slot"
    ):
        load_randomisation(bad)
    bad.write_text("PURE:\n  section: x\n  lines: []\n  lines: []\n" + blocks, encoding="utf-8")
    with pytest.raises(DataError, match=r"randomisation\.yml:4: duplicate key 'lines'"):
        load_randomisation(bad)


def test_loadout_rejects_a_shield_beside_a_two_handed_weapon() -> None:
    import dataclasses

    pure = make_loadout(Build.PURE)
    sets = dict(pure.sets)
    sets[G.MELEE] = (iid("Armadyl godsword"), iid("Mage's book"))
    with pytest.raises(LoadoutError, match="shield beside the two-handed Armadyl godsword"):
        dataclasses.replace(pure, sets=MappingProxyType(sets))
    with pytest.raises(LoadoutError, match="27 inventory items"):
        dataclasses.replace(pure, inventory=pure.inventory[:-1])
