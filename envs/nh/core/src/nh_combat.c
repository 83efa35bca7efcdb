/* nh_combat.c: attack resolution and hit creation; see nh_combat.h and envs/nh/combat.py (the reference). */
#include "nh_combat.h"

#include <stddef.h>
#include <string.h>

#include "nh_formulas.h"

/* combat._active: the value of the first active prayer (in enum order) that changes `field`. */
static int32_t active_prayer_value(const nh_player *p, size_t field_offset, int32_t neutral) {
    for (int32_t k = 0; k < NH_NUM_PRAYERS; k++) {
        int32_t value = *(const int32_t *)((const char *)&NH_PRAYER_TABLE[k] + field_offset);
        if (value != neutral && nh_has_prayer(p, k)) {
            return value;
        }
    }
    return neutral;
}
#define ACTIVE(p, field, neutral) active_prayer_value((p), offsetof(nh_prayer, field), (neutral))
#define PCT_NEUTRAL 100

static const nh_fight_style *style_of(const nh_player *p) {
    return &NH_WEAPON_CLASS_TABLE[p->weapon_class].styles[p->style];
}

int32_t nh_weapon_class_of(const nh_player *p) {
    int32_t wid = p->equipment[NH_SLOT_WEAPON];
    const nh_item *weapon = wid != NH_EMPTY ? nh_item_by_id(wid) : NULL;
    return (weapon != NULL && weapon->weapon_class >= 0) ? weapon->weapon_class : NH_WEAPON_CLASS_UNARMED;
}

static int wields_zuriels(const nh_player *p) { return p->equipment[NH_SLOT_WEAPON] == NH_ID_ZURIELS_STAFF; }

/* ---- §6.1 method, §6.2 range / speed / delay ---- */

int32_t nh_combat_method(const nh_player *p) {
    if (p->selected_spell != NH_NO_SPELL) {
        return NH_METHOD_MAGIC_SPELL;
    }
    int32_t wid = p->equipment[NH_SLOT_WEAPON];
    if (p->special_armed || (p->gmaul_queued > 0 && wid == NH_ID_GRANITE_MAUL)) {
        const nh_special *special = nh_special_of(wid);
        if (special != NULL) {
            return special->method;
        }
    }
    int32_t wid_class = wid != NH_EMPTY && nh_item_by_id(wid) != NULL ? nh_item_by_id(wid)->weapon_class : -1;
    if (wid_class >= 0 && NH_WEAPON_CLASS_TABLE[wid_class].family == NH_COMBAT_STYLE_RANGED) {
        return NH_METHOD_RANGED;
    }
    return NH_METHOD_MELEE;
}

int32_t nh_attack_range(const nh_player *p, int32_t method) {
    int32_t style = NH_METHOD_TABLE[method].style;
    if (style == NH_COMBAT_STYLE_MAGIC) {
        return (int32_t)NH_MAGIC_RANGE_TILES;
    }
    if (style == NH_COMBAT_STYLE_RANGED) {
        return NH_WEAPON_CLASS_TABLE[nh_weapon_class_of(p)].ranged_range_tiles;
    }
    return (int32_t)NH_MELEE_RANGE_TILES;
}

int32_t nh_attack_speed(const nh_player *p, int32_t method) {
    if (method == NH_METHOD_MAGIC_SPELL) {
        return (int32_t)NH_SPELL_ATTACK_SPEED_TICKS;
    }
    if (method == NH_METHOD_NIGHTMARE_STAFF) {
        return (int32_t)NH_NIGHTMARE_STAFF_SPEED_TICKS;
    }
    int32_t wid = p->equipment[NH_SLOT_WEAPON];
    const nh_item *weapon = wid != NH_EMPTY ? nh_item_by_id(wid) : NULL;
    int32_t speed = weapon != NULL ? weapon->attack_speed : (int32_t)NH_UNARMED_ATTACK_SPEED_TICKS;
    if (style_of(p)->stance == NH_STANCE_RAPID) {
        speed -= (int32_t)NH_RAPID_SPEED_REDUCTION_TICKS;
    }
    return speed;
}

static int32_t repeat(int32_t delay, int32_t times, int32_t *out) {
    if (times > NH_MAX_ATTACK_HITS) {
        return -1;
    }
    for (int32_t i = 0; i < times; i++) {
        out[i] = delay;
    }
    return times;
}

