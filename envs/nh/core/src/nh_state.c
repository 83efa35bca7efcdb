/* nh_state.c: a fight's state from its reset; see nh_state.h and envs/nh/sim.py, envs/nh/equipment.py. */
#include "nh_state.h"

#include <string.h>

#include "nh_masks.h"
#include "nh_observation.h"

void nh_on_weapon_changed(nh_player *p) {
    p->special_armed = 0;
    const nh_item *weapon = p->equipment[NH_SLOT_WEAPON] != NH_EMPTY ? nh_item_by_id(p->equipment[NH_SLOT_WEAPON])
                                                                      : NULL;
    p->weapon_class = (weapon != NULL && weapon->weapon_class >= 0) ? weapon->weapon_class : NH_WEAPON_CLASS_UNARMED;
    p->style = NH_WEAPON_CLASS_TABLE[p->weapon_class].default_style;
}

void nh_recompute_bonuses(nh_player *p) {
    /* The class of the weapon worn now (not p->weapon_class), as equipment_bonuses reads it. */
    const nh_item *weapon = p->equipment[NH_SLOT_WEAPON] != NH_EMPTY ? nh_item_by_id(p->equipment[NH_SLOT_WEAPON])
                                                                      : NULL;
    int skip_ammo = weapon != NULL && weapon->weapon_class >= 0 && NH_WEAPON_CLASS_TABLE[weapon->weapon_class].ammo_ignored;
    memset(p->bonuses, 0, sizeof(p->bonuses));
    for (int slot = 0; slot < NH_NUM_SLOTS; slot++) {
        int32_t id = p->equipment[slot];
        if (id == NH_EMPTY || (skip_ammo && slot == NH_SLOT_AMMO)) {
            continue;
        }
        const nh_item *item = nh_item_by_id(id);
        for (int b = 0; b < NH_NUM_BONUSES; b++) {
            p->bonuses[b] += item->bonuses[b];
        }
    }
}

/* sim.FightSim._new_player, then the spawn tile and PID of the reset's steps 3 and 4. */
static void new_player(nh_player *p, int32_t index, const nh_loadout *loadout, int32_t fight_mode, int is_baseline) {
    memset(p, 0, sizeof(*p));
    p->index = index;
    p->loadout = *loadout;
    memcpy(p->base, NH_BUILD_SPECS[loadout->build].base_levels, sizeof(p->base));
    memcpy(p->level, p->base, sizeof(p->level));
    memcpy(p->equipment, loadout->equipment, sizeof(p->equipment));
    memcpy(p->inventory, loadout->inventory, sizeof(p->inventory));
    p->spellbook = loadout->spellbook;
    p->fight_mode = fight_mode;
    p->is_baseline = is_baseline;
    for (int t = 0; t < NH_NUM_TIMER_IDS; t++) {
        p->timer_ticks[t] = 0;
        p->timer_uncapped[t] = (int32_t)NH_TIMER_NEVER_SET;
    }
    p->special_energy = (int32_t)NH_MAX_SPECIAL_ENERGY;
    p->target = NH_NO_PLAYER;
    p->last_attacker = NH_NO_PLAYER;
    p->last_hit_received_tick = -1;
    p->selected_spell = NH_NO_SPELL;
    p->previous_spell = NH_NO_SPELL;
    p->auto_retaliate = is_baseline; /* §18.1: the baseline retaliates; agents do not (§4.5 step 7) */
    p->running = 1;
    p->run_energy = (int32_t)NH_MAX_RUN_ENERGY;
    p->remembered_target = NH_NO_PLAYER;
    nh_on_weapon_changed(p);
    nh_recompute_bonuses(p);
    nh_set_timer(p, NH_TIMER_STAT_CHANGE, (int32_t)NH_STAT_CHANGE_PERIOD_TICKS);
}

int nh_fight_reset(nh_fight *fight) {
    nh_reset_result res;
    int err = nh_reset_draws(&fight->rng, &fight->params, &res);
    if (err) {
        return err;
    }
    fight->tick = 0;
    fight->done = 0;
    fight->error = 0;
    fight->n_tasks = 0;
    memset(fight->events, 0, sizeof(fight->events));
    memset(fight->stats, 0, sizeof(fight->stats));
    for (int i = 0; i < 2; i++) {
        fight->events[i].eat_at_hp = NH_NO_VALUE;
        fight->stats[i].observed_opponent_hp = 1.0;
    }
    fight->build = res.build;
    fight->fight_mode = res.fight_mode;
    int first_baseline = fight->params.first_player_baseline;
    new_player(&fight->players[0], 0, &res.loadouts[0], res.fight_mode, first_baseline);
    new_player(&fight->players[1], 1, &res.loadouts[1], res.fight_mode, !fight->params.self_play);
    for (int i = 0; i < 2; i++) {
        nh_player *p = &fight->players[i];
        p->x = res.x[i];
        p->y = res.y[i];
        p->spawn[0] = res.x[i];
        p->spawn[1] = res.y[i];
        p->pid = res.pid[i];
        p->pid_countdown = res.pid_countdown[i];
        nh_loadout_mask_facts(&p->loadout, &fight->mask_facts[i]);
        nh_observation_static(&p->loadout, fight->fight_mode, fight->obs_static[i]);
    }
    return 0;
}

