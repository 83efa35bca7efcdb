/*
 * nh_masks.h: the 45 environment mask booleans of spec §14.3 in head order, mirroring envs/nh/masks.py
 * (`loadout_facts`, `mask_values`). The §14.2 dependency rules are not applied here (the sampler's job).
 */
#ifndef NH_MASKS_H
#define NH_MASKS_H

#include <stdint.h>

#include "nh_state.h"

/* masks.loadout_facts of a loadout (nh_fight_reset stores both players' in fight->mask_facts). */
void nh_loadout_mask_facts(const nh_loadout *load, nh_mask_facts *out);

/* masks.mask_values for player p of the fight (with fight->mask_facts[p->index]); `known_lunar` is the player's
 * EpisodeStats.known_lunar_opponent. Writes NH_NUM_MASK values (0 / 1) into out. */
void nh_mask_values(const nh_fight *fight, const nh_player *p, int known_lunar, uint8_t *out);

#endif /* NH_MASKS_H */
