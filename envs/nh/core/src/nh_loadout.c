/* nh_loadout.c: loadouts and the reset's draws; see nh_loadout.h and envs/nh/loadouts.py, envs/nh/sim.py. */
#include "nh_loadout.h"

#include <string.h>

/* ---- the draft of §12.6 (loadouts._Draft) ---- */

typedef struct draft {
    int32_t sets[NH_NUM_BASE_SETS][NH_NUM_SLOTS]; /* by Slot index; NH_EMPTY = the set has nothing there */
    int32_t n_supplies;
    int32_t supplies[NH_MAX_SUPPLIES][2]; /* (item id, count) */
    int32_t primary_food;
    int32_t spellbook;
    int32_t magic_emptied;
    int error;
} draft;

static void draft_init(draft *d, const nh_build_spec *spec) {
    for (int gs = 0; gs < NH_NUM_BASE_SETS; gs++) {
        for (int s = 0; s < NH_NUM_SLOTS; s++) {
            d->sets[gs][s] = NH_EMPTY;
        }
        for (int row = 0; row < NH_NUM_SLOTS; row++) {
            d->sets[gs][NH_TABLE_SLOT_ORDER[row]] = spec->sets[gs][row];
        }
    }
    d->n_supplies = spec->n_supplies;
    memcpy(d->supplies, spec->supplies, sizeof(d->supplies));
    d->primary_food = spec->primary_food;
    d->spellbook = spec->spellbook;
    d->magic_emptied = 0;
    d->error = 0;
}

/* _Draft.set_count: the supplies hold exactly n of `item` (appended when absent). */
static void draft_set_count(draft *d, int32_t item, int32_t n) {
    for (int32_t i = 0; i < d->n_supplies; i++) {
        if (d->supplies[i][0] == item) {
            d->supplies[i][1] = n;
            return;
        }
    }
    if (d->n_supplies >= NH_MAX_SUPPLIES) {
        d->error = NH_ERR_SUPPLIES_OVERFULL;
        return;
    }
    d->supplies[d->n_supplies][0] = item;
    d->supplies[d->n_supplies][1] = n;
    d->n_supplies++;
}

static int32_t draw_int_or_range(nh_rng *rng, nh_int_or_range v) {
    return v.is_range ? (int32_t)nh_rng_uniform(rng, v.lo, v.hi) : v.lo;
}

static void swap_in_sets(draft *d, int32_t sets_mask, int32_t old_item, int32_t new_item) {
    const nh_item *old = nh_item_by_id(old_item);
    if (old == NULL) {
        return; /* not wearable: only supplies can hold it */
    }
    for (int gs = 0; gs < NH_NUM_BASE_SETS; gs++) {
        if ((sets_mask >> gs & 1) && d->sets[gs][old->slot] == old_item) {
            d->sets[gs][old->slot] = new_item;
        }
    }
}

