/* nh_masks.c: §14.3 masks; see nh_masks.h and envs/nh/masks.py (the reference). */
#include "nh_masks.h"

#include <stddef.h>

#include "nh_operations.h"

#define NO_COST (-1) /* None for a special's energy cost */

typedef nh_mask_facts loadout_facts;

static int32_t special_cost_of(int32_t weapon) {
    const nh_special *s = nh_special_of(weapon);
    return s != NULL ? s->cost : NO_COST;
}

static int two_handed(int32_t id) {
    const nh_item *item = id != NH_EMPTY ? nh_item_by_id(id) : NULL;
    return item != NULL && item->two_handed;
}

void nh_loadout_mask_facts(const nh_loadout *load, loadout_facts *f) {
    int32_t ranged = nh_weapon_in(load->sets[NH_GEAR_SET_RANGED], load->set_len[NH_GEAR_SET_RANGED]);
    int32_t melee = nh_weapon_in(load->sets[NH_GEAR_SET_MELEE], load->set_len[NH_GEAR_SET_MELEE]);
    int32_t spec = load->melee_special_weapon;
    int vns_in_magic = 0;
    for (int32_t i = 0; i < load->set_len[NH_GEAR_SET_MAGIC]; i++) {
        vns_in_magic |= load->sets[NH_GEAR_SET_MAGIC][i] == NH_ID_VOLATILE_NIGHTMARE_STAFF;
    }
    const int32_t *base = NH_BUILD_SPECS[load->build].base_levels;
    f->magic_set = load->set_len[NH_GEAR_SET_MAGIC] > 0;
    f->magic_special_cost = vns_in_magic ? special_cost_of(NH_ID_VOLATILE_NIGHTMARE_STAFF) : NO_COST;
    f->ranged_two_handed = two_handed(ranged);
    f->ranged_special_cost = ranged != NH_EMPTY ? special_cost_of(ranged) : NO_COST;
    f->melee_two_handed = two_handed(melee);
    f->spec_weapon = spec;
    f->spec_two_handed = two_handed(spec);
    f->spec_cost = spec != NH_EMPTY ? special_cost_of(spec) : NO_COST;
    f->brew_defence_cap = base[NH_SKILL_DEFENCE] + NH_BREW_DEFENCE_RAISE_BASE +
                          base[NH_SKILL_DEFENCE] * NH_BREW_DEFENCE_RAISE_PCT / NH_PERCENT_DIVISOR;
    f->combat_caps[0] = base[NH_SKILL_ATTACK] + NH_COMBAT_BOOST_BY_BASE[base[NH_SKILL_ATTACK]];
    f->combat_caps[1] = base[NH_SKILL_STRENGTH] + NH_COMBAT_BOOST_BY_BASE[base[NH_SKILL_STRENGTH]];
    f->combat_caps[2] = base[NH_SKILL_DEFENCE] + NH_COMBAT_BOOST_BY_BASE[base[NH_SKILL_DEFENCE]];
    f->ranged_cap = base[NH_SKILL_RANGED] + NH_RANGING_BOOST_BY_BASE[base[NH_SKILL_RANGED]];
}

static int in_box(int32_t x, int32_t y) {
    return NH_WILDERNESS_X[0] <= x && x <= NH_WILDERNESS_X[1] && NH_WILDERNESS_Y[0] <= y && y <= NH_WILDERNESS_Y[1];
}

/* masks._candidate_ok: a §5.8 candidate exists and differs from the agent's tile. */
static int candidate_ok(int32_t px, int32_t py, int32_t tx, int32_t ty, const int64_t (*offsets)[2], int n) {
    if (in_box(px, py)) {
        for (int k = 0; k < n; k++) {
            if (px == tx + offsets[k][0] && py == ty + offsets[k][1]) {
                return 0;
            }
        }
    }
    for (int k = 0; k < n; k++) {
        if (in_box(tx + (int32_t)offsets[k][0], ty + (int32_t)offsets[k][1])) {
            return 1;
        }
    }
    return 0;
}

