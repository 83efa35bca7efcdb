/* nh_actions.c: §5 actions; see nh_actions.h and envs/nh/actions.py (the reference). */
#include "nh_actions.h"

#include <stddef.h>

#include "nh_movement.h"
#include "nh_operations.h"
#include "nh_sim.h"


void nh_sim_activate_prayers(nh_fight *fight, nh_player *p, const int32_t *prayers, int32_t n) {
    if (p->level[NH_SKILL_PRAYER] > 0) {
        for (int32_t k = 0; k < n; k++) {
            nh_sim_activate_prayer(fight, p, prayers[k]);
        }
    }
}

/* Loadout.set_prayers[gs]: the build's §12.3 prayers; TANK has the magic set's. */
void nh_activate_set_prayers(nh_fight *fight, nh_player *p, int gear_set) {
    const nh_build_spec *spec = &NH_BUILD_SPECS[p->loadout.build];
    int gs = gear_set == NH_GEAR_SET_TANK ? NH_GEAR_SET_MAGIC : gear_set;
    nh_sim_activate_prayers(fight, p, spec->prayers[gs], spec->n_prayers[gs]);
}

static int equip_gear_set(nh_player *p, int gear_set) {
    return nh_equip_set(p, p->loadout.sets[gear_set], p->loadout.set_len[gear_set], 1);
}

/* ---- §5.1 ---- */
static void overhead(nh_fight *fight, nh_player *p, int32_t value) {
    if (1 <= value && value <= NH_OVERHEADS_LEN) {
        nh_sim_activate_prayer(fight, p, (int32_t)NH_OVERHEADS[value - 1]);
    }
}

/* ---- §5.2-5.4 with the eat/drink signals of §17.1 ---- */
static void record_eat(const nh_player *p, nh_tick_events *ev, int32_t food) {
    int32_t cur = p->level[NH_SKILL_HITPOINTS], base = p->base[NH_SKILL_HITPOINTS];
    int32_t heal = nh_nominal_heal(food, base);
    ev->eat_at_hp = cur;
    ev->wasted_food += nh_max32(0, (cur + heal) - (base + (food == NH_ID_ANGLERFISH ? heal : 0)));
}

static void food(nh_player *p, nh_tick_events *ev) {
    int32_t f = nh_primary_food(p);
    if (f == NH_EMPTY) {
        return;
    }
    record_eat(p, ev, f);
    nh_eat_food(p, f);
}

static void karambwan(nh_player *p, nh_tick_events *ev) {
    if (!nh_carries(p, NH_ID_KARAMBWAN)) {
        return;
    }
    record_eat(p, ev, NH_ID_KARAMBWAN);
    nh_eat_karambwan(p);
}

static void potion(nh_player *p, int32_t value, nh_tick_events *ev) {
    if (!(NH_POTION_BREW <= value && value <= NH_POTION_RANGING)) {
        return;
    }
    if (nh_find_potion(p, value, 1) < 0) {
        return;
    }
    if (value == NH_POTION_BREW) {
        int32_t base = p->base[NH_SKILL_HITPOINTS], h = NH_BREW_HP_BOOST_BY_BASE[base];
        ev->wasted_brew += nh_max32(0, (p->level[NH_SKILL_HITPOINTS] + h) - (base + h));
    }
    nh_drink_potion(p, value, 1);
}

/* ---- §5.5 ---- */
static void tank(nh_fight *fight, nh_player *p) {
    if (p->loadout.set_len[NH_GEAR_SET_TANK] > 0) {
        equip_gear_set(p, NH_GEAR_SET_TANK);
    }
    nh_activate_set_prayers(fight, p, NH_GEAR_SET_TANK);
}

/* ---- §5.7 ---- */
static void arm_special(nh_player *p) {
    if (!p->special_armed && nh_special_of(p->equipment[NH_SLOT_WEAPON]) != NULL) {
        p->special_armed = 1;
    }
}

static void toggle_gmaul(nh_player *p) {
    int32_t toggles = p->special_energy / (int32_t)NH_GMAUL_SPEC_COST; /* energy >= 0 */
    for (int32_t k = 0; k < toggles; k++) {
        if (p->special_energy >= (int32_t)NH_GMAUL_SPEC_COST * (p->gmaul_queued + 1)) {
            p->gmaul_queued += 1;
        }
        p->special_armed = !p->special_armed;
    }
}

/* spells.best_castable: the highest tier castable, the lowest as the fallback. */
static int32_t best_castable(const int64_t *tiers, int32_t n, int32_t magic_level) {
    for (int32_t k = 0; k < n; k++) {
        if (magic_level >= NH_SPELL_TABLE[tiers[k]].level) {
            return (int32_t)tiers[k];
        }
    }
    return (int32_t)tiers[n - 1];
}

