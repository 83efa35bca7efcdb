"""Combat formulas of spec §6 as small pure functions in the game's integer maths.

Every function takes plain integers and returns an integer (or, for probabilities, a float) so it
can be tested alone against the worked numbers of Appendix C. Factors are exact fractions applied
with truncation (`Factor = (numerator, denominator)`, spec conventions "int-multiply"): the game
floors every product of an integer and a factor, and floating point gets some of them wrong
(§6.3, numeric precision). `envs.nh.combat` composes these into attack rolls, max hits and hits.
"""

from __future__ import annotations

from envs.nh.prayers import prayer_multiplied

Factor = tuple[int, int]
"""An exact multiplier `numerator / denominator`, applied with `int_multiply`."""

# ---- constants (spec section in the comment) -------------------------------------------------------
EFFECTIVE_LEVEL_BASE = 8  # §6.3, §6.4: "+ 8" of melee/ranged effective levels and defence levels
MAGIC_EFFECTIVE_LEVEL_BASE = 9  # §6.3: magic attack "+ 9"
EQUIPMENT_BONUS_OFFSET = 64  # §6.3, §6.4: "(bonus + 64)"
MAX_HIT_ROUNDING = 320  # §6.4: "(eff × (bonus + 64) + 320) / 640"
MAX_HIT_DIVISOR = 640  # §6.4
MAGIC_DAMAGE_DIVISOR_TENTHS = 1000  # §6.4: magic damage in tenths of a percent

ACCURATE_STANCE_BONUS = 3  # §6.2: accurate +3 Attack (melee) or +3 Ranged (accuracy and strength)
AGGRESSIVE_STANCE_BONUS = 3  # §6.2: aggressive +3 Strength (melee)
CONTROLLED_STANCE_BONUS = 1  # §6.2: controlled +1 Attack, Strength and Defence
DEFENSIVE_STANCE_BONUS = 3  # §6.2, §6.3: defensive and long-range +3 Defence

MAGIC_DEFENCE_MAGIC_FACTOR: Factor = (7, 10)  # §6.3: floor(7 × magLvl / 10)
MAGIC_DEFENCE_DEFENCE_FACTOR: Factor = (3, 10)  # §6.3: floor(3 × defLvl / 10)

PROTECTION_PRAYER_FACTOR: Factor = (60, 100)  # §6.5: dmg := floor(dmg × 0.6), last step, per hitsplat

DRAGON_DAGGER_FACTOR: Factor = (23, 20)  # §6.9: accuracy and max hit
GODSWORD_ACCURACY: Factor = (2, 1)  # §6.9: Armadyl and Ancient godsword
GODSWORD_MAX_FACTOR: Factor = (11, 10)  # §6.4: both godswords, first step
ARMADYL_GODSWORD_EXTRA_FACTOR: Factor = (5, 4)  # §6.4: Armadyl godsword, second step
CROSSBOW_SPECIAL_ACCURACY: Factor = (2, 1)  # §6.9: Zaryte and Armadyl crossbow
BALLISTA_SPECIAL_FACTOR: Factor = (5, 4)  # §6.9: accuracy and max hit
DARK_BOW_SPECIAL_MAX_FACTOR: Factor = (3, 2)  # §6.4: with dragon arrows
DARK_BOW_SPECIAL_MIN_HIT = 8  # §6.9: each arrow clamped to 8..48 before the prayer
DARK_BOW_SPECIAL_MAX_HIT = 48  # §6.9
NIGHTMARE_STAFF_ACCURACY: Factor = (3, 2)  # §6.3
NIGHTMARE_STAFF_MAX_CAP = 58  # §6.9: m = min(floor((99 + 58 × lvl) / 99), 58)
NIGHTMARE_STAFF_LEVEL_DIVISOR = 99  # §6.9
ZURIELS_ICE_ACCURACY: Factor = (11, 10)  # §6.3: ice spells with Zuriel's staff wielded
ZURIELS_HEAL_FACTOR: Factor = (3, 2)  # §6.7: blood heal multiplier × 1.5 with Zuriel's staff
VESTA_DEFENCE_FACTOR: Factor = (1, 4)  # §6.9: floor(0.25 × D_stab)
VESTA_MIN_FACTOR: Factor = (1, 5)  # §6.9: U[floor(0.2 M), M + floor(0.2 M)]
STATIUS_MIN_FACTOR: Factor = (1, 4)  # §6.9: U[floor(0.25 M), M + floor(0.25 M)]
STATIUS_DEFENCE_DRAIN: Factor = (7, 10)  # §6.9: Defence := floor(current × 7 / 10)