/* ---- equipment (equipment.py, §10.1) ---- */

int nh_equip_item(nh_player *p, int32_t inv_slot) {
    int32_t iid = p->inventory[inv_slot];
    const nh_item *item = nh_item_by_id(iid);
    if (item == NULL) {
        return 0; /* not wearable (Python raises KeyError; callers only pass worn-set items) */
    }
    int32_t *eq = p->equipment, *inv = p->inventory;
    int32_t old_weapon = eq[NH_SLOT_WEAPON];
    const nh_item *weapon = eq[NH_SLOT_WEAPON] != NH_EMPTY ? nh_item_by_id(eq[NH_SLOT_WEAPON]) : NULL;
    if (item->two_handed && eq[NH_SLOT_WEAPON] != NH_EMPTY && eq[NH_SLOT_SHIELD] != NH_EMPTY) {
        int32_t free_slot = -1;
        for (int32_t k = 0; k < NH_INVENTORY_SIZE && free_slot < 0; k++) {
            free_slot = inv[k] == NH_EMPTY ? k : -1;
        }
        if (free_slot < 0) {
            return 0;
        }
        inv[inv_slot] = eq[NH_SLOT_WEAPON];
        eq[NH_SLOT_WEAPON] = iid;
        free_slot = nh_inventory_slot_of(p, NH_EMPTY); /* after the swap, as Python's inv.index(EMPTY) */
        inv[free_slot] = eq[NH_SLOT_SHIELD];
        eq[NH_SLOT_SHIELD] = NH_EMPTY;
    } else if (item->two_handed && eq[NH_SLOT_SHIELD] != NH_EMPTY) {
        /* no weapon worn: the shield comes off into the item's own slot */
        eq[NH_SLOT_WEAPON] = iid;
        inv[inv_slot] = eq[NH_SLOT_SHIELD];
        eq[NH_SLOT_SHIELD] = NH_EMPTY;
    } else if (item->slot == NH_SLOT_SHIELD && weapon != NULL && weapon->two_handed) {
        eq[NH_SLOT_SHIELD] = iid;
        inv[inv_slot] = eq[NH_SLOT_WEAPON];
        eq[NH_SLOT_WEAPON] = NH_EMPTY;
    } else {
        int32_t previous = eq[item->slot];
        eq[item->slot] = iid;
        inv[inv_slot] = previous;
    }
    if (eq[NH_SLOT_WEAPON] != old_weapon) {
        nh_on_weapon_changed(p);
    }
    if (eq[NH_SLOT_WEAPON] != NH_ID_GRANITE_MAUL) {
        p->target = NH_NO_PLAYER; /* clear_target */
    }
    nh_recompute_bonuses(p);
    return 1;
}

int nh_unequip(nh_player *p, int32_t slot) {
    int32_t free_slot = nh_inventory_slot_of(p, NH_EMPTY);
    if (free_slot < 0) {
        return 0;
    }
    p->inventory[free_slot] = p->equipment[slot];
    p->equipment[slot] = NH_EMPTY;
    if (slot == NH_SLOT_WEAPON) {
        nh_on_weapon_changed(p);
    }
    nh_recompute_bonuses(p);
    return 1;
}

int nh_equip_set(nh_player *p, const int32_t *gear, int32_t n_gear, int unequip_rest) {
    int changed = 0;
    for (int32_t k = 0; k < n_gear; k++) {
        if (nh_wears(p, gear[k])) {
            continue;
        }
        int32_t inv_slot = nh_inventory_slot_of(p, gear[k]);
        if (inv_slot < 0) {
            continue;
        }
        changed |= nh_equip_item(p, inv_slot);
    }
    if (unequip_rest) {
        for (int32_t slot = 0; slot < NH_NUM_SLOTS; slot++) {
            int32_t iid = p->equipment[slot];
            int wanted = 0;
            for (int32_t k = 0; k < n_gear && !wanted; k++) {
                wanted = gear[k] == iid;
            }
            if (iid != NH_EMPTY && !wanted) {
                nh_unequip(p, slot);
            }
        }
    }
    return changed;
}

void nh_inventory_facts_of(const nh_player *p, nh_inventory_facts *out) {
    memset(out, 0, sizeof(*out));
    for (int k = 0; k < NH_INVENTORY_SIZE; k++) {
        int32_t id = p->inventory[k];
        out->has_free_slot |= id == NH_EMPTY;
        out->sharks += id == NH_ID_SHARK;
        out->karambwans += id == NH_ID_KARAMBWAN;
        out->anglerfish += id == NH_ID_ANGLERFISH;
        const nh_consumable *c = id != NH_EMPTY ? nh_consumable_by_id(id) : NULL;
        if (c != NULL && c->potion > 0) {
            out->doses[c->potion] += c->doses;
        }
    }
}

int32_t nh_weapon_family(int32_t weapon) {
    const nh_item *item = weapon != NH_EMPTY ? nh_item_by_id(weapon) : NULL;
    return item != NULL && item->weapon_class >= 0 ? NH_WEAPON_CLASS_TABLE[item->weapon_class].family
                                                   : NH_COMBAT_STYLE_MELEE;
}
