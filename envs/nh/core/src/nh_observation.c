/* nh_observation.c: §15.2 observations; see nh_observation.h and envs/nh/observation.py (the reference). */
#include "nh_observation.h"

#include <stddef.h>
#include <string.h>

#include "nh_movement.h"


static int32_t remaining(int32_t ticks) { return ticks > 1 ? ticks - 1 : 0; } /* PlayerState.remaining */

static int in_set(const nh_loadout *lo, int gs, int32_t id) {
    for (int32_t i = 0; i < lo->set_len[gs]; i++) {
        if (lo->sets[gs][i] == id) {
            return 1;
        }
    }
    return 0;
}

static int any_in_set(const nh_loadout *lo, int gs, const int32_t *ids, int n) {
    for (int k = 0; k < n; k++) {
        if (in_set(lo, gs, ids[k])) {
            return 1;
        }
    }
    return 0;
}

static int in_ids(int32_t id, const int32_t *ids, int n) {
    for (int k = 0; k < n; k++) {
        if (ids[k] == id) {
            return 1;
        }
    }
    return 0;
}

static int64_t set_sum(const nh_loadout *lo, int gs, int bonus) {
    int64_t total = 0;
    for (int32_t i = 0; i < lo->set_len[gs]; i++) {
        total += nh_item_by_id(lo->sets[gs][i])->bonuses[bonus];
    }
    return total;
}

