"""The combat engine of spec §6: which method an attack uses, its rolls, and the hits it creates.

`create_hits` performs the random rolls of one attack in exactly the draw order of §16.6 (phase B
step 4) and returns the hits with their damage fixed (§6.5); it never mutates either player, so the
simulator stays in charge of timers, energy, freezes, heals and queues. `attack_profile` gives the
same attack analytically (rolls, hit chance, max hit, expected damage after the protection prayer),
the way the OSRS wiki DPS calculator's player-vs-player model defines them; the golden cases of
`tests/data/combat-golden.jsonl` pin it.

Random draws (§16.6): accuracy `R()` is `rng.random()` (accurate iff `R() < p`), `U[a, b]` is
`rng.integers(a, b + 1)` and a chance `p` is `rng.random() < p`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

import numpy as np

from envs.nh.formulas import (
    ACCURATE_STANCE_BONUS,
    AGGRESSIVE_STANCE_BONUS,
    ARMADYL_CROSSBOW_PROC_MULTIPLIER,
    BALLISTA_BASE_DELAY,
    BALLISTA_SPECIAL_FACTOR,
    CLAW_ALL_MISS_CHANCE,
    CLAW_ALL_MISS_HIT,
    CLAW_ALL_MISS_ZERO,
    CLAW_HITSPLATS,
    CONTROLLED_STANCE_BONUS,
    CROSSBOW_SPECIAL_ACCURACY,
    DARK_BOW_SPECIAL_MIN_HIT,
    DEFENSIVE_STANCE_BONUS,
    DIAMOND_PROC_CHANCE,
    DRAGON_DAGGER_FACTOR,
    DRAGONSTONE_PROC_CHANCE,
    EFFECTIVE_LEVEL_BASE,
    GODSWORD_ACCURACY,
    MELEE_HIT_DELAY,
    NIGHTMARE_STAFF_ACCURACY,
    OPAL_PROC_CHANCE,
    ZURIELS_ICE_ACCURACY,
    Factor,
    accurate_zero_to_one,
    ancient_godsword_max_hit,
    armadyl_godsword_max_hit,
    ballista_hit_delay,
    ballista_special_max_hit,
    base_max_hit,
    blood_heal,
    claw_hitsplats,
    claw_total_range,
    crossbow_hit_delay,
    dark_bow_second_arrow_delay,
    dark_bow_special_clamp,
    dark_bow_special_max_hit,
    dharok_damage,
    diamond_bolt_max_hit,
    dragon_dagger_max_hit,
    dragonstone_bolt_bonus,
    effective_level,
    hit_chance,
    int_multiply,
    magic_defence_level,
    magic_effective_level,
    magic_hit_delay,
    magic_max_hit,
    nightmare_staff_spell_max,
    opal_bolt_bonus,
    protected_damage,
    roll,
    statius_damage_range,
    thrown_hit_delay,
    vesta_damage_range,
    vesta_defence_roll,
)
from envs.nh.items import (
    RANGED_RANGE_TILES,
    Bonus,
    CombatStyle,
    FightStyle,
    Ids,
    Slot,
    Stance,
    StyleType,
    WeaponClass,
    is_ranged_weapon,
)
from envs.nh.prayers import PRAYERS, Prayer, prayer_multiplied
from envs.nh.spells import MAGIC_RANGE_TILES, SPELL_ATTACK_SPEED_TICKS, SPELLS, Spell
from envs.nh.state import PendingHit, PlayerState, Skill

MELEE_RANGE_TILES = 1  # §6.2 (2 while both players move: the reach test's rule, §11.6)
NIGHTMARE_STAFF_SPEED_TICKS = 5  # §6.2: nightmare-staff special
UNARMED_ATTACK_SPEED_TICKS = 4  # §6.2 [REF] UNARMED class speed; no loadout fights without a weapon
RAPID_SPEED_REDUCTION_TICKS = 1  # §6.2: rapid style ⇒ weapon speed − 1
GRANITE_MAUL_SPEC_COST = 50  # §6.9: per queued spec
DRAGON_DAGGER_SPEC_HITS = 2  # §6.6, §6.9
DRAGON_KNIFE_SPEC_HITS = 2  # §6.6, §6.9


class Method(Enum):
    """Combat method of one attack (spec §6.1): the three plain methods and one per special (§6.9).

    The value is `(code, style, is_special)`; `style` is the family whose protection prayer and
    defence apply, `is_special` whether energy is spent.
    """

    MELEE = (0, CombatStyle.MELEE, False)
    RANGED = (1, CombatStyle.RANGED, False)
    MAGIC_SPELL = (2, CombatStyle.MAGIC, False)
    DRAGON_DAGGER = (3, CombatStyle.MELEE, True)
    DRAGON_CLAWS = (4, CombatStyle.MELEE, True)
    ARMADYL_GODSWORD = (5, CombatStyle.MELEE, True)
    ANCIENT_GODSWORD = (6, CombatStyle.MELEE, True)
    GRANITE_MAUL = (7, CombatStyle.MELEE, True)
    VESTAS_LONGSWORD = (8, CombatStyle.MELEE, True)
    STATIUS_WARHAMMER = (9, CombatStyle.MELEE, True)
    DARK_BOW = (10, CombatStyle.RANGED, True)
    ARMADYL_CROSSBOW = (11, CombatStyle.RANGED, True)
    ZARYTE_CROSSBOW = (12, CombatStyle.RANGED, True)
    BALLISTA = (13, CombatStyle.RANGED, True)
    MORRIGANS_JAVELIN = (14, CombatStyle.RANGED, True)
    DRAGON_KNIFE = (15, CombatStyle.RANGED, True)
    NIGHTMARE_STAFF = (16, CombatStyle.MAGIC, True)

    def __init__(self, code: int, style: CombatStyle, is_special: bool) -> None:
        self.code = code
        self.style = style
        self.is_special = is_special

    @property
    def is_instant(self) -> bool:
        """The granite-maul special ignores the ATTACK timer and does not re-register it (§6.9)."""
        return self is Method.GRANITE_MAUL


# ---- §6.9 special table (data) ---------------------------------------------------------------------
_SPECIAL_ROWS: tuple[tuple[frozenset[int], Method, int], ...] = (
    # weapon ids, method, energy cost (§6.9 table, ids Appendix A / §12.8)
    (Ids.DRAGON_DAGGERS, Method.DRAGON_DAGGER, 25),
    (frozenset({Ids.DRAGON_CLAWS}), Method.DRAGON_CLAWS, 50),
    (frozenset({Ids.ARMADYL_GODSWORD}), Method.ARMADYL_GODSWORD, 50),
    (frozenset({Ids.ANCIENT_GODSWORD}), Method.ANCIENT_GODSWORD, 50),
    (frozenset({Ids.GRANITE_MAUL}), Method.GRANITE_MAUL, GRANITE_MAUL_SPEC_COST),
    (frozenset({Ids.VESTAS_LONGSWORD}), Method.VESTAS_LONGSWORD, 25),
    (frozenset({Ids.STATIUS_WARHAMMER}), Method.STATIUS_WARHAMMER, 35),
    (frozenset({Ids.DARK_BOW}), Method.DARK_BOW, 55),
    (frozenset({Ids.ARMADYL_CROSSBOW}), Method.ARMADYL_CROSSBOW, 50),
    (frozenset({Ids.ZARYTE_CROSSBOW}), Method.ZARYTE_CROSSBOW, 75),
    (frozenset({Ids.LIGHT_BALLISTA, Ids.HEAVY_BALLISTA}), Method.BALLISTA, 65),
    (frozenset({Ids.MORRIGANS_JAVELIN}), Method.MORRIGANS_JAVELIN, 50),
    (Ids.DRAGON_KNIVES, Method.DRAGON_KNIFE, 25),  # QUIRK 17 DROP: 22810 included
    (frozenset({Ids.VOLATILE_NIGHTMARE_STAFF}), Method.NIGHTMARE_STAFF, 55),
)
SPECIALS: dict[int, tuple[Method, int]] = {
    wid: (method, cost) for ids, method, cost in _SPECIAL_ROWS for wid in ids
}
"""Weapon id → (special method, energy cost) (spec §6.9). The Rune crossbow has none."""


def _special_weapons(style: CombatStyle) -> frozenset[int]:
    return frozenset(wid for wid, (method, _) in SPECIALS.items() if method.style is style)


MELEE_SPECIAL_WEAPONS = _special_weapons(CombatStyle.MELEE)
"""The environment's melee-special candidates (§6.9, §12.8)."""
RANGED_SPECIAL_WEAPONS = _special_weapons(CombatStyle.RANGED)
"""Ranged weapons with a special (§6.9, §12.8); the Rune crossbow is not one."""
MAGIC_SPECIAL_WEAPONS = _special_weapons(CombatStyle.MAGIC)
"""Only the Volatile nightmare staff (§6.9, §12.8)."""

