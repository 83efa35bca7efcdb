/* nh_operations.c: §5, §7.2, §8 operations; see nh_operations.h and envs/nh/operations.py (the reference). */
#include "nh_operations.h"

#include <stddef.h>




/* ---- prayer (§7.2) ---- */

int nh_can_activate(const nh_player *p, int32_t prayer) {
    const nh_prayer *data = &NH_PRAYER_TABLE[prayer];
    if (p->level[NH_SKILL_PRAYER] <= 0 || p->base[NH_SKILL_PRAYER] < data->level) {
        return 0;
    }
    return !(data->needs_defence_70 && p->base[NH_SKILL_DEFENCE] < NH_PIETY_TIER_MIN_BASE_DEFENCE);
}

int nh_activate_prayer(nh_player *p, int32_t prayer) {
    if ((p->prayers >> prayer & 1u) || !nh_can_activate(p, prayer)) {
        return 0;
    }
    p->prayers &= ~NH_PRAYER_CONFLICTS[prayer];
    p->prayers |= 1u << prayer;
    return 1;
}

void nh_deactivate_all_prayers(nh_player *p) { p->prayers = 0; }

/* ---- hitpoints ---- */

int32_t nh_heal(nh_player *p, int32_t amount, int32_t cap) {
    if (p->dying || amount <= 0) {
        return 0;
    }
    int32_t hp = p->level[NH_SKILL_HITPOINTS];
    int32_t gained = nh_max32(0, nh_min32(amount, cap - hp));
    p->level[NH_SKILL_HITPOINTS] = hp + gained;
    return gained;
}

int32_t nh_effect_heal(nh_player *p, int32_t amount) {
    return nh_heal(p, amount, nh_max32(p->base[NH_SKILL_HITPOINTS], p->level[NH_SKILL_HITPOINTS]));
}

/* ---- food (§8.1, §8.2) ---- */

int32_t nh_nominal_heal(int32_t food_id, int32_t base_hp) {
    if (food_id == NH_ID_ANGLERFISH) {
        return NH_ANGLERFISH_HEAL_BY_BASE[base_hp];
    }
    const nh_consumable *c = nh_consumable_by_id(food_id);
    return c != NULL ? c->heal : 0;
}

static int32_t first_slot(const nh_player *p, int32_t id) {
    for (int32_t k = 0; k < NH_INVENTORY_SIZE; k++) {
        if (p->inventory[k] == id) {
            return k;
        }
    }
    return -1;
}

int32_t nh_primary_food(const nh_player *p) {
    for (int k = 0; k < NH_FOOD_PRIORITY_LEN; k++) {
        int32_t fid = (int32_t)NH_FOOD_PRIORITY[k];
        if (fid != NH_ID_KARAMBWAN && nh_carries(p, fid)) {
            return fid;
        }
    }
    return NH_EMPTY;
}

int nh_has_any_food(const nh_player *p) {
    for (int k = 0; k < NH_FOOD_PRIORITY_LEN; k++) {
        if (nh_carries(p, (int32_t)NH_FOOD_PRIORITY[k])) {
            return 1;
        }
    }
    return 0;
}

/* Eating delays a pending attack (§8.2 step 2). */
static void delay_attack(nh_player *p, int32_t ticks) {
    int32_t u = p->timer_uncapped[NH_TIMER_ATTACK];
    if (u != NH_TIMER_NEVER_SET && u + ticks > 0) {
        nh_set_timer(p, NH_TIMER_ATTACK, u + ticks);
    }
}

/* TIMER := max(TIMER, n) (§8.2 step 1). */
static void extend_timer(nh_player *p, int timer, int32_t ticks) {
    if (p->timer_ticks[timer] < ticks) {
        nh_set_timer(p, timer, ticks);
    }
}

