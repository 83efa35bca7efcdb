/*
 * nh_combat.h: an attack resolved from both players and its hits (spec §6; draw order §16.6).
 *
 * Mirrors envs/nh/combat.py function by function (`combat_method`, `attack_range`, `attack_speed`,
 * `hit_delay`, `attack_roll`, `defence_roll_against`, `defence_style`, `defence_roll`, `damage_range`,
 * `_bolt_effect`, `_resolve`, `create_hits`); the method, special, bolt, spell and prayer tables are
 * generated (nh_data.h). Like the Python, nothing here mutates a player: the tick applies the outcome.
 */
#ifndef NH_COMBAT_H
#define NH_COMBAT_H

#include <stdint.h>

#include "nh_hits.h"
#include "nh_state.h"

#define NH_MAX_ATTACK_HITS 4 /* hits of one attack: two (dark bow, dagger and knife specials), maul specs */
#define NH_ERR_NO_SPELL 5    /* damage_range of MAGIC_SPELL without a selected spell (Python's ValueError) */
#define NH_ERR_TOO_MANY_HITS 6

/* combat.AttackOutcome (§6.1, §6.5-§6.9). */
typedef struct nh_attack_outcome {
    int32_t method;
    int32_t n_hits;
    nh_pending_hit hits[NH_MAX_ATTACK_HITS];
    int32_t energy_cost;
    int32_t attack_speed;
    int32_t freeze_ticks;
    int32_t heal;
    int32_t spell; /* NH_NO_SPELL unless MAGIC_SPELL */
} nh_attack_outcome;

int32_t nh_weapon_class_of(const nh_player *p);
int32_t nh_combat_method(const nh_player *p);
int32_t nh_attack_range(const nh_player *p, int32_t method);
int32_t nh_attack_speed(const nh_player *p, int32_t method);
/* Delays of every hit in creation order into out[NH_MAX_ATTACK_HITS]; returns their number (-1: too many). */
int32_t nh_hit_delay(int32_t method, int32_t weapon_class, int32_t distance, int32_t queued_specs, int32_t *out);
int64_t nh_attack_roll(const nh_player *attacker, int32_t method);
int64_t nh_defence_roll_against(const nh_player *defender, int32_t style_type);
int32_t nh_defence_style(int32_t method, const nh_player *attacker);
int64_t nh_defence_roll(const nh_player *defender, int32_t method, const nh_player *attacker);
/* (low, high) of an accurate hit's damage roll; returns 0 or NH_ERR_NO_SPELL. */
int nh_damage_range(const nh_player *attacker, int32_t method, int64_t out[2]);
/* One attack: the rolls of §16.6 from `rng`, hits with damage fixed. Returns 0 or an NH_ERR_*. */
int nh_create_hits(nh_rng *rng, const nh_player *attacker, const nh_player *defender, int32_t distance,
                   nh_attack_outcome *out);

#endif /* NH_COMBAT_H */