# Attack-roll multiplier of each special (§6.3, §6.9); absent = ×1.
_SPECIAL_ACCURACY: dict[Method, Factor] = {
    Method.DRAGON_DAGGER: DRAGON_DAGGER_FACTOR,
    Method.ARMADYL_GODSWORD: GODSWORD_ACCURACY,
    Method.ANCIENT_GODSWORD: GODSWORD_ACCURACY,
    Method.ARMADYL_CROSSBOW: CROSSBOW_SPECIAL_ACCURACY,
    Method.ZARYTE_CROSSBOW: CROSSBOW_SPECIAL_ACCURACY,
    Method.BALLISTA: BALLISTA_SPECIAL_FACTOR,
    Method.NIGHTMARE_STAFF: NIGHTMARE_STAFF_ACCURACY,
}
# Defence bonus a special rolls against instead of the current style's (§6.3, §6.9).
_SPECIAL_DEFENCE_STYLE: dict[Method, StyleType] = {
    Method.DRAGON_DAGGER: StyleType.SLASH,
    Method.DRAGON_CLAWS: StyleType.SLASH,
    Method.ARMADYL_GODSWORD: StyleType.SLASH,
    Method.ANCIENT_GODSWORD: StyleType.SLASH,
    Method.VESTAS_LONGSWORD: StyleType.STAB,
}
# Max-hit rule of a special on the ordinary (melee or ranged) max `base` (§6.4); absent = base.
_SPECIAL_MAX_HIT: dict[Method, Callable[[int], int]] = {
    Method.DRAGON_DAGGER: dragon_dagger_max_hit,
    Method.ARMADYL_GODSWORD: armadyl_godsword_max_hit,
    Method.ANCIENT_GODSWORD: ancient_godsword_max_hit,
    Method.BALLISTA: ballista_special_max_hit,
    Method.DARK_BOW: dark_bow_special_max_hit,
}
# Specials that replace the damage roll by their own range from the melee max M (§6.9).
_SPECIAL_DAMAGE_RANGE: dict[Method, Callable[[int], tuple[int, int]]] = {
    Method.VESTAS_LONGSWORD: vesta_damage_range,
    Method.STATIUS_WARHAMMER: statius_damage_range,
}

