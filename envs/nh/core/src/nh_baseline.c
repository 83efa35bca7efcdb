/* nh_baseline.c: the §18 baseline; see nh_baseline.h and envs/nh/baseline.py (the reference). */
#include "nh_baseline.h"

#include "nh_actions.h"
#include "nh_combat.h"
#include "nh_movement.h"
#include "nh_operations.h"
#include "nh_sim.h"

#define PERCENT 100


/* ---- predicates of §18.2 ---- */

static int ready(const nh_player *b) { return b->timer_ticks[NH_TIMER_ATTACK] <= 1; }
static int mobile(const nh_player *p) { return !nh_timer_active(p, NH_TIMER_FREEZE); }

static int32_t hp_after_pending(const nh_player *e) {
    int32_t pending = 0;
    for (int32_t k = 0; k < e->n_hit_queue; k++) {
        if (e->hit_queue[k].delay < NH_BASELINE_PENDING_HIT_HORIZON) {
            for (int32_t d = 0; d < e->hit_queue[k].n_damages; d++) {
                pending += e->hit_queue[k].damages[d];
            }
        }
    }
    int32_t queued = 0;
    for (int32_t k = 0; k < e->n_damage_queue; k++) {
        queued += e->damage_queue[k];
    }
    return nh_hp(e) - pending - queued;
}

static int can_cast_barrage(const nh_player *b) {
    return b->spellbook == NH_SPELLBOOK_ANCIENT && b->level[NH_SKILL_MAGIC] >= NH_ICE_BARRAGE_LEVEL;
}

/* The agent's reach test by its current method, without side effects (§11.6 [QUIRK 12, DROP]). */
static int agent_can_reach(nh_player *e, const nh_player *b) {
    int32_t m = nh_combat_method(e);
    int err;
    return nh_can_reach(e, b, NH_METHOD_TABLE[m].style == NH_COMBAT_STYLE_MELEE, nh_attack_range(e, m), 0, &err);
}

static void equip_no_unequip(nh_player *b, int gear_set) {
    nh_equip_set(b, b->loadout.sets[gear_set], b->loadout.set_len[gear_set], 0);
}

/* ---- §18.3 ---- */

static void switch_magic(nh_fight *fight, nh_player *b, const nh_player *e) {
    nh_activate_set_prayers(fight, b, NH_GEAR_SET_MAGIC);
    equip_no_unequip(b, NH_GEAR_SET_MAGIC); /* even an empty magic set casts [QUIRK 13, KEEP] */
    b->selected_spell = NH_SPELL_ICE_BARRAGE;
    b->target = e->index;
}

float nh_baseline_style_dps(int64_t defence_roll, int protected_) {
    const float a = (float)NH_STORED_ATTACK_ROLL, d = (float)defence_roll; /* np.float32(...) */
    float hit;
    if (NH_STORED_ATTACK_ROLL > defence_roll) {
        hit = 1.0f - (d + 2.0f) / (2.0f * (a + 1.0f));
    } else {
        hit = a / (2.0f * (d + 1.0f));
    }
    int64_t max_hit = protected_ ? NH_STORED_MAX_HIT * NH_PROTECTED_MAX_HIT_PCT / PERCENT : NH_STORED_MAX_HIT;
    return hit * (float)max_hit * NH_BASELINE_F32_SPEED;
}

static void best_style_attack(nh_fight *fight, nh_player *b, const nh_player *e) {
    int32_t options[3], n = 0;
    if (can_cast_barrage(b)) {
        options[n++] = NH_COMBAT_STYLE_MAGIC;
    }
    options[n++] = NH_COMBAT_STYLE_RANGED;
    if (mobile(b) && hp_after_pending(e) <= NH_MELEE_MAX_TARGET_HP) {
        options[n++] = NH_COMBAT_STYLE_MELEE;
    }
    int32_t best = -1;
    float best_dps = 0.0f;
    for (int32_t k = 0; k < n; k++) {
        int32_t style = options[k];
        float dps = nh_baseline_style_dps(nh_defence_roll_against(e, NH_BASELINE_DEFENCE_STYLE[style]),
                                          nh_has_prayer(e, NH_PROTECTION_PRAYER[style]));
        if (dps > best_dps) {
            best = style;
            best_dps = dps;
        }
    }
    if (best < 0) {
        return;
    }
    if (best == NH_COMBAT_STYLE_MAGIC) {
        switch_magic(fight, b, e);
        return;
    }
    int gear = best == NH_COMBAT_STYLE_RANGED ? NH_GEAR_SET_RANGED : NH_GEAR_SET_MELEE;
    nh_activate_set_prayers(fight, b, gear);
    equip_no_unequip(b, gear);
    b->selected_spell = NH_NO_SPELL;
    if (best == NH_COMBAT_STYLE_RANGED) {
        b->special_armed = 0;
    }
    b->target = e->index;
}

