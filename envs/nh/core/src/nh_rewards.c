/* nh_rewards.c: rewards.py's signals_for and compute_reward (spec §17), operation for operation. */
#include "nh_rewards.h"

#include <math.h>
#include <stddef.h>

#include "nh_data.h"
#include "nh_operations.h"
#include "nh_sim.h"
#include "nh_tables.h"


double nh_schedule_value(const nh_schedule *w, double progress) {
    if (!w->is_schedule) {
        return w->a;
    }
    if (!(w->n > 0)) {
        return w->b;
    }
    double t = progress / w->n;
    return w->a + (w->b - w->a) * (t < 1.0 ? t : 1.0); /* Python's min(1.0, t) */
}

void nh_set_reward_progress(nh_reward_weights *w, double progress) {
    w->progress = progress;
    for (int k = 0; k < NH_NUM_SCHEDULED_WEIGHTS; k++) {
        w->resolved[k] = nh_schedule_value(&w->scheduled[k], progress);
    }
}

/* rewards._food_total: Σ count × nominal heal over carried food, in hitpoints (§17.1). */
static int32_t food_total(const nh_player *p, int32_t base_hp, int32_t *brew_doses) {
    nh_inventory_facts inv;
    nh_inventory_facts_of(p, &inv);
    *brew_doses = inv.doses[NH_POTION_BREW];
    return inv.sharks * nh_nominal_heal(NH_ID_SHARK, base_hp) +
           inv.karambwans * nh_nominal_heal(NH_ID_KARAMBWAN, base_hp) +
           inv.anglerfish * nh_nominal_heal(NH_ID_ANGLERFISH, base_hp);
}


static int32_t hit_total(const nh_pending_hit *h) {
    int32_t total = 0;
    for (int32_t d = 0; d < h->n_damages; d++) {
        total += h->damages[d];
    }
    return total;
}

static int32_t hits_total(const nh_tick_events *ev) {
    int32_t total = 0;
    for (int32_t k = 0; k < ev->n_hits; k++) {
        total += hit_total(&ev->hits[k].hit);
    }
    return total;
}

static int32_t splats_total(const nh_player *p) {
    int32_t total = 0;
    for (int32_t k = 0; k < p->n_hitsplats; k++) {
        total += p->hitsplats[k];
    }
    return total;
}