int nh_eat_food(nh_player *p, int32_t food_id) {
    int32_t slot = first_slot(p, food_id);
    if (nh_timer_active(p, NH_TIMER_FOOD) || slot < 0) {
        return 0;
    }
    extend_timer(p, NH_TIMER_FOOD, (int32_t)NH_FOOD_TIMER_TICKS);
    delay_attack(p, (int32_t)NH_FOOD_ATTACK_DELAY_TICKS);
    p->inventory[slot] = NH_EMPTY;
    int32_t base_hp = p->base[NH_SKILL_HITPOINTS];
    if (food_id == NH_ID_ANGLERFISH) { /* food_heal_and_cap */
        int32_t h = NH_ANGLERFISH_HEAL_BY_BASE[base_hp];
        nh_heal(p, h, base_hp + h);
    } else {
        const nh_consumable *c = nh_consumable_by_id(food_id); /* NULL: not food (Python raises KeyError) */
        nh_heal(p, c != NULL ? c->heal : 0, base_hp);
    }
    return 1;
}

int nh_eat_karambwan(nh_player *p) {
    int32_t slot = first_slot(p, NH_ID_KARAMBWAN);
    if (nh_timer_active(p, NH_TIMER_KARAMBWAN) || slot < 0) {
        return 0;
    }
    extend_timer(p, NH_TIMER_FOOD, (int32_t)NH_FOOD_TIMER_TICKS);
    nh_set_timer(p, NH_TIMER_KARAMBWAN, (int32_t)NH_KARAMBWAN_TIMER_TICKS);
    nh_set_timer(p, NH_TIMER_POTION, (int32_t)NH_POTION_TIMER_TICKS);
    delay_attack(p, (int32_t)NH_KARAMBWAN_ATTACK_DELAY_TICKS);
    p->inventory[slot] = NH_EMPTY;
    nh_heal(p, (int32_t)NH_KARAMBWAN_HEAL, p->base[NH_SKILL_HITPOINTS]);
    return 1;
}

/* ---- potions (§8.3) ---- */

int32_t nh_find_potion(const nh_player *p, int32_t potion, int fewest_first) {
    int32_t best_slot = -1, best_doses = 0;
    for (int32_t slot = 0; slot < NH_INVENTORY_SIZE; slot++) {
        const nh_consumable *c = p->inventory[slot] != NH_EMPTY ? nh_consumable_by_id(p->inventory[slot]) : NULL;
        if (c == NULL || c->potion != potion) {
            continue;
        }
        int better = fewest_first ? c->doses < best_doses : c->doses > best_doses;
        if (best_slot < 0 || better) {
            best_slot = slot;
            best_doses = c->doses;
        }
    }
    return best_slot;
}

/* Super combat / ranging: add to the current level, capped at base + boost. */
static void boost(nh_player *p, int skill, int32_t amount) {
    int32_t base = p->base[skill], cur = p->level[skill];
    if (base + amount > cur) {
        p->level[skill] = nh_min32(cur + amount, base + amount);
    }
}

/* Brew raise: nothing if already above the cap. */
static void raise_capped(nh_player *p, int skill, int32_t amount, int32_t cap) {
    int32_t cur = p->level[skill];
    if (cur <= cap) {
        p->level[skill] = nh_min32(cur + amount, cap);
    }
}

