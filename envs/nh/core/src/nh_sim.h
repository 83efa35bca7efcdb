/*
 * nh_sim.h: the tick of spec §4.1 on an nh_fight, mirroring envs/nh/sim.py (FightSim.step and helpers).
 *
 * Here: scheduled tasks (retaliation, sacrifice, bleed, poison, special regeneration, prayer drain),
 * timers, PID re-rolls, movement and following, the hit queue (redemption, smite, after-hit effects,
 * poison, blood fury, vengeance, retaliation), attacks, run energy, stat restore, the end of the tick
 * (LMS prayer refill, episode statistics, outcome, truncation) and the shared mechanisms the actions
 * use (activate_prayer, drain_special). With the agents' actions (nh_actions.c) and the scripted
 * baseline (nh_baseline.c) it is the whole tick.
 */
#ifndef NH_SIM_H
#define NH_SIM_H

#include <stdint.h>

#include "nh_state.h"

#define NH_ERR_TASKS_FULL 8
#define NH_ERR_QUEUE_FULL 9
#define NH_ERR_FIGHT_OVER 11 /* step after the end: reset first (Python's RuntimeError) */

/* Outcome of a tick from one player's view (sim.Outcome), NH_OUTCOME_NONE while the fight goes on. */

/* sim.TickResult. */
typedef struct nh_tick_result {
    int32_t tick;
    int32_t outcomes[2];
    int32_t truncated;
} nh_tick_result;

/* FightSim.step: actions[i] is player i's 12-head action when has_action[i] (None otherwise).
 * Returns 0 or an NH_ERR_*. */
int nh_step(nh_fight *fight, const int32_t actions[2][12], const int has_action[2], nh_tick_result *result);

/* FightSim.activate_prayer / activate_prayers / drain_special (§7.2, §7.3, §6.11). */
void nh_sim_activate_prayer(nh_fight *fight, nh_player *p, int32_t prayer);
void nh_sim_drain_special(nh_fight *fight, nh_player *p, int32_t amount);

/* sim.protection_style: the style the player's overhead blocks (check order Magic, Missiles, Melee), -1. */
int32_t nh_protection_style(const nh_player *p);

#endif /* NH_SIM_H */