OPAL_PROC_CHANCE = 0.05  # §6.8, App. C: chance against players
DIAMOND_PROC_CHANCE = 0.05  # §6.8, App. C
DRAGONSTONE_PROC_CHANCE = 0.06  # §6.8, App. C
ARMADYL_CROSSBOW_PROC_MULTIPLIER = 2  # §6.8, §6.9: proc chances doubled by the Armadyl-crossbow special
BOLT_LEVEL_DIVISOR = 10  # §6.8: floor(lvl_rng / 10) (opal), floor(2 × lvl_rng / 10) (dragonstone)
ZARYTE_BOLT_LEVEL_DIVISOR = 9  # §6.8: Zaryte crossbow uses / 9
DIAMOND_MAX_PCT = 115  # §6.8: fresh roll U[0, floor(max × 115 / 100)]
ZARYTE_DIAMOND_MAX_PCT = 126  # §6.8: Zaryte crossbow 126 / 100
DRAGONSTONE_LEVEL_MULTIPLIER = 2  # §6.8

CLAW_HITSPLATS = 4  # §6.9
CLAW_ALL_MISS_CHANCE = 2 / 3  # §6.9: hitsplats 0, 0, 1, 1 with probability 2/3 when all four rolls miss
CLAW_ALL_MISS_HIT = (0, 0, 1, 1)  # §6.9
CLAW_ALL_MISS_ZERO = (0, 0, 0, 0)  # §6.9

DHAROK_DENOMINATOR = 10_000  # §6.10.6: floor(dmg × (10000 + (baseHP − curHP) × baseHP) / 10000)

CROSSBOW_DELAY_OFFSET = 3  # §6.2: 1 + floor((3 + d) / 6)
BALLISTA_BASE_DELAY = 2  # §6.2: 2 + floor((1 + d) / 6); the ballista special's fixed delay (§6.9)
RANGED_DELAY_DIVISOR = 6  # §6.2
DARK_BOW_SECOND_OFFSET = 2  # §6.2: second arrow 1 + floor((2 + d) / 3)
MAGIC_DELAY_DIVISOR = 3  # §6.2: magic 1 + floor((1 + d) / 3)
MELEE_HIT_DELAY = 0  # §6.2


def int_multiply(n: int, factor: Factor) -> int:
    """`floor(n × numerator / denominator)` in exact integers (spec conventions, "int-multiply")."""
    return n * factor[0] // factor[1]


# ---- §6.3 accuracy --------------------------------------------------------------------------------
def effective_level(level: int, prayer_pct: int, stance_bonus: int) -> int:
    """Melee/ranged effective level `floor(lvl × prayer) + stance + 8` (§6.3, §6.4)."""
    return prayer_multiplied(level, prayer_pct) + stance_bonus + EFFECTIVE_LEVEL_BASE


def magic_effective_level(level: int, prayer_pct: int) -> int:
    """Magic attack effective level `floor(lvl_mag × magPrayer) + 9` (§6.3)."""
    return prayer_multiplied(level, prayer_pct) + MAGIC_EFFECTIVE_LEVEL_BASE


def roll(effective: int, bonus: int) -> int:
    """An attack or defence roll `effective × (bonus + 64)` (§6.3)."""
    return effective * (bonus + EQUIPMENT_BONUS_OFFSET)


def magic_defence_level(magic_level: int, defence_level: int, stance_bonus: int) -> int:
    """`floor(7 × magLvl / 10) + floor(3 × defLvl / 10) + stanceDef + 8` (§6.3).

    `magic_level` and `defence_level` are already prayer-multiplied; the two parts are floored
    separately and the stance bonus and +8 are added afterwards.
    """
    return (
        int_multiply(magic_level, MAGIC_DEFENCE_MAGIC_FACTOR)
        + int_multiply(defence_level, MAGIC_DEFENCE_DEFENCE_FACTOR)
        + stance_bonus
        + EFFECTIVE_LEVEL_BASE
    )


def hit_chance(attack_roll: int, defence_roll: int) -> float:
    """Probability that an attack is accurate (§6.3); the hit lands iff `p > R()`."""
    if attack_roll > defence_roll:
        return 1.0 - (defence_roll + 2) / (2 * (attack_roll + 1))
    return attack_roll / (2 * (defence_roll + 1))