static void fight_rules(nh_fight *fight, nh_player *b, nh_player *e) {
    /* 1. overhead prayer */
    if (nh_rng_integers(&fight->rng, 0, NH_OVERHEAD_SWITCH_ROLL_MAX + 1) == NH_OVERHEAD_SWITCH_ROLL_HIT) {
        int32_t style = NH_METHOD_TABLE[nh_combat_method(e)].style;
        if (style == NH_COMBAT_STYLE_MELEE && agent_can_reach(e, b)) {
            nh_sim_activate_prayer(fight, b, NH_PRAYER_PROTECT_FROM_MELEE);
        } else if (style == NH_COMBAT_STYLE_RANGED) {
            nh_sim_activate_prayer(fight, b, NH_PRAYER_PROTECT_FROM_MISSILES);
        } else {
            nh_sim_activate_prayer(fight, b, NH_PRAYER_PROTECT_FROM_MAGIC);
        }
    }
    int is_ready = ready(b);
    /* 2. special attack */
    if (is_ready && mobile(b) && hp_after_pending(e) <= NH_SPEC_MAX_TARGET_HP && b->special_energy >= NH_SPEC_MIN_ENERGY &&
        !nh_has_prayer(e, NH_PRAYER_PROTECT_FROM_MELEE)) {
        nh_activate_set_prayers(fight, b, NH_GEAR_SET_SPEC);
        equip_no_unequip(b, NH_GEAR_SET_SPEC);
        b->selected_spell = NH_NO_SPELL;
        b->special_armed = 1;
        b->target = e->index;
        return;
    }
    /* 3. step away */
    if (b->timer_ticks[NH_TIMER_ATTACK] > NH_STEP_AWAY_MIN_ATTACK_TICKS && b->n_walk_queue == 0 && !mobile(e) &&
        nh_distance(b, e) == 1 && agent_can_reach(e, b)) {
        int64_t key = nh_rng_integers(&fight->rng, NH_STEP_AWAY_DIRECTIONS_FIRST_KEY,
                                      NH_STEP_AWAY_DIRECTIONS_FIRST_KEY + NH_STEP_AWAY_DIRECTIONS_LEN);
        const int64_t *dir = NH_STEP_AWAY_DIRECTIONS[key - NH_STEP_AWAY_DIRECTIONS_FIRST_KEY];
        int32_t end_x, end_y;
        nh_queue_end(b, &end_x, &end_y);
        if (nh_append_path(b, end_x + (int32_t)(dir[0] * NH_STEP_AWAY_TILES), end_y + (int32_t)(dir[1] * NH_STEP_AWAY_TILES),
                           0) &&
            fight->error == 0) {
            fight->error = NH_ERR_WALK_QUEUE_FULL;
        }
        return;
    }
    /* 4. restore prayer */
    if (b->level[NH_SKILL_PRAYER] < NH_RESTORE_BELOW_PRAYER && nh_find_potion(b, NH_POTION_RESTORE, 1) >= 0) {
        nh_drink_potion(b, NH_POTION_RESTORE, 0);
        return;
    }
    /* 5. freeze */
    if (is_ready && mobile(e) && !nh_timer_active(e, NH_TIMER_FREEZE_IMMUNITY) && can_cast_barrage(b)) {
        switch_magic(fight, b, e);
        return;
    }
    /* 6. best-style attack */
    if (is_ready) {
        best_style_attack(fight, b, e);
    }
}

/* ---- §18.4 maintenance ---- */

static void eat_routine(nh_player *b, int32_t h) {
    if (h * PERCENT > b->base[NH_SKILL_HITPOINTS] * NH_EAT_ROUTINE_HP_PCT) {
        return;
    }
    for (int k = 0; k < NH_FOOD_PRIORITY_LEN; k++) {
        int32_t food = (int32_t)NH_FOOD_PRIORITY[k];
        if (nh_carries(b, food)) {
            if (food == NH_ID_KARAMBWAN) {
                nh_eat_karambwan(b);
            } else {
                nh_eat_food(b, food);
                nh_eat_karambwan(b);
            }
            return;
        }
    }
}

