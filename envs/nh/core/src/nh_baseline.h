/*
 * nh_baseline.h: the scripted baseline opponent of spec §18, mirroring envs/nh/baseline.py (decide, its
 * fight rules and maintenance, on_hit, idle_walk), including the float32 style estimate of [QUIRK 20].
 */
#ifndef NH_BASELINE_H
#define NH_BASELINE_H

#include <stdint.h>

#include "nh_state.h"

/* baseline.decide: this tick's rules, run before the baseline's timer decrement (§4.1, §18.2). */
void nh_baseline_decide(nh_fight *fight, nh_player *b);
/* baseline.on_hit: eat with the hitpoints the hit will leave (§18.4, §4.5 step 9). */
void nh_baseline_on_hit(nh_player *b, int32_t total);
/* baseline.idle_walk: wander near the spawn tile while idle (§18.4, draws §16.6). */
void nh_baseline_idle_walk(nh_fight *fight, nh_player *b);
/* baseline.style_dps: rule 6's float32 damage-per-second estimate [QUIRK 20, KEEP]. */
float nh_baseline_style_dps(int64_t defence_roll, int protected_);

#endif /* NH_BASELINE_H */