_PROTECTION_PRAYER: dict[CombatStyle, Prayer] = {  # §6.5: the overhead matching the hit's style
    CombatStyle.MELEE: Prayer.PROTECT_FROM_MELEE,
    CombatStyle.RANGED: Prayer.PROTECT_FROM_MISSILES,
    CombatStyle.MAGIC: Prayer.PROTECT_FROM_MAGIC,
}
_DEFENCE_BONUS: dict[StyleType, Bonus] = {t: t.defence_bonus for t in StyleType}  # §10.3: attack index + 5


def _prayer_table(field: str, neutral: int) -> tuple[tuple[Prayer, int], ...]:
    """Prayers that change `field`, in the listed order of §6.3/§6.4 (the enum order)."""
    return tuple(
        (prayer, getattr(PRAYERS[prayer], field))
        for prayer in sorted(PRAYERS)
        if getattr(PRAYERS[prayer], field) != neutral
    )


_ATTACK_PRAYERS = _prayer_table("attack_pct", 100)
_STRENGTH_PRAYERS = _prayer_table("strength_pct", 100)
_DEFENCE_PRAYERS = _prayer_table("defence_pct", 100)
_RANGED_ACC_PRAYERS = _prayer_table("ranged_acc_pct", 100)
_RANGED_STR_PRAYERS = _prayer_table("ranged_str_pct", 100)
_MAGIC_PRAYERS = _prayer_table("magic_pct", 100)
_MAGIC_DAMAGE_PRAYERS = _prayer_table("magic_damage_tenths", 0)


def _active(p: PlayerState, table: tuple[tuple[Prayer, int], ...], neutral: int = 100) -> int:
    """Value of the first active prayer of `table` (§6.3: first match in the listed order)."""
    prayers = p.prayers
    for prayer, value in table:
        if prayer in prayers:
            return value
    return neutral


# ---- §6.1 method, §6.2 range / speed / delay --------------------------------------------------------
def special_for_weapon(item_id: int) -> tuple[Method, int] | None:
    """The special (method, energy cost) bound to a weapon id, or None (spec §6.9)."""
    return SPECIALS.get(item_id)


def combat_method(p: PlayerState) -> Method:
    """Which combat method an attack uses, evaluated at attack time (spec §6.1)."""
    if p.selected_spell is not None:
        return Method.MAGIC_SPELL
    wid = p.equipment[Slot.WEAPON]
    if p.special_armed or (p.gmaul_queued > 0 and wid == Ids.GRANITE_MAUL):
        special = SPECIALS.get(wid)
        if special is not None:
            return special[0]
    if is_ranged_weapon(p.weapon):
        return Method.RANGED
    return Method.MELEE


def _weapon_class(p: PlayerState) -> WeaponClass:
    weapon = p.weapon
    if weapon is None or weapon.weapon_class is None:
        return WeaponClass.UNARMED
    return weapon.weapon_class


def _style(p: PlayerState) -> FightStyle:
    return p.style if p.style is not None else _weapon_class(p).default_style


def attack_range(p: PlayerState, method: Method) -> int:
    """Maximum Chebyshev distance of an attack (spec §6.2): melee 1, magic 10, ranged by weapon."""
    if method.style is CombatStyle.MAGIC:
        return MAGIC_RANGE_TILES
    if method.style is CombatStyle.RANGED:
        return RANGED_RANGE_TILES[_weapon_class(p)]
    return MELEE_RANGE_TILES


def attack_speed(p: PlayerState, method: Method) -> int:
    """ATTACK-timer value after an attack (spec §6.2).

    Spells and the nightmare-staff special 5; otherwise the weapon's own speed, minus 1 on a rapid
    style (the dark-bow special included: 8). The granite-maul special does not register it (§6.9,
    `Method.is_instant`); its value here is the maul's ordinary speed.
    """
    if method is Method.MAGIC_SPELL:
        return SPELL_ATTACK_SPEED_TICKS
    if method is Method.NIGHTMARE_STAFF:
        return NIGHTMARE_STAFF_SPEED_TICKS
    weapon = p.weapon
    speed = weapon.attack_speed if weapon is not None else UNARMED_ATTACK_SPEED_TICKS
    if _style(p).stance is Stance.RAPID:
        speed -= RAPID_SPEED_REDUCTION_TICKS
    return speed


