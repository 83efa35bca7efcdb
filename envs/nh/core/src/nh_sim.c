/* nh_sim.c: the tick (§4.1); see nh_sim.h and envs/nh/sim.py (the reference). */
#include "nh_sim.h"

#include <string.h>

#include "nh_actions.h"
#include "nh_baseline.h"
#include "nh_combat.h"
#include "nh_movement.h"
#include "nh_operations.h"


static void fail(nh_fight *fight, int32_t err) {
    if (fight->error == 0) {
        fight->error = err;
    }
}

/* ---- queues with bounds ---- */

static void push_damage(nh_fight *fight, nh_player *v, int32_t amount) {
    if (v->n_damage_queue >= NH_MAX_DAMAGE_QUEUE) {
        fail(fight, NH_ERR_QUEUE_FULL);
        return;
    }
    v->damage_queue[v->n_damage_queue++] = amount;
}

/* ---- scheduled tasks (§4.1 step 1) ---- */

static nh_task *schedule(nh_fight *fight, int32_t kind, int32_t period, int32_t player, int32_t other) {
    if (fight->n_tasks >= NH_MAX_TASKS) {
        fail(fight, NH_ERR_TASKS_FULL);
        return NULL;
    }
    nh_task *task = &fight->tasks[fight->n_tasks++];
    memset(task, 0, sizeof(*task));
    task->kind = kind;
    task->next_tick = fight->tick + period;
    task->period = period;
    task->player = player;
    task->other = other;
    return task;
}

/* FightSim._drain_prayer: one run of the drain task (§7.3); returns whether it keeps running. */
static int drain_prayer(nh_player *p) {
    if (p->prayers == 0 || nh_hp(p) <= 0) {
        p->prayer_drain_acc = 0.0;
        p->prayer_drain_running = 0;
        return 0;
    }
    int32_t drain = 0;
    for (int32_t k = 0; k < NH_NUM_PRAYERS; k++) {
        if (nh_has_prayer(p, k)) {
            drain += NH_PRAYER_TABLE[k].drain_per_minute;
        }
    }
    /* drain / 100 / (1 + 0.0333 × prayer bonus), in Python's order of float operations */
    double per_tick = (double)drain / 100.0 / (1.0 + NH_PRAYER_BONUS_DRAIN_FACTOR * (double)p->bonuses[NH_BONUS_PRAYER]);
    p->prayer_drain_acc += per_tick;
    if (p->prayer_drain_acc >= 1.0) {
        int32_t whole = (int32_t)p->prayer_drain_acc;
        p->level[NH_SKILL_PRAYER] = nh_max32(0, p->level[NH_SKILL_PRAYER] - whole);
        p->prayer_drain_acc -= whole;
        if (p->level[NH_SKILL_PRAYER] == 0) {
            nh_deactivate_all_prayers(p);
            p->prayer_drain_acc = 0.0;
            p->prayer_drain_running = 0;
            return 0;
        }
    }
    return 1;
}

