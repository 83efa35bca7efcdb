"""Per-tick signals (spec §17.1) and the reward function (spec §17.2) with its weights (§17.3, §17.4).

Signals are a plain dict per agent, from that agent's point of view; signals marked "present if"
in the spec are absent, not zero, when their event did not happen.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

from envs.nh.items import CombatStyle, Ids
from envs.nh.operations import brew_hp_boost, nominal_heal
from envs.nh.state import PlayerState, Skill, TimerId, weapon_family

if TYPE_CHECKING:
    from envs.nh.sim import FightSim, Outcome

STYLE_NAMES = {CombatStyle.MELEE: "MELEE", CombatStyle.RANGED: "RANGED", CombatStyle.MAGIC: "MAGIC"}
NULL_STYLE = "null"  # §17.1 currentTargetPrayerType "null" is a value
SPEED_NORMALISER = 5  # §17.2 steps 11–14: × attack speed / 5


def _style_name(style: CombatStyle | None) -> str:
    return STYLE_NAMES[style] if style is not None else NULL_STYLE


def remaining_food_scale(p: PlayerState) -> float:
    """Σ count × nominal heal over carried food / base HP (spec §17.1)."""
    total = 0
    for fid in (Ids.SHARK, Ids.KARAMBWAN, Ids.ANGLERFISH):
        n = p.inventory.count(fid)
        if n:
            total += n * nominal_heal(fid, p.base_hp)
    return total / p.base_hp


def remaining_brew_scale(p: PlayerState) -> float:
    from envs.nh.items import PotionType

    return p.potion_doses(PotionType.BREW) * brew_hp_boost(p.base_hp) / p.base_hp


def signals_for(sim: FightSim, p: PlayerState) -> dict[str, Any]:
    """The §17.1 signal dictionary of player `p` for the tick just simulated."""
    from envs.nh.sim import protection_style

    q = sim.opponent(p)
    me, them = sim.events[p.index], sim.events[q.index]
    bp, bq = p.base_hp, q.base_hp
    s: dict[str, Any] = {
        "damageGeneratedOnTargetScale": sum(r.hit.total for r in me.hits) / bq,
        "damageGeneratedOnPlayerScale": sum(r.hit.total for r in them.hits) / bp,
        "damageDealt": sum(q.hitsplats) / bq,
        "damageReceived": sum(p.hitsplats) / bp,
        "extraDamageDealtOnTargetScale": me.extra_damage_dealt / bq,
        "extraDamageDealtOnPlayerScale": them.extra_damage_dealt / bp,
        "hitWithSmite": bool(me.hits) and me.hits[-1].smite,
        "targetAttackedWithSmite": bool(them.hits) and them.hits[-1].smite,
        "playerHealedScale": me.healed / bp,
        "targetHealedScale": them.healed / bq if not q.is_baseline else 0.0,
        "currentTargetPrayerType": _style_name(protection_style(q)),
        "targetAttackStyleType": _style_name(weapon_family(q)),
        "playerFrozenTicks": p.timer_ticks[TimerId.FREEZE],
        "targetFrozenTicks": q.timer_ticks[TimerId.FREEZE],
        "currentPrayerPercent": p.level[Skill.PRAYER] / p.base[Skill.PRAYER],
        "attackLevelScale": p.level[Skill.ATTACK] / p.base[Skill.ATTACK],
        "strengthLevelScale": p.level[Skill.STRENGTH] / p.base[Skill.STRENGTH],
        "defenceLevelScale": p.level[Skill.DEFENCE] / p.base[Skill.DEFENCE],
        "rangedLevelScale": p.level[Skill.RANGED] / p.base[Skill.RANGED],
        "magicLevelScale": p.level[Skill.MAGIC] / p.base[Skill.MAGIC],
        "remainingFoodScale": remaining_food_scale(p),
        "targetRemainingFoodScale": remaining_food_scale(q),
        "remainingBrewScale": remaining_brew_scale(p),
        "targetRemainingBrewScale": remaining_brew_scale(q),
    }
    if them.hits:
        last = them.hits[-1]
        s["protectedPrayer"] = last.defender_protection is last.hit.style
        s["targetHitAttackSpeed"] = last.attack_speed
        s["attackTypeReceived"] = STYLE_NAMES[last.hit.style]
        s["playerPrayerType"] = _style_name(last.defender_protection)
    if me.hits:
        last = me.hits[-1]
        s["hitOffPrayer"] = last.defender_protection is not last.hit.style
        s["playerHitAttackSpeed"] = last.attack_speed
        s["attackTypeHit"] = STYLE_NAMES[last.hit.style]
        s["targetPrayerType"] = _style_name(last.defender_protection)
    if me.eat_at_hp is not None:
        s["eatAtFoodScale"] = me.eat_at_hp / bp
    if me.wasted_food > 0:
        s["wastedFoodScale"] = me.wasted_food / bp
    if me.wasted_brew > 0:
        s["wastedBrewScale"] = me.wasted_brew / bp
    return s


# ---- weights --------------------------------------------------------------------------------------
Schedule = float | Sequence[float]
"""A weight: a constant, or `[a, b, n]` = linear a→b over n training rollouts (spec §17.4)."""


def schedule_value(w: Schedule, progress: float) -> float:
    """`a + (b − a) × min(1, t / n)` (spec §17.4)."""
    if isinstance(w, int | float):
        return float(w)
    a, b, n = (float(x) for x in w)
    return a + (b - a) * min(1.0, progress / n) if n > 0 else b


@dataclass(frozen=True, slots=True)
class RewardWeights:
    """Reward weights with the environment defaults of spec §17.3."""

    default_reward: Schedule = 0.0
    win_reward: Schedule = 1.0
    lose_reward: Schedule = -1.0
    tie_reward: Schedule = -0.2
    damage_dealt_reward_scale: Schedule = 0.0
    damage_received_reward_scale: Schedule = 0.0
    target_frozen_tick_reward: Schedule = 0.0
    player_frozen_tick_reward: Schedule = 0.0
    protected_correct: Schedule = 0.0
    protected_wrong: Schedule = 0.0
    attacked_correct: Schedule = 0.0
    attacked_wrong: Schedule = 0.0
    protected_prev_correct: Schedule = 0.0
    protected_prev_wrong: Schedule = 0.0
    attacked_prev_correct: Schedule = 0.0
    attacked_prev_wrong: Schedule = 0.0
    attack_level_scale_reward: Schedule = 0.0
    strength_level_scale_reward: Schedule = 0.0
    defence_level_scale_reward: Schedule = 0.0
    ranged_level_scale_reward: Schedule = 0.0
    magic_level_scale_reward: Schedule = 0.0
    reward_on_hit_with_boost_scale: Schedule = 0.0
    smite_dealt_multiplier: Schedule = 0.0
    smite_received_multiplier: Schedule = 0.0
    safe_penalty: Schedule = 0.0
    no_prayer_tick_reward: Schedule = 0.0
    player_died_with_food_exponent: float = 0.0
    """Died-with-food multiplier `(scale + offset) ^ exponent`; exponent 0 gives the default 1 (§17.3)."""
    player_died_with_food_offset: float = 0.0
    player_wasted_food_multiplier: Schedule = 1.0
    penalize_food_on_death: bool = True
    reward_target_food_on_death: bool = True
    penalize_wasted_food: bool = True
    reward_on_damage_generated: bool = True
    reward_heals: bool = True
    penalize_target_heals: bool = True

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> RewardWeights:
        valid = {f.name for f in fields(cls)}
        unknown = sorted(set(values) - valid)
        if unknown:
            raise ValueError(f"unknown reward weight(s) {unknown}; valid: {sorted(valid)}")
        return cls(**values)


CORE_REWARD_WEIGHTS = RewardWeights(
    damage_dealt_reward_scale=0.25,
    damage_received_reward_scale=-0.25,
    target_frozen_tick_reward=(0.004, 0.003, 300),
    player_frozen_tick_reward=(-0.004, -0.003, 300),
    no_prayer_tick_reward=-0.01,
    protected_correct=0.025,
    protected_wrong=-0.025,
    attacked_correct=0.025,
    attacked_wrong=-0.025,
    smite_dealt_multiplier=0.1,
    smite_received_multiplier=0.1,
    player_died_with_food_exponent=1.5,
    player_died_with_food_offset=1.2,
    player_wasted_food_multiplier=5.0,
)
"""The reference's "core" training weights (spec §17.4)."""