def _ranged_delays(weapon_class: WeaponClass, distance: int) -> tuple[int, ...]:
    if weapon_class is WeaponClass.CROSSBOW:
        return (crossbow_hit_delay(distance),)
    if weapon_class is WeaponClass.BALLISTA:
        return (ballista_hit_delay(distance),)
    if weapon_class is WeaponClass.DARK_BOW:  # two arrows, normal attack and special (§6.9)
        return crossbow_hit_delay(distance), dark_bow_second_arrow_delay(distance)
    return (thrown_hit_delay(distance),)  # knife, javelin


def hit_delay(
    method: Method, weapon_class: WeaponClass, distance: int, queued_specs: int = 1
) -> tuple[int, ...]:
    """Delay of every hit the attack creates, in creation order (spec §6.2, §6.6, §6.9).

    One entry per hit: two for the dark bow (normal and special), the Dragon-dagger and
    Dragon-knife specials, `queued_specs` for the granite-maul special, one for the rest (the claws'
    four hitsplats are one hit). The ballista special's delay is fixed at 2.
    """
    if method.style is CombatStyle.MAGIC:
        return (magic_hit_delay(distance),)
    if method is Method.DRAGON_DAGGER:
        return (MELEE_HIT_DELAY,) * DRAGON_DAGGER_SPEC_HITS
    if method is Method.GRANITE_MAUL:
        return (MELEE_HIT_DELAY,) * queued_specs
    if method.style is CombatStyle.MELEE:  # claws too: one hit object holding four hitsplats
        return (MELEE_HIT_DELAY,)
    if method is Method.BALLISTA:
        return (BALLISTA_BASE_DELAY,)
    if method is Method.DRAGON_KNIFE:
        return (thrown_hit_delay(distance),) * DRAGON_KNIFE_SPEC_HITS
    return _ranged_delays(weapon_class, distance)


# ---- §6.3 rolls -----------------------------------------------------------------------------------
def _melee_stance_attack(stance: Stance) -> int:
    return ACCURATE_STANCE_BONUS if stance is Stance.ACCURATE else _controlled(stance)


def _melee_stance_strength(stance: Stance) -> int:
    return AGGRESSIVE_STANCE_BONUS if stance is Stance.AGGRESSIVE else _controlled(stance)


def _controlled(stance: Stance) -> int:
    return CONTROLLED_STANCE_BONUS if stance is Stance.CONTROLLED else 0


def _ranged_stance(stance: Stance) -> int:
    """Accurate ranged style: +3 to both accuracy and strength (§6.2)."""
    return ACCURATE_STANCE_BONUS if stance is Stance.ACCURATE else 0


def _defence_stance(stance: Stance) -> int:
    """stanceDef: defensive 3, long-range 3, controlled 1 (§6.3)."""
    if stance in (Stance.DEFENSIVE, Stance.LONGRANGE):
        return DEFENSIVE_STANCE_BONUS
    return _controlled(stance)


def _magic_attack_roll(p: PlayerState, method: Method) -> int:
    eff = magic_effective_level(p.level[Skill.MAGIC], _active(p, _MAGIC_PRAYERS))
    a = roll(eff, p.bonuses[Bonus.MAGIC_ATTACK])
    spell = p.selected_spell
    if method is Method.MAGIC_SPELL and spell is not None and SPELLS[spell].is_ice and _wields_zuriels(p):
        a = int_multiply(a, ZURIELS_ICE_ACCURACY)
    return a


def _wields_zuriels(p: PlayerState) -> bool:
    return p.equipment[Slot.WEAPON] == Ids.ZURIELS_STAFF


def _ranged_attack_roll(p: PlayerState) -> int:
    eff = effective_level(
        p.level[Skill.RANGED], _active(p, _RANGED_ACC_PRAYERS), _ranged_stance(_style(p).stance)
    )
    return roll(eff, p.bonuses[Bonus.RANGED_ATTACK])


def _melee_attack_roll(p: PlayerState) -> int:
    style = _style(p)
    eff = effective_level(
        p.level[Skill.ATTACK], _active(p, _ATTACK_PRAYERS), _melee_stance_attack(style.stance)
    )
    return roll(eff, p.bonuses[style.style_type.value])


def attack_roll(attacker: PlayerState, method: Method) -> int:
    """Attack roll of `method` (spec §6.3), special accuracy multipliers (§6.9) included."""
    if method.style is CombatStyle.MAGIC:
        a = _magic_attack_roll(attacker, method)
    elif method.style is CombatStyle.RANGED:
        a = _ranged_attack_roll(attacker)
    else:
        a = _melee_attack_roll(attacker)
    factor = _SPECIAL_ACCURACY.get(method)
    return int_multiply(a, factor) if factor is not None else a


def defence_roll_against(defender: PlayerState, style_type: StyleType) -> int:
    """The defender's defence roll against one bonus type (spec §6.3).

    Also what the scripted baseline compares per style (§18.3 rule 6, melee against slash).
    """
    stance = _defence_stance(_style(defender).stance)
    def_level = prayer_multiplied(defender.level[Skill.DEFENCE], _active(defender, _DEFENCE_PRAYERS))
    bonus = defender.bonuses[_DEFENCE_BONUS[style_type]]
    if style_type is StyleType.MAGIC:
        mag_level = prayer_multiplied(defender.level[Skill.MAGIC], _active(defender, _MAGIC_PRAYERS))
        return roll(magic_defence_level(mag_level, def_level, stance), bonus)
    return roll(def_level + stance + EFFECTIVE_LEVEL_BASE, bonus)