static int run_task(nh_fight *fight, nh_task *task) {
    nh_player *p = &fight->players[task->player];
    nh_player *other = task->other != NH_NO_PLAYER ? &fight->players[task->other] : NULL;
    switch (task->kind) {
    case NH_TASK_RETALIATION:
        p->target = task->other;
        return 0;
    case NH_TASK_SACRIFICE: /* p attacker, other victim */
        task->counter++;
        if (nh_distance(p, other) >= NH_SACRIFICE_CANCEL_DISTANCE_TILES) {
            return 0;
        }
        if (task->counter < NH_SACRIFICE_RUNS) {
            return 1;
        }
        push_damage(fight, other, (int32_t)NH_SACRIFICE_DAMAGE);
        fight->events[p->index].extra_damage_dealt += (int32_t)NH_SACRIFICE_DAMAGE;
        fight->events[p->index].healed += nh_effect_heal(p, (int32_t)NH_SACRIFICE_DAMAGE);
        return 0;
    case NH_TASK_BLEED: { /* p attacker, other victim; amount = dealt so far */
        if (p->dying || other->dying) {
            return 0;
        }
        task->counter++;
        if (task->counter % NH_BLEED_EVERY_TICKS) {
            return 1;
        }
        int32_t amount = nh_min32((int32_t)NH_BLEED_MAX_PER_TICK, task->total - task->amount);
        task->amount += amount;
        push_damage(fight, other, amount);
        fight->events[p->index].extra_damage_dealt += amount;
        return task->amount < task->total;
    }
    case NH_TASK_POISON: { /* p victim */
        if (p->dying || p->poison_damage == 0) {
            return 0;
        }
        task->counter++;
        if (task->counter % NH_POISON_DECAY_EVERY == 0) {
            p->poison_damage -= 1;
        }
        int32_t amount = p->poison_damage;
        push_damage(fight, p, amount);
        if (amount <= 1) {
            p->poison_damage = 0;
            return 0;
        }
        return 1;
    }
    case NH_TASK_SPECIAL_REGEN:
        p->special_energy = nh_min32((int32_t)NH_MAX_SPECIAL_ENERGY, p->special_energy + (int32_t)NH_SPECIAL_REGEN_AMOUNT);
        if (p->special_energy >= NH_MAX_SPECIAL_ENERGY) {
            p->special_regen_running = 0;
            return 0;
        }
        return 1;
    case NH_TASK_PRAYER_DRAIN:
        return drain_prayer(p);
    default:
        return 0;
    }
}

/* FightSim._run_tasks: the tasks due now, in creation order; finished ones leave the list. */
static void run_tasks(nh_fight *fight) {
    int32_t tick = fight->tick, n = fight->n_tasks;
    int finished[NH_MAX_TASKS] = {0};
    int any = 0;
    for (int32_t k = 0; k < n; k++) { /* tasks scheduled while running are not due this tick */
        nh_task *task = &fight->tasks[k];
        if (task->next_tick != tick) {
            continue;
        }
        if (run_task(fight, task)) {
            task->next_tick = tick + task->period;
        } else {
            finished[k] = 1;
            any = 1;
        }
    }
    if (!any) {
        return;
    }
    int32_t kept = 0;
    for (int32_t k = 0; k < fight->n_tasks; k++) {
        if (k < n && finished[k]) {
            continue;
        }
        fight->tasks[kept++] = fight->tasks[k];
    }
    fight->n_tasks = kept;
}

/* ---- shared mechanisms ---- */

void nh_sim_drain_special(nh_fight *fight, nh_player *p, int32_t amount) {
    p->special_energy = nh_max32(0, p->special_energy - amount);
    if (p->special_regen_running) {
        return;
    }
    p->special_regen_running = 1;
    schedule(fight, NH_TASK_SPECIAL_REGEN, (int32_t)NH_SPECIAL_REGEN_PERIOD_TICKS, p->index, NH_NO_PLAYER);
}

void nh_sim_activate_prayer(nh_fight *fight, nh_player *p, int32_t prayer) {
    if (nh_activate_prayer(p, prayer) && !p->prayer_drain_running) {
        p->prayer_drain_running = 1;
        schedule(fight, NH_TASK_PRAYER_DRAIN, 1, p->index, NH_NO_PLAYER);
    }
}

int32_t nh_protection_style(const nh_player *p) {
    if (nh_has_prayer(p, NH_PRAYER_PROTECT_FROM_MAGIC)) {
        return NH_COMBAT_STYLE_MAGIC;
    }
    if (nh_has_prayer(p, NH_PRAYER_PROTECT_FROM_MISSILES)) {
        return NH_COMBAT_STYLE_RANGED;
    }
    if (nh_has_prayer(p, NH_PRAYER_PROTECT_FROM_MELEE)) {
        return NH_COMBAT_STYLE_MELEE;
    }
    return -1;
}

/* stats.visible_bonuses: worn bonuses without ring and ammo (§15.2 142-159). */
static void visible_bonuses(const nh_player *p, int32_t out[NH_NUM_BONUSES]) {
    memset(out, 0, sizeof(int32_t) * NH_NUM_BONUSES);
    for (int slot = 0; slot < NH_NUM_SLOTS; slot++) {
        int32_t id = p->equipment[slot];
        if (id == NH_EMPTY || slot == NH_SLOT_RING || slot == NH_SLOT_AMMO) {
            continue;
        }
        const nh_item *item = nh_item_by_id(id);
        for (int b = 0; b < NH_NUM_BONUSES; b++) {
            out[b] += item->bonuses[b];
        }
    }
}

