/*
 * nh_formulas.h: the combat formulas of spec §6, one C function per function of envs/nh/formulas.py.
 *
 * Same names (prefixed `nh_`), same arguments, same integer maths: every division of the Python engine is
 * a floor division (`//`), so the C side uses `nh_floor_div` rather than C's truncating `/` (they differ
 * for negative numerators, e.g. Dharok's factor when hitpoints are boosted above the base). Constants come
 * from the generated nh_tables.h. tests/envs/test_core_formulas.py compares each one with the Python
 * function over grids and random inputs.
 */
#ifndef NH_FORMULAS_H
#define NH_FORMULAS_H

#include <stdint.h>

/* Python's `a // b` for b > 0. */
static inline int64_t nh_floor_div(int64_t a, int64_t b) {
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

/* `floor(n × num / den)`, the spec's int-multiply. */
static inline int64_t nh_int_multiply(int64_t n, int64_t num, int64_t den) { return nh_floor_div(n * num, den); }

int64_t nh_prayer_multiplied(int64_t level, int64_t pct);

/* §6.3 accuracy */
int64_t nh_effective_level(int64_t level, int64_t prayer_pct, int64_t stance_bonus);
int64_t nh_magic_effective_level(int64_t level, int64_t prayer_pct);
int64_t nh_roll(int64_t effective, int64_t bonus);
int64_t nh_magic_defence_level(int64_t magic_level, int64_t defence_level, int64_t stance_bonus);
double nh_hit_chance(int64_t attack_roll, int64_t defence_roll);
int64_t nh_vesta_defence_roll(int64_t stab_defence_roll);

/* §6.4 maximum hit */
int64_t nh_base_max_hit(int64_t effective, int64_t strength_bonus);
int64_t nh_magic_max_hit(int64_t spell_max_hit, int64_t magic_damage_tenths);
int64_t nh_armadyl_godsword_max_hit(int64_t base);
int64_t nh_ancient_godsword_max_hit(int64_t base);
int64_t nh_dragon_dagger_max_hit(int64_t base);
int64_t nh_ballista_special_max_hit(int64_t base);
int64_t nh_dark_bow_special_max_hit(int64_t base);
int64_t nh_nightmare_staff_spell_max(int64_t magic_level);
void nh_vesta_damage_range(int64_t melee_max, int64_t out[2]);
void nh_statius_damage_range(int64_t melee_max, int64_t out[2]);

/* §6.5 damage adjustments */
int64_t nh_accurate_zero_to_one(int64_t damage);
int64_t nh_protected_damage(int64_t damage);
int64_t nh_dharok_damage(int64_t damage, int64_t base_hp, int64_t hp);
int64_t nh_dark_bow_special_clamp(int64_t damage);

/* §6.8 bolts */
int64_t nh_opal_bolt_bonus(int64_t ranged_level, int zaryte);
int64_t nh_dragonstone_bolt_bonus(int64_t ranged_level, int zaryte);
int64_t nh_diamond_bolt_max_hit(int64_t max_hit, int zaryte);

/* §6.9 Dragon claws */
void nh_claw_total_range(int64_t first_success, int64_t claw_max, int64_t out[2]);
void nh_claw_hitsplats(int64_t first_success, int64_t total, int64_t out[4]);

/* §6.7, §6.9 after-hit numbers */
int64_t nh_blood_heal(int64_t damage, int64_t heal_pct, int zuriels_staff);
int64_t nh_statius_drained_defence(int64_t defence);

/* §6.2 hit delays */
int64_t nh_crossbow_hit_delay(int64_t distance);
int64_t nh_ballista_hit_delay(int64_t distance);
int64_t nh_dark_bow_second_arrow_delay(int64_t distance);
int64_t nh_thrown_hit_delay(int64_t distance);
int64_t nh_magic_hit_delay(int64_t distance);

#endif /* NH_FORMULAS_H */