def defence_style(method: Method, attacker: PlayerState) -> StyleType:
    """The bonus type an attack rolls against (spec §6.3, §6.9 defence column)."""
    if method.style is CombatStyle.MAGIC:
        return StyleType.MAGIC
    if method.style is CombatStyle.RANGED:
        return StyleType.RANGED
    special = _SPECIAL_DEFENCE_STYLE.get(method)
    return special if special is not None else _style(attacker).style_type


def defence_roll(defender: PlayerState, method: Method, attacker: PlayerState) -> int:
    """Defence roll against `attacker`'s `method` (spec §6.3); Vesta's special: `floor(D_stab / 4)`."""
    d = defence_roll_against(defender, defence_style(method, attacker))
    return vesta_defence_roll(d) if method is Method.VESTAS_LONGSWORD else d


# ---- §6.4 max hits --------------------------------------------------------------------------------
def _melee_base_max(p: PlayerState) -> int:
    stance = _melee_stance_strength(_style(p).stance)
    eff = effective_level(p.level[Skill.STRENGTH], _active(p, _STRENGTH_PRAYERS), stance)
    return base_max_hit(eff, p.bonuses[Bonus.MELEE_STRENGTH])


def _ranged_base_max(p: PlayerState) -> int:
    eff = effective_level(
        p.level[Skill.RANGED], _active(p, _RANGED_STR_PRAYERS), _ranged_stance(_style(p).stance)
    )
    return base_max_hit(eff, p.bonuses[Bonus.RANGED_STRENGTH])


def _magic_damage_tenths(p: PlayerState) -> int:
    """Equipment magic damage plus the active magic prayer's (§6.4), tenths of a percent."""
    return p.bonuses[Bonus.MAGIC_DAMAGE_TENTHS] + _active(p, _MAGIC_DAMAGE_PRAYERS, 0)


def _magic_max(p: PlayerState, method: Method) -> int:
    if method is Method.NIGHTMARE_STAFF:
        spell_max = nightmare_staff_spell_max(p.level[Skill.MAGIC])
    else:
        if p.selected_spell is None:
            raise ValueError("MAGIC_SPELL needs a selected spell; select one before asking for its max hit")
        spell_max = SPELLS[p.selected_spell].max_hit
    return magic_max_hit(spell_max, _magic_damage_tenths(p))


def damage_range(attacker: PlayerState, method: Method) -> tuple[int, int]:
    """`(low, high)` of one accurate hit's damage roll `U[low, high]` (spec §6.4, §6.9).

    `high` is the max hit; `low` is 0 except for Vesta's and Statius's specials. For Dragon claws it
    is `(0, M)`, the claws' ordinary max from which the claw pattern starts.
    """
    if method.style is CombatStyle.MAGIC:
        return 0, _magic_max(attacker, method)
    base = _ranged_base_max(attacker) if method.style is CombatStyle.RANGED else _melee_base_max(attacker)
    own_range = _SPECIAL_DAMAGE_RANGE.get(method)
    if own_range is not None:
        return own_range(base)
    rule = _SPECIAL_MAX_HIT.get(method)
    return 0, rule(base) if rule is not None else base


def max_hit(attacker: PlayerState, method: Method) -> int:
    """Max hit of one hit of `method` (spec §6.4; claws: M; Vesta/Statius: top of their range)."""
    return damage_range(attacker, method)[1]


# ---- hit creation ---------------------------------------------------------------------------------
class _Bolt(Enum):
    OPAL = 0
    DIAMOND = 1
    DRAGONSTONE = 2


_BOLT_KINDS: dict[int, _Bolt] = {
    **dict.fromkeys(Ids.OPAL_BOLTS, _Bolt.OPAL),
    **dict.fromkeys(Ids.DIAMOND_BOLTS, _Bolt.DIAMOND),
    **dict.fromkeys(Ids.DRAGONSTONE_BOLTS, _Bolt.DRAGONSTONE),
}
_BOLT_CHANCE: dict[_Bolt, float] = {
    _Bolt.OPAL: OPAL_PROC_CHANCE,
    _Bolt.DIAMOND: DIAMOND_PROC_CHANCE,
    _Bolt.DRAGONSTONE: DRAGONSTONE_PROC_CHANCE,
}


@dataclass(frozen=True, slots=True)
class _BoltEffect:
    """The enchanted-bolt effect of a crossbow attack (§6.8), resolved for one attack."""

    kind: _Bolt
    chance: float  # proc chance of one roll (×2 on the Armadyl-crossbow special)
    guaranteed: bool  # Zaryte special: proc without a roll when the hit is accurate
    bonus: int  # opal / dragonstone damage added (dragonstone: 0 against Protect from Magic)
    fresh_max: int  # diamond: the fresh roll's max