/* EpisodeStats.record_hit. */
static void record_hit(nh_episode_stats *st, const nh_player *attacker, int32_t style, int32_t protection) {
    st->n_hits++;
    st->style_counts[style]++;
    int correct = protection == style;
    if (protection >= 0) {
        st->defender_prayer_counts[protection]++;
        if (st->n_recent_prayed == NH_RECENT_WINDOW) { /* deque(maxlen=5): the oldest falls out */
            st->recent_prayed_head = (st->recent_prayed_head + 1) % NH_RECENT_WINDOW;
            st->n_recent_prayed--;
        }
        st->recent_prayed[(st->recent_prayed_head + st->n_recent_prayed++) % NH_RECENT_WINDOW] = protection;
    }
    if (correct) {
        st->protected_count++;
    }
    if (st->n_recent == NH_RECENT_WINDOW) {
        st->recent_head = (st->recent_head + 1) % NH_RECENT_WINDOW;
        st->n_recent--;
    }
    int32_t *slot = st->recent[(st->recent_head + st->n_recent++) % NH_RECENT_WINDOW];
    slot[0] = style;
    slot[1] = correct;
    int32_t sample[NH_NUM_BONUSES];
    visible_bonuses(attacker, sample);
    if (style == NH_COMBAT_STYLE_MELEE && st->has_gear_sample[NH_COMBAT_STYLE_MELEE] &&
        sample[NH_BONUS_MELEE_STRENGTH] < st->gear_samples[NH_COMBAT_STYLE_MELEE][NH_BONUS_MELEE_STRENGTH]) {
        return;
    }
    st->has_gear_sample[style] = 1;
    memcpy(st->gear_samples[style], sample, sizeof(sample));
}

/* ---- hit queue (§4.5) ---- */

static void apply_damage_queue(nh_fight *fight, nh_player *v) {
    for (int32_t k = 0; k < v->n_damage_queue; k++) {
        int32_t amount = v->damage_queue[k], cur = nh_hp(v);
        int32_t dealt = amount < cur ? amount : cur;
        v->level[NH_SKILL_HITPOINTS] = cur - dealt;
        if (v->n_hitsplats >= NH_MAX_HITSPLATS) {
            fail(fight, NH_ERR_QUEUE_FULL);
        } else {
            v->hitsplats[v->n_hitsplats++] = dealt;
        }
        if (nh_hp(v) <= 0) {
            v->dying = 1;
        }
    }
    v->n_damage_queue = 0;
}

static void redemption(nh_fight *fight, nh_player *v, int32_t total) {
    int32_t remaining = nh_hp(v) - total;
    if (0 < remaining && remaining <= v->base[NH_SKILL_HITPOINTS] / NH_REDEMPTION_TRIGGER_DIVISOR) {
        v->level[NH_SKILL_PRAYER] = 0;
        nh_deactivate_all_prayers(v);
        int32_t amount = v->base[NH_SKILL_PRAYER] * (int32_t)NH_REDEMPTION_HEAL_PCT / 100;
        fight->events[v->index].healed += nh_heal(v, amount, v->base[NH_SKILL_HITPOINTS]);
    }
}

static void after_hit_effect(nh_fight *fight, nh_player *v, const nh_pending_hit *hit, int32_t total) {
    nh_player *a = &fight->players[hit->attacker];
    if (hit->effect == NH_EFFECT_STATIUS) {
        if (hit->accurate && total > 0) {
            v->level[NH_SKILL_DEFENCE] = v->level[NH_SKILL_DEFENCE] * (int32_t)NH_STATIUS_DEFENCE_PCT / 100;
        }
    } else if (hit->effect == NH_EFFECT_AGS_SACRIFICE) {
        if (hit->accurate) {
            schedule(fight, NH_TASK_SACRIFICE, 1, a->index, v->index);
        }
    } else if (hit->effect == NH_EFFECT_MORRIGAN_BLEED && total > 0) {
        nh_task *task = schedule(fight, NH_TASK_BLEED, 1, a->index, v->index);
        if (task != NULL) {
            task->total = total;
        }
    }
}