void nh_observation_static(const nh_loadout *lo, int32_t fight_mode, double *v) {
    memset(v, 0, sizeof(double) * NH_OBS_SIZE);
    const int32_t *b = NH_BUILD_SPECS[lo->build].base_levels;
    v[NH_OBS_ABSOLUTE_ATTACK_LEVEL] = b[NH_SKILL_ATTACK];
    v[NH_OBS_ABSOLUTE_STRENGTH_LEVEL] = b[NH_SKILL_STRENGTH];
    v[NH_OBS_ABSOLUTE_DEFENSE_LEVEL] = b[NH_SKILL_DEFENCE];
    v[NH_OBS_ABSOLUTE_RANGED_LEVEL] = b[NH_SKILL_RANGED];
    v[NH_OBS_ABSOLUTE_MAGIC_LEVEL] = b[NH_SKILL_MAGIC];
    v[NH_OBS_ABSOLUTE_PRAYER_LEVEL] = b[NH_SKILL_PRAYER];
    v[NH_OBS_ABSOLUTE_HITPOINTS_LEVEL] = b[NH_SKILL_HITPOINTS];
    v[NH_OBS_IS_ENCHANTED_DRAGON_BOLT] = any_in_set(lo, NH_GEAR_SET_RANGED, NH_IDS_DRAGONSTONE_BOLTS, NH_IDS_DRAGONSTONE_BOLTS_LEN);
    v[NH_OBS_IS_ENCHANTED_OPAL_BOLT] = any_in_set(lo, NH_GEAR_SET_RANGED, NH_IDS_OPAL_BOLTS, NH_IDS_OPAL_BOLTS_LEN);
    v[NH_OBS_IS_ENCHANTED_DIAMOND_BOLT] = any_in_set(lo, NH_GEAR_SET_RANGED, NH_IDS_DIAMOND_BOLTS, NH_IDS_DIAMOND_BOLTS_LEN);
    int nightmare = in_set(lo, NH_GEAR_SET_MAGIC, NH_ID_VOLATILE_NIGHTMARE_STAFF);
    v[NH_OBS_IS_MAGE_SPEC_WEAPON_LOADOUT] = nightmare;
    v[NH_OBS_IS_MAGE_SPEC_WEAPON_NIGHTMARE_STAFF] = nightmare;
    int32_t rw = nh_weapon_in(lo->sets[NH_GEAR_SET_RANGED], lo->set_len[NH_GEAR_SET_RANGED]);
    v[NH_OBS_IS_RANGED_SPEC_WEAPON_LOADOUT] = rw != NH_EMPTY && nh_special_of(rw) != NULL;
    v[NH_OBS_IS_RANGED_SPEC_WEAPON_ZARYTE_CBOW] = in_set(lo, NH_GEAR_SET_RANGED, NH_ID_ZARYTE_CROSSBOW);
    v[NH_OBS_IS_RANGED_SPEC_WEAPON_BALLISTA] =
        in_set(lo, NH_GEAR_SET_RANGED, NH_ID_LIGHT_BALLISTA) || in_set(lo, NH_GEAR_SET_RANGED, NH_ID_HEAVY_BALLISTA);
    v[NH_OBS_IS_RANGED_SPEC_WEAPON_MORRIGANS_JAVELIN] = in_set(lo, NH_GEAR_SET_RANGED, NH_ID_MORRIGANS_JAVELIN);
    v[NH_OBS_IS_RANGED_SPEC_WEAPON_DRAGON_KNIFE] =
        any_in_set(lo, NH_GEAR_SET_RANGED, NH_IDS_DRAGON_KNIVES, NH_IDS_DRAGON_KNIVES_LEN);
    v[NH_OBS_IS_RANGED_SPEC_WEAPON_DARK_BOW] = in_set(lo, NH_GEAR_SET_RANGED, NH_ID_DARK_BOW);
    int32_t spec = lo->melee_special_weapon;
    v[NH_OBS_IS_MELEE_SPEC_DCLAWS] = spec == NH_ID_DRAGON_CLAWS;
    v[NH_OBS_IS_MELEE_SPEC_DDS] = in_ids(spec, NH_IDS_DRAGON_DAGGERS, NH_IDS_DRAGON_DAGGERS_LEN);
    v[NH_OBS_IS_MELEE_SPEC_AGS] = spec == NH_ID_ARMADYL_GODSWORD;
    v[NH_OBS_IS_MELEE_SPEC_VLS] = spec == NH_ID_VESTAS_LONGSWORD;
    v[NH_OBS_IS_MELEE_SPEC_STAT_HAMMER] = spec == NH_ID_STATIUS_WARHAMMER;
    v[NH_OBS_IS_MELEE_SPEC_ANCIENT_GODSWORD] = spec == NH_ID_ANCIENT_GODSWORD;
    v[NH_OBS_IS_MELEE_SPEC_GMAUL] = spec == NH_ID_GRANITE_MAUL;
    v[NH_OBS_IS_BLOOD_FURY] = in_set(lo, NH_GEAR_SET_MELEE, NH_ID_AMULET_OF_BLOOD_FURY);
    v[NH_OBS_IS_DHAROKS_SET] = in_set(lo, NH_GEAR_SET_MELEE, NH_ID_DHAROKS_GREATAXE);
    v[NH_OBS_IS_ZURIEL_STAFF] = in_set(lo, NH_GEAR_SET_MAGIC, NH_ID_ZURIELS_STAFF);
    v[NH_OBS_MAGIC_ACCURACY] = (double)set_sum(lo, NH_GEAR_SET_MAGIC, NH_BONUS_MAGIC_ATTACK);
    v[NH_OBS_MAGIC_STRENGTH] = (double)set_sum(lo, NH_GEAR_SET_MAGIC, NH_BONUS_MAGIC_DAMAGE_TENTHS) / NH_MAGIC_DAMAGE_TENTHS_PER_PERCENT;
    v[NH_OBS_RANGED_ACCURACY] = (double)set_sum(lo, NH_GEAR_SET_RANGED, NH_BONUS_RANGED_ATTACK);
    v[NH_OBS_RANGED_STRENGTH] = (double)set_sum(lo, NH_GEAR_SET_RANGED, NH_BONUS_RANGED_STRENGTH);
    if (rw != NH_EMPTY) {
        const nh_item *w = nh_item_by_id(rw);
        v[NH_OBS_RANGED_ATTACK_SPEED] = w->attack_speed - 1;
        v[NH_OBS_RANGED_ATTACK_RANGE] = w->weapon_class >= 0 ? NH_WEAPON_CLASS_TABLE[w->weapon_class].ranged_range_tiles : 0;
    }
    v[NH_OBS_MELEE_ACCURACY] = (double)set_sum(lo, NH_GEAR_SET_MELEE, NH_BONUS_SLASH_ATTACK);
    v[NH_OBS_MELEE_STRENGTH] = (double)set_sum(lo, NH_GEAR_SET_MELEE, NH_BONUS_MELEE_STRENGTH);
    int32_t mw = nh_weapon_in(lo->sets[NH_GEAR_SET_MELEE], lo->set_len[NH_GEAR_SET_MELEE]);
    v[NH_OBS_MELEE_ATTACK_SPEED] = mw != NH_EMPTY ? nh_item_by_id(mw)->attack_speed : 0;
    static const int gear_sets[3] = {NH_GEAR_SET_MAGIC, NH_GEAR_SET_RANGED, NH_GEAR_SET_MELEE};
    static const int entries[3][3] = {
        {NH_OBS_MAGIC_GEAR_RANGED_DEFENCE, NH_OBS_MAGIC_GEAR_MAGE_DEFENCE, NH_OBS_MAGIC_GEAR_MELEE_DEFENCE},
        {NH_OBS_RANGED_GEAR_RANGED_DEFENCE, NH_OBS_RANGED_GEAR_MAGE_DEFENCE, NH_OBS_RANGED_GEAR_MELEE_DEFENCE},
        {NH_OBS_MELEE_GEAR_RANGED_DEFENCE, NH_OBS_MELEE_GEAR_MAGE_DEFENCE, NH_OBS_MELEE_GEAR_MELEE_DEFENCE},
    };
    for (int k = 0; k < 3; k++) {
        v[entries[k][0]] = (double)set_sum(lo, gear_sets[k], NH_BONUS_RANGED_DEFENCE);
        v[entries[k][1]] = (double)set_sum(lo, gear_sets[k], NH_BONUS_MAGIC_DEFENCE);
        v[entries[k][2]] = (double)set_sum(lo, gear_sets[k], NH_BONUS_SLASH_DEFENCE);
    }
    v[NH_OBS_IS_LMS_RESTRICTIONS] = fight_mode == NH_FIGHT_MODE_LMS;
    v[NH_OBS_IS_PVP_ARENA_RULES] = fight_mode == NH_FIGHT_MODE_PVP_ARENA;
    v[NH_OBS_IS_PLAYER_LUNAR_SPELLBOOK] = lo->spellbook == NH_SPELLBOOK_LUNAR;
}