def _bolt_effect(
    attacker: PlayerState, defender: PlayerState, method: Method, hit_max: int
) -> _BoltEffect | None:
    """Bolt effect while a crossbow is wielded (§6.8); None without enchanted bolts."""
    weapon = attacker.weapon
    if weapon is None or weapon.weapon_class is not WeaponClass.CROSSBOW:
        return None
    kind = _BOLT_KINDS.get(attacker.equipment[Slot.AMMO])
    if kind is None:
        return None
    zaryte = weapon.id == Ids.ZARYTE_CROSSBOW
    level = attacker.level[Skill.RANGED]
    chance = _BOLT_CHANCE[kind] * (
        ARMADYL_CROSSBOW_PROC_MULTIPLIER if method is Method.ARMADYL_CROSSBOW else 1
    )
    if kind is _Bolt.OPAL:
        bonus = opal_bolt_bonus(level, zaryte)
    elif kind is _Bolt.DRAGONSTONE and Prayer.PROTECT_FROM_MAGIC not in defender.prayers:
        bonus = dragonstone_bolt_bonus(level, zaryte)
    else:
        bonus = 0
    fresh_max = diamond_bolt_max_hit(hit_max, zaryte) if kind is _Bolt.DIAMOND else 0
    return _BoltEffect(kind, chance, method is Method.ZARYTE_CROSSBOW, bonus, fresh_max)


@dataclass(slots=True)
class _Attack:
    """Everything one attack's rolls need, resolved once from both players (§6.3–§6.10)."""

    method: Method
    attack_roll: int
    defence_roll: int
    chance: float
    low: int
    high: int
    protected: bool
    bolt: _BoltEffect | None
    dharok: tuple[int, int] | None  # (base HP, HP) of a full-Dharok's attacker (§6.10.6)
    clamp: bool  # dark-bow special arrows (§6.9)


def _wears_full_dharoks(p: PlayerState) -> bool:
    """Helm, platebody, platelegs and greataxe all worn (§6.10.6)."""
    return p.equipment[Slot.WEAPON] == Ids.DHAROKS_GREATAXE and all(p.wears(iid) for iid in Ids.DHAROKS_SET)


def _resolve(attacker: PlayerState, defender: PlayerState, method: Method) -> _Attack:
    a = attack_roll(attacker, method)
    d = defence_roll(defender, method, attacker)
    low, high = damage_range(attacker, method)
    dharok = (
        (attacker.base_hp, attacker.hp)
        if method.style is CombatStyle.MELEE and _wears_full_dharoks(attacker)
        else None
    )
    return _Attack(
        method=method,
        attack_roll=a,
        defence_roll=d,
        chance=hit_chance(a, d),
        low=low,
        high=high,
        protected=_PROTECTION_PRAYER[method.style] in defender.prayers,
        bolt=_bolt_effect(attacker, defender, method, high),
        dharok=dharok,
        clamp=method is Method.DARK_BOW,
    )


def _rolled_damage(rng: np.random.Generator, atk: _Attack) -> int:
    """Damage roll of an accurate hit: `U[low, high]`, accurate 0 → 1, then Dharok's (§6.5 steps 2–4)."""
    damage = accurate_zero_to_one(int(rng.integers(atk.low, atk.high + 1)))
    if atk.dharok is not None:
        damage = dharok_damage(damage, *atk.dharok)
    return damage


def _apply_bolt(rng: np.random.Generator, bolt: _BoltEffect, damage: int, accurate: bool) -> tuple[int, bool]:
    """Bolt proc roll and effect (§6.8); the roll is skipped when guaranteed or impossible (§16.6)."""
    if bolt.kind is _Bolt.DRAGONSTONE:
        if accurate and (bolt.guaranteed or rng.random() < bolt.chance):
            damage += bolt.bonus
        return damage, accurate
    if not ((bolt.guaranteed and accurate) or rng.random() < bolt.chance):
        return damage, accurate
    if bolt.kind is _Bolt.OPAL:
        return damage + bolt.bonus, accurate
    return accurate_zero_to_one(int(rng.integers(0, bolt.fresh_max + 1))), True


def _finish(atk: _Attack, damage: int) -> int:
    """Protection prayer, the last step of every hitsplat (§6.5 step 5)."""
    return protected_damage(damage) if atk.protected else damage


def _ordinary_hit(rng: np.random.Generator, atk: _Attack) -> tuple[int, bool]:
    """Accuracy roll, damage roll, bolt, dark-bow clamp and prayer of one hit (§6.5, §16.6)."""
    accurate = rng.random() < atk.chance
    damage = _rolled_damage(rng, atk) if accurate else 0
    if atk.bolt is not None:
        damage, accurate = _apply_bolt(rng, atk.bolt, damage, accurate)
    if atk.clamp:
        damage, accurate = dark_bow_special_clamp(damage), True
    return _finish(atk, damage), accurate


def _claws_hitsplats(rng: np.random.Generator, atk: _Attack) -> tuple[list[int], bool]:
    """Up to four accuracy rolls, then the total `X` or the 2/3 chance of `0, 0, 1, 1` (§6.9, §16.6)."""
    for k in range(1, CLAW_HITSPLATS + 1):
        if rng.random() < atk.chance:
            low, high = claw_total_range(k, atk.high)
            splats = claw_hitsplats(k, int(rng.integers(low, high + 1)))
            return [_finish(atk, s) for s in splats], True
    splats = CLAW_ALL_MISS_HIT if rng.random() < CLAW_ALL_MISS_CHANCE else CLAW_ALL_MISS_ZERO
    return [_finish(atk, s) for s in splats], False