static void start_poison(nh_fight *fight, nh_player *v) {
    v->poison_damage = (int32_t)NH_POISON_START_DAMAGE;
    schedule(fight, NH_TASK_POISON, (int32_t)NH_POISON_PERIOD_TICKS, v->index, NH_NO_PLAYER);
}

static int execute_hit(nh_fight *fight, nh_player *v, const nh_pending_hit *hit) {
    nh_player *a = &fight->players[hit->attacker];
    if (nh_hp(v) <= 0 || nh_hp(a) <= 0) {
        return 0;
    }
    int32_t total = 0;
    for (int32_t k = 0; k < hit->n_damages; k++) {
        total += hit->damages[k];
    }
    if (hit->accurate) {
        if (nh_has_prayer(v, NH_PRAYER_REDEMPTION)) {
            redemption(fight, v, total);
        }
        if (nh_has_prayer(a, NH_PRAYER_SMITE)) {
            v->level[NH_SKILL_PRAYER] = nh_max32(0, v->level[NH_SKILL_PRAYER] - total / (int32_t)NH_SMITE_DIVISOR);
        }
    }
    if (hit->accurate || hit->style != NH_COMBAT_STYLE_MAGIC) {
        for (int32_t k = 0; k < hit->n_damages; k++) {
            push_damage(fight, v, hit->damages[k]);
        }
    }
    if (hit->effect != NH_EFFECT_NONE) {
        after_hit_effect(fight, v, hit, total);
    }
    if (hit->style == NH_COMBAT_STYLE_MELEE && total > 0) {
        if (a->equipment[NH_SLOT_WEAPON] == NH_ID_DRAGON_DAGGER_PPP && v->poison_damage == 0) {
            if (nh_rng_integers(&fight->rng, 0, NH_POISON_CHANCE_MAX + 1) <= NH_POISON_CHANCE_HIT) {
                start_poison(fight, v);
            }
        }
        int blood_fury = 0;
        for (int s = 0; s < NH_NUM_SLOTS; s++) {
            blood_fury |= a->equipment[s] == NH_ID_AMULET_OF_BLOOD_FURY;
        }
        if (blood_fury && nh_rng_integers(&fight->rng, 0, NH_BLOOD_FURY_ROLL_MAX + 1) < NH_BLOOD_FURY_ROLL_BELOW) {
            fight->events[a->index].healed += nh_effect_heal(a, total * (int32_t)NH_BLOOD_FURY_HEAL_PCT / 100);
        }
    }
    if (total > 0 && v->vengeance) {
        int32_t reflect = total * (int32_t)NH_VENGEANCE_REFLECT_PCT / 100;
        if (reflect > 0) {
            push_damage(fight, a, reflect);
            fight->events[v->index].extra_damage_dealt += reflect;
            v->vengeance = 0;
        }
    }
    if (v->auto_retaliate && v->target == NH_NO_PLAYER && !v->moving) {
        schedule(fight, NH_TASK_RETALIATION, 1, v->index, a->index);
    }
    v->last_attacker = a->index;
    v->last_hit_received_tick = fight->tick;
    if (v->is_baseline) {
        nh_baseline_on_hit(v, total);
    }
    return 0;
}

static int process_hit_queue(nh_fight *fight, nh_player *v) {
    if (nh_hp(v) <= 0) {
        v->n_hit_queue = 0;
        v->n_damage_queue = 0;
        return 0;
    }
    if (v->n_hit_queue > 0) {
        int32_t kept = 0;
        for (int32_t k = 0; k < v->n_hit_queue; k++) {
            nh_pending_hit hit = v->hit_queue[k];
            if (nh_hp(&fight->players[hit.attacker]) <= 0) {
                continue;
            }
            if (hit.delay <= 0) {
                int err = execute_hit(fight, v, &hit);
                if (err) {
                    return err;
                }
            } else {
                hit.delay -= 1;
                v->hit_queue[kept++] = hit;
            }
        }
        v->n_hit_queue = kept;
    }
    if (v->n_damage_queue > 0) {
        apply_damage_queue(fight, v);
    }
    return 0;
}

