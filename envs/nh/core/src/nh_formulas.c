/* nh_formulas.c: spec §6 formulas; see nh_formulas.h and envs/nh/formulas.py (the reference). */
#include "nh_formulas.h"

#include "nh_tables.h"

#define NH_PERCENT INT64_C(100) /* prayers.prayer_multiplied and the bolt percentages: "/ 100" */

int64_t nh_prayer_multiplied(int64_t level, int64_t pct) { return nh_floor_div(level * pct, NH_PERCENT); }

/* ---- §6.3 accuracy ---- */
int64_t nh_effective_level(int64_t level, int64_t prayer_pct, int64_t stance_bonus) {
    return nh_prayer_multiplied(level, prayer_pct) + stance_bonus + NH_EFFECTIVE_LEVEL_BASE;
}

int64_t nh_magic_effective_level(int64_t level, int64_t prayer_pct) {
    return nh_prayer_multiplied(level, prayer_pct) + NH_MAGIC_EFFECTIVE_LEVEL_BASE;
}

int64_t nh_roll(int64_t effective, int64_t bonus) { return effective * (bonus + NH_EQUIPMENT_BONUS_OFFSET); }

int64_t nh_magic_defence_level(int64_t magic_level, int64_t defence_level, int64_t stance_bonus) {
    return nh_int_multiply(magic_level, NH_MAGIC_DEFENCE_MAGIC_FACTOR_NUM, NH_MAGIC_DEFENCE_MAGIC_FACTOR_DEN) +
           nh_int_multiply(defence_level, NH_MAGIC_DEFENCE_DEFENCE_FACTOR_NUM, NH_MAGIC_DEFENCE_DEFENCE_FACTOR_DEN) +
           stance_bonus + NH_EFFECTIVE_LEVEL_BASE;
}

/* Python's int / int is the correctly rounded quotient; so is IEEE division of two exact doubles
 * (the rolls stay far below 2**53), hence the same double. */
double nh_hit_chance(int64_t attack_roll, int64_t defence_roll) {
    if (attack_roll > defence_roll) {
        return 1.0 - (double)(defence_roll + 2) / (double)(2 * (attack_roll + 1));
    }
    return (double)attack_roll / (double)(2 * (defence_roll + 1));
}

int64_t nh_vesta_defence_roll(int64_t stab_defence_roll) {
    return nh_int_multiply(stab_defence_roll, NH_VESTA_DEFENCE_FACTOR_NUM, NH_VESTA_DEFENCE_FACTOR_DEN);
}

/* ---- §6.4 maximum hit ---- */
int64_t nh_base_max_hit(int64_t effective, int64_t strength_bonus) {
    return nh_floor_div(effective * (strength_bonus + NH_EQUIPMENT_BONUS_OFFSET) + NH_MAX_HIT_ROUNDING,
                        NH_MAX_HIT_DIVISOR);
}

int64_t nh_magic_max_hit(int64_t spell_max_hit, int64_t magic_damage_tenths) {
    return nh_int_multiply(spell_max_hit, NH_MAGIC_DAMAGE_DIVISOR_TENTHS + magic_damage_tenths,
                           NH_MAGIC_DAMAGE_DIVISOR_TENTHS);
}

int64_t nh_armadyl_godsword_max_hit(int64_t base) {
    int64_t first = nh_int_multiply(base, NH_GODSWORD_MAX_FACTOR_NUM, NH_GODSWORD_MAX_FACTOR_DEN);
    return nh_int_multiply(first, NH_ARMADYL_GODSWORD_EXTRA_FACTOR_NUM, NH_ARMADYL_GODSWORD_EXTRA_FACTOR_DEN);
}

int64_t nh_ancient_godsword_max_hit(int64_t base) {
    return nh_int_multiply(base, NH_GODSWORD_MAX_FACTOR_NUM, NH_GODSWORD_MAX_FACTOR_DEN);
}

int64_t nh_dragon_dagger_max_hit(int64_t base) {
    return nh_int_multiply(base, NH_DRAGON_DAGGER_FACTOR_NUM, NH_DRAGON_DAGGER_FACTOR_DEN);
}

int64_t nh_ballista_special_max_hit(int64_t base) {
    return nh_int_multiply(base, NH_BALLISTA_SPECIAL_FACTOR_NUM, NH_BALLISTA_SPECIAL_FACTOR_DEN);
}

int64_t nh_dark_bow_special_max_hit(int64_t base) {
    return nh_int_multiply(base, NH_DARK_BOW_SPECIAL_MAX_FACTOR_NUM, NH_DARK_BOW_SPECIAL_MAX_FACTOR_DEN);
}

int64_t nh_nightmare_staff_spell_max(int64_t magic_level) {
    int64_t m = nh_floor_div(NH_NIGHTMARE_STAFF_LEVEL_DIVISOR + NH_NIGHTMARE_STAFF_MAX_CAP * magic_level,
                             NH_NIGHTMARE_STAFF_LEVEL_DIVISOR);
    return m < NH_NIGHTMARE_STAFF_MAX_CAP ? m : NH_NIGHTMARE_STAFF_MAX_CAP;
}

void nh_vesta_damage_range(int64_t melee_max, int64_t out[2]) {
    int64_t extra = nh_int_multiply(melee_max, NH_VESTA_MIN_FACTOR_NUM, NH_VESTA_MIN_FACTOR_DEN);
    out[0] = extra;
    out[1] = melee_max + extra;
}

