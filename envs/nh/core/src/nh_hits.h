/*
 * nh_hits.h: the random rolls of one attack (spec §6.5, §6.8, §6.9, draw order §16.6), given the attack
 * already resolved from both players. Mirrors envs/nh/combat.py: `_Attack`/`_BoltEffect` are the structs
 * below, and nh_ordinary_hit / nh_claws_hitsplats / nh_vesta_hit are `_ordinary_hit` / `_claws_hitsplats`
 * / `_vesta_hit`, drawing the same numbers in the same order from the same generator.
 *
 * Resolving the attack (attack and defence rolls, damage range, bolt, Dharok's) needs the player state
 * layout, which is the next port step (docs/compiled-core.md); until then the differential test builds
 * the attacks itself.
 */
#ifndef NH_HITS_H
#define NH_HITS_H

#include <stdint.h>

#include "nh_rng.h"

#define NH_BOLT_NONE (-1) /* no enchanted bolt (combat.py: `bolt is None`) */

/* combat._BoltEffect */
typedef struct nh_bolt_effect {
    int32_t kind;     /* NH_BOLT_OPAL / _DIAMOND / _DRAGONSTONE (nh_tables.h) or NH_BOLT_NONE */
    double chance;    /* proc chance of one roll */
    int guaranteed;   /* Zaryte special: proc without a roll when the hit is accurate */
    int64_t bonus;    /* opal / dragonstone damage added */
    int64_t fresh_max; /* diamond: the fresh roll's max */
} nh_bolt_effect;

/* combat._Attack, less what only resolution needs; `retry_chance` is Vesta's second accuracy chance,
 * which combat.py computes on a miss from the defender's melee defence roll (no draw involved). */
typedef struct nh_attack {
    double chance;
    double retry_chance;
    int64_t low;
    int64_t high;
    int protected_; /* a matching protection prayer */
    int clamp;      /* dark-bow special arrow */
    int has_dharok;
    int64_t dharok_base_hp;
    int64_t dharok_hp;
    nh_bolt_effect bolt;
} nh_attack;

/* One ordinary hit: accuracy, damage, bolt, clamp, prayer. Returns the hitsplat; *accurate as combat.py. */
int64_t nh_ordinary_hit(nh_rng *rng, const nh_attack *atk, int *accurate);

/* Dragon claws' four hitsplats into out[4]. */
void nh_claws_hitsplats(nh_rng *rng, const nh_attack *atk, int64_t out[4], int *accurate);

/* Vesta's longsword special. */
int64_t nh_vesta_hit(nh_rng *rng, const nh_attack *atk, int *accurate);

#endif /* NH_HITS_H */