/* ---- attack (§6.1) ---- */

static int32_t special_cost(const nh_player *a, int32_t method) {
    if (method == NH_METHOD_GRANITE_MAUL) {
        return (int32_t)NH_GMAUL_SPEC_COST * nh_max32(a->gmaul_queued, 1);
    }
    const nh_special *s = nh_special_of(a->equipment[NH_SLOT_WEAPON]);
    return s != NULL ? s->cost : 0;
}

static int perform_attack(nh_fight *fight, nh_player *a, nh_player *t, int32_t method) {
    nh_attack_outcome outcome;
    int err = nh_create_hits(&fight->rng, a, t, nh_distance(a, t), &outcome);
    if (err) {
        return err;
    }
    if (method != NH_METHOD_GRANITE_MAUL) {
        nh_set_timer(a, NH_TIMER_ATTACK, outcome.attack_speed);
    }
    if (outcome.energy_cost) {
        nh_sim_drain_special(fight, a, outcome.energy_cost);
    }
    a->special_armed = 0;
    a->gmaul_queued = 0;
    int32_t protection = nh_protection_style(t);
    int smite = nh_has_prayer(a, NH_PRAYER_SMITE);
    nh_tick_events *ev = &fight->events[a->index];
    for (int32_t k = 0; k < outcome.n_hits; k++) {
        const nh_pending_hit *hit = &outcome.hits[k];
        if (t->n_hit_queue >= NH_MAX_HIT_QUEUE || ev->n_hits >= NH_MAX_TICK_HITS) {
            return NH_ERR_QUEUE_FULL;
        }
        t->hit_queue[t->n_hit_queue++] = *hit;
        nh_hit_record *rec = &ev->hits[ev->n_hits++];
        rec->hit = *hit;
        rec->attack_speed = outcome.attack_speed;
        rec->defender_protection = protection;
        rec->smite = smite;
        record_hit(&fight->stats[a->index], a, hit->style, protection);
    }
    if (outcome.freeze_ticks && !nh_timer_active(t, NH_TIMER_FREEZE) && !nh_timer_active(t, NH_TIMER_FREEZE_IMMUNITY)) {
        nh_set_timer(t, NH_TIMER_FREEZE, outcome.freeze_ticks);
        nh_set_timer(t, NH_TIMER_FREEZE_IMMUNITY, outcome.freeze_ticks + (int32_t)NH_FREEZE_IMMUNITY_EXTRA_TICKS);
        nh_reset_walk(t);
    }
    if (outcome.heal) {
        ev->healed += nh_effect_heal(a, outcome.heal);
    }
    if (method == NH_METHOD_MAGIC_SPELL || method == NH_METHOD_NIGHTMARE_STAFF) {
        if (outcome.spell != NH_NO_SPELL) {
            a->previous_spell = outcome.spell;
        }
        a->selected_spell = NH_NO_SPELL;
        a->target = NH_NO_PLAYER;
        nh_reset_walk(a);
    }
    return 0;
}

static int attack(nh_fight *fight, nh_player *a) {
    if (a->target == NH_NO_PLAYER) {
        return 0;
    }
    nh_player *t = &fight->players[a->target];
    if (nh_hp(a) <= 0 || nh_hp(t) <= 0 || nh_distance(a, t) >= NH_MAX_ATTACK_DISTANCE_TILES) {
        a->target = NH_NO_PLAYER;
        return 0;
    }
    int32_t method = nh_combat_method(a);
    int err = 0;
    int reach = nh_can_reach(a, t, NH_METHOD_TABLE[method].style == NH_COMBAT_STYLE_MELEE,
                             nh_attack_range(a, method), 1, &err);
    if (err) {
        return err;
    }
    if (!reach) {
        return 0;
    }
    if (method != NH_METHOD_GRANITE_MAUL && nh_timer_active(a, NH_TIMER_ATTACK)) {
        return 0;
    }
    if (method == NH_METHOD_MAGIC_SPELL) {
        if (a->spellbook != NH_SPELLBOOK_ANCIENT || a->level[NH_SKILL_MAGIC] < NH_SPELL_TABLE[a->selected_spell].level) {
            return 0;
        }
    } else if (NH_METHOD_TABLE[method].is_special) {
        if (a->special_energy < special_cost(a, method)) {
            a->special_armed = 0;
            a->target = NH_NO_PLAYER;
            return 0;
        }
    }
    return perform_attack(fight, a, t, method);
}

