/*
 * nh_operations.h: what a player can do in the game (spec §5, §7.2, §8): prayers, eating, drinking,
 * Vengeance. Mirrors envs/nh/operations.py function by function; each fails silently where the game
 * would (the environment does not enforce the action masks, spec §5).
 *
 * The per-level formulas (anglerfish heal, brew / restore / combat / ranging amounts) are tables that
 * gen_tables.py fills by evaluating the Python functions (nh_data.h), indexed by a base level (1..99).
 */
#ifndef NH_OPERATIONS_H
#define NH_OPERATIONS_H

#include <stdint.h>

#include "nh_state.h"

/* Per cent (a unit, not a game number): the brew's Defence raise is floor(base × 20 / 100), §8.3. The brew's
 * numbers themselves are operations.BREW_* (generated into nh_tables.h). */
#define NH_PERCENT_DIVISOR 100

int nh_can_activate(const nh_player *p, int32_t prayer);
/* Switch a prayer on (conflicting ones off). Returns whether it is newly on (the caller starts the drain). */
int nh_activate_prayer(nh_player *p, int32_t prayer);
void nh_deactivate_all_prayers(nh_player *p);
/* Raise hitpoints by up to `amount`, not above `cap`; returns the hitpoints gained. */
int32_t nh_heal(nh_player *p, int32_t amount, int32_t cap);
int32_t nh_effect_heal(nh_player *p, int32_t amount);
int32_t nh_nominal_heal(int32_t food_id, int32_t base_hp);
/* The first non-karambwan food carried in priority order, NH_EMPTY for none. */
int32_t nh_primary_food(const nh_player *p);
int nh_has_any_food(const nh_player *p);
int nh_eat_food(nh_player *p, int32_t food_id);
int nh_eat_karambwan(nh_player *p);
/* Inventory slot of the potion to drink (fewest doses first for agents, most for the baseline), -1 for none. */
int32_t nh_find_potion(const nh_player *p, int32_t potion, int fewest_first);
void nh_apply_potion(nh_player *p, int32_t potion);
int nh_drink_potion(nh_player *p, int32_t potion, int fewest_first);
int nh_cast_vengeance(nh_player *p);

#endif /* NH_OPERATIONS_H */
