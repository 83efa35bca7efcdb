"""Combat formulas (spec §6) against the worked numbers of Appendix C, and the hit creation of
`envs.nh.combat`: determinism, the exact draw order of §16.6 and Monte-Carlo agreement with the
analytic expected damage."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest

from envs.nh import formulas as f
from envs.nh.combat import (
    SPECIALS,
    AttackOutcome,
    Method,
    attack_profile,
    attack_range,
    attack_roll,
    attack_speed,
    combat_method,
    create_hits,
    defence_roll,
    defence_roll_against,
    expected_damage,
    hit_delay,
    max_hit,
    special_for_weapon,
)
from envs.nh.items import CombatStyle, Ids, StyleType, WeaponClass, item_by_name
from envs.nh.spells import SPELLS, Spell
from envs.nh.state import PlayerState
from tests.envs.combat_players import make_player, prayer_named

# ---- players of the default loadouts (spec §12.2; the same sets as the golden cases) ---------------
PURE_LEVELS = {
    "attack": 60,
    "strength": 99,
    "defence": 1,
    "hitpoints": 99,
    "ranged": 99,
    "magic": 99,
    "prayer": 52,
}
LMS_PURE_LEVELS = {**PURE_LEVELS, "attack": 75, "prayer": 99}
MED_LEVELS = {
    "attack": 75,
    "strength": 99,
    "defence": 70,
    "hitpoints": 99,
    "ranged": 99,
    "magic": 99,
    "prayer": 77,
}
PURE_COMMON = {
    "ammo": "Opal dragon bolts (e)",
    "body": "Elder chaos top",
    "cape": "Infernal cape",
    "feet": "Wizard boots",
    "hands": "Regen bracelet",
    "head": "Elder chaos hood",
    "legs": "Ancient chaps",
    "neck": "Amulet of blood fury",
    "ring": "Seers ring (i)",
    "shield": "Mage's book",
}
PURE_MELEE = {**PURE_COMMON, "weapon": "Dragon scimitar"}
PURE_RANGED = {**PURE_COMMON, "weapon": "Zaryte crossbow"}
PURE_SPEC = {**PURE_COMMON, "shield": "", "weapon": "Dragon claws"}
PURE_MAGIC = {
    **PURE_COMMON,
    "cape": "Imbued guthix cape",
    "legs": "Elder chaos robe",
    "neck": "Occult necklace",
    "weapon": "Kodai wand",
}
LMS_PURE_COMMON = {
    "ammo": "Diamond bolts (e)",
    "body": "Ghostly robe",
    "cape": "Imbued guthix cape",
    "feet": "Climbing boots",
    "hands": "Mithril gloves",
    "head": "Ghostly hood",
    "legs": "Black d'hide chaps",
    "neck": "Amulet of glory",
    "ring": "Berserker ring",
    "shield": "Unholy book",
}
LMS_PURE_RANGED = {**LMS_PURE_COMMON, "weapon": "Rune crossbow"}
LMS_PURE_SPEC = {**LMS_PURE_COMMON, "weapon": "Dragon dagger"}
LMS_PURE_MAGIC = {
    **LMS_PURE_COMMON,
    "legs": "Ghostly robe",
    "neck": "Occult necklace",
    "weapon": "Ancient staff",
}
MED_MELEE = {
    "ammo": "Opal dragon bolts (e)",
    "body": "Armadyl chestplate",
    "cape": "Infernal cape",
    "feet": "Boots of brimstone",
    "hands": "Barrows gloves",
    "head": "Guthan's helm",
    "legs": "Verac's plateskirt 100",
    "neck": "Amulet of blood fury",
    "ring": "Seers ring (i)",
    "shield": "Avernic defender",
    "weapon": "Abyssal tentacle",
}

MELEE_PRAYERS = ("Incredible Reflexes", "Ultimate Strength", "Steel Skin")
RANGED_PRAYERS = ("Eagle Eye", "Steel Skin")
MAGIC_PRAYERS = ("Mystic Might", "Steel Skin")


def pure(gear: dict[str, str], prayers: tuple[str, ...], *extra: str, index: int = 0) -> PlayerState:
    return make_player(gear, PURE_LEVELS, (*prayers, *extra), index=index)


def lms_pure(gear: dict[str, str], prayers: tuple[str, ...], *extra: str, index: int = 0) -> PlayerState:
    return make_player(gear, LMS_PURE_LEVELS, (*prayers, *extra), index=index)


def armed(p: PlayerState) -> PlayerState:
    p.special_armed = True
    return p


def casting(p: PlayerState, spell: Spell) -> PlayerState:
    p.selected_spell = spell
    return p


def with_weapon(gear: dict[str, str], weapon: str, **slots: str) -> dict[str, str]:
    return {**gear, "weapon": weapon, **slots}


# ---- Appendix C: worked numbers -------------------------------------------------------------------
def ranged_max(level: int, prayer_pct: int, bonus: int) -> int:
    return f.base_max_hit(f.effective_level(level, prayer_pct, 0), bonus)


def melee_max(level: int, prayer_pct: int, bonus: int) -> int:
    return f.base_max_hit(f.effective_level(level, prayer_pct, f.AGGRESSIVE_STANCE_BONUS), bonus)


def ags_steps(level: int, bonus: int) -> tuple[int, int, int]:
    base = melee_max(level, 123, bonus)
    return base, f.int_multiply(base, f.GODSWORD_MAX_FACTOR), f.armadyl_godsword_max_hit(base)


WORKED_NUMBERS: list[tuple[str, Callable[[], object], object]] = [
    ("PURE ranged eff, Ranged 99, Eagle Eye", lambda: f.effective_level(99, 115, 0), 121),
    ("PURE ranged max, Ranged 99, Eagle Eye, +122", lambda: ranged_max(99, 115, 122), 35),
    ("PURE ranged eff, Ranged 112", lambda: f.effective_level(112, 115, 0), 136),
    ("PURE ranged max, Ranged 112", lambda: ranged_max(112, 115, 122), 40),
    ("MAXED ranged eff, Ranged 112, Rigour", lambda: f.effective_level(112, 123, 0), 145),
    ("MAXED ranged max, Ranged 112, Rigour", lambda: ranged_max(112, 123, 122), 42),
    ("MAXED ranged max, Ranged 99, Rigour", lambda: ranged_max(99, 123, 122), 37),
    ("PURE Dragon scimitar max, Str 99", lambda: melee_max(99, 115, 89), 30),
    ("PURE Dragon scimitar max, Str 118", lambda: melee_max(118, 115, 89), 35),
    ("PURE Dragon claws M, Str 118", lambda: melee_max(118, 115, 79), 33),
    ("PURE Dragon claws M, Str 99", lambda: melee_max(99, 115, 79), 28),
    ("PURE claws special attack roll", lambda: f.roll(f.effective_level(60, 115, 0), 79), 11_011),
    ("PURE melee-set slash defence roll", lambda: f.roll(f.effective_level(1, 115, 0), 59), 1_107),
    ("claws hit chance 11 011 vs 1 107", lambda: round(f.hit_chance(11_011, 1_107), 6), 0.949646),
    ("MAXED AGS max, Str 118, Piety, +152", lambda: ags_steps(118, 152), (53, 58, 72)),
    ("MAXED AGS max, Str 99, Piety, +152", lambda: ags_steps(99, 152), (45, 49, 61)),
    ("MED AGS max, Str 99, Piety, +160", lambda: ags_steps(99, 160), (46, 50, 62)),
    ("MAXED AGS eff attack, Att 118, Piety", lambda: f.effective_level(118, 120, 0), 149),
    ("MAXED AGS attack roll", lambda: f.roll(149, 147), 31_439),
    ("MAXED AGS special attack roll", lambda: f.int_multiply(31_439, f.GODSWORD_ACCURACY), 62_878),
    (
        "LMS_PURE dagger special attack roll",
        lambda: f.int_multiply(f.roll(f.effective_level(75, 115, 0), 64), f.DRAGON_DAGGER_FACTOR),
        13_836,
    ),
    ("LMS_PURE dagger special max", lambda: f.dragon_dagger_max_hit(melee_max(99, 115, 58)), 27),
    ("LMS_PURE magic-set slash defence", lambda: f.roll(f.effective_level(1, 115, 0), 14), 702),
    (
        "PURE Zaryte special attack roll",
        lambda: f.int_multiply(f.roll(121, 145), f.CROSSBOW_SPECIAL_ACCURACY),
        50_578,
    ),
    ("PURE Zaryte special max with opal", lambda: ranged_max(99, 115, 122) + f.opal_bolt_bonus(99, True), 46),
    ("Zaryte special Ranged 112, opal", lambda: 40 + f.opal_bolt_bonus(112, True), 52),
    ("PURE Ice / Blood Barrage max", lambda: (f.magic_max_hit(30, 295), f.magic_max_hit(29, 295)), (38, 37)),
    (
        "ZERKER Ice / Blood Barrage max",
        lambda: (f.magic_max_hit(30, 265), f.magic_max_hit(29, 265)),
        (37, 36),
    ),
    (
        "MED/MAXED Ice / Blood Barrage max",
        lambda: (f.magic_max_hit(30, 325), f.magic_max_hit(29, 325)),
        (39, 38),
    ),
    ("LMS_PURE/ZERKER Barrage max", lambda: (f.magic_max_hit(30, 90), f.magic_max_hit(29, 90)), (32, 31)),
    ("LMS_MED Barrage max", lambda: (f.magic_max_hit(30, 110), f.magic_max_hit(29, 110)), (33, 32)),
    ("PURE Ice Barrage attack roll", lambda: f.roll(f.magic_effective_level(99, 115), 110), 21_228),
    (
        "PURE tank magic defence roll, Mystic Might + Steel Skin",
        lambda: f.roll(f.magic_defence_level(113, 1, 0), 116),
        15_660,
    ),
    ("hit chance 21 228 vs 15 660", lambda: round(f.hit_chance(21_228, 15_660), 5), 0.63112),
    (
        "PURE tank magic defence roll, Steel Skin only",
        lambda: f.roll(f.magic_defence_level(99, 1, 0), 116),
        13_860,
    ),
    ("hit chance 21 228 vs 13 860", lambda: round(f.hit_chance(21_228, 13_860), 5), 0.67351),
    ("MAXED magic defence roll, Augury", lambda: f.roll(f.magic_defence_level(123, 123, 0), 104), 21_840),
    ("hit chance 25 344 vs 21 840", lambda: round(f.hit_chance(25_344, 21_840), 6), 0.569106),
    ("PURE scimitar expected damage", lambda: round(f.hit_chance(11_781, 684) * 466 / 31, 4), 14.5946),
    ("Statius drain at Defence 90", lambda: f.statius_drained_defence(90), 63),
    ("Dharok factor, base 99 at 50 HP (damage 10 000)", lambda: f.dharok_damage(10_000, 99, 50), 14_851),
]


@pytest.mark.parametrize(
    ("compute", "expected"),
    [(c, e) for _, c, e in WORKED_NUMBERS],
    ids=[name for name, _, _ in WORKED_NUMBERS],
)
def test_worked_number(compute: Callable[[], object], expected: object) -> None:
    assert compute() == expected


# Worked numbers that need whole players (Appendix C, §6.5, §6.8, §6.9).
def _claws_vs_melee_set(protect: bool) -> float:
    defender = pure(PURE_MELEE, MELEE_PRAYERS, *(("Protect from Melee",) if protect else ()), index=1)
    return expected_damage(armed(pure(PURE_SPEC, MELEE_PRAYERS)), defender, Method.DRAGON_CLAWS)


PLAYER_NUMBERS: list[tuple[str, Callable[[], float], float, float]] = [
    ("claws special on PURE melee set", lambda: _claws_vs_melee_set(False), 40.587, 5e-4),
    ("claws special on PURE melee set, Protect from Melee", lambda: _claws_vs_melee_set(True), 22.882, 5e-4),
    (
        "PURE scimitar on PURE magic set",
        lambda: expected_damage(
            pure(PURE_MELEE, MELEE_PRAYERS), pure(PURE_MAGIC, MAGIC_PRAYERS), Method.MELEE
        ),
        14.5946,
        5e-5,
    ),
    (
        "PURE Zaryte, opal dragon, on PURE magic set with Protect from Missiles",
        lambda: expected_damage(
            pure(PURE_RANGED, RANGED_PRAYERS),
            pure(PURE_MAGIC, MAGIC_PRAYERS, "Protect from Missiles"),
            Method.RANGED,
        ),
        10.3149,
        5e-5,
    ),
    (
        "LMS_PURE Rune crossbow, diamond bolts, on LMS_PURE magic set",
        lambda: expected_damage(
            lms_pure(LMS_PURE_RANGED, RANGED_PRAYERS), lms_pure(LMS_PURE_MAGIC, MAGIC_PRAYERS), Method.RANGED
        ),
        15.9262,
        5e-5,
    ),
    (
        "PURE Ice Barrage on PURE tank set (Mystic Might + Steel Skin): hit chance",
        lambda: (
            attack_profile(
                casting(pure(PURE_MAGIC, MAGIC_PRAYERS), Spell.ICE_BARRAGE),
                pure(PURE_RANGED, MAGIC_PRAYERS),
                Method.MAGIC_SPELL,
            ).hit_chance
        ),
        0.63112,
        5e-6,
    ),
]


@pytest.mark.parametrize(
    ("compute", "expected", "tol"),
    [(c, e, t) for _, c, e, t in PLAYER_NUMBERS],
    ids=[name for name, *_ in PLAYER_NUMBERS],
)
def test_worked_number_with_players(compute: Callable[[], float], expected: float, tol: float) -> None:
    assert compute() == pytest.approx(expected, abs=tol)


def test_worked_rolls_with_players() -> None:
    """The same worked numbers through the player-level API (§6.3, §6.9)."""
    claws = armed(pure(PURE_SPEC, MELEE_PRAYERS))
    assert attack_roll(claws, Method.DRAGON_CLAWS) == 11_011
    assert max_hit(claws, Method.DRAGON_CLAWS) == 28
    dagger = armed(lms_pure(LMS_PURE_SPEC, MELEE_PRAYERS))
    magic_set = lms_pure(LMS_PURE_MAGIC, MAGIC_PRAYERS, index=1)
    assert attack_roll(dagger, Method.DRAGON_DAGGER) == 13_836
    assert defence_roll(magic_set, Method.DRAGON_DAGGER, dagger) == 702
    assert max_hit(dagger, Method.DRAGON_DAGGER) == 27
    zaryte = armed(pure(PURE_RANGED, RANGED_PRAYERS))
    assert attack_roll(zaryte, Method.ZARYTE_CROSSBOW) == 50_578
    barrage = casting(pure(PURE_MAGIC, MAGIC_PRAYERS), Spell.ICE_BARRAGE)
    assert attack_roll(barrage, Method.MAGIC_SPELL) == 21_228
    assert max_hit(barrage, Method.MAGIC_SPELL) == 38
    assert max_hit(casting(pure(PURE_MAGIC, MAGIC_PRAYERS), Spell.BLOOD_BARRAGE), Method.MAGIC_SPELL) == 37
    tank = pure(PURE_RANGED, MAGIC_PRAYERS)
    assert defence_roll_against(tank, StyleType.MAGIC) == 15_660
    tank.prayers = {prayer_named("Steel Skin")}
    assert defence_roll_against(tank, StyleType.MAGIC) == 13_860


# ---- Appendix C: constants and the per-weapon speed / range table ----------------------------------
def test_constants() -> None:
    assert f.PROTECTION_PRAYER_FACTOR == (60, 100)
    assert (f.OPAL_PROC_CHANCE, f.DIAMOND_PROC_CHANCE, f.DRAGONSTONE_PROC_CHANCE) == (0.05, 0.05, 0.06)
    assert f.ARMADYL_CROSSBOW_PROC_MULTIPLIER == 2
    ice = [
        SPELLS[s].freeze_ticks for s in (Spell.ICE_RUSH, Spell.ICE_BURST, Spell.ICE_BLITZ, Spell.ICE_BARRAGE)
    ]
    assert ice == [8, 16, 24, 32]
    assert f.accurate_zero_to_one(0) == 1
    assert f.protected_damage(f.accurate_zero_to_one(0)) == 0  # an accurate 0 → 1 becomes 0 again (§6.5)


SPEED_RANGE_TABLE: list[tuple[str, Method, int, int]] = [
    ("Zaryte crossbow", Method.RANGED, 5, 7),
    ("Armadyl crossbow", Method.RANGED, 5, 7),
    ("Rune crossbow", Method.RANGED, 5, 7),
    ("Light ballista", Method.RANGED, 6, 7),
    ("Heavy ballista", Method.RANGED, 6, 7),
    ("Dark bow", Method.RANGED, 8, 9),
    ("Dark bow", Method.DARK_BOW, 8, 9),
    ("Dragon knife", Method.RANGED, 2, 4),
    ("Morrigan's javelin", Method.RANGED, 5, 5),
    ("Dragon scimitar", Method.MELEE, 4, 1),
    ("Abyssal whip", Method.MELEE, 4, 1),
    ("Abyssal tentacle", Method.MELEE, 4, 1),
    ("Dragon claws", Method.MELEE, 4, 1),
    ("Dragon dagger", Method.MELEE, 4, 1),
    ("Ghrazi rapier", Method.MELEE, 4, 1),
    ("Vesta's longsword", Method.MELEE, 5, 1),
    ("Statius's warhammer", Method.MELEE, 5, 1),
    ("Armadyl godsword", Method.MELEE, 6, 1),
    ("Ancient godsword", Method.MELEE, 6, 1),
    ("Elder maul", Method.MELEE, 6, 1),
    ("Granite maul", Method.MELEE, 7, 1),
    ("Dharok's greataxe", Method.MELEE, 7, 1),
    ("Kodai wand", Method.MELEE, 4, 1),
    ("Ancient staff", Method.MELEE, 4, 1),
    ("Staff of the dead", Method.MELEE, 4, 1),
    ("Toxic staff of the dead", Method.MELEE, 4, 1),
    ("Staff of light", Method.MELEE, 4, 1),
    ("Zuriel's staff", Method.MELEE, 5, 1),
    ("Volatile nightmare staff", Method.MELEE, 5, 1),
    ("Ahrim's staff 100", Method.MELEE, 6, 1),
    ("Kodai wand", Method.MAGIC_SPELL, 5, 10),
    ("Ahrim's staff 100", Method.MAGIC_SPELL, 5, 10),
    ("Volatile nightmare staff", Method.NIGHTMARE_STAFF, 5, 10),
]


@pytest.mark.parametrize(
    ("weapon", "method", "speed", "reach"),
    SPEED_RANGE_TABLE,
    ids=[f"{w}-{m.name}" for w, m, _, _ in SPEED_RANGE_TABLE],
)
def test_attack_speed_and_range(weapon: str, method: Method, speed: int, reach: int) -> None:
    """Appendix C "derived per weapon" table (§6.2)."""
    p = make_player({"weapon": weapon}, PURE_LEVELS)
    assert attack_speed(p, method) == speed
    assert attack_range(p, method) == reach


# ---- formulas one by one --------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("attack", "defence", "expected"),
    [(100, 50, 1 - 52 / 202), (50, 100, 50 / 202), (100, 100, 100 / 202), (0, 10, 0.0)],
)
def test_hit_chance(attack: int, defence: int, expected: float) -> None:
    assert f.hit_chance(attack, defence) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize(
    ("func", "args", "expected"),
    [
        (f.int_multiply, (100, (23, 20)), 115),
        (f.int_multiply, (7, (3, 4)), 5),
        (f.protected_damage, (8,), 4),
        (f.protected_damage, (46,), 27),
        (f.protected_damage, (1,), 0),
        (f.dark_bow_special_clamp, (0,), 8),
        (f.dark_bow_special_clamp, (60,), 48),
        (f.dark_bow_special_clamp, (20,), 20),
        (f.ancient_godsword_max_hit, (46,), 50),
        (f.ballista_special_max_hit, (41,), 51),
        (f.dark_bow_special_max_hit, (33,), 49),
        (f.nightmare_staff_spell_max, (99,), 58),
        (f.nightmare_staff_spell_max, (80,), 47),
        (f.vesta_damage_range, (31,), (6, 37)),
        (f.statius_damage_range, (31,), (7, 38)),
        (f.vesta_defence_roll, (1_107,), 276),
        (f.opal_bolt_bonus, (99, False), 9),
        (f.opal_bolt_bonus, (99, True), 11),
        (f.dragonstone_bolt_bonus, (99, False), 19),
        (f.dragonstone_bolt_bonus, (99, True), 22),
        (f.diamond_bolt_max_hit, (32, False), 36),
        (f.diamond_bolt_max_hit, (35, True), 44),
        (f.blood_heal, (30, 25, False), 7),
        (f.blood_heal, (30, 25, True), 11),
        (f.dharok_damage, (40, 99, 50), 59),
        (f.dharok_damage, (40, 99, 99), 40),
        (f.magic_defence_level, (113, 1, 0), 87),
        (f.magic_defence_level, (123, 123, 3), 133),
    ],
    ids=lambda v: getattr(v, "__name__", None),
)
def test_formula(func: Callable[..., object], args: tuple[object, ...], expected: object) -> None:
    assert func(*args) == expected


@pytest.mark.parametrize(
    ("k", "claw_max", "total_range", "top_hitsplats"),
    [
        (1, 28, (28, 55), (27, 13, 6, 7)),
        (2, 28, (21, 48), (0, 24, 12, 13)),
        (3, 28, (14, 41), (0, 0, 20, 21)),
        (4, 28, (7, 34), (0, 0, 0, 35)),
    ],
)
def test_claw_pattern(
    k: int, claw_max: int, total_range: tuple[int, int], top_hitsplats: tuple[int, ...]
) -> None:
    """§6.9 live claw pattern: range of X for the first success k and the hitsplats at the top."""
    assert f.claw_total_range(k, claw_max) == total_range
    assert f.claw_hitsplats(k, total_range[1]) == top_hitsplats


@pytest.mark.parametrize(
    ("method", "weapon_class", "distance", "delays"),
    [
        (Method.MELEE, WeaponClass.SCIMITAR, 1, (0,)),
        (Method.DRAGON_DAGGER, WeaponClass.DRAGON_DAGGER, 1, (0, 0)),
        (Method.RANGED, WeaponClass.CROSSBOW, 2, (1,)),
        (Method.RANGED, WeaponClass.CROSSBOW, 3, (2,)),
        (Method.ZARYTE_CROSSBOW, WeaponClass.CROSSBOW, 7, (2,)),
        (Method.RANGED, WeaponClass.BALLISTA, 4, (2,)),
        (Method.RANGED, WeaponClass.BALLISTA, 5, (3,)),
        (Method.BALLISTA, WeaponClass.BALLISTA, 7, (2,)),
        (Method.RANGED, WeaponClass.DARK_BOW, 5, (2, 3)),
        (Method.DARK_BOW, WeaponClass.DARK_BOW, 1, (1, 2)),
        (Method.RANGED, WeaponClass.KNIFE, 4, (1,)),
        (Method.DRAGON_KNIFE, WeaponClass.KNIFE, 4, (1, 1)),
        (Method.MORRIGANS_JAVELIN, WeaponClass.JAVELIN, 5, (1,)),
        (Method.MAGIC_SPELL, WeaponClass.STAFF, 1, (1,)),
        (Method.MAGIC_SPELL, WeaponClass.STAFF, 2, (2,)),
        (Method.NIGHTMARE_STAFF, WeaponClass.STAFF, 10, (4,)),
    ],
)
def test_hit_delay(method: Method, weapon_class: WeaponClass, distance: int, delays: tuple[int, ...]) -> None:
    """§6.2 hit-delay table."""
    assert hit_delay(method, weapon_class, distance) == delays


def test_granite_maul_delays_one_per_queued_spec() -> None:
    assert hit_delay(Method.GRANITE_MAUL, WeaponClass.GRANITE_MAUL, 1, queued_specs=3) == (0, 0, 0)


# ---- methods and specials -------------------------------------------------------------------------
def test_special_table() -> None:
    """§6.9 table, §12.8 ids; the Rune crossbow has no special."""
    for dagger in (1215, 1231, 5680, 5698):
        assert special_for_weapon(dagger) == (Method.DRAGON_DAGGER, 25)
    assert special_for_weapon(22804) == special_for_weapon(22810) == (Method.DRAGON_KNIFE, 25)
    assert (
        special_for_weapon(Ids.LIGHT_BALLISTA)
        == special_for_weapon(Ids.HEAVY_BALLISTA)
        == (Method.BALLISTA, 65)
    )
    assert special_for_weapon(Ids.ZARYTE_CROSSBOW) == (Method.ZARYTE_CROSSBOW, 75)
    assert special_for_weapon(Ids.VOLATILE_NIGHTMARE_STAFF) == (Method.NIGHTMARE_STAFF, 55)
    assert special_for_weapon(Ids.RUNE_CROSSBOW) is None
    assert special_for_weapon(item_by_name("Dragon scimitar").id) is None
    assert {m for m, _ in SPECIALS.values()} == {m for m in Method if m.is_special}
    for method in Method:
        assert method.is_special == (method not in (Method.MELEE, Method.RANGED, Method.MAGIC_SPELL))
    assert Method.NIGHTMARE_STAFF.style is CombatStyle.MAGIC
    assert Method.DARK_BOW.style is CombatStyle.RANGED
    assert Method.GRANITE_MAUL.style is CombatStyle.MELEE


def test_combat_method_order() -> None:
    """§6.1: spell, then armed special (or queued maul specs), then ranged weapon, else melee."""
    p = pure(PURE_RANGED, RANGED_PRAYERS)
    assert combat_method(p) is Method.RANGED
    p.special_armed = True
    assert combat_method(p) is Method.ZARYTE_CROSSBOW
    p.selected_spell = Spell.ICE_BARRAGE
    assert combat_method(p) is Method.MAGIC_SPELL
    maul = pure(with_weapon(PURE_SPEC, "Granite maul"), MELEE_PRAYERS)
    assert combat_method(maul) is Method.MELEE
    maul.gmaul_queued = 2
    assert combat_method(maul) is Method.GRANITE_MAUL
    rune = lms_pure(LMS_PURE_RANGED, RANGED_PRAYERS)
    rune.special_armed = True  # no special bound: plain ranged
    assert combat_method(rune) is Method.RANGED


# ---- create_hits ----------------------------------------------------------------------------------
def _defender(*overhead: str) -> PlayerState:
    return pure(PURE_MAGIC, MAGIC_PRAYERS, *overhead, index=1)


ATTACKERS: dict[str, Callable[[], PlayerState]] = {
    "scimitar": lambda: pure(PURE_MELEE, MELEE_PRAYERS),
    "claws": lambda: armed(pure(PURE_SPEC, MELEE_PRAYERS)),
    "dragon_dagger": lambda: armed(lms_pure(LMS_PURE_SPEC, MELEE_PRAYERS)),
    "zaryte_special": lambda: armed(pure(PURE_RANGED, RANGED_PRAYERS)),
    "zaryte": lambda: pure(PURE_RANGED, RANGED_PRAYERS),
    "diamond": lambda: lms_pure(LMS_PURE_RANGED, RANGED_PRAYERS),
    "dragonstone": lambda: lms_pure(
        with_weapon(LMS_PURE_RANGED, "Rune crossbow", ammo="Dragonstone bolts (e)"), RANGED_PRAYERS
    ),
    "acb_opal": lambda: armed(pure(with_weapon(PURE_RANGED, "Armadyl crossbow"), RANGED_PRAYERS)),
    "dark_bow_special": lambda: armed(
        pure(with_weapon(PURE_SPEC, "Dark bow", ammo="Dragon arrow"), RANGED_PRAYERS)
    ),
    "dark_bow": lambda: pure(with_weapon(PURE_SPEC, "Dark bow", ammo="Dragon arrow"), RANGED_PRAYERS),
    "ice_barrage": lambda: casting(pure(PURE_MAGIC, MAGIC_PRAYERS), Spell.ICE_BARRAGE),
    "blood_barrage": lambda: casting(pure(PURE_MAGIC, MAGIC_PRAYERS), Spell.BLOOD_BARRAGE),
    "nightmare": lambda: armed(pure(with_weapon(PURE_MAGIC, "Volatile nightmare staff"), MAGIC_PRAYERS)),
    "vesta": lambda: armed(make_player(with_weapon(MED_MELEE, "Vesta's longsword"), MED_LEVELS, ("Piety",))),
    "statius": lambda: armed(
        make_player(with_weapon(MED_MELEE, "Statius's warhammer"), MED_LEVELS, ("Piety",))
    ),
    "ags": lambda: armed(
        make_player(with_weapon(MED_MELEE, "Armadyl godsword", shield=""), MED_LEVELS, ("Piety",))
    ),
    "ancient_gs": lambda: armed(
        make_player(with_weapon(MED_MELEE, "Ancient godsword", shield=""), MED_LEVELS, ("Piety",))
    ),
    "granite_maul": lambda: _queued(pure(with_weapon(PURE_SPEC, "Granite maul"), MELEE_PRAYERS), 3),
    "morrigan": lambda: armed(pure(with_weapon(PURE_RANGED, "Morrigan's javelin"), RANGED_PRAYERS)),
    "dragon_knife": lambda: armed(pure(with_weapon(PURE_RANGED, "Dragon knife"), RANGED_PRAYERS)),
    "ballista": lambda: armed(
        pure(with_weapon(PURE_SPEC, "Heavy ballista", ammo="Dragon javelin"), RANGED_PRAYERS)
    ),
}


def _queued(p: PlayerState, n: int) -> PlayerState:
    p.gmaul_queued = n
    return p


def _fingerprint(o: AttackOutcome) -> tuple[object, ...]:
    return (
        o.method,
        o.energy_cost,
        o.attack_speed,
        o.freeze_ticks,
        o.heal,
        o.spell,
        tuple((tuple(h.damages), h.accurate, h.delay, h.style, h.effect) for h in o.hits),
    )


def _snapshot(attacker: PlayerState, defender: PlayerState) -> tuple[object, ...]:
    """The state an attack could be tempted to change (§6.1: the simulator applies the outcome)."""
    return tuple(
        (
            list(p.level),
            list(p.bonuses),
            p.special_energy,
            p.special_armed,
            p.gmaul_queued,
            p.selected_spell,
            set(p.prayers),
            list(p.timer_ticks),
            list(p.hit_queue),
            list(p.damage_queue),
            p.target,
        )
        for p in (attacker, defender)
    )


@pytest.mark.parametrize("name", sorted(ATTACKERS))
def test_create_hits_is_deterministic_and_pure(name: str) -> None:
    attacker, defender = ATTACKERS[name](), _defender()
    before = _snapshot(attacker, defender)
    runs = [
        [_fingerprint(create_hits(np.random.default_rng(seed), attacker, defender, 2)) for seed in range(20)]
        for _ in range(2)
    ]
    assert runs[0] == runs[1]
    assert _snapshot(attacker, defender) == before
    assert all(
        h.attacker is attacker for h in create_hits(np.random.default_rng(0), attacker, defender, 2).hits
    )


# Reference draw sequences of §16.6 phase B step 4, written out independently of the engine.
Replay = Callable[[np.random.Generator, PlayerState, PlayerState], None]


def _ordinary(g: np.random.Generator, p: float, low: int, high: int) -> bool:
    accurate = g.random() < p
    if accurate:
        g.integers(low, high + 1)
    return accurate


def _draws_plain(hits: int) -> Replay:
    def replay(g: np.random.Generator, a: PlayerState, d: PlayerState) -> None:
        method = combat_method(a)
        prof = attack_profile(a, d, method)
        for _ in range(hits):
            _ordinary(g, prof.hit_chance, prof.min_hit, prof.max_hit)

    return replay


def _draws_claws(g: np.random.Generator, a: PlayerState, d: PlayerState) -> None:
    prof = attack_profile(a, d, Method.DRAGON_CLAWS)
    for k in range(1, 5):
        if g.random() < prof.hit_chance:
            low, high = f.claw_total_range(k, prof.max_hit)
            g.integers(low, high + 1)
            return
    g.random()


def _draws_bolt(kind: str, guaranteed: bool) -> Replay:
    def replay(g: np.random.Generator, a: PlayerState, d: PlayerState) -> None:
        prof = attack_profile(a, d, combat_method(a))
        accurate = _ordinary(g, prof.hit_chance, 0, prof.max_hit)
        if kind == "dragonstone":
            if accurate and not guaranteed:
                g.random()
            return
        proc = True if guaranteed and accurate else g.random() < 0.05
        if kind == "diamond" and proc:
            g.integers(0, f.diamond_bolt_max_hit(prof.max_hit, False) + 1)

    return replay


def _draws_vesta(g: np.random.Generator, a: PlayerState, d: PlayerState) -> None:
    prof = attack_profile(a, d, Method.VESTAS_LONGSWORD)
    if g.random() < prof.hit_chance:
        g.integers(prof.min_hit, prof.max_hit + 1)
    else:
        g.random()


DRAW_SEQUENCES: dict[str, Replay] = {
    "scimitar": _draws_plain(1),
    "claws": _draws_claws,
    "dragon_dagger": _draws_plain(2),
    "zaryte_special": _draws_bolt("opal", guaranteed=True),
    "zaryte": _draws_bolt("opal", guaranteed=False),
    "diamond": _draws_bolt("diamond", guaranteed=False),
    "dragonstone": _draws_bolt("dragonstone", guaranteed=False),
    "dark_bow_special": _draws_plain(2),
    "dark_bow": _draws_plain(2),
    "ice_barrage": _draws_plain(1),
    "nightmare": _draws_plain(1),
    "vesta": _draws_vesta,
    "statius": _draws_plain(1),
    "granite_maul": _draws_plain(3),
    "dragon_knife": _draws_plain(2),
}


@pytest.mark.parametrize("name", sorted(DRAW_SEQUENCES))
def test_create_hits_makes_exactly_the_specified_draws(name: str) -> None:
    """After one attack the generator is where the §16.6 sequence leaves it: no extra or missing draws."""
    attacker = ATTACKERS[name]()
    for overhead in ((), ("Protect from Magic",)):
        defender = _defender(*overhead)
        for seed in range(60):
            used, reference = np.random.default_rng(seed), np.random.default_rng(seed)
            create_hits(used, attacker, defender, 3)
            DRAW_SEQUENCES[name](reference, attacker, defender)
            assert used.bit_generator.state == reference.bit_generator.state, (name, seed)


def test_hits_follow_their_rolls() -> None:
    """Damage values come from the draws in order: accuracy, then U[0, max] with 0 → 1 (§6.5)."""
    attacker, defender = ATTACKERS["scimitar"](), _defender()
    prof = attack_profile(attacker, defender, Method.MELEE)
    for seed in range(100):
        g = np.random.default_rng(seed)
        accurate = g.random() < prof.hit_chance
        damage = max(int(g.integers(0, prof.max_hit + 1)), 1) if accurate else 0
        hit = create_hits(np.random.default_rng(seed), attacker, defender, 1).hits[0]
        assert (hit.damages, hit.accurate, hit.delay, hit.style) == ([damage], accurate, 0, CombatStyle.MELEE)


def test_protection_prayer_and_splash() -> None:
    attacker = ATTACKERS["ice_barrage"]()
    unprotected, protected = _defender(), _defender("Protect from Magic")
    for seed in range(200):
        plain = create_hits(np.random.default_rng(seed), attacker, unprotected, 1)
        prayed = create_hits(np.random.default_rng(seed), attacker, protected, 1)
        hit = plain.hits[0]
        assert prayed.hits[0].damages == [f.protected_damage(hit.damages[0])]
        assert hit.accurate or hit.damages == [0]  # a splash
        assert plain.freeze_ticks == (32 if hit.accurate else 0)
        assert plain.spell is Spell.ICE_BARRAGE and plain.attack_speed == 5 and plain.energy_cost == 0


def test_blood_heal_uses_final_damage_and_zuriels() -> None:
    attacker = ATTACKERS["blood_barrage"]()
    zuriel = casting(pure(with_weapon(PURE_MAGIC, "Zuriel's staff"), MAGIC_PRAYERS), Spell.BLOOD_BARRAGE)
    defender = _defender("Protect from Magic")
    for seed in range(100):
        for caster, zuriels in ((attacker, False), (zuriel, True)):
            out = create_hits(np.random.default_rng(seed), caster, defender, 1)
            hit = out.hits[0]
            assert out.heal == (f.blood_heal(hit.damages[0], 25, zuriels) if hit.accurate else 0)
            assert out.freeze_ticks == 0


def test_zuriels_ice_accuracy() -> None:
    zuriel = pure(with_weapon(PURE_MAGIC, "Zuriel's staff"), MAGIC_PRAYERS)
    blood = attack_roll(casting(zuriel, Spell.BLOOD_BARRAGE), Method.MAGIC_SPELL)
    ice = attack_roll(casting(zuriel, Spell.ICE_BARRAGE), Method.MAGIC_SPELL)
    assert ice == blood * 11 // 10


def test_energy_costs_and_hit_counts() -> None:
    defender = _defender()
    rng = np.random.default_rng(1)
    maul = create_hits(rng, ATTACKERS["granite_maul"](), defender, 1)
    assert (maul.method, maul.energy_cost, len(maul.hits), Method.GRANITE_MAUL.is_instant) == (
        Method.GRANITE_MAUL,
        150,
        3,
        True,
    )
    lone = armed(pure(with_weapon(PURE_SPEC, "Granite maul"), MELEE_PRAYERS))
    out = create_hits(rng, lone, defender, 1)
    assert (out.method, out.energy_cost, len(out.hits)) == (Method.GRANITE_MAUL, 50, 1)
    dagger = create_hits(rng, ATTACKERS["dragon_dagger"](), defender, 1)
    assert (dagger.energy_cost, [h.delay for h in dagger.hits]) == (25, [0, 0])
    claws = create_hits(rng, ATTACKERS["claws"](), defender, 1)
    assert (claws.energy_cost, len(claws.hits), len(claws.hits[0].damages)) == (50, 1, 4)
    knife = create_hits(rng, ATTACKERS["dragon_knife"](), defender, 4)
    assert (knife.energy_cost, [h.delay for h in knife.hits], knife.attack_speed) == (25, [1, 1], 2)
    ballista = create_hits(rng, ATTACKERS["ballista"](), defender, 7)
    assert (ballista.energy_cost, [h.delay for h in ballista.hits]) == (65, [2])
    dark_bow = create_hits(rng, ATTACKERS["dark_bow_special"](), defender, 5)
    assert (dark_bow.energy_cost, [h.delay for h in dark_bow.hits], dark_bow.attack_speed) == (55, [2, 3], 8)
    scimitar = create_hits(rng, ATTACKERS["scimitar"](), defender, 1)
    assert (scimitar.energy_cost, scimitar.attack_speed) == (0, 4)


def test_dark_bow_special_clamp_before_prayer() -> None:
    attacker, defender = ATTACKERS["dark_bow_special"](), _defender("Protect from Missiles")
    seen = set()
    for seed in range(300):
        for hit in create_hits(np.random.default_rng(seed), attacker, defender, 1).hits:
            assert hit.accurate and 4 <= hit.damages[0] <= 28  # [8, 48] × 0.6, floored
            seen.add(hit.damages[0])
    assert 4 in seen


def test_effect_tags() -> None:
    """After-hit effects are tagged when they will start (§4.5 step 4, §6.9)."""
    defender = _defender()
    for name, tag in (
        ("statius", "statius"),
        ("ancient_gs", "ags_sacrifice"),
        ("morrigan", "morrigan_bleed"),
    ):
        attacker = ATTACKERS[name]()
        tags = set()
        for seed in range(100):
            hit = create_hits(np.random.default_rng(seed), attacker, defender, 1).hits[0]
            expected = tag if (hit.accurate or name == "morrigan") and hit.damages[0] > 0 else ""
            assert hit.effect == expected
            tags.add(hit.effect)
        assert tag in tags
    scimitar = create_hits(np.random.default_rng(0), ATTACKERS["scimitar"](), defender, 1)
    assert scimitar.hits[0].effect == ""


def test_vesta_and_statius_profiles() -> None:
    """§6.9 custom ranges: Vesta rolls against a quarter of the stab defence roll."""
    defender = _defender()
    vesta = ATTACKERS["vesta"]()
    prof = attack_profile(vesta, defender, Method.VESTAS_LONGSWORD)
    melee = max_hit(vesta, Method.MELEE)
    assert (prof.min_hit, prof.max_hit) == f.vesta_damage_range(melee)
    assert prof.defence_bonus_type == "stab"
    assert prof.defence_roll == defence_roll_against(defender, StyleType.STAB) // 4
    statius = ATTACKERS["statius"]()
    prof = attack_profile(statius, defender, Method.STATIUS_WARHAMMER)
    assert (prof.min_hit, prof.max_hit) == f.statius_damage_range(max_hit(statius, Method.MELEE))


# ---- Monte Carlo: create_hits agrees with expected_damage -----------------------------------------
MONTE_CARLO = ["claws", "zaryte_special", "diamond", "dragon_dagger", "dark_bow_special", "acb_opal", "vesta"]
SAMPLES = 10_000


@pytest.mark.parametrize("name", MONTE_CARLO)
@pytest.mark.parametrize(
    "overhead", [(), ("Protect from Melee", "Protect from Missiles")], ids=["noprot", "prot"]
)
def test_mean_damage_matches_expected(name: str, overhead: tuple[str, ...]) -> None:
    attacker = ATTACKERS[name]()
    defender = _defender()
    if overhead:
        defender.prayers.add(
            prayer_named(overhead[0] if combat_method(attacker).style is CombatStyle.MELEE else overhead[1])
        )
    rng = np.random.default_rng(12345)
    totals = np.array(
        [sum(h.total for h in create_hits(rng, attacker, defender, 1).hits) for _ in range(SAMPLES)]
    )
    expected = expected_damage(attacker, defender, combat_method(attacker))
    standard_error = totals.std() / math.sqrt(SAMPLES)
    assert abs(totals.mean() - expected) < 5 * standard_error, (totals.mean(), expected)
    prof = attack_profile(attacker, defender, combat_method(attacker))
    assert totals.max() <= prof.max_total_damage_per_attack