int32_t nh_hit_delay(int32_t method, int32_t weapon_class, int32_t distance, int32_t queued_specs, int32_t *out) {
    int32_t style = NH_METHOD_TABLE[method].style;
    if (style == NH_COMBAT_STYLE_MAGIC) {
        return repeat((int32_t)nh_magic_hit_delay(distance), 1, out);
    }
    if (method == NH_METHOD_DRAGON_DAGGER) {
        return repeat((int32_t)NH_MELEE_HIT_DELAY, (int32_t)NH_DRAGON_DAGGER_SPEC_HITS, out);
    }
    if (method == NH_METHOD_GRANITE_MAUL) {
        return repeat((int32_t)NH_MELEE_HIT_DELAY, queued_specs, out);
    }
    if (style == NH_COMBAT_STYLE_MELEE) {
        return repeat((int32_t)NH_MELEE_HIT_DELAY, 1, out);
    }
    if (method == NH_METHOD_BALLISTA) {
        return repeat((int32_t)NH_BALLISTA_BASE_DELAY, 1, out);
    }
    if (method == NH_METHOD_DRAGON_KNIFE) {
        return repeat((int32_t)nh_thrown_hit_delay(distance), (int32_t)NH_DRAGON_KNIFE_SPEC_HITS, out);
    }
    switch (weapon_class) { /* combat._ranged_delays */
    case NH_WEAPON_CLASS_CROSSBOW:
        return repeat((int32_t)nh_crossbow_hit_delay(distance), 1, out);
    case NH_WEAPON_CLASS_BALLISTA:
        return repeat((int32_t)nh_ballista_hit_delay(distance), 1, out);
    case NH_WEAPON_CLASS_DARK_BOW:
        out[0] = (int32_t)nh_crossbow_hit_delay(distance);
        out[1] = (int32_t)nh_dark_bow_second_arrow_delay(distance);
        return 2;
    default:
        return repeat((int32_t)nh_thrown_hit_delay(distance), 1, out);
    }
}

/* ---- §6.3 rolls ---- */

static int64_t controlled(int32_t stance) { return stance == NH_STANCE_CONTROLLED ? NH_CONTROLLED_STANCE_BONUS : 0; }

static int64_t melee_stance_attack(int32_t stance) {
    return stance == NH_STANCE_ACCURATE ? NH_ACCURATE_STANCE_BONUS : controlled(stance);
}

static int64_t melee_stance_strength(int32_t stance) {
    return stance == NH_STANCE_AGGRESSIVE ? NH_AGGRESSIVE_STANCE_BONUS : controlled(stance);
}

static int64_t ranged_stance(int32_t stance) { return stance == NH_STANCE_ACCURATE ? NH_ACCURATE_STANCE_BONUS : 0; }

static int64_t defence_stance(int32_t stance) {
    if (stance == NH_STANCE_DEFENSIVE || stance == NH_STANCE_LONGRANGE) {
        return NH_DEFENSIVE_STANCE_BONUS;
    }
    return controlled(stance);
}

static int64_t magic_attack_roll(const nh_player *p, int32_t method) {
    int64_t eff = nh_magic_effective_level(p->level[NH_SKILL_MAGIC], ACTIVE(p, magic_pct, PCT_NEUTRAL));
    int64_t a = nh_roll(eff, p->bonuses[NH_BONUS_MAGIC_ATTACK]);
    if (method == NH_METHOD_MAGIC_SPELL && p->selected_spell != NH_NO_SPELL &&
        NH_SPELL_TABLE[p->selected_spell].freeze_ticks > 0 && wields_zuriels(p)) {
        a = nh_int_multiply(a, NH_ZURIELS_ICE_ACCURACY_NUM, NH_ZURIELS_ICE_ACCURACY_DEN);
    }
    return a;
}

static int64_t ranged_attack_roll(const nh_player *p) {
    int64_t eff = nh_effective_level(p->level[NH_SKILL_RANGED], ACTIVE(p, ranged_acc_pct, PCT_NEUTRAL),
                                     ranged_stance(style_of(p)->stance));
    return nh_roll(eff, p->bonuses[NH_BONUS_RANGED_ATTACK]);
}