void nh_signals_for(const nh_fight *fight, int32_t pi, nh_signals *s) {
    const nh_player *p = &fight->players[pi], *q = &fight->players[1 - pi];
    const nh_tick_events *me = &fight->events[pi], *them = &fight->events[1 - pi];
    const int32_t *lv = p->level, *base = p->base;
    double bp = base[NH_SKILL_HITPOINTS], bq = q->base[NH_SKILL_HITPOINTS];
    s->damage_generated_on_target_scale = (double)hits_total(me) / bq;
    s->damage_generated_on_player_scale = (double)hits_total(them) / bp;
    s->damage_dealt = (double)splats_total(q) / bq;
    s->damage_received = (double)splats_total(p) / bp;
    s->extra_damage_dealt_on_target_scale = (double)me->extra_damage_dealt / bq;
    s->extra_damage_dealt_on_player_scale = (double)them->extra_damage_dealt / bp;
    s->hit_with_smite = me->n_hits > 0 && me->hits[me->n_hits - 1].smite;
    s->target_attacked_with_smite = them->n_hits > 0 && them->hits[them->n_hits - 1].smite;
    s->player_healed_scale = (double)me->healed / bp;
    s->target_healed_scale = !q->is_baseline ? (double)them->healed / bq : 0.0;
    s->current_target_prayer_type = nh_protection_style(q);
    s->target_attack_style_type = nh_weapon_family(q->equipment[NH_SLOT_WEAPON]);
    s->player_frozen_ticks = p->timer_ticks[NH_TIMER_FREEZE];
    s->target_frozen_ticks = q->timer_ticks[NH_TIMER_FREEZE];
    s->current_prayer_percent = (double)lv[NH_SKILL_PRAYER] / base[NH_SKILL_PRAYER];
    s->attack_level_scale = (double)lv[NH_SKILL_ATTACK] / base[NH_SKILL_ATTACK];
    s->strength_level_scale = (double)lv[NH_SKILL_STRENGTH] / base[NH_SKILL_STRENGTH];
    s->defence_level_scale = (double)lv[NH_SKILL_DEFENCE] / base[NH_SKILL_DEFENCE];
    s->ranged_level_scale = (double)lv[NH_SKILL_RANGED] / base[NH_SKILL_RANGED];
    s->magic_level_scale = (double)lv[NH_SKILL_MAGIC] / base[NH_SKILL_MAGIC];
    int32_t ibp = base[NH_SKILL_HITPOINTS], ibq = q->base[NH_SKILL_HITPOINTS], doses, q_doses;
    s->remaining_food_scale = (double)food_total(p, ibp, &doses) / bp;
    s->target_remaining_food_scale = (double)food_total(q, ibq, &q_doses) / bq;
    s->remaining_brew_scale = (double)(doses * NH_BREW_HP_BOOST_BY_BASE[ibp]) / bp;
    s->target_remaining_brew_scale = (double)(q_doses * NH_BREW_HP_BOOST_BY_BASE[ibq]) / bq;
    s->has_received = them->n_hits > 0;
    if (s->has_received) {
        const nh_hit_record *last = &them->hits[them->n_hits - 1];
        s->protected_prayer = last->defender_protection == last->hit.style;
        s->target_hit_attack_speed = last->attack_speed;
        s->attack_type_received = last->hit.style;
        s->player_prayer_type = last->defender_protection;
    } else {
        s->protected_prayer = s->target_hit_attack_speed = 0;
        s->attack_type_received = s->player_prayer_type = NH_NO_STYLE;
    }
    s->has_hit = me->n_hits > 0;
    if (s->has_hit) {
        const nh_hit_record *last = &me->hits[me->n_hits - 1];
        s->hit_off_prayer = last->defender_protection != last->hit.style;
        s->player_hit_attack_speed = last->attack_speed;
        s->attack_type_hit = last->hit.style;
        s->target_prayer_type = last->defender_protection;
    } else {
        s->hit_off_prayer = s->player_hit_attack_speed = 0;
        s->attack_type_hit = s->target_prayer_type = NH_NO_STYLE;
    }
    s->has_eat_at = me->eat_at_hp != NH_NO_VALUE;
    s->eat_at_food_scale = s->has_eat_at ? (double)me->eat_at_hp / bp : 0.0;
    s->has_wasted_food = me->wasted_food > 0;
    s->wasted_food_scale = s->has_wasted_food ? (double)me->wasted_food / bp : 0.0;
    s->has_wasted_brew = me->wasted_brew > 0;
    s->wasted_brew_scale = s->has_wasted_brew ? (double)me->wasted_brew / bp : 0.0;
}

/* rewards._term: record `value` as it enters the reward (times `sign`) and return it unchanged. */
static inline double term(double *parts, int key, double value, double sign) {
    if (parts != NULL) {
        parts[key] = parts[key] + sign * value;
    }
    return value;
}

/* rewards._died_with_food: (scale + offset) ^ exponent, 1 for exponent 0 (§17.3). */
static double died_with_food(const nh_reward_weights *w, double scale) {
    double exponent = w->floats[NH_FW_PLAYER_DIED_WITH_FOOD_EXPONENT];
    if (exponent == 0) {
        return 1.0;
    }
    return pow(scale + w->floats[NH_FW_PLAYER_DIED_WITH_FOOD_OFFSET], exponent);
}

static double boost_signal(const nh_signals *s, int32_t style) { /* rewards._BOOST_SIGNAL (§17.2 step 15) */
    return style == NH_COMBAT_STYLE_MELEE ? s->strength_level_scale
           : style == NH_COMBAT_STYLE_RANGED ? s->ranged_level_scale
                                             : s->magic_level_scale;
}