static void attack(nh_fight *fight, nh_player *p, const int32_t *a) {
    int32_t style = a[NH_H_ATTACK];
    if (style == NH_ATTACK_MAGIC) {
        int32_t sub = a[NH_H_MAGE];
        if (!sub) {
            return;
        }
        if (p->loadout.set_len[NH_GEAR_SET_MAGIC] > 0) {
            equip_gear_set(p, NH_GEAR_SET_MAGIC);
        }
        nh_activate_set_prayers(fight, p, NH_GEAR_SET_MAGIC);
        int32_t magic = p->level[NH_SKILL_MAGIC];
        if (sub == NH_MAGE_ICE) {
            p->selected_spell = best_castable(NH_ICE_TIERS, NH_ICE_TIERS_LEN, magic);
            p->special_armed = 0;
        } else if (sub == NH_MAGE_BLOOD) {
            p->selected_spell = best_castable(NH_BLOOD_TIERS, NH_BLOOD_TIERS_LEN, magic);
            p->special_armed = 0;
        } else {
            p->selected_spell = NH_NO_SPELL;
            arm_special(p);
        }
    } else if (style == NH_ATTACK_RANGED) {
        int32_t sub = a[NH_H_RANGED];
        if (!sub) {
            return;
        }
        equip_gear_set(p, NH_GEAR_SET_RANGED);
        p->selected_spell = NH_NO_SPELL;
        nh_activate_set_prayers(fight, p, NH_GEAR_SET_RANGED);
        if (sub == 1) {
            p->special_armed = 0;
        } else {
            arm_special(p);
        }
    } else if (style == NH_ATTACK_MELEE) {
        int32_t sub = a[NH_H_MELEE];
        if (!sub) {
            return;
        }
        nh_activate_set_prayers(fight, p, NH_GEAR_SET_MELEE);
        p->selected_spell = NH_NO_SPELL;
        if (sub == 1) {
            equip_gear_set(p, NH_GEAR_SET_MELEE);
            p->special_armed = 0;
        } else {
            equip_gear_set(p, NH_GEAR_SET_SPEC);
            if (p->equipment[NH_SLOT_WEAPON] == NH_ID_GRANITE_MAUL) {
                toggle_gmaul(p);
            } else {
                arm_special(p);
            }
        }
    } else {
        return;
    }
    p->target = 1 - p->index; /* sim.opponent(p) */
}

/* ---- §5.8 ---- */

/* actions.movement_destination: 0 when the action does nothing, else 1 with (*x, *y). */
static int movement_destination(nh_fight *fight, const nh_player *p, int32_t value, int32_t farcast, int32_t *x,
                                int32_t *y) {
    const nh_player *t = &fight->players[1 - p->index];
    if (value == NH_MOVE_UNDER) {
        *x = t->x;
        *y = t->y;
        return 1;
    }
    int64_t ring[8 * 64][2];
    const int64_t(*offsets)[2];
    int32_t n_offsets;
    if (value == NH_MOVE_ADJACENT) {
        offsets = NH_CARDINALS, n_offsets = NH_CARDINALS_LEN;
    } else if (value == NH_MOVE_DIAGONAL) {
        offsets = NH_DIAGONALS, n_offsets = NH_DIAGONALS_LEN;
    } else if (value == NH_MOVE_FARCAST && farcast + 1 <= 64) {
        n_offsets = nh_ring_offsets(farcast + 1, ring, 8 * 64);
        offsets = (const int64_t(*)[2])ring;
    } else {
        return 0;
    }
    int32_t cands[NH_MAX_CANDIDATES][2];
    int32_t n = nh_movement_candidates(p->x, p->y, t->x, t->y, offsets, n_offsets, cands);
    if (n <= 0) {
        return 0;
    }
    int32_t pick = n == 1 ? 0 : (int32_t)nh_rng_integers(&fight->rng, 0, n);
    if (cands[pick][0] == p->x && cands[pick][1] == p->y) {
        return 0;
    }
    *x = cands[pick][0];
    *y = cands[pick][1];
    return 1;
}

static void move(nh_fight *fight, nh_player *p, int32_t value, int32_t farcast) {
    int32_t x, y;
    if (!movement_destination(fight, p, value, farcast, &x, &y)) {
        return;
    }
    nh_reset_walk(p);
    p->target = NH_NO_PLAYER;
    p->selected_spell = NH_NO_SPELL;
    if (x != p->x || y != p->y) {
        if (nh_append_path(p, x, y, 0) && fight->error == 0) {
            fight->error = NH_ERR_WALK_QUEUE_FULL;
        }
    }
}

void nh_apply_action(nh_fight *fight, nh_player *p, const int32_t a[NH_NUM_HEADS]) {
    nh_tick_events *ev = &fight->events[p->index];
    if (a[NH_H_PRAYER]) {
        overhead(fight, p, a[NH_H_PRAYER]);
    }
    if (a[NH_H_FOOD] == 1) {
        food(p, ev);
    }
    if (a[NH_H_POTION]) {
        potion(p, a[NH_H_POTION], ev);
    }
    if (a[NH_H_KARAMBWAN] == 1) {
        karambwan(p, ev);
    }
    if (a[NH_H_GEAR] == 1) {
        tank(fight, p);
    }
    if (a[NH_H_VENG] == 1) {
        nh_cast_vengeance(p);
    }
    if (a[NH_H_ATTACK]) {
        attack(fight, p, a);
    }
    if (a[NH_H_MOVE]) {
        move(fight, p, a[NH_H_MOVE], a[NH_H_FAR]);
    }
}
