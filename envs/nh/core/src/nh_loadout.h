/*
 * nh_loadout.h: loadouts (spec §12) and the draws of a fight's reset (§16.1, draw order §16.6).
 *
 * Mirrors envs/nh/loadouts.py (`make_loadout`, `baseline_loadout`, `draw_build`, `tank_set`) and the
 * first half of `FightSim.reset` in envs/nh/sim.py (build, fight mode, loadouts, spawn tiles, PIDs):
 * the same draws in the same order from the same generator. The gear randomisation of §12.6 runs as a
 * small interpreter over the generated NH_RANDOM_LINES / NH_RANDOM_OPS tables (nh_data.h), so no rule of
 * data/randomisation.yml is written in C.
 *
 * Not here yet (next port step, docs/compiled-core.md): the player state built from a loadout (bonuses,
 * fight style, timers) and the identifier rule of §12.7 (`choose_build`), which depends only on the
 * fight's parameters and is resolved once by the caller into a fixed build.
 */
#ifndef NH_LOADOUT_H
#define NH_LOADOUT_H

#include <stdint.h>

#include "nh_data.h"
#include "nh_rng.h"

/* Error codes (0 = success). */
#define NH_ERR_INVENTORY_OVERFULL 1 /* gear + supplies exceed 28 slots (loadouts._assemble's LoadoutError) */
#define NH_ERR_SUPPLIES_OVERFULL 2  /* more supply entries than NH_MAX_SUPPLIES (a generator bug) */
#define NH_ERR_NO_RANGED_WEAPON 3   /* the ranged set lost its weapon (tank_set's LoadoutError) */
#define NH_ERR_BAD_PARAMS 4         /* an unknown build / mode, or no build options */

#define NH_MAX_BUILD_OPTIONS 32 /* entries of random_build_options the core accepts (repeats allowed) */

/* loadouts.Loadout: sets in GearSet order (MAGIC, RANGED, MELEE, SPEC, TANK), ids in §12.2 row order. */
typedef struct nh_loadout {
    int32_t build;
    int32_t spellbook;
    int32_t fight_mode; /* the build's mode (§12.1) */
    int32_t primary_food;
    int32_t set_len[NH_NUM_GEAR_SETS];
    int32_t sets[NH_NUM_GEAR_SETS][NH_NUM_SLOTS];
    int32_t equipment[NH_NUM_SLOTS]; /* by Slot index, NH_EMPTY where none */
    int32_t inventory[NH_INVENTORY_SIZE];
    /* §12.8 derived flags */
    int32_t melee_special_weapon; /* NH_EMPTY for none */
    int32_t ranged_weapon;
    int32_t ranged_special;
    int32_t magic_weapon; /* NH_EMPTY for none */
    int32_t has_nightmare_staff;
} nh_loadout;

/* make_loadout(build, rng): randomised by §12.6 when `rng` is not NULL. Returns 0 or an NH_ERR_*. */
int nh_make_loadout(int32_t build, nh_rng *rng, nh_loadout *out);

/* baseline_loadout(agent) (§18.1). */
void nh_baseline_loadout(const nh_loadout *agent, nh_loadout *out);

/* The parameters of params.FightParams that the reset's draws depend on. */
typedef struct nh_reset_params {
    int32_t build;           /* account_build, or the identifier rule's choice resolved by the caller */
    int32_t randomize_build; /* draw the build (no identifiers): loadouts.draw_build */
    int32_t n_build_options;
    int32_t build_options[NH_MAX_BUILD_OPTIONS];
    int32_t weighted; /* random_build_weights given */
    double build_weights[NH_MAX_BUILD_OPTIONS];
    int32_t randomize_fight_type;
    int32_t fight_type; /* NH_FIGHT_MODE_*, or -1 for the build's own mode */
    int32_t randomize_gear;
    int32_t self_play; /* opponent == "agent" */
    int32_t first_player_baseline;
    int32_t training; /* random spawn tiles */
    /* not draws, but the fight's end (§16.3, §16.4): */
    int32_t death_match;       /* if false a fight also ends TIED when a player has no food left */
    int32_t max_episode_ticks; /* truncation limit, 0 = none */
    /* the mask switches (§13.1, §14.3): */
    int32_t only_switch_prayer_when_about_to_attack;
    int32_t only_switch_gear_when_attack_soon;
    int32_t allow_smite;
    int32_t allow_redemption;
    int32_t allow_moving_if_can_attack;
} nh_reset_params;

/* What the reset's draws decide (sim.FightSim.reset steps 0-4). */
typedef struct nh_reset_result {
    int32_t build;
    int32_t fight_mode;
    nh_loadout loadouts[2];
    int32_t x[2];
    int32_t y[2];
    double pid[2];
    int32_t pid_countdown[2];
} nh_reset_result;

/* The weapon among `n` gear items (the first with the weapon slot), or NH_EMPTY: a gear set's weapon
   (loadouts.loadout.weapon_of), read by assembly, the masks and the observation. */
int32_t nh_weapon_in(const int32_t *gear, int32_t n);

/* draw_build(options, weights, rng): the index into params->build_options. */
int32_t nh_draw_build_index(nh_rng *rng, const nh_reset_params *params);

/* FightSim.reset's draws, in the order of §16.6. Returns 0 or an NH_ERR_*. */
int nh_reset_draws(nh_rng *rng, const nh_reset_params *params, nh_reset_result *out);

#endif /* NH_LOADOUT_H */