static int64_t melee_attack_roll(const nh_player *p) {
    const nh_fight_style *style = style_of(p);
    int64_t eff = nh_effective_level(p->level[NH_SKILL_ATTACK], ACTIVE(p, attack_pct, PCT_NEUTRAL),
                                     melee_stance_attack(style->stance));
    return nh_roll(eff, p->bonuses[style->style_type]);
}

int64_t nh_attack_roll(const nh_player *attacker, int32_t method) {
    const nh_method *m = &NH_METHOD_TABLE[method];
    int64_t a = m->style == NH_COMBAT_STYLE_MAGIC    ? magic_attack_roll(attacker, method)
                : m->style == NH_COMBAT_STYLE_RANGED ? ranged_attack_roll(attacker)
                                                     : melee_attack_roll(attacker);
    return m->accuracy[1] != 0 ? nh_int_multiply(a, m->accuracy[0], m->accuracy[1]) : a;
}

int64_t nh_defence_roll_against(const nh_player *defender, int32_t style_type) {
    int64_t stance = defence_stance(style_of(defender)->stance);
    int64_t def_level = nh_prayer_multiplied(defender->level[NH_SKILL_DEFENCE], ACTIVE(defender, defence_pct, PCT_NEUTRAL));
    int64_t bonus = defender->bonuses[NH_DEFENCE_BONUS_OF_STYLE_TYPE[style_type]];
    if (style_type == NH_STYLE_TYPE_MAGIC) {
        int64_t mag_level = nh_prayer_multiplied(defender->level[NH_SKILL_MAGIC], ACTIVE(defender, magic_pct, PCT_NEUTRAL));
        return nh_roll(nh_magic_defence_level(mag_level, def_level, stance), bonus);
    }
    return nh_roll(def_level + stance + NH_EFFECTIVE_LEVEL_BASE, bonus);
}

int32_t nh_defence_style(int32_t method, const nh_player *attacker) {
    const nh_method *m = &NH_METHOD_TABLE[method];
    if (m->style == NH_COMBAT_STYLE_MAGIC) {
        return NH_STYLE_TYPE_MAGIC;
    }
    if (m->style == NH_COMBAT_STYLE_RANGED) {
        return NH_STYLE_TYPE_RANGED;
    }
    return m->defence_style >= 0 ? m->defence_style : style_of(attacker)->style_type;
}

int64_t nh_defence_roll(const nh_player *defender, int32_t method, const nh_player *attacker) {
    int64_t d = nh_defence_roll_against(defender, nh_defence_style(method, attacker));
    return method == NH_METHOD_VESTAS_LONGSWORD ? nh_vesta_defence_roll(d) : d;
}

/* ---- §6.4 max hits ---- */

static int64_t melee_base_max(const nh_player *p) {
    int64_t stance = melee_stance_strength(style_of(p)->stance);
    int64_t eff = nh_effective_level(p->level[NH_SKILL_STRENGTH], ACTIVE(p, strength_pct, PCT_NEUTRAL), stance);
    return nh_base_max_hit(eff, p->bonuses[NH_BONUS_MELEE_STRENGTH]);
}

static int64_t ranged_base_max(const nh_player *p) {
    int64_t eff = nh_effective_level(p->level[NH_SKILL_RANGED], ACTIVE(p, ranged_str_pct, PCT_NEUTRAL),
                                     ranged_stance(style_of(p)->stance));
    return nh_base_max_hit(eff, p->bonuses[NH_BONUS_RANGED_STRENGTH]);
}

int nh_damage_range(const nh_player *attacker, int32_t method, int64_t out[2]) {
    const nh_method *m = &NH_METHOD_TABLE[method];
    if (m->style == NH_COMBAT_STYLE_MAGIC) {
        int64_t spell_max;
        if (method == NH_METHOD_NIGHTMARE_STAFF) {
            spell_max = nh_nightmare_staff_spell_max(attacker->level[NH_SKILL_MAGIC]);
        } else if (attacker->selected_spell == NH_NO_SPELL) {
            return NH_ERR_NO_SPELL;
        } else {
            spell_max = NH_SPELL_TABLE[attacker->selected_spell].max_hit;
        }
        int64_t tenths = attacker->bonuses[NH_BONUS_MAGIC_DAMAGE_TENTHS] + ACTIVE(attacker, magic_damage_tenths, 0);
        out[0] = 0;
        out[1] = nh_magic_max_hit(spell_max, tenths);
        return 0;
    }
    int64_t base = m->style == NH_COMBAT_STYLE_RANGED ? ranged_base_max(attacker) : melee_base_max(attacker);
    if (m->damage_range_rule != NULL) {
        m->damage_range_rule(base, out);
        return 0;
    }
    out[0] = 0;
    out[1] = m->max_rule != NULL ? m->max_rule(base) : base;
    return 0;
}

