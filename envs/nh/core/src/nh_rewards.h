/*
 * nh_rewards.h: the §17.1 signals and the §17.2 reward (weights §17.3, schedules §17.4), mirroring
 * envs/nh/rewards.py (`signals_for`, `compute_reward`) in float64 with the same order of operations.
 *
 * No weight is typed here: the binding fills nh_reward_weights from a Python `RewardWeights` (whose
 * defaults stay in Python). Signals are a fixed record; a "present if" signal has a `has_*` flag.
 * Style-valued signals are NH_COMBAT_STYLE_* or NH_NO_STYLE for the spec's "null".
 */
#ifndef NH_REWARDS_H
#define NH_REWARDS_H

#include <stdint.h>

#include "nh_sim.h"
#include "nh_state.h"

#define NH_NO_STYLE (-1) /* §17.1 "null" */

/* The reward components (NH_RC_*, rewards.REWARD_COMPONENTS) and the weights' numbering (NH_W_*, NH_FW_*,
 * NH_SW_*, RewardWeights by declared type) are generated into nh_tables.h. */

/* rewards.signals_for of one player. */
typedef struct nh_signals {
    double damage_generated_on_target_scale, damage_generated_on_player_scale, damage_dealt, damage_received;
    double extra_damage_dealt_on_target_scale, extra_damage_dealt_on_player_scale;
    int32_t hit_with_smite, target_attacked_with_smite;
    double player_healed_scale, target_healed_scale;
    int32_t current_target_prayer_type, target_attack_style_type;
    int32_t player_frozen_ticks, target_frozen_ticks;
    double current_prayer_percent;
    double attack_level_scale, strength_level_scale, defence_level_scale, ranged_level_scale, magic_level_scale;
    double remaining_food_scale, target_remaining_food_scale, remaining_brew_scale, target_remaining_brew_scale;
    int32_t has_received; /* protectedPrayer, targetHitAttackSpeed, attackTypeReceived, playerPrayerType */
    int32_t protected_prayer, target_hit_attack_speed, attack_type_received, player_prayer_type;
    int32_t has_hit; /* hitOffPrayer, playerHitAttackSpeed, attackTypeHit, targetPrayerType */
    int32_t hit_off_prayer, player_hit_attack_speed, attack_type_hit, target_prayer_type;
    int32_t has_eat_at, has_wasted_food, has_wasted_brew;
    double eat_at_food_scale, wasted_food_scale, wasted_brew_scale;
} nh_signals;

/* rewards.Schedule: a constant (n == 0 and is_schedule 0) or [a, b, n] (§17.4). */
typedef struct nh_schedule {
    int32_t is_schedule;
    double a, b, n;
} nh_schedule;

/* RewardWeights, plus its scheduled weights' values at `progress` (rewards._ResolvedWeights). */
typedef struct nh_reward_weights {
    nh_schedule scheduled[NH_NUM_SCHEDULED_WEIGHTS];
    double floats[NH_NUM_FLOAT_WEIGHTS]; /* player_died_with_food_exponent and _offset */
    int32_t switches[NH_NUM_WEIGHT_SWITCHES];
    double progress;
    double resolved[NH_NUM_SCHEDULED_WEIGHTS];
} nh_reward_weights;

/* rewards.schedule_value (§17.4). */
double nh_schedule_value(const nh_schedule *w, double progress);
/* Set the training progress and resolve every scheduled weight at it. */
void nh_set_reward_progress(nh_reward_weights *w, double progress);

/* rewards.signals_for(fight, players[p]) for the tick just simulated. */
void nh_signals_for(const nh_fight *fight, int32_t p, nh_signals *s);

/* rewards.compute_reward; `prev` NULL for the first step; `outcome` NH_OUTCOME_*; `parts` (NULL or
 * NH_NUM_REWARD_COMPONENTS doubles, zeroed by the caller) receives each term as it enters the reward. */
double nh_compute_reward(const nh_reward_weights *w, const nh_signals *s, const nh_signals *prev, int32_t outcome,
                         double *parts);

/* engine.NHEngine's per-fight reward state: each agent's last signals (the next step's `prev`), and the
 * last step's rewards and reward components (0 for a baseline player, whose signals are not made). */
typedef struct nh_reward_state {
    nh_signals signals[2];
    int32_t has_signals[2]; /* 0 after reset and for a baseline player */
    double rewards[2];
    double parts[2][NH_NUM_REWARD_COMPONENTS];
} nh_reward_state;

/* The reward half of NHEngine.step after nh_step: signals, rewards and components of each agent. */
void nh_step_rewards(const nh_fight *fight, const nh_reward_weights *w, const int32_t outcomes[2], nh_reward_state *st);

#endif /* NH_REWARDS_H */
