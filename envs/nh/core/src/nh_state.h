/*
 * nh_state.h: the state layout of a fight (spec §2, §3), one flat struct per player and per fight.
 *
 * Mirrors envs/nh/state.py `PlayerState` field by field (same names, same meaning) and the fight-level
 * fields of sim.FightSim. Data-oriented on purpose: no pointers, so a batch of fights is one array
 * that can be copied, reset and compared with memcpy / memcmp; player references (target, last
 * attacker, remembered target, a hit's attacker) are player indices (0 or 1, NH_NO_PLAYER for None),
 * enums and item ids are ints, Python's `set[Prayer]` is a bit mask, lists and deques are fixed-size
 * arrays with a count (the bounds below; the tick treats an overflow as a broken invariant).
 */
#ifndef NH_STATE_H
#define NH_STATE_H

#include <stdint.h>

#include "nh_loadout.h"
#include "nh_rng.h"

#define NH_NO_PLAYER (-1)  /* None for a player reference */
#define NH_NO_SPELL (-1)   /* None for a spell */
#define NH_MAX_HIT_QUEUE 32    /* pending hits of one victim (§4.3); a fight holds a handful */
#define NH_MAX_HIT_DAMAGES 4   /* hitsplats of one hit: Dragon claws' four (§6.9) */
#define NH_MAX_DAMAGE_QUEUE 64 /* damages landing in one tick (§4.5) */
#define NH_MAX_HITSPLATS 64    /* hitsplats shown in one tick */
#define NH_MAX_WALK_QUEUE 96   /* tiles of a path (§11): following stops beyond 15 tiles per axis */

/* state.PendingHit (§4.3, §4.5); `effect` is the after-hit effect tag (combat._effect). */
typedef struct nh_pending_hit {
    int32_t attacker; /* player index */
    int32_t n_damages;
    int32_t damages[NH_MAX_HIT_DAMAGES];
    int32_t accurate;
    int32_t delay;
    int32_t style;  /* NH_COMBAT_STYLE_* */
    int32_t effect; /* NH_EFFECT_* (generated from mirrors.EFFECTS) */
} nh_pending_hit;

/* state.PlayerState (§2). */
typedef struct nh_player {
    int32_t index;
    nh_loadout loadout;
    int32_t base[NH_NUM_SKILLS];
    int32_t level[NH_NUM_SKILLS];
    int32_t equipment[NH_NUM_SLOTS];
    int32_t inventory[NH_INVENTORY_SIZE];
    int32_t spellbook;
    int32_t fight_mode;
    int32_t is_baseline;
    /* derived from equipment (§10) */
    int32_t bonuses[NH_NUM_BONUSES];
    int32_t weapon_class; /* NH_WEAPON_CLASS_* of the wielded weapon, UNARMED without one */
    int32_t style;        /* index into NH_WEAPON_CLASS_TABLE[weapon_class].styles (PlayerState.style) */
    /* timers (§3) */
    int32_t timer_ticks[NH_NUM_TIMER_IDS];
    int32_t timer_uncapped[NH_NUM_TIMER_IDS];
    /* prayer (§7) */
    uint32_t prayers; /* bit (1 << NH_PRAYER_*) per active prayer */
    double prayer_drain_acc;
    int32_t prayer_drain_running;
    /* special attack (§6.9, §6.11) */
    int32_t special_energy;
    int32_t special_armed;
    int32_t gmaul_queued;
    int32_t special_regen_running;
    int32_t vengeance;
    /* combat (§6.1) */
    int32_t target;
    int32_t last_attacker;
    int32_t last_hit_received_tick;
    int32_t selected_spell;
    int32_t previous_spell;
    int32_t auto_retaliate;
    int32_t n_hit_queue;
    nh_pending_hit hit_queue[NH_MAX_HIT_QUEUE];
    int32_t n_damage_queue;
    int32_t damage_queue[NH_MAX_DAMAGE_QUEUE];
    int32_t n_hitsplats;
    int32_t hitsplats[NH_MAX_HITSPLATS];
    /* movement (§11) */
    int32_t x;
    int32_t y;
    int32_t n_walk_queue; /* a deque: walk_queue[walk_head .. walk_head + n_walk_queue), wrapping */
    int32_t walk_head;
    int32_t walk_queue[NH_MAX_WALK_QUEUE][2];
    int32_t moving;
    int32_t running;
    int32_t run_energy;
    int32_t last_run_recovery_tick;
    int32_t spawn[2];
    /* PID (§4.4) */
    double pid;
    int32_t pid_countdown;
    /* poison (§6.10.5), 0 = not poisoned */
    int32_t poison_damage;
    int32_t dying;
    /* scripted baseline (§18.2) */
    int32_t remembered_target;
} nh_player;