/* One operation (the `apply` of each loadouts.Op class). */
static void apply_op(draft *d, const nh_rand_op *op, nh_rng *rng) {
    switch (op->kind) {
    case NH_OP_SET_SLOT: {
        const nh_item *item = nh_item_by_id(op->item);
        for (int gs = 0; gs < NH_NUM_BASE_SETS; gs++) {
            if (op->sets >> gs & 1) {
                d->sets[gs][op->slot] = op->item;
                if (item != NULL && item->two_handed) {
                    d->sets[gs][NH_SLOT_SHIELD] = NH_EMPTY;
                }
            }
        }
        break;
    }
    case NH_OP_SWAP_SET:
        swap_in_sets(d, op->sets, op->old_item, op->new_item);
        break;
    case NH_OP_SWAP_ALL:
        swap_in_sets(d, (1 << NH_NUM_BASE_SETS) - 1, op->old_item, op->new_item);
        for (int32_t i = 0; i < d->n_supplies; i++) {
            if (d->supplies[i][0] == op->old_item) {
                d->supplies[i][0] = op->new_item;
            }
        }
        break;
    case NH_OP_COUNT:
        draft_set_count(d, op->item, draw_int_or_range(rng, op->n));
        break;
    case NH_OP_DOSE_VARY: {
        int32_t doses = op->doses[nh_rng_uniform(rng, 0, op->n_doses - 1)];
        const nh_consumable *c = nh_consumable_by_id(op->item);
        int32_t varied = c != NULL ? nh_potion_id(c->potion, doses) : NH_EMPTY;
        for (int32_t i = 0; i < d->n_supplies; i++) {
            if (d->supplies[i][0] == op->item) {
                d->supplies[i][0] = varied;
            }
        }
        break;
    }
    case NH_OP_BREWS: {
        int32_t b = draw_int_or_range(rng, op->n);
        int32_t plus = draw_int_or_range(rng, op->restore_plus);
        int32_t half = op->restore_round_up ? (b + 1) / 2 : b / 2; /* b >= 0 */
        int32_t restores = half + plus;
        draft_set_count(d, op->item, b);
        draft_set_count(d, op->restore, restores > op->restore_min ? restores : op->restore_min);
        break;
    }
    case NH_OP_PRIMARY_FOOD:
        d->primary_food = op->item;
        break;
    case NH_OP_LUNAR_BOOK:
        d->spellbook = NH_SPELLBOOK_LUNAR;
        break;
    case NH_OP_EMPTY_MAGIC:
        d->magic_emptied = 1;
        break;
    default:
        break;
    }
}

/* RandomLine.apply: the operations (after the line's own chance succeeded), then the "then" line. */
static void apply_line(draft *d, const nh_rand_line *line, nh_rng *rng) {
    for (int32_t i = 0; i < line->n_ops; i++) {
        apply_op(d, &NH_RANDOM_OPS[line->first_op + i], rng);
    }
    if (line->then_line >= 0) {
        const nh_rand_line *then = &NH_RANDOM_LINES[line->then_line];
        if (nh_rng_chance(rng, then->p)) {
            apply_line(d, then, rng);
        }
    }
}

/* loadouts._randomise: table order; an else line only when the line above was reached and failed. */
static void randomise(draft *d, const nh_build_spec *spec, nh_rng *rng) {
    int above_failed = 0;
    for (int32_t i = 0; i < spec->n_lines; i++) {
        const nh_rand_line *line = &NH_RANDOM_LINES[spec->first_line + i];
        if (line->is_else && !above_failed) {
            above_failed = 0; /* not reached: the lines chained below it are not reached either */
            continue;
        }
        int fired = nh_rng_chance(rng, line->p);
        if (fired) {
            apply_line(d, line, rng);
        }
        above_failed = !fired;
    }
}

/* ---- assembling (loadouts._assemble, tank_set, Loadout.__post_init__) ---- */

int32_t nh_weapon_in(const int32_t *gear, int32_t n) {
    for (int32_t i = 0; i < n; i++) {
        const nh_item *item = nh_item_by_id(gear[i]);
        if (item != NULL && item->slot == NH_SLOT_WEAPON) {
            return gear[i];
        }
    }
    return NH_EMPTY;
}

/* Three times the §12.5 average: slash + magic + ranged defence. */
static int32_t tank_defence(const nh_item *item) {
    return item->bonuses[NH_BONUS_SLASH_DEFENCE] + item->bonuses[NH_BONUS_MAGIC_DEFENCE] +
           item->bonuses[NH_BONUS_RANGED_DEFENCE];
}

