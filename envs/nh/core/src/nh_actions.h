/*
 * nh_actions.h: an agent's 12-head action in phase A (spec §5, heads §14.1), mirroring envs/nh/actions.py.
 * Every step fails silently where the game would not allow it (the environment does not enforce masks).
 */
#ifndef NH_ACTIONS_H
#define NH_ACTIONS_H

#include <stdint.h>

#include "nh_state.h"

/* actions.apply_action: prayer, food, potion, karambwan, tank gear, Vengeance, attack, movement. */
void nh_apply_action(nh_fight *fight, nh_player *p, const int32_t action[NH_NUM_HEADS]);

/* FightSim.activate_prayers: the set prayers, if any prayer points are left. */
void nh_sim_activate_prayers(nh_fight *fight, nh_player *p, const int32_t *prayers, int32_t n);

/* Loadout.set_prayers[gear_set] activated (§12.3); TANK has the magic set's prayers. */
void nh_activate_set_prayers(nh_fight *fight, nh_player *p, int gear_set);

#endif /* NH_ACTIONS_H */