def _vesta_hit(
    rng: np.random.Generator, atk: _Attack, attacker: PlayerState, defender: PlayerState
) -> tuple[int, bool]:
    """Vesta's special: accurate → own range; else one more ordinary accuracy roll, damage 0 (§6.9)."""
    if rng.random() < atk.chance:
        return _finish(atk, accurate_zero_to_one(int(rng.integers(atk.low, atk.high + 1)))), True
    retry = hit_chance(atk.attack_roll, defence_roll(defender, Method.MELEE, attacker))
    return 0, rng.random() < retry


def _effect(method: Method, damage: int, accurate: bool) -> str:
    """After-hit effect tag of a hit (§4.5 step 4), set only when the effect will start.

    Statius drain needs an accurate hit with damage > 0, the Ancient-godsword sacrifice an accurate
    hit, the Morrigan bleed damage > 0 (all fixed at creation, §6.5).
    """
    if method is Method.STATIUS_WARHAMMER and accurate and damage > 0:
        return "statius"
    if method is Method.ANCIENT_GODSWORD and accurate:
        return "ags_sacrifice"
    if method is Method.MORRIGANS_JAVELIN and damage > 0:
        return "morrigan_bleed"
    return ""


@dataclass(slots=True)
class AttackOutcome:
    """The result of one attack (spec §6.1, §6.5–§6.9); the simulator applies it.

    `attack_speed` is the ATTACK timer to register (not for `Method.is_instant`); `freeze_ticks` is
    the freeze of an accurate ice spell (0 otherwise; immunity and the target's timers are the
    simulator's, §6.7); `heal` the blood-spell heal of the caster (before the hitpoint cap).
    """

    method: Method
    hits: list[PendingHit]
    energy_cost: int
    attack_speed: int
    freeze_ticks: int = 0
    heal: int = 0
    spell: Spell | None = None


def _queued_specs(attacker: PlayerState, method: Method) -> int:
    """Granite maul: one hit per queued spec, at least one when merely armed (§6.9)."""
    return max(attacker.gmaul_queued, 1) if method is Method.GRANITE_MAUL else 1


def _energy_cost(attacker: PlayerState, method: Method) -> int:
    if not method.is_special:
        return 0
    return SPECIALS[attacker.equipment[Slot.WEAPON]][1] * _queued_specs(attacker, method)


def create_hits(
    rng: np.random.Generator, attacker: PlayerState, defender: PlayerState, distance: int
) -> AttackOutcome:
    """Perform the rolls of one attack and return its hits with damage fixed (spec §6, §16.6).

    Draws, per hit in creation order: accuracy `R()`, the damage roll if accurate, then (crossbows)
    the bolt-proc roll unless guaranteed or impossible, then a diamond proc's fresh roll. Claws,
    Vesta's longsword and Statius's warhammer make their own rolls (§16.6). Neither player is
    mutated; the protection prayer is the defender's at this moment (§6.5).

    Args:
        rng: the environment's generator (§16.6).
        attacker: the attacking player; its combat method is `combat_method(attacker)`.
        defender: the target.
        distance: Chebyshev distance at attack time, for the hit delays (§6.2).

    Returns:
        The method, the hits for the defender's hit queue, and what the simulator applies.
    """
    method = combat_method(attacker)
    atk = _resolve(attacker, defender, method)
    style = method.style
    hits: list[PendingHit] = []
    if method is Method.DRAGON_CLAWS:
        damages, accurate = _claws_hitsplats(rng, atk)
        hits.append(PendingHit(attacker, damages, accurate, MELEE_HIT_DELAY, style))
    else:
        delays = hit_delay(method, _weapon_class(attacker), distance, _queued_specs(attacker, method))
        for delay in delays:
            if method is Method.VESTAS_LONGSWORD:
                damage, accurate = _vesta_hit(rng, atk, attacker, defender)
            else:
                damage, accurate = _ordinary_hit(rng, atk)
            hits.append(
                PendingHit(attacker, [damage], accurate, delay, style, _effect(method, damage, accurate))
            )
    outcome = AttackOutcome(method, hits, _energy_cost(attacker, method), attack_speed(attacker, method))
    if method is Method.MAGIC_SPELL:
        _spell_effects(outcome, attacker)
    return outcome


def _spell_effects(outcome: AttackOutcome, attacker: PlayerState) -> None:
    """Freeze of an accurate ice spell, heal of an accurate blood spell (§6.7), at cast time."""
    spell = attacker.selected_spell
    assert spell is not None  # MAGIC_SPELL is only chosen with a selected spell (§6.1)
    outcome.spell = spell
    hit = outcome.hits[0]
    if not hit.accurate:
        return
    data = SPELLS[spell]
    outcome.freeze_ticks = data.freeze_ticks
    if data.heal_pct:
        outcome.heal = blood_heal(hit.damages[0], data.heal_pct, _wields_zuriels(attacker))


# ---- analytic profile -----------------------------------------------------------------------------
_Outcome = tuple[float, tuple[int, ...]]
"""(probability, hitsplats of one hit before the protection prayer)."""