static int tank_set(nh_loadout *lo) {
    const int32_t *ranged = lo->sets[NH_GEAR_SET_RANGED], *magic = lo->sets[NH_GEAR_SET_MAGIC];
    int32_t n_ranged = lo->set_len[NH_GEAR_SET_RANGED], n_magic = lo->set_len[NH_GEAR_SET_MAGIC];
    int32_t w = nh_weapon_in(ranged, n_ranged);
    if (w == NH_EMPTY) {
        return NH_ERR_NO_RANGED_WEAPON;
    }
    const nh_item *s = NULL;
    for (int32_t i = 0; i < n_magic && s == NULL; i++) {
        const nh_item *item = nh_item_by_id(magic[i]);
        if (item != NULL && item->slot == NH_SLOT_WEAPON && !item->two_handed) {
            s = item;
        }
    }
    int replace = s != NULL && tank_defence(s) > tank_defence(nh_item_by_id(w));
    for (int32_t i = 0; i < n_ranged; i++) {
        lo->sets[NH_GEAR_SET_TANK][i] = (replace && ranged[i] == w) ? s->id : ranged[i];
    }
    lo->set_len[NH_GEAR_SET_TANK] = n_ranged;
    return 0;
}

static int contains(const int32_t *ids, int32_t n, int32_t id) {
    for (int32_t i = 0; i < n; i++) {
        if (ids[i] == id) {
            return 1;
        }
    }
    return 0;
}

/* loadouts._inventory_rank (§12.4): a consumable's rank is a column of the generated table. */
static int inventory_rank(int32_t id) {
    const nh_consumable *c = nh_consumable_by_id(id);
    return c == NULL ? NH_GEAR_INVENTORY_RANK : c->inventory_rank;
}

/* loadouts._ordered: a stable re-order by rank, in place. */
static void order_inventory(int32_t inventory[NH_INVENTORY_SIZE]) {
    int32_t sorted[NH_INVENTORY_SIZE];
    int32_t n = 0;
    for (int rank = 0; rank < NH_INVENTORY_RANKS; rank++) {
        for (int32_t i = 0; i < NH_INVENTORY_SIZE; i++) {
            if (inventory_rank(inventory[i]) == rank) {
                sorted[n++] = inventory[i];
            }
        }
    }
    memcpy(inventory, sorted, sizeof(sorted));
}

static void derive_flags(nh_loadout *lo) {
    const int32_t *spec_set = lo->sets[NH_GEAR_SET_SPEC], *magic = lo->sets[NH_GEAR_SET_MAGIC];
    lo->melee_special_weapon = NH_EMPTY;
    for (int32_t i = 0; i < lo->set_len[NH_GEAR_SET_SPEC]; i++) {
        if (contains(NH_MELEE_SPECIAL_WEAPONS, NH_N_MELEE_SPECIAL_WEAPONS, spec_set[i])) {
            lo->melee_special_weapon = spec_set[i];
            break;
        }
    }
    lo->ranged_weapon = nh_weapon_in(lo->sets[NH_GEAR_SET_RANGED], lo->set_len[NH_GEAR_SET_RANGED]);
    lo->ranged_special = contains(NH_RANGED_SPECIAL_WEAPONS, NH_N_RANGED_SPECIAL_WEAPONS, lo->ranged_weapon);
    lo->magic_weapon = nh_weapon_in(magic, lo->set_len[NH_GEAR_SET_MAGIC]);
    lo->has_nightmare_staff = contains(magic, lo->set_len[NH_GEAR_SET_MAGIC], NH_ID_VOLATILE_NIGHTMARE_STAFF);
}

