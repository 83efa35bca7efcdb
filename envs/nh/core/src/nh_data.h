/*
 * nh_data.h: the game data tables of the compiled core (items, consumables, builds, gear randomisation).
 *
 * The types are written here; the rows are GENERATED into nh_data.c by envs/nh/core/gen_tables.py from
 * the Python engine's parsed tables (envs/nh/items.py, envs/nh/loadouts.py reading envs/nh/data), so
 * the data stay in the data files and the Python loader's checks (unknown names, bad keys) apply to
 * both engines. Enum numbering (slots, gear sets, builds, ...) is generated into nh_tables.h.
 */
#ifndef NH_DATA_H
#define NH_DATA_H

#include <stdint.h>

#include "nh_tables.h"

/* items.Item (Appendix A). */
typedef struct nh_item {
    int32_t id;
    int32_t slot; /* NH_SLOT_* */
    int32_t two_handed;
    int32_t bonuses[NH_NUM_BONUSES]; /* NH_BONUS_* order (§10.3) */
    int32_t weapon_class;            /* index into items.WeaponClass, -1 for non-weapons */
    int32_t attack_speed;
} nh_item;

/* One entry of a weapon class's style list (items.FightStyle, §6.2); the name is not needed. */
typedef struct nh_fight_style {
    int32_t stance;     /* NH_STANCE_* */
    int32_t style_type; /* NH_STYLE_TYPE_*: the attack bonus it rolls with (= its NH_BONUS_*_ATTACK) */
} nh_fight_style;

/* items.WeaponClass (§6.1, §6.2). */
typedef struct nh_weapon_class {
    int32_t family; /* NH_COMBAT_STYLE_* */
    int32_t n_styles;
    nh_fight_style styles[NH_MAX_STYLES];
    int32_t default_style; /* index into styles: the first aggressive (or rapid) style, else the first */
    int32_t ammo_ignored;  /* knives and javelins are their own ammunition (§10.3) */
    int32_t ranged_range_tiles; /* §6.2 ranged range table, 0 for the others */
} nh_weapon_class;

/* items.Consumable (§8, Appendix A). */
typedef struct nh_consumable {
    int32_t id;
    int32_t kind;   /* NH_CONSUMABLE_KIND_* */
    int32_t potion; /* NH_POTION_* value, 0 for none */
    int32_t doses;
    int32_t heal;
    int32_t inventory_rank; /* loadouts._inventory_rank (§12.4 re-ordering) */
} nh_consumable;

/* loadouts.BuildSpec (§12.1-12.4). */
typedef struct nh_build_spec {
    int32_t base_levels[NH_NUM_SKILLS];
    int32_t spellbook;  /* NH_SPELLBOOK_* */
    int32_t fight_mode; /* NH_FIGHT_MODE_* */
    int32_t primary_food;
    int32_t n_supplies;
    int32_t supplies[NH_MAX_SUPPLIES][2]; /* (item id, count) in inventory order */
    int32_t sets[NH_NUM_BASE_SETS][NH_NUM_SLOTS]; /* per base set, ids in TABLE_SLOT_ORDER, NH_EMPTY for "—" */
    int32_t n_prayers[NH_NUM_BASE_SETS];                   /* §12.3 set prayers, in order (TANK: MAGIC's) */
    int32_t prayers[NH_NUM_BASE_SETS][NH_MAX_SET_PRAYERS]; /* NH_PRAYER_* */
    int32_t first_line; /* this build's §12.6 lines: NH_RANDOM_LINES[first_line .. first_line + n_lines) */
    int32_t n_lines;
} nh_build_spec;

/* Operation kinds of the §12.6 tables (loadouts.Op). */
enum nh_op_kind {
    NH_OP_SET_SLOT = 0,
    NH_OP_SWAP_SET = 1,
    NH_OP_SWAP_ALL = 2,
    NH_OP_COUNT = 3,
    NH_OP_DOSE_VARY = 4,
    NH_OP_BREWS = 5,
    NH_OP_PRIMARY_FOOD = 6,
    NH_OP_LUNAR_BOOK = 7,
    NH_OP_EMPTY_MAGIC = 8,
};

/* A constant or a U[lo, hi] draw (loadouts.IntOrRange). */
typedef struct nh_int_or_range {
    int32_t lo;
    int32_t hi;
    int32_t is_range;
} nh_int_or_range;

/* One operation of a §12.6 line; only the fields of its kind are meaningful. */
typedef struct nh_rand_op {
    int32_t kind;     /* enum nh_op_kind */
    int32_t sets;     /* bit mask of base gear sets (1 << NH_GEAR_SET_*): set_slot, swap_set */
    int32_t slot;     /* set_slot */
    int32_t item;     /* set_slot, count, dose_vary and food item; brews: the brew */
    int32_t old_item; /* swaps: from */
    int32_t new_item; /* swaps: to */
    nh_int_or_range n; /* count: n; brews: b */
    int32_t restore;  /* brews */
    int32_t restore_min;
    int32_t restore_round_up;
    nh_int_or_range restore_plus;
    int32_t n_doses; /* dose_vary */
    int32_t doses[NH_MAX_DOSE_CHOICES];
} nh_rand_op;