double nh_compute_reward(const nh_reward_weights *w, const nh_signals *s, const nh_signals *prev, int32_t outcome,
                         double *parts) {
    const double *v = w->resolved;
    const int32_t *sw = w->switches;
    double wd = v[NH_W_DAMAGE_DEALT_REWARD_SCALE], wr = v[NH_W_DAMAGE_RECEIVED_REWARD_SCALE];
    double dealt, received;
    if (sw[NH_SW_REWARD_ON_DAMAGE_GENERATED]) {
        dealt = s->damage_generated_on_target_scale;
        received = s->damage_generated_on_player_scale;
    } else {
        dealt = s->damage_dealt;
        received = s->damage_received;
    }
    double r = term(parts, NH_RC_DEFAULT, v[NH_W_DEFAULT_REWARD], 1.0);
    r += term(parts, NH_RC_DAMAGE, wd * dealt + wr * received, 1.0);
    r += term(parts, NH_RC_DAMAGE,
              wd * s->extra_damage_dealt_on_target_scale + wr * s->extra_damage_dealt_on_player_scale, 1.0);
    if (s->hit_with_smite) {
        r += term(parts, NH_RC_SMITE, v[NH_W_SMITE_DEALT_MULTIPLIER] * wd * dealt, 1.0);
    }
    if (s->target_attacked_with_smite) {
        r += term(parts, NH_RC_SMITE, v[NH_W_SMITE_RECEIVED_MULTIPLIER] * wr * received, 1.0);
    }
    if (sw[NH_SW_REWARD_HEALS]) {
        r -= term(parts, NH_RC_HEALS, wr * s->player_healed_scale, -1.0);
    }
    if (sw[NH_SW_PENALIZE_TARGET_HEALS]) {
        r -= term(parts, NH_RC_HEALS, wd * s->target_healed_scale, -1.0);
    }
    if (s->has_eat_at) {
        r -= term(parts, NH_RC_SAFE, v[NH_W_SAFE_PENALTY], -1.0);
    }
    if (s->current_prayer_percent == 0) {
        r += term(parts, NH_RC_NO_PRAYER, v[NH_W_NO_PRAYER_TICK_REWARD], 1.0);
    }
    if (s->has_received) {
        double weight = s->protected_prayer ? v[NH_W_PROTECTED_CORRECT] : v[NH_W_PROTECTED_WRONG];
        r += term(parts, NH_RC_PRAYER, weight * s->target_hit_attack_speed / NH_SPEED_NORMALISER, 1.0);
    }
    if (s->has_hit) {
        double weight = s->hit_off_prayer ? v[NH_W_ATTACKED_CORRECT] : v[NH_W_ATTACKED_WRONG];
        r += term(parts, NH_RC_OFF_PRAYER_HITS, weight * s->player_hit_attack_speed / NH_SPEED_NORMALISER, 1.0);
    }
    if (prev != NULL) {
        if (s->has_hit) {
            int off = s->attack_type_hit != prev->current_target_prayer_type;
            double weight = off ? v[NH_W_ATTACKED_PREV_CORRECT] : v[NH_W_ATTACKED_PREV_WRONG];
            r += term(parts, NH_RC_OFF_PRAYER_HITS, weight * s->player_hit_attack_speed / NH_SPEED_NORMALISER, 1.0);
        }
        if (s->has_received) {
            int correct = s->player_prayer_type == prev->target_attack_style_type;
            double weight = correct ? v[NH_W_PROTECTED_PREV_CORRECT] : v[NH_W_PROTECTED_PREV_WRONG];
            r += term(parts, NH_RC_PRAYER, weight * s->target_hit_attack_speed / NH_SPEED_NORMALISER, 1.0);
        }
        int32_t inc_p = s->player_frozen_ticks - prev->player_frozen_ticks;
        if (inc_p > 0) {
            r += term(parts, NH_RC_FREEZE, inc_p * v[NH_W_PLAYER_FROZEN_TICK_REWARD], 1.0);
        }
        int32_t inc_t = s->target_frozen_ticks - prev->target_frozen_ticks;
        if (inc_t > 0) {
            r += term(parts, NH_RC_FREEZE, inc_t * v[NH_W_TARGET_FROZEN_TICK_REWARD], 1.0);
        }
    }
    r += term(parts, NH_RC_LEVELS, (s->attack_level_scale - 1) * v[NH_W_ATTACK_LEVEL_SCALE_REWARD], 1.0);
    r += term(parts, NH_RC_LEVELS, (s->strength_level_scale - 1) * v[NH_W_STRENGTH_LEVEL_SCALE_REWARD], 1.0);
    r += term(parts, NH_RC_LEVELS, (s->defence_level_scale - 1) * v[NH_W_DEFENCE_LEVEL_SCALE_REWARD], 1.0);
    r += term(parts, NH_RC_LEVELS, (s->ranged_level_scale - 1) * v[NH_W_RANGED_LEVEL_SCALE_REWARD], 1.0);
    r += term(parts, NH_RC_LEVELS, (s->magic_level_scale - 1) * v[NH_W_MAGIC_LEVEL_SCALE_REWARD], 1.0);
    if (s->has_hit) {
        double boosted = boost_signal(s, s->attack_type_hit);
        if (boosted > 1) {
            r += term(parts, NH_RC_BOOSTED_HITS, (boosted - 1) * v[NH_W_REWARD_ON_HIT_WITH_BOOST_SCALE], 1.0);
        }
    }
    if (sw[NH_SW_PENALIZE_WASTED_FOOD]) {
        double food = s->wasted_food_scale, brew = s->wasted_brew_scale; /* 0.0 when absent, as s.get(.., 0.0) */
        double m = v[NH_W_PLAYER_WASTED_FOOD_MULTIPLIER];
        r += term(parts, NH_RC_WASTED_FOOD, wr * food * m + wr * brew * m, 1.0);
    }
    if (outcome == NH_OUTCOME_WON) {
        r += term(parts, NH_RC_OUTCOME, v[NH_W_WIN_REWARD], 1.0);
        if (sw[NH_SW_REWARD_TARGET_FOOD_ON_DEATH]) {
            double m = died_with_food(w, s->target_remaining_food_scale + s->target_remaining_brew_scale);
            r += term(parts, NH_RC_FOOD_ON_DEATH,
                      wd * s->target_remaining_food_scale * m + wd * s->target_remaining_brew_scale * m, 1.0);
        }
    } else if (outcome == NH_OUTCOME_LOST) {
        r += term(parts, NH_RC_OUTCOME, v[NH_W_LOSE_REWARD], 1.0);
        if (sw[NH_SW_PENALIZE_FOOD_ON_DEATH]) {
            double m = died_with_food(w, s->remaining_food_scale + s->remaining_brew_scale);
            r += term(parts, NH_RC_FOOD_ON_DEATH, wr * s->remaining_food_scale * m + wr * s->remaining_brew_scale * m,
                      1.0);
        }
    } else if (outcome == NH_OUTCOME_TIED) {
        r += term(parts, NH_RC_OUTCOME, v[NH_W_TIE_REWARD], 1.0);
    }
    return r;
}

void nh_step_rewards(const nh_fight *fight, const nh_reward_weights *w, const int32_t outcomes[2], nh_reward_state *st) {
    for (int32_t i = 0; i < 2; i++) {
        st->rewards[i] = 0.0;
        for (int k = 0; k < NH_NUM_REWARD_COMPONENTS; k++) {
            st->parts[i][k] = 0.0;
        }
        if (fight->players[i].is_baseline) {
            st->has_signals[i] = 0;
            continue;
        }
        nh_signals s;
        nh_signals_for(fight, i, &s);
        st->rewards[i] = nh_compute_reward(w, &s, st->has_signals[i] ? &st->signals[i] : NULL, outcomes[i], st->parts[i]);
        st->signals[i] = s;
        st->has_signals[i] = 1;
    }
}