static int assemble(int32_t build, const draft *d, nh_loadout *lo) {
    const nh_build_spec *spec = &NH_BUILD_SPECS[build];
    memset(lo, 0, sizeof(*lo));
    lo->build = build;
    lo->spellbook = d->spellbook;
    lo->fight_mode = spec->fight_mode;
    lo->primary_food = d->primary_food;
    for (int gs = 0; gs < NH_NUM_BASE_SETS; gs++) {
        int32_t n = 0;
        for (int row = 0; row < NH_NUM_SLOTS; row++) {
            int32_t id = d->sets[gs][NH_TABLE_SLOT_ORDER[row]];
            if (id != NH_EMPTY) {
                lo->sets[gs][n++] = id;
            }
        }
        lo->set_len[gs] = n;
    }
    if (d->magic_emptied || d->spellbook == NH_SPELLBOOK_LUNAR) {
        lo->set_len[NH_GEAR_SET_MAGIC] = 0;
    }
    int err = tank_set(lo);
    if (err) {
        return err;
    }
    int has_magic = lo->set_len[NH_GEAR_SET_MAGIC] > 0;
    int worn_set = has_magic ? NH_GEAR_SET_MAGIC : NH_GEAR_SET_RANGED;
    for (int s = 0; s < NH_NUM_SLOTS; s++) {
        lo->equipment[s] = NH_EMPTY;
    }
    for (int32_t i = 0; i < lo->set_len[worn_set]; i++) {
        lo->equipment[nh_item_by_id(lo->sets[worn_set][i])->slot] = lo->sets[worn_set][i];
    }
    static const int carried_with_magic[] = {NH_GEAR_SET_RANGED, NH_GEAR_SET_MELEE, NH_GEAR_SET_SPEC};
    static const int carried_without[] = {NH_GEAR_SET_MELEE, NH_GEAR_SET_SPEC};
    const int *carried = has_magic ? carried_with_magic : carried_without;
    int n_carried = has_magic ? 3 : 2;
    int32_t n = 0;
    for (int c = 0; c < n_carried; c++) {
        for (int32_t i = 0; i < lo->set_len[carried[c]]; i++) {
            int32_t id = lo->sets[carried[c]][i];
            if (!contains(lo->equipment, NH_NUM_SLOTS, id) && !contains(lo->inventory, n, id)) {
                if (n >= NH_INVENTORY_SIZE) {
                    return NH_ERR_INVENTORY_OVERFULL;
                }
                lo->inventory[n++] = id;
            }
        }
    }
    for (int32_t i = 0; i < d->n_supplies; i++) {
        for (int32_t k = 0; k < d->supplies[i][1]; k++) {
            if (n >= NH_INVENTORY_SIZE) {
                return NH_ERR_INVENTORY_OVERFULL;
            }
            lo->inventory[n++] = d->supplies[i][0];
        }
    }
    while (n < NH_INVENTORY_SIZE) {
        lo->inventory[n++] = d->primary_food;
    }
    order_inventory(lo->inventory);
    derive_flags(lo);
    return 0;
}

int nh_make_loadout(int32_t build, nh_rng *rng, nh_loadout *out) {
    if (build < 0 || build >= NH_NUM_BUILDS) {
        return NH_ERR_BAD_PARAMS;
    }
    draft d;
    draft_init(&d, &NH_BUILD_SPECS[build]);
    if (rng != NULL) {
        randomise(&d, &NH_BUILD_SPECS[build], rng);
    }
    if (d.error) {
        return d.error;
    }
    return assemble(build, &d, out);
}

void nh_baseline_loadout(const nh_loadout *agent, nh_loadout *out) {
    *out = *agent;
    int32_t restores = 0;
    for (int32_t i = 0; i < NH_INVENTORY_SIZE; i++) {
        const nh_consumable *c = nh_consumable_by_id(agent->inventory[i]);
        int32_t potion = c != NULL ? c->potion : 0;
        if (potion == NH_POTION_BREW) {
            out->inventory[i] = NH_ID_ANGLERFISH;
        } else if (potion == NH_POTION_RESTORE) {
            restores++;
            if (restores > NH_BASELINE_RESTORES_KEPT) {
                out->inventory[i] = NH_ID_ANGLERFISH;
            }
        }
    }
    order_inventory(out->inventory);
}

/* ---- the reset's draws (sim.FightSim.reset steps 0-4) ---- */

int32_t nh_draw_build_index(nh_rng *rng, const nh_reset_params *params) {
    int32_t n = params->n_build_options;
    if (!params->weighted) {
        return (int32_t)nh_rng_integers(rng, 0, n);
    }
    double total = 0.0; /* Python's float(sum(weights)): left to right from 0 */
    for (int32_t i = 0; i < n; i++) {
        total += params->build_weights[i];
    }
    double u = nh_rng_random(rng) * total;
    double acc = 0.0;
    for (int32_t i = 0; i < n; i++) {
        acc += params->build_weights[i];
        if (u < acc && params->build_weights[i] > 0) {
            return i;
        }
    }
    for (int32_t i = n - 1; i >= 0; i--) {
        if (params->build_weights[i] > 0) {
            return i;
        }
    }
    return 0; /* unreachable: params.py rejects all-zero weights */
}

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