/* observation._pending_on: (pending total damage, ticks until the first hit) on a player. */
static void pending_on(const nh_player *q, int32_t *total, int32_t *first) {
    *total = 0;
    *first = -1;
    if (q->n_hit_queue == 0 && q->n_damage_queue == 0) {
        return;
    }
    for (int32_t k = 0; k < q->n_hit_queue; k++) {
        for (int32_t d = 0; d < q->hit_queue[k].n_damages; d++) {
            *total += q->hit_queue[k].damages[d];
        }
    }
    for (int32_t k = 0; k < q->n_damage_queue; k++) {
        *total += q->damage_queue[k];
    }
    *first = q->n_damage_queue > 0 ? 0 : q->hit_queue[0].delay;
}

/* observation._attack_summary, flattened: conf, style[3], off, prayed[3], protected, recent[3],
 * recent_off, recent_correct, recent_prayed[3]. */
typedef struct summary {
    double conf, style[3], off, prayed[3], protected_, recent[3], recent_off, recent_correct, recent_prayed[3];
} summary;

static void attack_summary(const nh_episode_stats *st, summary *s) {
    int32_t n = st->n_hits;
    double w = NH_RECENT_WINDOW;
    double conf = (double)n / (double)NH_CONFIDENCE_HITS;
    s->conf = conf < 1.0 ? conf : 1.0;
    for (int k = 0; k < 3; k++) {
        s->style[k] = n ? (double)st->style_counts[NH_OBS_STYLE_OBS[k]] / n : 0.0;
        s->prayed[k] = n ? (double)st->defender_prayer_counts[NH_OBS_PRAYER_OBS[k]] / n : 0.0;
    }
    s->off = n ? (double)(n - st->protected_count) / n : 0.0;
    s->protected_ = n ? (double)st->protected_count / n : 0.0;
    int32_t styles[3] = {0, 0, 0}, correct = 0, prayed[3] = {0, 0, 0};
    for (int32_t k = 0; k < st->n_recent; k++) {
        const int32_t *r = st->recent[(st->recent_head + k) % NH_RECENT_WINDOW];
        styles[r[0]]++;
        correct += r[1];
    }
    for (int32_t k = 0; k < st->n_recent_prayed; k++) {
        prayed[st->recent_prayed[(st->recent_prayed_head + k) % NH_RECENT_WINDOW]]++;
    }
    for (int k = 0; k < 3; k++) {
        s->recent[k] = styles[NH_OBS_STYLE_OBS[k]] / w;
        s->recent_prayed[k] = prayed[NH_OBS_PRAYER_OBS[k]] / w;
    }
    s->recent_off = (st->n_recent - correct) / w;
    s->recent_correct = correct / w;
}