def _uniform(low: int, high: int, weight: float) -> list[_Outcome]:
    """Accurate damage roll `U[low, high]` with 0 → 1 (§6.5), each value with `weight / n`."""
    each = weight / (high - low + 1)
    return [(each, (accurate_zero_to_one(r),)) for r in range(low, high + 1)]


def _accurate_outcomes(atk: _Attack, weight: float) -> list[_Outcome]:
    """Outcomes of an accurate hit: roll, Dharok's, bolt and clamp (§6.5 steps 2–4)."""
    rolled = _uniform(atk.low, atk.high, weight)
    if atk.dharok is not None:
        rolled = [(w, (dharok_damage(v[0], *atk.dharok),)) for w, v in rolled]
    if atk.clamp:
        return [(w, (dark_bow_special_clamp(v[0]),)) for w, v in rolled]
    bolt = atk.bolt
    if bolt is None:
        return rolled
    proc = 1.0 if bolt.guaranteed else bolt.chance
    plain = [(w * (1.0 - proc), v) for w, v in rolled]
    if bolt.kind is _Bolt.DIAMOND:
        return plain + _uniform(0, bolt.fresh_max, weight * proc)
    return plain + [(w * proc, (v[0] + bolt.bonus,)) for w, v in rolled]


def _missed_outcomes(atk: _Attack, weight: float) -> list[_Outcome]:
    """Outcomes of a missed accuracy roll: 0, a dark-bow 8, or an opal/diamond proc (§6.8, §6.9)."""
    if atk.clamp:
        return [(weight, (DARK_BOW_SPECIAL_MIN_HIT,))]
    bolt = atk.bolt
    if bolt is None or bolt.kind is _Bolt.DRAGONSTONE:
        return [(weight, (0,))]
    procs = weight * bolt.chance
    missed = [(weight - procs, (0,))]
    if bolt.kind is _Bolt.OPAL:
        return [*missed, (procs, (bolt.bonus,))]
    return missed + _uniform(0, bolt.fresh_max, procs)


def _claw_outcomes(atk: _Attack) -> list[_Outcome]:
    """Claw pattern distribution (§6.9): first success k = 1..4, else 0,0,1,1 with 2/3."""
    p = atk.chance
    out: list[_Outcome] = []
    for k in range(1, CLAW_HITSPLATS + 1):
        low, high = claw_total_range(k, atk.high)
        each = (1.0 - p) ** (k - 1) * p / (high - low + 1)
        out.extend((each, claw_hitsplats(k, x)) for x in range(low, high + 1))
    all_miss = (1.0 - p) ** CLAW_HITSPLATS
    out.append((all_miss * CLAW_ALL_MISS_CHANCE, CLAW_ALL_MISS_HIT))
    out.append((all_miss * (1.0 - CLAW_ALL_MISS_CHANCE), CLAW_ALL_MISS_ZERO))
    return out


def _hit_outcomes(atk: _Attack) -> list[_Outcome]:
    """Distribution of one hit of the attack (claws: its four hitsplats)."""
    if atk.method is Method.DRAGON_CLAWS:
        return _claw_outcomes(atk)
    p = atk.chance
    if atk.method is Method.VESTAS_LONGSWORD:  # a miss deals 0 whatever its second roll
        return [*_uniform(atk.low, atk.high, p), (1.0 - p, (0,))]
    return _accurate_outcomes(atk, p) + _missed_outcomes(atk, 1.0 - p)


@dataclass(frozen=True, slots=True)
class AttackProfile:
    """One attack seen analytically (the calculator's PvP model; golden cases).

    `hit_chance` is one accuracy roll's; `max_hit`/`min_hit` bound one accurate hit's damage roll
    (claws: M, the start of the pattern); `max_total_damage_per_attack` and `expected_damage` are
    per attack over all its hits, after bolts, clamps and the protection prayer.
    """

    attack_roll: int
    defence_roll: int
    defence_bonus_type: str
    hit_chance: float
    max_hit: int
    min_hit: int
    hits_per_attack: int
    max_total_damage_per_attack: int
    expected_damage: float


def attack_profile(attacker: PlayerState, defender: PlayerState, method: Method) -> AttackProfile:
    """Rolls, hit chance, max hit and expected damage of one attack with `method` (spec §6)."""
    atk = _resolve(attacker, defender, method)
    hits = len(hit_delay(method, _weapon_class(attacker), 0, _queued_specs(attacker, method)))
    outcomes = _hit_outcomes(atk)
    expected = sum(w * sum(_finish(atk, s) for s in splats) for w, splats in outcomes)
    largest = max(sum(_finish(atk, s) for s in splats) for w, splats in outcomes if w > 0.0)
    return AttackProfile(
        attack_roll=atk.attack_roll,
        defence_roll=atk.defence_roll,
        defence_bonus_type=defence_style(method, attacker).name.lower(),
        hit_chance=atk.chance,
        max_hit=atk.high,
        min_hit=atk.low,
        hits_per_attack=hits,
        max_total_damage_per_attack=hits * largest,
        expected_damage=hits * expected,
    )


def expected_damage(attacker: PlayerState, defender: PlayerState, method: Method) -> float:
    """Expected damage of one attack, summed over its hits, after the protection prayer (§6.5)."""
    return attack_profile(attacker, defender, method).expected_damage
