/* nh_hits.c: one attack's rolls; see nh_hits.h and envs/nh/combat.py (the reference). */
#include "nh_hits.h"

#include "nh_formulas.h"
#include "nh_tables.h"

/* combat._rolled_damage: U[low, high], accurate 0 -> 1, then Dharok's (§6.5 steps 2-4). */
static int64_t rolled_damage(nh_rng *rng, const nh_attack *atk) {
    int64_t damage = nh_accurate_zero_to_one(nh_rng_uniform(rng, atk->low, atk->high));
    if (atk->has_dharok) {
        damage = nh_dharok_damage(damage, atk->dharok_base_hp, atk->dharok_hp);
    }
    return damage;
}

/* combat._apply_bolt: the proc roll is skipped when guaranteed or impossible (§6.8, §16.6). */
static int64_t apply_bolt(nh_rng *rng, const nh_bolt_effect *bolt, int64_t damage, int *accurate) {
    if (bolt->kind == NH_BOLT_DRAGONSTONE) {
        if (*accurate && (bolt->guaranteed || nh_rng_chance(rng, bolt->chance))) {
            damage += bolt->bonus;
        }
        return damage;
    }
    if (!((bolt->guaranteed && *accurate) || nh_rng_chance(rng, bolt->chance))) {
        return damage;
    }
    if (bolt->kind == NH_BOLT_OPAL) {
        return damage + bolt->bonus;
    }
    *accurate = 1; /* diamond: a fresh roll that counts as accurate */
    return nh_accurate_zero_to_one(nh_rng_uniform(rng, 0, bolt->fresh_max));
}

/* combat._finish: protection prayer, the last step of every hitsplat (§6.5 step 5). */
static int64_t finish(const nh_attack *atk, int64_t damage) {
    return atk->protected_ ? nh_protected_damage(damage) : damage;
}

int64_t nh_ordinary_hit(nh_rng *rng, const nh_attack *atk, int *accurate) {
    *accurate = nh_rng_chance(rng, atk->chance);
    int64_t damage = *accurate ? rolled_damage(rng, atk) : 0;
    if (atk->bolt.kind != NH_BOLT_NONE) {
        damage = apply_bolt(rng, &atk->bolt, damage, accurate);
    }
    if (atk->clamp) {
        damage = nh_dark_bow_special_clamp(damage);
        *accurate = 1;
    }
    return finish(atk, damage);
}

void nh_claws_hitsplats(nh_rng *rng, const nh_attack *atk, int64_t out[4], int *accurate) {
    for (int64_t k = 1; k <= NH_CLAW_HITSPLATS; k++) {
        if (nh_rng_chance(rng, atk->chance)) {
            int64_t range[2];
            nh_claw_total_range(k, atk->high, range);
            nh_claw_hitsplats(k, nh_rng_uniform(rng, range[0], range[1]), out);
            for (int i = 0; i < 4; i++) {
                out[i] = finish(atk, out[i]);
            }
            *accurate = 1;
            return;
        }
    }
    const int64_t *splats = nh_rng_chance(rng, NH_CLAW_ALL_MISS_CHANCE) ? NH_CLAW_ALL_MISS_HIT : NH_CLAW_ALL_MISS_ZERO;
    for (int i = 0; i < 4; i++) {
        out[i] = finish(atk, splats[i]);
    }
    *accurate = 0;
}

int64_t nh_vesta_hit(nh_rng *rng, const nh_attack *atk, int *accurate) {
    if (nh_rng_chance(rng, atk->chance)) {
        *accurate = 1;
        return finish(atk, nh_accurate_zero_to_one(nh_rng_uniform(rng, atk->low, atk->high)));
    }
    *accurate = nh_rng_chance(rng, atk->retry_chance);
    return 0;
}
