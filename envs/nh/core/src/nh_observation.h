/*
 * nh_observation.h: the 176-entry observation of spec §15.2, mirroring envs/nh/observation.py
 * (`static_block` and `ObservationEncoder.encode`). Every value is computed in double, as Python does,
 * and rounded once to float32 when stored, as numpy / struct 'f' store it.
 */
#ifndef NH_OBSERVATION_H
#define NH_OBSERVATION_H

#include <stdint.h>

#include "nh_state.h"

/* observation.static_block: the entries fixed for an episode (96-141, 160, 161, 164), others 0, as doubles. */
void nh_observation_static(const nh_loadout *lo, int32_t fight_mode, double *out);

/* Player p's observation (its static entries from fight->obs_static) at the end of the tick into out[NH_OBS_SIZE]; `mask` is p's 45 masks of this tick. */
void nh_encode_observation(const nh_fight *fight, const nh_player *p, const uint8_t *mask, float *out);

#endif /* NH_OBSERVATION_H */