def vesta_defence_roll(stab_defence_roll: int) -> int:
    """Vesta's longsword special rolls against `floor(0.25 × D_stab)` (§6.9)."""
    return int_multiply(stab_defence_roll, VESTA_DEFENCE_FACTOR)


# ---- §6.4 maximum hit -----------------------------------------------------------------------------
def base_max_hit(effective: int, strength_bonus: int) -> int:
    """Melee and ranged max hit `floor((eff × (bonus + 64) + 320) / 640)` (§6.4)."""
    return (effective * (strength_bonus + EQUIPMENT_BONUS_OFFSET) + MAX_HIT_ROUNDING) // MAX_HIT_DIVISOR


def magic_max_hit(spell_max_hit: int, magic_damage_tenths: int) -> int:
    """`floor(spellMax × (1000 + magicDamage) / 1000)`, magic damage in tenths of a percent (§6.4)."""
    return int_multiply(
        spell_max_hit, (MAGIC_DAMAGE_DIVISOR_TENTHS + magic_damage_tenths, MAGIC_DAMAGE_DIVISOR_TENTHS)
    )


def armadyl_godsword_max_hit(base: int) -> int:
    """`floor(floor(base × 11/10) × 5/4)`, floored in steps (§6.4)."""
    return int_multiply(int_multiply(base, GODSWORD_MAX_FACTOR), ARMADYL_GODSWORD_EXTRA_FACTOR)


def ancient_godsword_max_hit(base: int) -> int:
    """`floor(base × 11/10)` (§6.4)."""
    return int_multiply(base, GODSWORD_MAX_FACTOR)


def dragon_dagger_max_hit(base: int) -> int:
    """`floor(base × 23/20)` per hit (§6.4)."""
    return int_multiply(base, DRAGON_DAGGER_FACTOR)


def ballista_special_max_hit(base: int) -> int:
    """`floor(base × 5/4)` on the integer ranged max (§6.4)."""
    return int_multiply(base, BALLISTA_SPECIAL_FACTOR)


def dark_bow_special_max_hit(base: int) -> int:
    """`floor(base × 3/2)` with dragon arrows, the only arrows of the loadouts (§6.4)."""
    return int_multiply(base, DARK_BOW_SPECIAL_MAX_FACTOR)


def nightmare_staff_spell_max(magic_level: int) -> int:
    """The special's max before magic damage: `min(floor((99 + 58 × lvl) / 99), 58)` (§6.9)."""
    m = (
        NIGHTMARE_STAFF_LEVEL_DIVISOR + NIGHTMARE_STAFF_MAX_CAP * magic_level
    ) // NIGHTMARE_STAFF_LEVEL_DIVISOR
    return min(m, NIGHTMARE_STAFF_MAX_CAP)


def vesta_damage_range(melee_max: int) -> tuple[int, int]:
    """`U[floor(0.2 M), M + floor(0.2 M)]`, the accurate Vesta special's damage range (§6.9)."""
    extra = int_multiply(melee_max, VESTA_MIN_FACTOR)
    return extra, melee_max + extra


def statius_damage_range(melee_max: int) -> tuple[int, int]:
    """`U[floor(0.25 M), M + floor(0.25 M)]`, the accurate Statius special's damage range (§6.9)."""
    extra = int_multiply(melee_max, STATIUS_MIN_FACTOR)
    return extra, melee_max + extra


# ---- §6.5 damage adjustments ----------------------------------------------------------------------
def accurate_zero_to_one(damage: int) -> int:
    """An accurate hit that rolled 0 deals 1 (§6.5 step 3); applied right after the roll."""
    return damage if damage > 0 else 1


def protected_damage(damage: int) -> int:
    """A matching protection prayer: `floor(dmg × 60 / 100)` per hitsplat, the last step (§6.5)."""
    return int_multiply(damage, PROTECTION_PRAYER_FACTOR)


def dharok_damage(damage: int, base_hp: int, hp: int) -> int:
    """Full Dharok's: `floor(dmg × (10000 + (baseHP − curHP) × baseHP) / 10000)` (§6.10.6)."""
    return int_multiply(damage, (DHAROK_DENOMINATOR + (base_hp - hp) * base_hp, DHAROK_DENOMINATOR))