def compute_reward(
    w: RewardWeights,
    s: Mapping[str, Any],
    prev: Mapping[str, Any] | None,
    outcome: Outcome | None,
    progress: float = 0.0,
) -> float:
    """Spec §17.2, steps 1–18, from this step's signals `s` and the previous step's `prev`."""
    from envs.nh.sim import Outcome

    def v(x: Schedule) -> float:
        return schedule_value(x, progress)

    wd, wr = v(w.damage_dealt_reward_scale), v(w.damage_received_reward_scale)
    if w.reward_on_damage_generated:
        dealt, received = s["damageGeneratedOnTargetScale"], s["damageGeneratedOnPlayerScale"]
    else:
        dealt, received = s["damageDealt"], s["damageReceived"]
    r = v(w.default_reward)
    r += wd * dealt + wr * received
    r += wd * s["extraDamageDealtOnTargetScale"] + wr * s["extraDamageDealtOnPlayerScale"]
    if s["hitWithSmite"]:
        r += v(w.smite_dealt_multiplier) * wd * dealt
    if s["targetAttackedWithSmite"]:
        r += v(w.smite_received_multiplier) * wr * received
    if w.reward_heals:
        r -= wr * s["playerHealedScale"]
    if w.penalize_target_heals:
        r -= wd * s["targetHealedScale"]
    if "eatAtFoodScale" in s:
        r -= v(w.safe_penalty)
    if s["currentPrayerPercent"] == 0:
        r += v(w.no_prayer_tick_reward)
    if "protectedPrayer" in s:
        weight = w.protected_correct if s["protectedPrayer"] else w.protected_wrong
        r += v(weight) * s["targetHitAttackSpeed"] / SPEED_NORMALISER
    if "hitOffPrayer" in s:
        weight = w.attacked_correct if s["hitOffPrayer"] else w.attacked_wrong
        r += v(weight) * s["playerHitAttackSpeed"] / SPEED_NORMALISER
    if prev is not None:
        if "attackTypeHit" in s:
            off = s["attackTypeHit"] != prev["currentTargetPrayerType"]
            weight = w.attacked_prev_correct if off else w.attacked_prev_wrong
            r += v(weight) * s["playerHitAttackSpeed"] / SPEED_NORMALISER
        if "attackTypeReceived" in s and "playerPrayerType" in s:
            correct = s["playerPrayerType"] == prev["targetAttackStyleType"]
            weight = w.protected_prev_correct if correct else w.protected_prev_wrong
            r += v(weight) * s["targetHitAttackSpeed"] / SPEED_NORMALISER
        inc_p = s["playerFrozenTicks"] - prev["playerFrozenTicks"]
        if inc_p > 0:
            r += inc_p * v(w.player_frozen_tick_reward)
        inc_t = s["targetFrozenTicks"] - prev["targetFrozenTicks"]
        if inc_t > 0:
            r += inc_t * v(w.target_frozen_tick_reward)
    r += (s["attackLevelScale"] - 1) * v(w.attack_level_scale_reward)
    r += (s["strengthLevelScale"] - 1) * v(w.strength_level_scale_reward)
    r += (s["defenceLevelScale"] - 1) * v(w.defence_level_scale_reward)
    r += (s["rangedLevelScale"] - 1) * v(w.ranged_level_scale_reward)
    r += (s["magicLevelScale"] - 1) * v(w.magic_level_scale_reward)
    boost = {"MELEE": "strengthLevelScale", "RANGED": "rangedLevelScale", "MAGIC": "magicLevelScale"}
    hit_style = s.get("attackTypeHit")
    if hit_style is not None and s[boost[hit_style]] > 1:
        r += (s[boost[hit_style]] - 1) * v(w.reward_on_hit_with_boost_scale)
    if w.penalize_wasted_food:
        food, brew = s.get("wastedFoodScale", 0.0), s.get("wastedBrewScale", 0.0)
        m = v(w.player_wasted_food_multiplier)
        r += wr * food * m + wr * brew * m
    if outcome is Outcome.WON:
        r += v(w.win_reward)
        if w.reward_target_food_on_death:
            m = _died_with_food(w, s["targetRemainingFoodScale"] + s["targetRemainingBrewScale"])
            r += wd * s["targetRemainingFoodScale"] * m + wd * s["targetRemainingBrewScale"] * m
    elif outcome is Outcome.LOST:
        r += v(w.lose_reward)
        if w.penalize_food_on_death:
            m = _died_with_food(w, s["remainingFoodScale"] + s["remainingBrewScale"])
            r += wr * s["remainingFoodScale"] * m + wr * s["remainingBrewScale"] * m
    elif outcome is Outcome.TIED:
        r += v(w.tie_reward)
    return r


def _died_with_food(w: RewardWeights, scale: float) -> float:
    if w.player_died_with_food_exponent == 0:
        return 1.0
    return float((scale + w.player_died_with_food_offset) ** w.player_died_with_food_exponent)