/* ---- §6.8 bolts, §6.10.6 Dharok's, resolution ---- */

static int32_t bolt_kind_of(int32_t ammo) {
    for (int32_t i = 0; i < NH_N_BOLT_KINDS; i++) {
        if (NH_BOLT_KIND_TABLE[i][0] == ammo) {
            return NH_BOLT_KIND_TABLE[i][1];
        }
    }
    return NH_BOLT_NONE;
}

static nh_bolt_effect bolt_effect(const nh_player *attacker, const nh_player *defender, int32_t method,
                                  int64_t hit_max) {
    nh_bolt_effect none = {.kind = NH_BOLT_NONE};
    int32_t wid = attacker->equipment[NH_SLOT_WEAPON];
    const nh_item *weapon = wid != NH_EMPTY ? nh_item_by_id(wid) : NULL;
    if (weapon == NULL || weapon->weapon_class != NH_WEAPON_CLASS_CROSSBOW) {
        return none;
    }
    int32_t kind = bolt_kind_of(attacker->equipment[NH_SLOT_AMMO]);
    if (kind == NH_BOLT_NONE) {
        return none;
    }
    int zaryte = weapon->id == NH_ID_ZARYTE_CROSSBOW;
    int64_t level = attacker->level[NH_SKILL_RANGED];
    nh_bolt_effect bolt = {
        .kind = kind,
        .chance = NH_BOLT_CHANCE_TABLE[kind] *
                  (double)(method == NH_METHOD_ARMADYL_CROSSBOW ? NH_ARMADYL_CROSSBOW_PROC_MULTIPLIER : 1),
        .guaranteed = method == NH_METHOD_ZARYTE_CROSSBOW,
        .bonus = 0,
        .fresh_max = kind == NH_BOLT_DIAMOND ? nh_diamond_bolt_max_hit(hit_max, zaryte) : 0,
    };
    if (kind == NH_BOLT_OPAL) {
        bolt.bonus = nh_opal_bolt_bonus(level, zaryte);
    } else if (kind == NH_BOLT_DRAGONSTONE && !nh_has_prayer(defender, NH_PRAYER_PROTECT_FROM_MAGIC)) {
        bolt.bonus = nh_dragonstone_bolt_bonus(level, zaryte);
    }
    return bolt;
}

static int wears_full_dharoks(const nh_player *p) {
    if (p->equipment[NH_SLOT_WEAPON] != NH_ID_DHAROKS_GREATAXE) {
        return 0;
    }
    for (int i = 0; i < NH_IDS_DHAROKS_SET_LEN; i++) {
        if (!nh_wears(p, NH_IDS_DHAROKS_SET[i])) {
            return 0;
        }
    }
    return 1;
}

/* combat._resolve (+ Vesta's retry chance, computed on a miss in Python: no draw, the same number). */
static int resolve(const nh_player *attacker, const nh_player *defender, int32_t method, nh_attack *atk) {
    int64_t a = nh_attack_roll(attacker, method);
    int64_t d = nh_defence_roll(defender, method, attacker);
    int64_t range[2];
    int err = nh_damage_range(attacker, method, range);
    if (err) {
        return err;
    }
    int32_t style = NH_METHOD_TABLE[method].style;
    memset(atk, 0, sizeof(*atk));
    atk->chance = nh_hit_chance(a, d);
    atk->retry_chance = method == NH_METHOD_VESTAS_LONGSWORD
                            ? nh_hit_chance(a, nh_defence_roll(defender, NH_METHOD_MELEE, attacker))
                            : 0.0;
    atk->low = range[0];
    atk->high = range[1];
    atk->protected_ = nh_has_prayer(defender, NH_PROTECTION_PRAYER[style]);
    atk->clamp = method == NH_METHOD_DARK_BOW;
    if (style == NH_COMBAT_STYLE_MELEE && wears_full_dharoks(attacker)) {
        atk->has_dharok = 1;
        atk->dharok_base_hp = attacker->base[NH_SKILL_HITPOINTS];
        atk->dharok_hp = attacker->level[NH_SKILL_HITPOINTS];
    }
    atk->bolt = bolt_effect(attacker, defender, method, range[1]);
    return 0;
}