/* loadouts.RandomLine. */
typedef struct nh_rand_line {
    double p;
    int32_t is_else;
    int32_t then_line; /* index of the "then" sub-line in NH_RANDOM_LINES, -1 for none */
    int32_t first_op;  /* NH_RANDOM_OPS[first_op .. first_op + n_ops) */
    int32_t n_ops;
} nh_rand_line;

/* combat.Method with its §6.9 rules (combat._SPECIAL_ACCURACY, _SPECIAL_DEFENCE_STYLE, _SPECIAL_MAX_HIT,
 * _SPECIAL_DAMAGE_RANGE); the rule functions are the nh_formulas.h ports of the Python ones. */
typedef struct nh_method {
    int32_t style;      /* NH_COMBAT_STYLE_*: protection prayer and defence family */
    int32_t is_special; /* spends energy */
    int64_t accuracy[2]; /* attack-roll factor (num, den); den 0 = x1 */
    int32_t defence_style; /* NH_STYLE_TYPE_* rolled against instead of the attacker's style, -1 = none */
    int64_t (*max_rule)(int64_t base);                  /* max hit from the ordinary max, NULL = base */
    void (*damage_range_rule)(int64_t base, int64_t out[2]); /* own damage range, NULL = (0, max) */
} nh_method;

/* combat.SPECIALS row (§6.9). */
typedef struct nh_special {
    int32_t weapon;
    int32_t method; /* NH_METHOD_* */
    int32_t cost;   /* energy */
} nh_special;

/* spells.SpellData (§6.7). */
typedef struct nh_spell {
    int32_t level;
    int32_t max_hit;
    int32_t freeze_ticks; /* > 0: an ice spell */
    int32_t heal_pct;     /* > 0: a blood spell */
} nh_spell;

/* prayers.PrayerData (§7.1), multipliers in percent. */
typedef struct nh_prayer {
    int32_t level;
    int32_t drain_per_minute;
    int32_t families; /* bit (1 << NH_PRAYER_FAMILY_*) */
    int32_t attack_pct;
    int32_t strength_pct;
    int32_t defence_pct;
    int32_t ranged_acc_pct;
    int32_t ranged_str_pct;
    int32_t magic_pct;
    int32_t magic_damage_tenths;
    int32_t needs_defence_70;
} nh_prayer;

extern const nh_method NH_METHOD_TABLE[NH_NUM_METHODS];
extern const nh_special NH_SPECIAL_TABLE[];
extern const int32_t NH_N_SPECIALS;
extern const int32_t NH_BOLT_KIND_TABLE[][2]; /* (ammo id, NH_BOLT_*) */
extern const int32_t NH_N_BOLT_KINDS;
extern const double NH_BOLT_CHANCE_TABLE[]; /* by NH_BOLT_* */
extern const int32_t NH_PROTECTION_PRAYER[]; /* by NH_COMBAT_STYLE_* */
extern const nh_spell NH_SPELL_TABLE[NH_NUM_SPELLS];
extern const nh_prayer NH_PRAYER_TABLE[NH_NUM_PRAYERS];
extern const int32_t NH_ANGLERFISH_HEAL_BY_BASE[NH_LEVEL_TABLE_SIZE];
extern const int32_t NH_BREW_HP_BOOST_BY_BASE[NH_LEVEL_TABLE_SIZE];
extern const int32_t NH_RESTORE_AMOUNT_BY_BASE[NH_LEVEL_TABLE_SIZE];
extern const int32_t NH_COMBAT_BOOST_BY_BASE[NH_LEVEL_TABLE_SIZE];
extern const int32_t NH_RANGING_BOOST_BY_BASE[NH_LEVEL_TABLE_SIZE];
extern const uint32_t NH_PRAYER_CONFLICTS[NH_NUM_PRAYERS]; /* bit masks of the prayers each one switches off */
extern const nh_item NH_ITEMS[];
extern const int32_t NH_N_ITEMS; /* rows of NH_ITEMS, sorted by id */
extern const nh_weapon_class NH_WEAPON_CLASS_TABLE[NH_NUM_WEAPON_CLASSES];
extern const nh_consumable NH_CONSUMABLES[];
extern const int32_t NH_N_CONSUMABLES; /* rows of NH_CONSUMABLES, sorted by id */
extern const nh_build_spec NH_BUILD_SPECS[NH_NUM_BUILDS];
extern const nh_rand_line NH_RANDOM_LINES[];
extern const nh_rand_op NH_RANDOM_OPS[];
extern const int32_t NH_MELEE_SPECIAL_WEAPONS[];
extern const int32_t NH_N_MELEE_SPECIAL_WEAPONS;
extern const int32_t NH_RANGED_SPECIAL_WEAPONS[];
extern const int32_t NH_N_RANGED_SPECIAL_WEAPONS;

/* Build the dense id look-ups once (the binding calls it at import); before it, look-ups binary-search. */
void nh_data_init(void);
/* The row of an item / consumable id, NULL when the id is not one. */
const nh_item *nh_item_by_id(int32_t id);
const nh_consumable *nh_consumable_by_id(int32_t id);
/* The special attack row of a weapon (spec §5.7), NULL when it has none. */
const nh_special *nh_special_of(int32_t weapon);
/* items.potion_id: the id of the `doses`-dose potion of a family, NH_EMPTY when there is none. */
int32_t nh_potion_id(int32_t potion, int32_t doses);

#endif /* NH_DATA_H */