void nh_encode_observation(const nh_fight *fight, const nh_player *p, const uint8_t *mask, float *out) {
    const nh_player *q = &fight->players[1 - p->index];
    const nh_episode_stats *mine = &fight->stats[p->index], *theirs = &fight->stats[q->index];
    const nh_tick_events *ev_me = &fight->events[p->index], *ev_them = &fight->events[q->index];
    const int32_t *lv = p->level, *base = p->base, *ticks = p->timer_ticks, *qticks = q->timer_ticks;
    double v[NH_OBS_SIZE];
    memcpy(v, fight->obs_static[p->index], sizeof(v));
    int32_t wid = p->equipment[NH_SLOT_WEAPON], qwid = q->equipment[NH_SLOT_WEAPON];
    int32_t fam = nh_weapon_family(wid), tfam = nh_weapon_family(qwid);
    /* inventory facts */
    nh_inventory_facts inv;
    nh_inventory_facts_of(p, &inv);
    const int32_t *doses = inv.doses;
    int32_t sharks = inv.sharks, karambwans = inv.karambwans, anglerfish = inv.anglerfish;
    int32_t primary_food = sharks ? NH_ID_SHARK : anglerfish ? NH_ID_ANGLERFISH : NH_EMPTY;
    double base_hp = base[NH_SKILL_HITPOINTS], q_base_hp = q->base[NH_SKILL_HITPOINTS];
    int32_t distance = nh_distance(p, q);
    int32_t adx = p->x - q->x >= 0 ? p->x - q->x : q->x - p->x, ady = p->y - q->y >= 0 ? p->y - q->y : q->y - p->y;
    int32_t u = p->timer_uncapped[NH_TIMER_ATTACK];
    if (u == NH_TIMER_NEVER_SET) {
        u = (int32_t)NH_FOOD_DELAY_NEVER;
    }
    int32_t pend_t, first_t, pend_p, first_p;
    pending_on(q, &pend_t, &first_t);
    pending_on(p, &pend_p, &first_p);
    int32_t magic = lv[NH_SKILL_MAGIC];
    int ancient = p->loadout.spellbook == NH_SPELLBOOK_ANCIENT; /* the encoder reads the book at reset */
    int32_t dest_to_target, to_dest;
    int32_t max_d = (int32_t)NH_MAX_DISTANCE_OBS;
    if (p->n_walk_queue > 0) {
        int32_t ex, ey;
        nh_queue_end(p, &ex, &ey);
        int32_t a = nh_cheb(ex, ey, q->x, q->y), b = nh_cheb(p->x, p->y, ex, ey);
        dest_to_target = a < max_d ? a : max_d;
        to_dest = b < max_d ? b : max_d;
    } else {
        dest_to_target = distance < max_d ? distance : max_d;
        to_dest = 0;
    }
    double ratio = (mine->dealt_scale_sum + 1) / (mine->received_scale_sum + 1);
    int32_t c_str = base[NH_SKILL_STRENGTH] + NH_COMBAT_BOOST_BY_BASE[base[NH_SKILL_STRENGTH]];
    int32_t c_att = base[NH_SKILL_ATTACK] + NH_COMBAT_BOOST_BY_BASE[base[NH_SKILL_ATTACK]];
    int32_t c_def = base[NH_SKILL_DEFENCE] + NH_COMBAT_BOOST_BY_BASE[base[NH_SKILL_DEFENCE]];
    int32_t c_rng = base[NH_SKILL_RANGED] + NH_RANGING_BOOST_BY_BASE[base[NH_SKILL_RANGED]];
    int32_t sum_p = 0, sum_q = 0;
    for (int32_t k = 0; k < p->n_hitsplats; k++) {
        sum_p += p->hitsplats[k];
    }
    for (int32_t k = 0; k < q->n_hitsplats; k++) {
        sum_q += q->hitsplats[k];
    }
    int their_correct = 0, my_correct = 0;
    for (int32_t k = 0; k < ev_them->n_hits; k++) {
        their_correct |= ev_them->hits[k].defender_protection == ev_them->hits[k].hit.style;
    }
    for (int32_t k = 0; k < ev_me->n_hits; k++) {
        my_correct |= ev_me->hits[k].defender_protection == ev_me->hits[k].hit.style;
    }
    double last_hit = 0.0;
    if (ev_me->n_hits > 0) {
        const nh_pending_hit *h = &ev_me->hits[ev_me->n_hits - 1].hit;
        int32_t total = 0;
        for (int32_t d = 0; d < h->n_damages; d++) {
            total += h->damages[d];
        }
        last_hit = total / q_base_hp;
    }
    int32_t food_delay = u - 1 < -3 ? -3 : u - 1;
    food_delay = (food_delay < 0 ? food_delay : 0) + 3;
    double run0[66] = {
        fam == NH_COMBAT_STYLE_MELEE, fam == NH_COMBAT_STYLE_RANGED, fam == NH_COMBAT_STYLE_MAGIC,
        in_ids(wid, NH_MELEE_SPECIAL_CANDIDATES, NH_MELEE_SPECIAL_CANDIDATES_LEN), p->special_energy,
        nh_has_prayer(p, NH_PRAYER_PROTECT_FROM_MELEE), nh_has_prayer(p, NH_PRAYER_PROTECT_FROM_MISSILES),
        nh_has_prayer(p, NH_PRAYER_PROTECT_FROM_MAGIC), nh_has_prayer(p, NH_PRAYER_SMITE), nh_has_prayer(p, NH_PRAYER_REDEMPTION),
        lv[NH_SKILL_HITPOINTS] / base_hp, mine->observed_opponent_hp,
        tfam == NH_COMBAT_STYLE_MELEE, tfam == NH_COMBAT_STYLE_RANGED, tfam == NH_COMBAT_STYLE_MAGIC,
        in_ids(qwid, NH_MELEE_SPECIAL_CANDIDATES, NH_MELEE_SPECIAL_CANDIDATES_LEN),
        nh_has_prayer(q, NH_PRAYER_PROTECT_FROM_MELEE), nh_has_prayer(q, NH_PRAYER_PROTECT_FROM_MISSILES),
        nh_has_prayer(q, NH_PRAYER_PROTECT_FROM_MAGIC), nh_has_prayer(q, NH_PRAYER_SMITE), nh_has_prayer(q, NH_PRAYER_REDEMPTION),
        q->special_energy, doses[NH_POTION_RANGING], doses[NH_POTION_COMBAT], doses[NH_POTION_RESTORE],
        doses[NH_POTION_BREW], anglerfish + sharks, karambwans, (double)lv[NH_SKILL_PRAYER] / base[NH_SKILL_PRAYER],
        remaining(ticks[NH_TIMER_FREEZE]), remaining(qticks[NH_TIMER_FREEZE]), remaining(ticks[NH_TIMER_FREEZE_IMMUNITY]),
        remaining(qticks[NH_TIMER_FREEZE_IMMUNITY]), adx + ady == 1, (double)lv[NH_SKILL_STRENGTH] / c_str,
        (double)lv[NH_SKILL_ATTACK] / c_att, (double)lv[NH_SKILL_DEFENCE] / c_def, (double)lv[NH_SKILL_RANGED] / c_rng,
        (double)magic / base[NH_SKILL_MAGIC], remaining(ticks[NH_TIMER_ATTACK]), remaining(ticks[NH_TIMER_FOOD]),
        remaining(ticks[NH_TIMER_POTION]), remaining(ticks[NH_TIMER_KARAMBWAN]), food_delay,
        remaining(qticks[NH_TIMER_ATTACK]), remaining(qticks[NH_TIMER_FOOD]), pend_t / q_base_hp, first_t, first_p,
        ev_me->n_hits > 0, ev_them->n_hits > 0, last_hit, sum_p / base_hp, sum_q / q_base_hp,
        p->target == q->index, p->moving, q->moving, p->pid < q->pid, ancient && magic >= NH_ICE_BARRAGE_LEVEL,
        ancient && magic >= NH_BLOOD_BARRAGE_LEVEL, dest_to_target, to_dest, distance < max_d ? distance : max_d,
        ev_them->n_hits > 0 && their_correct, ev_me->n_hits > 0 && my_correct,
        ratio < NH_DAMAGE_RATIO_CLAMP[0] ? NH_DAMAGE_RATIO_CLAMP[0]
                                         : (ratio > NH_DAMAGE_RATIO_CLAMP[1] ? NH_DAMAGE_RATIO_CLAMP[1] : ratio),
    };
    memcpy(&v[NH_OBS_PLAYER_USING_MELEE], run0, sizeof(run0));
    /* 66-95: hit statistics (observation._hit_statistics) */
    summary m, t;
    attack_summary(mine, &m);
    attack_summary(theirs, &t);
    double stats[30] = {
        t.conf, t.style[0], t.style[1], t.style[2], m.style[0], m.style[1], m.style[2], t.off, m.conf,
        m.prayed[0], m.prayed[1], m.prayed[2], t.prayed[0], t.prayed[1], t.prayed[2], m.protected_,
        t.recent[0], t.recent[1], t.recent[2], m.recent[0], m.recent[1], m.recent[2], t.recent_off,
        m.recent_prayed[0], m.recent_prayed[1], m.recent_prayed[2], t.recent_prayed[0], t.recent_prayed[1],
        t.recent_prayed[2], m.recent_correct,
    };
    memcpy(&v[NH_OBS_TARGET_ATTACK_CONFIDENCE], stats, sizeof(stats));
    /* 142-159: the target's visible gear, then its offensive gear samples (or the observer's own totals) */
    int32_t vis[NH_NUM_BONUSES] = {0};
    for (int s = 0; s < NH_NUM_SLOTS; s++) {
        int32_t id = q->equipment[s];
        if (id == NH_EMPTY || s == NH_SLOT_RING || s == NH_SLOT_AMMO) {
            continue;
        }
        const nh_item *item = nh_item_by_id(id);
        for (int b = 0; b < NH_NUM_BONUSES; b++) {
            vis[b] += item->bonuses[b];
        }
    }
    v[NH_OBS_TARGET_CURRENT_GEAR_RANGED_DEFENCE] = vis[NH_BONUS_RANGED_DEFENCE];
    v[NH_OBS_TARGET_CURRENT_GEAR_MAGE_DEFENCE] = vis[NH_BONUS_MAGIC_DEFENCE];
    v[NH_OBS_TARGET_CURRENT_GEAR_MELEE_DEFENCE] = vis[NH_BONUS_SLASH_DEFENCE];
    for (int k = 0; k < (int)(sizeof(NH_OBS_TARGET_SAMPLES) / sizeof(NH_OBS_TARGET_SAMPLES[0])); k++) {
        const int32_t *row = NH_OBS_TARGET_SAMPLES[k]; /* (entry, style, bonus, default entry) */
        if (!theirs->has_gear_sample[row[1]]) {
            v[row[0]] = (double)(float)v[row[3]]; /* the default as stored (a float32 entry of the static block) */
        } else {
            int32_t value = theirs->gear_samples[row[1]][row[2]];
            v[row[0]] = row[2] == NH_BONUS_MAGIC_DAMAGE_TENTHS ? (double)value / NH_MAGIC_DAMAGE_TENTHS_PER_PERCENT : value;
        }
    }
    v[NH_OBS_IS_VENG_ACTIVE] = p->vengeance;
    v[NH_OBS_IS_TARGET_VENG_ACTIVE] = q->vengeance;
    /* 165-175 */
    v[NH_OBS_IS_TARGET_LUNAR_SPELLBOOK] = mine->known_lunar_opponent;
    v[NH_OBS_IS_TARGET_LUNAR_SPELLBOOK + 1] = remaining(ticks[NH_TIMER_VENGEANCE_COOLDOWN]);
    v[NH_OBS_IS_TARGET_LUNAR_SPELLBOOK + 2] = remaining(qticks[NH_TIMER_VENGEANCE_COOLDOWN]);
    const int32_t mage = NH_HEAD_OFFSETS[3], ranged = NH_HEAD_OFFSETS[2], melee = NH_HEAD_OFFSETS[1];
    const int32_t from_mask[7] = {mage + 2, mage + 1, mage + 3, ranged + 1, ranged + 2, melee + 1, melee + 2};
    for (int k = 0; k < 7; k++) {
        v[NH_OBS_IS_TARGET_LUNAR_SPELLBOOK + 3 + k] = mask[from_mask[k]];
    }
    v[NH_OBS_IS_FOOD_ANGLERFISH] = primary_food == NH_ID_ANGLERFISH;
    for (int k = 0; k < NH_OBS_SIZE; k++) {
        out[k] = (float)v[k];
    }
}