/* combat._effect: the after-hit effect tag, set only when the effect will start. */
static int32_t effect_of(int32_t method, int64_t damage, int accurate) {
    if (method == NH_METHOD_STATIUS_WARHAMMER && accurate && damage > 0) {
        return NH_EFFECT_STATIUS;
    }
    if (method == NH_METHOD_ANCIENT_GODSWORD && accurate) {
        return NH_EFFECT_AGS_SACRIFICE;
    }
    if (method == NH_METHOD_MORRIGANS_JAVELIN && damage > 0) {
        return NH_EFFECT_MORRIGAN_BLEED;
    }
    return NH_EFFECT_NONE;
}

static int32_t queued_specs(const nh_player *attacker, int32_t method) {
    if (method != NH_METHOD_GRANITE_MAUL) {
        return 1;
    }
    return attacker->gmaul_queued > 1 ? attacker->gmaul_queued : 1;
}

int nh_create_hits(nh_rng *rng, const nh_player *attacker, const nh_player *defender, int32_t distance,
                   nh_attack_outcome *out) {
    int32_t method = nh_combat_method(attacker);
    nh_attack atk;
    int err = resolve(attacker, defender, method, &atk);
    if (err) {
        return err;
    }
    int32_t style = NH_METHOD_TABLE[method].style;
    memset(out, 0, sizeof(*out));
    out->method = method;
    out->spell = NH_NO_SPELL;
    if (method == NH_METHOD_DRAGON_CLAWS) {
        int64_t splats[4];
        int accurate;
        nh_claws_hitsplats(rng, &atk, splats, &accurate);
        nh_pending_hit *hit = &out->hits[out->n_hits++];
        hit->attacker = attacker->index;
        hit->n_damages = 4;
        for (int i = 0; i < 4; i++) {
            hit->damages[i] = (int32_t)splats[i];
        }
        hit->accurate = accurate;
        hit->delay = (int32_t)NH_MELEE_HIT_DELAY;
        hit->style = style;
        hit->effect = NH_EFFECT_NONE;
    } else {
        int32_t delays[NH_MAX_ATTACK_HITS];
        int32_t n = nh_hit_delay(method, nh_weapon_class_of(attacker), distance, queued_specs(attacker, method), delays);
        if (n < 0) {
            return NH_ERR_TOO_MANY_HITS;
        }
        for (int32_t k = 0; k < n; k++) {
            int accurate;
            int64_t damage = method == NH_METHOD_VESTAS_LONGSWORD ? nh_vesta_hit(rng, &atk, &accurate)
                                                                  : nh_ordinary_hit(rng, &atk, &accurate);
            nh_pending_hit *hit = &out->hits[out->n_hits++];
            hit->attacker = attacker->index;
            hit->n_damages = 1;
            hit->damages[0] = (int32_t)damage;
            hit->accurate = accurate;
            hit->delay = delays[k];
            hit->style = style;
            hit->effect = effect_of(method, damage, accurate);
        }
    }
    const nh_special *special = NH_METHOD_TABLE[method].is_special
                                    ? nh_special_of(attacker->equipment[NH_SLOT_WEAPON])
                                    : NULL;
    out->energy_cost = special != NULL ? special->cost * queued_specs(attacker, method) : 0;
    out->attack_speed = nh_attack_speed(attacker, method);
    if (method == NH_METHOD_MAGIC_SPELL) { /* combat._spell_effects */
        const nh_spell *spell = &NH_SPELL_TABLE[attacker->selected_spell];
        out->spell = attacker->selected_spell;
        if (out->hits[0].accurate) {
            out->freeze_ticks = spell->freeze_ticks;
            if (spell->heal_pct) {
                out->heal = (int32_t)nh_blood_heal(out->hits[0].damages[0], spell->heal_pct, wields_zuriels(attacker));
            }
        }
    }
    return 0;
}
