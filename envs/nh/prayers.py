"""Prayers: the table of spec §7.1, the exclusivity rules of §7.2 and the multipliers of §6.3/§6.4.

Multipliers are kept as integer percentages because the game's maths is `floor(level × p / 100)`
(spec §6.3, numeric precision); floating point gets e.g. level 100 × 1.15 wrong.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum


class Prayer(IntEnum):
    """Prayers the simulator knows (spec §7.1, plus the lower tiers named in §6.3/§6.4)."""

    THICK_SKIN = 0
    ROCK_SKIN = 1
    STEEL_SKIN = 2
    BURST_OF_STRENGTH = 3
    SUPERHUMAN_STRENGTH = 4
    ULTIMATE_STRENGTH = 5
    CLARITY_OF_THOUGHT = 6
    IMPROVED_REFLEXES = 7
    INCREDIBLE_REFLEXES = 8
    SHARP_EYE = 9
    HAWK_EYE = 10
    EAGLE_EYE = 11
    MYSTIC_WILL = 12
    MYSTIC_LORE = 13
    MYSTIC_MIGHT = 14
    PROTECT_FROM_MAGIC = 15
    PROTECT_FROM_MISSILES = 16
    PROTECT_FROM_MELEE = 17
    REDEMPTION = 18
    SMITE = 19
    CHIVALRY = 20
    PIETY = 21
    RIGOUR = 22
    AUGURY = 23


class Family(IntEnum):
    """Groups used by the exclusivity rules of spec §7.2."""

    DEFENCE = 0
    STRENGTH = 1
    ATTACK = 2
    RANGED = 3
    MAGIC = 4
    OVERHEAD = 5


@dataclass(frozen=True, slots=True)
class PrayerData:
    """One row of spec §7.1 (drain in points per minute) with its multipliers in percent."""

    prayer: Prayer
    level: int
    drain_per_minute: int
    families: frozenset[Family]
    attack_pct: int = 100  # melee Attack (§6.3)
    strength_pct: int = 100  # melee Strength (§6.4)
    defence_pct: int = 100  # Defence (§6.3)
    ranged_acc_pct: int = 100  # Ranged accuracy (§6.3)
    ranged_str_pct: int = 100  # Ranged strength (§6.4)
    magic_pct: int = 100  # Magic accuracy and magic defence (§6.3)
    magic_damage_tenths: int = 0  # magic damage bonus, tenths of a percent (§6.4)
    needs_defence_70: bool = False  # Piety, Rigour, Augury: base Defence ≥ 70 (§7.1)


_D, _S, _A, _R, _M, _O = Family.DEFENCE, Family.STRENGTH, Family.ATTACK, Family.RANGED, Family.MAGIC, Family.OVERHEAD


def _p(prayer: Prayer, level: int, drain: int, *families: Family, **kw: int | bool) -> PrayerData:
    return PrayerData(prayer, level, drain, frozenset(families), **kw)  # type: ignore[arg-type]


# Lower tiers and Chivalry (§6.3/§6.4) carry the live-game levels and drain rates; no loadout uses them.
PRAYERS: dict[Prayer, PrayerData] = {
    d.prayer: d
    for d in (
        _p(Prayer.THICK_SKIN, 1, 5, _D, defence_pct=105),
        _p(Prayer.ROCK_SKIN, 10, 10, _D, defence_pct=110),
        _p(Prayer.STEEL_SKIN, 28, 20, _D, defence_pct=115),
        _p(Prayer.BURST_OF_STRENGTH, 4, 5, _S, strength_pct=105),
        _p(Prayer.SUPERHUMAN_STRENGTH, 13, 10, _S, strength_pct=110),
        _p(Prayer.ULTIMATE_STRENGTH, 31, 20, _S, strength_pct=115),
        _p(Prayer.CLARITY_OF_THOUGHT, 7, 5, _A, attack_pct=105),
        _p(Prayer.IMPROVED_REFLEXES, 16, 10, _A, attack_pct=110),
        _p(Prayer.INCREDIBLE_REFLEXES, 34, 20, _A, attack_pct=115),
        _p(Prayer.SHARP_EYE, 8, 5, _R, ranged_acc_pct=105, ranged_str_pct=105),
        _p(Prayer.HAWK_EYE, 26, 10, _R, ranged_acc_pct=110, ranged_str_pct=110),
        _p(Prayer.EAGLE_EYE, 44, 20, _R, ranged_acc_pct=115, ranged_str_pct=115),
        _p(Prayer.MYSTIC_WILL, 9, 5, _M, magic_pct=105),
        _p(Prayer.MYSTIC_LORE, 27, 10, _M, magic_pct=110, magic_damage_tenths=10),
        _p(Prayer.MYSTIC_MIGHT, 45, 20, _M, magic_pct=115, magic_damage_tenths=20),
        _p(Prayer.PROTECT_FROM_MAGIC, 37, 20, _O),
        _p(Prayer.PROTECT_FROM_MISSILES, 40, 20, _O),
        _p(Prayer.PROTECT_FROM_MELEE, 43, 20, _O),
        _p(Prayer.REDEMPTION, 49, 10, _O),
        _p(Prayer.SMITE, 52, 30, _O),
        _p(Prayer.CHIVALRY, 60, 40, _D, _S, _A, attack_pct=115, strength_pct=118, defence_pct=120,
           needs_defence_70=False),
        _p(Prayer.PIETY, 70, 40, _D, _S, _A, attack_pct=120, strength_pct=123, defence_pct=125,
           needs_defence_70=True),
        _p(Prayer.RIGOUR, 74, 40, _D, _R, ranged_acc_pct=120, ranged_str_pct=123, defence_pct=125,
           needs_defence_70=True),
        _p(Prayer.AUGURY, 77, 40, _D, _M, magic_pct=125, defence_pct=125, magic_damage_tenths=40,
           needs_defence_70=True),
    )
}

OVERHEADS = (
    Prayer.PROTECT_FROM_MAGIC,
    Prayer.PROTECT_FROM_MISSILES,
    Prayer.PROTECT_FROM_MELEE,
    Prayer.SMITE,
    Prayer.REDEMPTION,
)
"""Values 1..5 of action head 11 (spec §5.1, §14.1)."""

PROTECTION_PRAYERS = OVERHEADS[:3]


def conflicts(prayer: Prayer) -> frozenset[Prayer]:
    """Prayers deactivated when `prayer` is switched on (spec §7.2)."""
    fams = PRAYERS[prayer].families
    if Family.OVERHEAD in fams:
        blocked = {Family.OVERHEAD}
    elif fams == {Family.DEFENCE}:
        blocked = {Family.DEFENCE}
    elif fams == {Family.STRENGTH}:
        blocked = {Family.STRENGTH, Family.RANGED, Family.MAGIC}
    elif fams == {Family.ATTACK}:
        blocked = {Family.ATTACK, Family.RANGED, Family.MAGIC}
    elif fams in ({Family.RANGED}, {Family.MAGIC}):
        blocked = {Family.STRENGTH, Family.ATTACK, Family.RANGED, Family.MAGIC}
    else:  # Piety, Rigour, Augury, Chivalry
        blocked = {Family.DEFENCE, Family.STRENGTH, Family.ATTACK, Family.RANGED, Family.MAGIC}
    return frozenset(p for p, d in PRAYERS.items() if p is not prayer and d.families & blocked)


CONFLICTS: dict[Prayer, frozenset[Prayer]] = {p: conflicts(p) for p in Prayer}


def prayer_multiplied(level: int, pct: int) -> int:
    """`floor(level × p / 100)` in exact integers (spec §6.3, numeric precision)."""
    return level * pct // 100