#define NH_MAX_TICK_HITS 8 /* hits one player creates in a tick (one attack: at most NH_MAX_ATTACK_HITS) */
#define NH_MAX_TASKS 32    /* scheduled tasks of a fight (§4.1 step 1): a handful run at once */
#define NH_NO_VALUE INT32_MIN /* None for an optional int (TickEvents.eat_at_hp) */

/* stats.HitRecord: one hit created this tick (§17.1). `hit` is a copy taken at creation: Python's record
 * shares the PendingHit whose delay the hit queue then counts down; readers use damages, accuracy, style. */
typedef struct nh_hit_record {
    nh_pending_hit hit;
    int32_t attack_speed;
    int32_t defender_protection; /* NH_COMBAT_STYLE_* the defender's overhead blocks, -1 for none */
    int32_t smite;
} nh_hit_record;

/* stats.TickEvents: what one player did this tick. */
typedef struct nh_tick_events {
    int32_t n_hits;
    nh_hit_record hits[NH_MAX_TICK_HITS];
    int32_t extra_damage_dealt;
    int32_t healed;
    int32_t eat_at_hp; /* NH_NO_VALUE for None */
    int32_t wasted_food;
    int32_t wasted_brew;
} nh_tick_events;

/* stats.EpisodeStats: the hits one player created this episode. The deques are rings of NH_RECENT_WINDOW. */
typedef struct nh_episode_stats {
    int32_t n_hits;
    int32_t style_counts[3];
    int32_t defender_prayer_counts[3];
    int32_t protected_count;
    int32_t n_recent; /* recent[(recent_head + k) % NH_RECENT_WINDOW], k < n_recent: (style, correct) */
    int32_t recent_head;
    int32_t recent[NH_RECENT_WINDOW][2];
    int32_t n_recent_prayed;
    int32_t recent_prayed_head;
    int32_t recent_prayed[NH_RECENT_WINDOW];
    int32_t has_gear_sample[3];
    int32_t gear_samples[3][NH_NUM_BONUSES];
    double dealt_scale_sum;
    double received_scale_sum;
    double observed_opponent_hp;
    int32_t known_lunar_opponent;
} nh_episode_stats;

/* The closures sim.py schedules (§4.1 step 1), as data: a kind and the state its closure keeps. */
enum nh_task_kind {
    NH_TASK_RETALIATION = 0,   /* _schedule_retaliation: player := target other */
    NH_TASK_SACRIFICE = 1,     /* _start_sacrifice: attacker `player`, victim `other`, counter = runs */
    NH_TASK_BLEED = 2,         /* _start_bleed: attacker `player`, victim `other`, counter = runs, amount = dealt */
    NH_TASK_POISON = 3,        /* _poison: victim `player`, counter = applications */
    NH_TASK_SPECIAL_REGEN = 4, /* drain_special's regeneration of `player` */
    NH_TASK_PRAYER_DRAIN = 5,  /* activate_prayer's drain of `player` */
};

/* sim.Task. */
typedef struct nh_task {
    int32_t kind;
    int32_t next_tick;
    int32_t period;
    int32_t player;
    int32_t other;
    int32_t counter;
    int32_t amount;
    int32_t total;
} nh_task;

/* masks.LoadoutFacts: what the masks need from a loadout, computed once per episode (nh_masks.c). */
typedef struct nh_mask_facts {
    int32_t magic_set;
    int32_t magic_special_cost; /* -1 for None */
    int32_t ranged_two_handed;
    int32_t ranged_special_cost;
    int32_t melee_two_handed;
    int32_t spec_weapon;
    int32_t spec_two_handed;
    int32_t spec_cost;
    int32_t brew_defence_cap;
    int32_t combat_caps[3];
    int32_t ranged_cap;
} nh_mask_facts;