/* ---- phase B helpers ---- */

static void pid_countdown(nh_fight *fight, nh_player *p) {
    if (fight->fight_mode == NH_FIGHT_MODE_PVP_ARENA && !p->is_baseline) {
        return;
    }
    p->pid_countdown -= 1;
    if (p->pid_countdown <= 0) {
        p->pid = nh_rng_random(&fight->rng);
        p->pid_countdown = (int32_t)nh_rng_uniform(&fight->rng, NH_PID_COUNTDOWN_TICKS[0], NH_PID_COUNTDOWN_TICKS[1]);
    }
}

static int movement_step(nh_fight *fight, nh_player *p) {
    if (nh_timer_active(p, NH_TIMER_FREEZE)) {
        nh_reset_walk(p);
        return 0;
    }
    if (p->target != NH_NO_PLAYER) {
        int32_t method = nh_combat_method(p);
        int err = nh_follow(p, &fight->players[p->target], NH_METHOD_TABLE[method].style == NH_COMBAT_STYLE_MELEE,
                            nh_attack_range(p, method));
        if (err) {
            return err;
        }
    }
    nh_take_steps(p);
    return 0;
}

static void recover_run_energy(nh_fight *fight, nh_player *p) {
    if (p->run_energy < NH_MAX_RUN_ENERGY && (!p->moving || !p->running) &&
        fight->tick - p->last_run_recovery_tick >= NH_RUN_ENERGY_RECOVERY_TICKS) {
        p->run_energy += 1;
        p->last_run_recovery_tick = fight->tick;
    }
}

static void stat_change(nh_player *p) {
    if (nh_timer_active(p, NH_TIMER_STAT_CHANGE) || nh_hp(p) <= 0) {
        return;
    }
    nh_set_timer(p, NH_TIMER_STAT_CHANGE, (int32_t)NH_STAT_CHANGE_PERIOD_TICKS);
    for (int s = 0; s < NH_NUM_SKILLS; s++) {
        if (s != NH_SKILL_PRAYER && p->level[s] < p->base[s]) {
            p->level[s] += 1;
        }
    }
    for (int s = 0; s < NH_NUM_SKILLS; s++) {
        if (p->level[s] > p->base[s]) {
            p->level[s] -= 1;
        }
    }
}

static void decrement_timers(nh_player *p) {
    for (int t = 0; t < NH_NUM_TIMER_IDS; t++) {
        if (p->timer_uncapped[t] != NH_TIMER_NEVER_SET) {
            p->timer_uncapped[t] -= 1;
        }
        if (p->timer_ticks[t] > 0) {
            p->timer_ticks[t] -= 1;
        }
    }
}

/* ---- end of tick (§4.1 step 4) ---- */

static int32_t outcome_of(const nh_fight *fight, const nh_player *me, const nh_player *opp) {
    if (me->dying && opp->dying) {
        return NH_OUTCOME_TIED;
    }
    if (opp->dying) {
        return NH_OUTCOME_WON;
    }
    if (me->dying) {
        return NH_OUTCOME_LOST;
    }
    if (!fight->params.death_match && (!nh_has_any_food(me) || !nh_has_any_food(opp))) {
        return NH_OUTCOME_TIED;
    }
    return NH_OUTCOME_NONE;
}

static int32_t mirror(int32_t o) {
    return o == NH_OUTCOME_WON ? NH_OUTCOME_LOST : o == NH_OUTCOME_LOST ? NH_OUTCOME_WON : o;
}

static int32_t sum_hitsplats(const nh_player *p) {
    int32_t total = 0;
    for (int32_t k = 0; k < p->n_hitsplats; k++) {
        total += p->hitsplats[k];
    }
    return total;
}