void nh_mask_values(const nh_fight *fight, const nh_player *p, int known_lunar, uint8_t *m) {
    const nh_reset_params *prm = &fight->params;
    const nh_player *q = &fight->players[1 - p->index];
    const int32_t *lv = p->level, *base = p->base, *ticks = p->timer_ticks, *qticks = q->timer_ticks;
    const loadout_facts f = fight->mask_facts[p->index];
    int can_attack = ticks[NH_TIMER_ATTACK] <= 1;
    int gate = can_attack || !prm->only_switch_gear_when_attack_soon;
    int can_move = ticks[NH_TIMER_FREEZE] <= 1;
    int target_can_move = qticks[NH_TIMER_FREEZE] <= 1;
    int target_attack_ready = qticks[NH_TIMER_ATTACK] <= 1;
    int32_t px = p->x, py = p->y, qx = q->x, qy = q->y;
    int32_t adx = px - qx >= 0 ? px - qx : qx - px, ady = py - qy >= 0 ? py - qy : qy - py;
    int in_melee = adx + ady == 1;
    int can_melee = in_melee || can_move;
    /* state.inventory_facts */
    nh_inventory_facts inv;
    nh_inventory_facts_of(p, &inv);
    const int32_t *doses = inv.doses;
    int32_t sharks = inv.sharks, karambwans = inv.karambwans, anglerfish = inv.anglerfish;
    int has_free_slot = inv.has_free_slot;
    int32_t food = sharks ? NH_ID_SHARK : anglerfish ? NH_ID_ANGLERFISH : NH_EMPTY;
    int can_2h = has_free_slot || p->equipment[NH_SLOT_SHIELD] == NH_EMPTY;
    int32_t energy = p->special_energy, magic = lv[NH_SKILL_MAGIC];
    int ancient = p->spellbook == NH_SPELLBOOK_ANCIENT;
    int32_t hp = lv[NH_SKILL_HITPOINTS], base_hp = base[NH_SKILL_HITPOINTS];

    int ice = gate && f.magic_set && ancient && magic >= NH_ICE_MIN_MAGIC;
    int blood = gate && f.magic_set && ancient && magic >= NH_BLOOD_MIN_MAGIC && hp < base_hp;
    int mage_spec = gate && f.magic_special_cost != NO_COST && energy >= f.magic_special_cost;
    int ranged = gate && (!f.ranged_two_handed || can_2h);
    int ranged_spec = ranged && f.ranged_special_cost != NO_COST && energy >= f.ranged_special_cost;
    int melee = gate && can_melee && (!f.melee_two_handed || can_2h);
    int gmaul = f.spec_weapon == NH_ID_GRANITE_MAUL && energy >= NH_GMAUL_SPEC_COST;
    int melee_spec = (gmaul || gate) && can_melee && (!f.spec_two_handed || can_2h) && f.spec_cost != NO_COST &&
                     energy >= f.spec_cost;
    /* head 4: potions */
    int brew_ok = 0, restore_ok = 0, combat_ok = 0, ranging_ok = 0;
    if (ticks[NH_TIMER_POTION] <= 1) {
        int brew_useful = lv[NH_SKILL_DEFENCE] < f.brew_defence_cap - 1 || hp <= base_hp;
        brew_ok = brew_useful && doses[NH_POTION_BREW] > 0;
        int below = lv[NH_SKILL_ATTACK] < base[NH_SKILL_ATTACK] || lv[NH_SKILL_DEFENCE] < base[NH_SKILL_DEFENCE] ||
                    lv[NH_SKILL_STRENGTH] < base[NH_SKILL_STRENGTH] || lv[NH_SKILL_RANGED] < base[NH_SKILL_RANGED] ||
                    lv[NH_SKILL_MAGIC] < base[NH_SKILL_MAGIC] || lv[NH_SKILL_PRAYER] < base[NH_SKILL_PRAYER];
        restore_ok = below && doses[NH_POTION_RESTORE] > 0;
        int combat_useful = f.combat_caps[0] > lv[NH_SKILL_ATTACK] + 1 || f.combat_caps[1] > lv[NH_SKILL_STRENGTH] + 1 ||
                            f.combat_caps[2] > lv[NH_SKILL_DEFENCE] + 1;
        combat_ok = combat_useful && doses[NH_POTION_COMBAT] > 0;
        ranging_ok = f.ranged_cap > lv[NH_SKILL_RANGED] + 1 && doses[NH_POTION_RANGING] > 0;
    }
    /* head 5: food */
    int eat_ok = 0;
    if (ticks[NH_TIMER_FOOD] <= 1 && food != NH_EMPTY) {
        eat_ok = food == NH_ID_ANGLERFISH ? hp <= base_hp : hp < base_hp;
    }
    /* heads 9-10: movement; farOK(k), k = FARCAST_DISTANCES */
    int move_ok = can_move && (prm->allow_moving_if_can_attack || !can_attack);
    int32_t d = adx > ady ? adx : ady;
    int p_wild = in_box(px, py);
    uint8_t far[NH_FARCAST_DISTANCES_STOP - NH_FARCAST_DISTANCES_START];
    int far_any = 0;
    for (int32_t k = NH_FARCAST_DISTANCES_START; k < NH_FARCAST_DISTANCES_STOP; k++) {
        int ring_meets_box = qx - k <= NH_WILDERNESS_X[1] && qx + k >= NH_WILDERNESS_X[0] && qy - k <= NH_WILDERNESS_Y[1] &&
                             qy + k >= NH_WILDERNESS_Y[0];
        far[k - NH_FARCAST_DISTANCES_START] = ring_meets_box && !(d == k && p_wild);
        far_any |= far[k - NH_FARCAST_DISTANCES_START];
    }
    int adjacent_ok = 0, under_ok = 0, diagonal_ok = 0;
    if (move_ok) {
        adjacent_ok = candidate_ok(px, py, qx, qy, NH_CARDINALS, NH_CARDINALS_LEN);
        under_ok = !target_can_move && d != 0;
        diagonal_ok = candidate_ok(px, py, qx, qy, NH_DIAGONALS, NH_DIAGONALS_LEN);
    }
    /* head 11: prayer */
    int prayer_left = lv[NH_SKILL_PRAYER] > 0;
    int protect = prayer_left && (target_attack_ready || !prm->only_switch_prayer_when_about_to_attack);
    int lms = fight->fight_mode == NH_FIGHT_MODE_LMS;
    int no_food = !(sharks || karambwans || anglerfish);
    int n = 0;
    /* head 0: attack */
    m[n++] = !can_attack, m[n++] = ice || blood || mage_spec, m[n++] = ranged || ranged_spec;
    m[n++] = melee || melee_spec;
    m[n++] = 1, m[n++] = melee, m[n++] = melee_spec;                   /* head 1: melee type */
    m[n++] = 1, m[n++] = ranged, m[n++] = ranged_spec;                 /* head 2: ranged type */
    m[n++] = 1, m[n++] = ice, m[n++] = blood, m[n++] = mage_spec;      /* head 3: mage type */
    m[n++] = 1, m[n++] = brew_ok, m[n++] = restore_ok, m[n++] = combat_ok, m[n++] = ranging_ok; /* head 4 */
    m[n++] = 1, m[n++] = eat_ok;                                       /* head 5: food */
    m[n++] = 1, m[n++] = ticks[NH_TIMER_KARAMBWAN] <= 1 && karambwans > 0 && hp < base_hp; /* head 6 */
    m[n++] = 1, m[n++] = ticks[NH_TIMER_VENGEANCE_COOLDOWN] <= 1 && p->spellbook == NH_SPELLBOOK_LUNAR; /* 7 */
    m[n++] = 1, m[n++] = target_attack_ready;                          /* head 8: tank gear */
    m[n++] = 1, m[n++] = adjacent_ok, m[n++] = under_ok, m[n++] = move_ok && far_any, m[n++] = diagonal_ok; /* 9 */
    m[n++] = 1;                                                        /* head 10: farcast distance */
    for (int32_t k = 0; k < NH_FARCAST_DISTANCES_STOP - NH_FARCAST_DISTANCES_START; k++) {
        m[n++] = far[k];
    }
    m[n++] = 0; /* head 11: prayer; value 0 is never legal */
    m[n++] = protect && !known_lunar;
    m[n++] = protect;
    m[n++] = protect && (can_move || target_can_move || in_melee);
    m[n++] = prm->allow_smite && !lms && can_attack && prayer_left;
    m[n++] = prm->allow_redemption && !lms && no_food && doses[NH_POTION_BREW] <= 0 &&
             (p->n_hit_queue > 0 || target_attack_ready) && prayer_left;
}