void nh_statius_damage_range(int64_t melee_max, int64_t out[2]) {
    int64_t extra = nh_int_multiply(melee_max, NH_STATIUS_MIN_FACTOR_NUM, NH_STATIUS_MIN_FACTOR_DEN);
    out[0] = extra;
    out[1] = melee_max + extra;
}

/* ---- §6.5 damage adjustments ---- */
int64_t nh_accurate_zero_to_one(int64_t damage) { return damage > 0 ? damage : 1; }

int64_t nh_protected_damage(int64_t damage) {
    return nh_int_multiply(damage, NH_PROTECTION_PRAYER_FACTOR_NUM, NH_PROTECTION_PRAYER_FACTOR_DEN);
}

int64_t nh_dharok_damage(int64_t damage, int64_t base_hp, int64_t hp) {
    return nh_int_multiply(damage, NH_DHAROK_DENOMINATOR + (base_hp - hp) * base_hp, NH_DHAROK_DENOMINATOR);
}

int64_t nh_dark_bow_special_clamp(int64_t damage) {
    int64_t low = damage > NH_DARK_BOW_SPECIAL_MIN_HIT ? damage : NH_DARK_BOW_SPECIAL_MIN_HIT;
    return low < NH_DARK_BOW_SPECIAL_MAX_HIT ? low : NH_DARK_BOW_SPECIAL_MAX_HIT;
}

/* ---- §6.8 bolts ---- */
static int64_t bolt_divisor(int zaryte) { return zaryte ? NH_ZARYTE_BOLT_LEVEL_DIVISOR : NH_BOLT_LEVEL_DIVISOR; }

int64_t nh_opal_bolt_bonus(int64_t ranged_level, int zaryte) {
    return nh_floor_div(ranged_level, bolt_divisor(zaryte));
}

int64_t nh_dragonstone_bolt_bonus(int64_t ranged_level, int zaryte) {
    return nh_floor_div(NH_DRAGONSTONE_LEVEL_MULTIPLIER * ranged_level, bolt_divisor(zaryte));
}

int64_t nh_diamond_bolt_max_hit(int64_t max_hit, int zaryte) {
    return nh_int_multiply(max_hit, zaryte ? NH_ZARYTE_DIAMOND_MAX_PCT : NH_DIAMOND_MAX_PCT, NH_PERCENT);
}

/* ---- §6.9 Dragon claws ---- */
void nh_claw_total_range(int64_t first_success, int64_t claw_max, int64_t out[2]) {
    int64_t low;
    switch (first_success) {
    case 1: low = claw_max; break;
    case 2: low = nh_int_multiply(claw_max, 3, 4); break;
    case 3: low = nh_floor_div(claw_max, 2); break;
    default: low = nh_floor_div(claw_max, 4); break;
    }
    out[0] = low;
    out[1] = low + claw_max - 1;
}

void nh_claw_hitsplats(int64_t first_success, int64_t total, int64_t out[4]) {
    switch (first_success) {
    case 1:
        out[0] = nh_floor_div(total, 2), out[1] = nh_floor_div(total, 4), out[2] = nh_floor_div(total, 8);
        out[3] = nh_floor_div(total, 8) + 1;
        return;
    case 2:
        out[0] = 0, out[1] = nh_floor_div(total, 2), out[2] = nh_floor_div(total, 4);
        out[3] = nh_floor_div(total, 4) + 1;
        return;
    case 3:
        out[0] = 0, out[1] = 0, out[2] = nh_floor_div(total, 2), out[3] = nh_floor_div(total, 2) + 1;
        return;
    default:
        out[0] = 0, out[1] = 0, out[2] = 0, out[3] = total + 1;
        return;
    }
}

/* ---- §6.7, §6.9 after-hit numbers ---- */
int64_t nh_blood_heal(int64_t damage, int64_t heal_pct, int zuriels_staff) {
    int64_t num = zuriels_staff ? NH_ZURIELS_HEAL_FACTOR_NUM : 1;
    int64_t den = zuriels_staff ? NH_ZURIELS_HEAL_FACTOR_DEN : 1;
    return nh_floor_div(damage * heal_pct * num, NH_PERCENT * den);
}

int64_t nh_statius_drained_defence(int64_t defence) {
    return nh_int_multiply(defence, NH_STATIUS_DEFENCE_DRAIN_NUM, NH_STATIUS_DEFENCE_DRAIN_DEN);
}

/* ---- §6.2 hit delays ---- */
int64_t nh_crossbow_hit_delay(int64_t distance) {
    return 1 + nh_floor_div(NH_CROSSBOW_DELAY_OFFSET + distance, NH_RANGED_DELAY_DIVISOR);
}

int64_t nh_ballista_hit_delay(int64_t distance) {
    return NH_BALLISTA_BASE_DELAY + nh_floor_div(1 + distance, NH_RANGED_DELAY_DIVISOR);
}

int64_t nh_dark_bow_second_arrow_delay(int64_t distance) {
    return 1 + nh_floor_div(NH_DARK_BOW_SECOND_OFFSET + distance, NH_MAGIC_DELAY_DIVISOR);
}

int64_t nh_thrown_hit_delay(int64_t distance) { return 1 + nh_floor_div(distance, NH_RANGED_DELAY_DIVISOR); }

int64_t nh_magic_hit_delay(int64_t distance) {
    return 1 + nh_floor_div(1 + distance, NH_MAGIC_DELAY_DIVISOR);
}