static void end_of_tick(nh_fight *fight, nh_tick_result *result) {
    nh_player *p0 = &fight->players[0], *p1 = &fight->players[1];
    if (p1->vengeance) {
        fight->stats[0].known_lunar_opponent = 1;
    }
    if (p0->vengeance) {
        fight->stats[1].known_lunar_opponent = 1;
    }
    if (fight->fight_mode == NH_FIGHT_MODE_LMS) {
        for (int i = 0; i < 2; i++) {
            if (!fight->players[i].is_baseline) {
                fight->players[i].level[NH_SKILL_PRAYER] = fight->players[i].base[NH_SKILL_PRAYER];
            }
        }
    }
    for (int i = 0; i < 2; i++) {
        nh_player *p = &fight->players[i], *q = &fight->players[1 - i];
        nh_episode_stats *st = &fight->stats[i];
        if (q->n_hitsplats > 0) {
            st->observed_opponent_hp = (double)nh_hp(q) / (double)q->base[NH_SKILL_HITPOINTS];
            st->dealt_scale_sum += (double)sum_hitsplats(q) / (double)q->base[NH_SKILL_HITPOINTS];
        }
        if (p->n_hitsplats > 0) {
            st->received_scale_sum += (double)sum_hitsplats(p) / (double)p->base[NH_SKILL_HITPOINTS];
        }
    }
    int32_t outcome0 = outcome_of(fight, p0, p1);
    result->tick = fight->tick;
    result->outcomes[0] = outcome0;
    result->outcomes[1] = mirror(outcome0);
    result->truncated = 0;
    if (outcome0 != NH_OUTCOME_NONE) {
        fight->done = 1;
    } else if (fight->params.max_episode_ticks && fight->tick >= fight->params.max_episode_ticks) {
        result->truncated = 1;
        fight->done = 1;
    }
}

/* ---- the tick ---- */

static void clear_events(nh_tick_events *ev) {
    ev->n_hits = 0;
    ev->extra_damage_dealt = 0;
    ev->healed = 0;
    ev->eat_at_hp = NH_NO_VALUE;
    ev->wasted_food = 0;
    ev->wasted_brew = 0;
}

int nh_step(nh_fight *fight, const int32_t actions[2][12], const int has_action[2], nh_tick_result *result) {
    if (fight->done) {
        return NH_ERR_FIGHT_OVER;
    }
    if (fight->error) {
        return fight->error;
    }
    fight->tick += 1;
    clear_events(&fight->events[0]);
    clear_events(&fight->events[1]);
    fight->players[0].n_hitsplats = 0;
    fight->players[1].n_hitsplats = 0;
    nh_player *order[2] = {&fight->players[0], &fight->players[1]};
    if (fight->players[1].pid < fight->players[0].pid) { /* by PID, ties in player order */
        order[0] = &fight->players[1];
        order[1] = &fight->players[0];
    }
    run_tasks(fight);
    for (int k = 0; k < 2; k++) { /* phase A */
        nh_player *p = order[k];
        if (p->is_baseline) {
            nh_baseline_decide(fight, p);
        }
        decrement_timers(p);
        if (!p->is_baseline && has_action[p->index]) {
            nh_apply_action(fight, p, actions[p->index]);
        }
    }
    for (int k = 0; k < 2; k++) { /* phase B */
        nh_player *p = order[k];
        int err;
        pid_countdown(fight, p);
        if ((err = movement_step(fight, p)) || (err = process_hit_queue(fight, p)) || (err = attack(fight, p))) {
            fail(fight, err);
            return err;
        }
        if (p->last_attacker != NH_NO_PLAYER && fight->tick - p->last_hit_received_tick >= NH_LAST_ATTACKER_EXPIRY_TICKS) {
            p->last_attacker = NH_NO_PLAYER;
        }
        p->gmaul_queued = 0;
        recover_run_energy(fight, p);
        if (p->is_baseline) {
            nh_baseline_idle_walk(fight, p);
        }
        stat_change(p);
    }
    end_of_tick(fight, result);
    return fight->error;
}