/* The fight-level state of sim.FightSim. */
typedef struct nh_fight {
    nh_rng rng;
    nh_reset_params params;
    int32_t tick;
    int32_t done;
    int32_t fight_mode;
    int32_t build;
    int32_t error; /* NH_ERR_* of the first broken bound (a queue overflow); the fight must not continue */
    nh_player players[2];
    nh_tick_events events[2];
    nh_episode_stats stats[2];
    nh_mask_facts mask_facts[2]; /* of players[i].loadout, set at reset (engine.py's _facts) */
    double obs_static[2][NH_OBS_SIZE]; /* observation.static_block of each player, set at reset */
    int32_t n_tasks;
    nh_task tasks[NH_MAX_TASKS];
} nh_fight;

/* FightSim.reset: the draws of nh_reset_draws, then both players (`_new_player`). Returns 0 or NH_ERR_*. */
int nh_fight_reset(nh_fight *fight);

/* equipment.on_weapon_changed (§10.1, §6.2): disarm the special, re-derive class and default style. */
void nh_on_weapon_changed(nh_player *p);

/* equipment.recompute_bonuses (§10.3): the worn bonus vector, ammo ignored for knives and javelins. */
void nh_recompute_bonuses(nh_player *p);

/* equipment.equip_item (§10.1): the inventory item in `inv_slot`. Returns success. */
int nh_equip_item(nh_player *p, int32_t inv_slot);
/* equipment.unequip: a worn item to the first free inventory slot. Returns success. */
int nh_unequip(nh_player *p, int32_t slot);
/* equipment.equip_set (§10.1); `unequip_rest` 0 is the scripted baseline's variant (§18.3). */
int nh_equip_set(nh_player *p, const int32_t *gear, int32_t n_gear, int unequip_rest);

/* state.inventory_facts: what the masks, the observation and the reward signals read from an inventory. */
typedef struct {
    int32_t doses[NH_POTION_RANGING + 1]; /* doses carried per potion kind (index 0 unused) */
    int32_t sharks, karambwans, anglerfish;
    int has_free_slot;
} nh_inventory_facts;
void nh_inventory_facts_of(const nh_player *p, nh_inventory_facts *out);

/* state.WEAPON_FAMILY.get(weapon, MELEE): the combat style a weapon attacks with. */
int32_t nh_weapon_family(int32_t weapon);

/* PlayerState.set_timer (§3). */
static inline void nh_set_timer(nh_player *p, int timer, int32_t ticks) {
    p->timer_ticks[timer] = ticks;
    p->timer_uncapped[timer] = ticks;
}

/* The player predicates the rules read everywhere (PlayerState.has_prayer, timer_active, hp, carries, wears). */
static inline int nh_has_prayer(const nh_player *p, int32_t prayer) { return (p->prayers >> prayer) & 1u; }
static inline int nh_timer_active(const nh_player *p, int timer) { return p->timer_ticks[timer] > 0; }
static inline int32_t nh_hp(const nh_player *p) { return p->level[NH_SKILL_HITPOINTS]; }
/* The first inventory slot holding `id` (NH_EMPTY: the first free one), or -1: Python's inv.index. */
static inline int32_t nh_inventory_slot_of(const nh_player *p, int32_t id) {
    for (int32_t k = 0; k < NH_INVENTORY_SIZE; k++) {
        if (p->inventory[k] == id) {
            return k;
        }
    }
    return -1;
}
static inline int nh_carries(const nh_player *p, int32_t id) { return nh_inventory_slot_of(p, id) >= 0; }
static inline int nh_wears(const nh_player *p, int32_t id) {
    for (int s = 0; s < NH_NUM_SLOTS; s++) {
        if (p->equipment[s] == id) {
            return 1;
        }
    }
    return 0;
}

/* Python's min and max of two ints. */
static inline int32_t nh_min32(int32_t a, int32_t b) { return a < b ? a : b; }
static inline int32_t nh_max32(int32_t a, int32_t b) { return a > b ? a : b; }

#endif /* NH_STATE_H */