def dark_bow_special_clamp(damage: int) -> int:
    """Each dark-bow special arrow deals 8..48 before the prayer, even a missed one (§6.9)."""
    return min(max(damage, DARK_BOW_SPECIAL_MIN_HIT), DARK_BOW_SPECIAL_MAX_HIT)


# ---- §6.8 bolts -----------------------------------------------------------------------------------
def _bolt_divisor(zaryte: bool) -> int:
    return ZARYTE_BOLT_LEVEL_DIVISOR if zaryte else BOLT_LEVEL_DIVISOR


def opal_bolt_bonus(ranged_level: int, zaryte: bool) -> int:
    """Opal proc adds `floor(lvl_rng / 10)` (Zaryte `/ 9`), current Ranged level (§6.8)."""
    return ranged_level // _bolt_divisor(zaryte)


def dragonstone_bolt_bonus(ranged_level: int, zaryte: bool) -> int:
    """Dragonstone proc adds `floor(2 × lvl_rng / 10)` (Zaryte `/ 9`) (§6.8)."""
    return DRAGONSTONE_LEVEL_MULTIPLIER * ranged_level // _bolt_divisor(zaryte)


def diamond_bolt_max_hit(max_hit: int, zaryte: bool) -> int:
    """Diamond proc's fresh roll is `U[0, floor(max × 115 / 100)]` (Zaryte 126 / 100) (§6.8)."""
    return int_multiply(max_hit, (ZARYTE_DIAMOND_MAX_PCT if zaryte else DIAMOND_MAX_PCT, 100))


# ---- §6.9 Dragon claws ----------------------------------------------------------------------------
def claw_total_range(first_success: int, claw_max: int) -> tuple[int, int]:
    """Range of the claw total `X` when accuracy roll `k = first_success` (1..4) succeeds (§6.9)."""
    low = (claw_max, int_multiply(claw_max, (3, 4)), claw_max // 2, claw_max // 4)[first_success - 1]
    return low, low + claw_max - 1


def claw_hitsplats(first_success: int, total: int) -> tuple[int, int, int, int]:
    """The four claw hitsplats for first successful roll `k` and total `X` (§6.9), before the prayer."""
    if first_success == 1:
        return total // 2, total // 4, total // 8, total // 8 + 1
    if first_success == 2:
        return 0, total // 2, total // 4, total // 4 + 1
    if first_success == 3:
        return 0, 0, total // 2, total // 2 + 1
    return 0, 0, 0, total + 1


# ---- §6.7, §6.9 after-hit numbers -----------------------------------------------------------------
def blood_heal(damage: int, heal_pct: int, zuriels_staff: bool) -> int:
    """Blood spell heal `floor(damage × mult)` of the final damage, mult × 1.5 with Zuriel's (§6.7)."""
    num, den = ZURIELS_HEAL_FACTOR if zuriels_staff else (1, 1)
    return damage * heal_pct * num // (100 * den)


def statius_drained_defence(defence: int) -> int:
    """Target's Defence after an accurate, damaging Statius special: `floor(current × 7/10)` (§6.9)."""
    return int_multiply(defence, STATIUS_DEFENCE_DRAIN)


# ---- §6.2 hit delays ------------------------------------------------------------------------------
def crossbow_hit_delay(distance: int) -> int:
    """Crossbow (and the dark bow's first arrow): `1 + floor((3 + d) / 6)` (§6.2)."""
    return 1 + (CROSSBOW_DELAY_OFFSET + distance) // RANGED_DELAY_DIVISOR


def ballista_hit_delay(distance: int) -> int:
    """Ballista: `2 + floor((1 + d) / 6)` (§6.2)."""
    return BALLISTA_BASE_DELAY + (1 + distance) // RANGED_DELAY_DIVISOR


def dark_bow_second_arrow_delay(distance: int) -> int:
    """Dark bow second arrow: `1 + floor((2 + d) / 3)` (§6.2)."""
    return 1 + (DARK_BOW_SECOND_OFFSET + distance) // MAGIC_DELAY_DIVISOR


def thrown_hit_delay(distance: int) -> int:
    """Knife and Morrigan's javelin: `1 + floor(d / 6)` (§6.2)."""
    return 1 + distance // RANGED_DELAY_DIVISOR


def magic_hit_delay(distance: int) -> int:
    """Spells and the nightmare-staff special: `1 + floor((1 + d) / 3)` (§6.2)."""
    return 1 + (1 + distance) // MAGIC_DELAY_DIVISOR