void nh_apply_potion(nh_player *p, int32_t potion) {
    int32_t *lv = p->level;
    const int32_t *base = p->base;
    if (potion == NH_POTION_BREW) {
        int32_t d_raise = NH_BREW_DEFENCE_RAISE_BASE + base[NH_SKILL_DEFENCE] * NH_BREW_DEFENCE_RAISE_PCT / NH_PERCENT_DIVISOR;
        raise_capped(p, NH_SKILL_DEFENCE, d_raise, base[NH_SKILL_DEFENCE] + d_raise);
        if (!p->dying) {
            int32_t h_raise = NH_BREW_HP_BOOST_BY_BASE[base[NH_SKILL_HITPOINTS]];
            raise_capped(p, NH_SKILL_HITPOINTS, h_raise, base[NH_SKILL_HITPOINTS] + h_raise);
        }
        lv[NH_SKILL_ATTACK] = nh_max32(0, lv[NH_SKILL_ATTACK] - (base[NH_SKILL_ATTACK] / NH_BREW_DRAIN_DIVISOR + NH_BREW_DRAIN_BASE));
        static const int drained[] = {NH_SKILL_STRENGTH, NH_SKILL_MAGIC, NH_SKILL_RANGED};
        for (int k = 0; k < 3; k++) {
            int s = drained[k];
            /* levels are >= 0 here, so C's / is Python's // */
            lv[s] = nh_max32(0, lv[s] - (lv[s] / NH_BREW_DRAIN_DIVISOR + NH_BREW_DRAIN_BASE));
        }
    } else if (potion == NH_POTION_RESTORE) {
        if (lv[NH_SKILL_PRAYER] < base[NH_SKILL_PRAYER]) {
            lv[NH_SKILL_PRAYER] = nh_min32(lv[NH_SKILL_PRAYER] + NH_RESTORE_AMOUNT_BY_BASE[base[NH_SKILL_PRAYER]],
                                        base[NH_SKILL_PRAYER]);
        }
        static const int restored[] = {NH_SKILL_ATTACK, NH_SKILL_DEFENCE, NH_SKILL_STRENGTH, NH_SKILL_RANGED,
                                       NH_SKILL_MAGIC};
        for (int k = 0; k < 5; k++) {
            int s = restored[k];
            if (lv[s] < base[s]) {
                lv[s] = nh_min32(lv[s] + NH_RESTORE_AMOUNT_BY_BASE[base[s]], base[s]);
            }
        }
    } else if (potion == NH_POTION_COMBAT) {
        static const int boosted[] = {NH_SKILL_ATTACK, NH_SKILL_STRENGTH, NH_SKILL_DEFENCE};
        for (int k = 0; k < 3; k++) {
            boost(p, boosted[k], NH_COMBAT_BOOST_BY_BASE[base[boosted[k]]]);
        }
    } else {
        boost(p, NH_SKILL_RANGED, NH_RANGING_BOOST_BY_BASE[base[NH_SKILL_RANGED]]);
    }
}

int nh_drink_potion(nh_player *p, int32_t potion, int fewest_first) {
    if (nh_timer_active(p, NH_TIMER_POTION)) {
        return 0;
    }
    int32_t slot = nh_find_potion(p, potion, fewest_first);
    if (slot < 0) {
        return 0;
    }
    nh_set_timer(p, NH_TIMER_POTION, (int32_t)NH_POTION_TIMER_TICKS);
    nh_set_timer(p, NH_TIMER_FOOD, (int32_t)NH_FOOD_TIMER_TICKS);
    p->target = NH_NO_PLAYER;
    int32_t doses = nh_consumable_by_id(p->inventory[slot])->doses;
    p->inventory[slot] = doses == 1 ? NH_ID_VIAL : nh_potion_id(potion, doses - 1);
    nh_apply_potion(p, potion);
    return 1;
}

/* ---- vengeance (§5.6) ---- */

int nh_cast_vengeance(nh_player *p) {
    if (p->spellbook != NH_SPELLBOOK_LUNAR || p->level[NH_SKILL_MAGIC] < NH_VENGEANCE_MIN_MAGIC ||
        p->base[NH_SKILL_DEFENCE] < NH_VENGEANCE_MIN_BASE_DEFENCE || p->vengeance ||
        nh_timer_active(p, NH_TIMER_VENGEANCE_COOLDOWN)) {
        return 0;
    }
    p->vengeance = 1;
    nh_set_timer(p, NH_TIMER_VENGEANCE_COOLDOWN, (int32_t)NH_VENGEANCE_COOLDOWN_TICKS);
    return 1;
}