int nh_reset_draws(nh_rng *rng, const nh_reset_params *params, nh_reset_result *out) {
    if (params->randomize_build &&
        (params->n_build_options < 1 || params->n_build_options > NH_MAX_BUILD_OPTIONS)) {
        return NH_ERR_BAD_PARAMS;
    }
    /* 0. build */
    out->build = params->randomize_build ? params->build_options[nh_draw_build_index(rng, params)] : params->build;
    if (out->build < 0 || out->build >= NH_NUM_BUILDS) {
        return NH_ERR_BAD_PARAMS;
    }
    /* 1. fight mode (FightMode order: NORMAL, LMS, PVP_ARENA) */
    int32_t mode = params->randomize_fight_type ? (int32_t)nh_rng_integers(rng, 0, 3) : params->fight_type;
    /* 2. gear randomisation */
    nh_rng *gear_rng = params->randomize_gear ? rng : NULL;
    nh_loadout load0, load1;
    int err = nh_make_loadout(out->build, gear_rng, &load0);
    if (err) {
        return err;
    }
    if (params->self_play) {
        err = nh_make_loadout(out->build, gear_rng, &load1);
        if (err) {
            return err;
        }
    } else {
        nh_baseline_loadout(&load0, &load1);
    }
    out->fight_mode = mode >= 0 ? mode : load0.fight_mode;
    if (params->first_player_baseline) {
        nh_loadout agent = load0;
        nh_baseline_loadout(&agent, &load0);
    }
    out->loadouts[0] = load0;
    out->loadouts[1] = load1;
    /* 3. spawn tiles (§16.2) */
    if (params->training) {
        int64_t x0 = nh_rng_uniform(rng, NH_TRAINING_SPAWN_X[0], NH_TRAINING_SPAWN_X[1]);
        int64_t y0 = nh_rng_uniform(rng, NH_TRAINING_SPAWN_Y[0], NH_TRAINING_SPAWN_Y[1]);
        int64_t x1, y1;
        if (params->self_play) {
            int64_t lo = NH_SELF_PLAY_SPAWN_BOX[0], hi = NH_SELF_PLAY_SPAWN_BOX[1];
            x1 = nh_rng_uniform(rng, max64(NH_TRAINING_SPAWN_X[0], x0 + lo), min64(NH_TRAINING_SPAWN_X[1], x0 + hi));
            y1 = nh_rng_uniform(rng, max64(NH_TRAINING_SPAWN_Y[0], y0 + lo), min64(NH_TRAINING_SPAWN_Y[1], y0 + hi));
        } else {
            x1 = x0 - 1;
            y1 = y0;
        }
        out->x[0] = (int32_t)x0, out->y[0] = (int32_t)y0, out->x[1] = (int32_t)x1, out->y[1] = (int32_t)y1;
    } else {
        out->x[0] = (int32_t)NH_EVAL_AGENT_TILE[0], out->y[0] = (int32_t)NH_EVAL_AGENT_TILE[1];
        const int64_t *tile1 = params->self_play ? NH_EVAL_AGENT_TILE : NH_EVAL_BASELINE_TILE;
        out->x[1] = (int32_t)tile1[0], out->y[1] = (int32_t)tile1[1];
    }
    /* 4. PID (§4.4) */
    for (int p = 0; p < 2; p++) {
        out->pid[p] = nh_rng_random(rng);
        out->pid_countdown[p] = (int32_t)nh_rng_uniform(rng, NH_PID_COUNTDOWN_TICKS[0], NH_PID_COUNTDOWN_TICKS[1]);
    }
    return 0;
}