static void pot_up(nh_player *b) {
    const int32_t *lv = b->level, *base = b->base;
    if (lv[NH_SKILL_HITPOINTS] <= base[NH_SKILL_HITPOINTS] && nh_carries(b, NH_ID_ANGLERFISH)) {
        nh_eat_food(b, NH_ID_ANGLERFISH);
    } else if (lv[NH_SKILL_RANGED] <= base[NH_SKILL_RANGED] && nh_find_potion(b, NH_POTION_RANGING, 1) >= 0) {
        nh_drink_potion(b, NH_POTION_RANGING, 0);
    } else if (lv[NH_SKILL_STRENGTH] <= base[NH_SKILL_STRENGTH] && nh_find_potion(b, NH_POTION_COMBAT, 1) >= 0) {
        nh_drink_potion(b, NH_POTION_COMBAT, 0);
    }
}

/* Reset while idle [QUIRK 23, KEEP]; never fires in the simulator (§18.4), kept for fidelity. */
static void reload_preset(nh_player *b) {
    const nh_loadout *load = &b->loadout;
    for (int k = 0; k < NH_INVENTORY_SIZE; k++) {
        b->inventory[k] = load->inventory[k];
    }
    for (int s = 0; s < NH_NUM_SLOTS; s++) {
        b->equipment[s] = load->equipment[s];
    }
    b->spellbook = load->spellbook;
    for (int s = 0; s < NH_NUM_SKILLS; s++) {
        b->level[s] = NH_BUILD_SPECS[load->build].base_levels[s];
    }
    b->special_energy = 100;
    b->special_armed = 0;
    b->vengeance = 0;
    b->prayers = 0;
    b->timer_ticks[NH_TIMER_FREEZE] = 0;
    b->poison_damage = 0;
    b->run_energy = (int32_t)NH_MAX_RUN_ENERGY;
    nh_reset_walk(b);
    b->x = b->spawn[0];
    b->y = b->spawn[1];
    nh_on_weapon_changed(b);
    nh_recompute_bonuses(b);
}

static int32_t free_inventory_slots(const nh_player *b) {
    int32_t n = 0;
    for (int k = 0; k < NH_INVENTORY_SIZE; k++) {
        n += b->inventory[k] == NH_EMPTY;
    }
    return n;
}

static void maintenance(nh_player *b) {
    if (nh_hp(b) <= 0) {
        return;
    }
    if (nh_hp(b) < NH_EAT_BELOW_HP) {
        eat_routine(b, nh_hp(b));
    }
    pot_up(b);
    if (b->remembered_target == NH_NO_PLAYER &&
        (free_inventory_slots(b) > NH_RELOAD_MIN_FREE_SLOTS || b->special_energy < NH_RELOAD_BELOW_ENERGY)) {
        reload_preset(b);
    }
}

void nh_baseline_decide(nh_fight *fight, nh_player *b) {
    if (b->remembered_target == NH_NO_PLAYER && b->last_attacker != NH_NO_PLAYER) {
        b->remembered_target = b->last_attacker;
    }
    if (b->remembered_target != NH_NO_PLAYER && nh_hp(b) > 0) {
        fight_rules(fight, b, &fight->players[b->remembered_target]);
    }
    maintenance(b);
}

void nh_baseline_on_hit(nh_player *b, int32_t total) {
    int32_t h = nh_hp(b) - total;
    if (h > 0) {
        eat_routine(b, h);
    }
}

void nh_baseline_idle_walk(nh_fight *fight, nh_player *b) {
    if (b->target != NH_NO_PLAYER || b->last_attacker != NH_NO_PLAYER || nh_timer_active(b, NH_TIMER_FREEZE) || b->moving) {
        return;
    }
    nh_rng *rng = &fight->rng;
    int64_t r = nh_rng_uniform(rng, NH_IDLE_WALK_RADIUS[0], NH_IDLE_WALK_RADIUS[1]);
    int64_t n = nh_rng_uniform(rng, NH_IDLE_WALK_N[0], NH_IDLE_WALK_N[1]);
    if (nh_rng_integers(rng, 0, n + 1) > 1) {
        return;
    }
    int64_t dx = nh_rng_integers(rng, -r, r + 1);
    int64_t dy = nh_rng_integers(rng, -r, r + 1);
    if (nh_append_path(b, b->spawn[0] + (int32_t)dx, b->spawn[1] + (int32_t)dy, 1) && fight->error == 0) {
        fight->error = NH_ERR_WALK_QUEUE_FULL;
    }
}
