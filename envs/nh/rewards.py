"""Per-tick signals (spec §17.1) and the reward function (spec §17.2) with its weights (§17.3, §17.4).

Signals are a plain dict per agent, from that agent's point of view; signals marked "present if"
in the spec are absent, not zero, when their event did not happen.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import fields
from typing import Annotated, Any

from pydantic import ConfigDict, PlainValidator
from pydantic.dataclasses import dataclass

from common.validation import Invalid, KeyedError, SetFields, describe, from_mapping, is_number
from envs.nh.fight_protocols import FightView
from envs.nh.items import CombatStyle, Ids, PotionType
from envs.nh.operations import brew_hp_boost, nominal_heal
from envs.nh.sim import Outcome, protection_style
from envs.nh.state import InventoryFacts, PlayerState, Skill, TimerId, weapon_family

STYLE_NAMES = {CombatStyle.MELEE: "MELEE", CombatStyle.RANGED: "RANGED", CombatStyle.MAGIC: "MAGIC"}
NULL_STYLE = "null"  # §17.1 currentTargetPrayerType "null" is a value
SPEED_NORMALISER = 5  # §17.2 steps 11–14: × attack speed / 5


def remaining_food_scale(p: PlayerState) -> float:
    """Σ count × nominal heal over carried food / base HP (spec §17.1)."""
    return _food_total(p.inventory_facts(), p.base_hp) / p.base_hp


def _food_total(inv: InventoryFacts, base_hp: int) -> int:
    """Σ count × nominal heal over carried food, in hitpoints (§17.1); integer, so order-free."""
    return (
        inv.sharks * nominal_heal(Ids.SHARK, base_hp)
        + inv.karambwans * nominal_heal(Ids.KARAMBWAN, base_hp)
        + inv.anglerfish * nominal_heal(Ids.ANGLERFISH, base_hp)
    )


def remaining_brew_scale(p: PlayerState) -> float:
    return p.potion_doses(PotionType.BREW) * brew_hp_boost(p.base_hp) / p.base_hp


_NAME_OR_NULL: dict[CombatStyle | None, str] = {**STYLE_NAMES, None: NULL_STYLE}


def signals_for(sim: FightView, p: PlayerState) -> dict[str, Any]:
    """The §17.1 signal dictionary of player `p` for the tick just simulated."""
    q = sim.players[1 - p.index]
    me, them = sim.events[p.index], sim.events[q.index]
    lv, base = p.level, p.base
    bp, bq = base[Skill.HITPOINTS], q.base[Skill.HITPOINTS]
    my_hits, their_hits = me.hits, them.hits
    inv, q_inv = p.inventory_facts(), q.inventory_facts()
    s: dict[str, Any] = {
        "damageGeneratedOnTargetScale": sum(r.hit.total for r in my_hits) / bq if my_hits else 0 / bq,
        "damageGeneratedOnPlayerScale": sum(r.hit.total for r in their_hits) / bp if their_hits else 0 / bp,
        "damageDealt": sum(q.hitsplats) / bq,
        "damageReceived": sum(p.hitsplats) / bp,
        "extraDamageDealtOnTargetScale": me.extra_damage_dealt / bq,
        "extraDamageDealtOnPlayerScale": them.extra_damage_dealt / bp,
        "hitWithSmite": bool(my_hits) and my_hits[-1].smite,
        "targetAttackedWithSmite": bool(their_hits) and their_hits[-1].smite,
        "playerHealedScale": me.healed / bp,
        "targetHealedScale": them.healed / bq if not q.is_baseline else 0.0,
        "currentTargetPrayerType": _NAME_OR_NULL[protection_style(q)],
        "targetAttackStyleType": STYLE_NAMES[weapon_family(q)],
        "playerFrozenTicks": p.timer_ticks[TimerId.FREEZE],
        "targetFrozenTicks": q.timer_ticks[TimerId.FREEZE],
        "currentPrayerPercent": lv[Skill.PRAYER] / base[Skill.PRAYER],
        "attackLevelScale": lv[Skill.ATTACK] / base[Skill.ATTACK],
        "strengthLevelScale": lv[Skill.STRENGTH] / base[Skill.STRENGTH],
        "defenceLevelScale": lv[Skill.DEFENCE] / base[Skill.DEFENCE],
        "rangedLevelScale": lv[Skill.RANGED] / base[Skill.RANGED],
        "magicLevelScale": lv[Skill.MAGIC] / base[Skill.MAGIC],
        "remainingFoodScale": _food_total(inv, bp) / bp,
        "targetRemainingFoodScale": _food_total(q_inv, bq) / bq,
        "remainingBrewScale": inv.doses[PotionType.BREW] * brew_hp_boost(bp) / bp,
        "targetRemainingBrewScale": q_inv.doses[PotionType.BREW] * brew_hp_boost(bq) / bq,
    }
    if their_hits:
        last = their_hits[-1]
        s["protectedPrayer"] = last.defender_protection is last.hit.style
        s["targetHitAttackSpeed"] = last.attack_speed
        s["attackTypeReceived"] = STYLE_NAMES[last.hit.style]
        s["playerPrayerType"] = _NAME_OR_NULL[last.defender_protection]
    if my_hits:
        last = my_hits[-1]
        s["hitOffPrayer"] = last.defender_protection is not last.hit.style
        s["playerHitAttackSpeed"] = last.attack_speed
        s["attackTypeHit"] = STYLE_NAMES[last.hit.style]
        s["targetPrayerType"] = _NAME_OR_NULL[last.defender_protection]
    if me.eat_at_hp is not None:
        s["eatAtFoodScale"] = me.eat_at_hp / bp
    if me.wasted_food > 0:
        s["wastedFoodScale"] = me.wasted_food / bp
    if me.wasted_brew > 0:
        s["wastedBrewScale"] = me.wasted_brew / bp
    return s


# ---- weights --------------------------------------------------------------------------------------
SCHEDULE_EXPECTED = "a finite number or [a, b, n] (linear a→b over n > 0 training iterations)"


def _schedule(value: Any) -> float | tuple[float, ...]:
    """A constant as is; ``[a, b, n]`` as a tuple (hashable, as `_resolved` and configs need)."""
    if isinstance(value, list | tuple) and len(value) == 3:
        if all(_is_finite(v) for v in value) and value[2] > 0:
            return tuple(value)
    elif _is_finite(value):
        return value  # type: ignore[no-any-return]
    raise Invalid(f"got {describe(value)}", SCHEDULE_EXPECTED)


def _is_finite(value: Any) -> bool:
    return is_number(value) and math.isfinite(value)


Schedule = Annotated[float | Sequence[float], PlainValidator(_schedule)]
"""A weight: a constant, or `[a, b, n]` = linear a→b over n training rollouts (spec §17.4). Not the trainer's
`osrs_rllib.config.types.StepSchedule` (``[[env_step, value], ...]`` for ``ppo.lr``)."""


def schedule_value(w: Schedule, progress: float) -> float:
    """`a + (b − a) × min(1, t / n)` (spec §17.4)."""
    if isinstance(w, int | float):
        return float(w)
    a, b, n = (float(x) for x in w)
    return a + (b - a) * min(1.0, progress / n) if n > 0 else b


class RewardWeightError(KeyedError):
    """A reward weight is unknown or invalid; `key` names it."""

    prefix = "reward weight "


@dataclass(frozen=True, slots=True, config=ConfigDict(extra="forbid", allow_inf_nan=False, strict=True))
class RewardWeights:
    """Reward weights with the environment defaults of spec §17.3 (a pydantic dataclass: checked on build).

    The annotations stay the plain names ``Schedule``, ``float`` and ``bool``: the compiled core's tables group
    the weights by them (`WEIGHT_TYPES`, `envs/nh/core/mirrors.py`); strict mode keeps a bool out of a float.
    """

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
        """Build from a config mapping; an unknown or invalid weight is a `RewardWeightError` naming it."""
        return from_mapping(cls, values, RewardWeightError)


WEIGHT_TYPES: dict[str, str] = {f.name: str(f.type) for f in fields(RewardWeights)}


class WeightOptions(SetFields):
    """The reward weights a config sets (``env.reward_weights``), checked by `RewardWeights`' field types."""

    config_model = RewardWeights


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


_SCHEDULED = tuple(name for name, kind in WEIGHT_TYPES.items() if kind == "Schedule")
"""The weights that follow a schedule (§17.4); `compute_reward` reads their values at the current progress."""


class _ResolvedWeights:
    """Every scheduled weight's value at one training progress (spec §17.4), as plain attributes.

    `compute_reward` needs ~26 weight values per call; they change only with `progress`.
    """

    def __init__(self, w: RewardWeights, progress: float) -> None:
        for name in _SCHEDULED:
            setattr(self, name, schedule_value(getattr(w, name), progress))


_RESOLVED_CACHE_SIZE = 1024
_resolved_cache: dict[int, tuple[RewardWeights, float, Any]] = {}


def _resolved(w: RewardWeights, progress: float) -> Any:
    """`_ResolvedWeights` of (w, progress), remembered per weights object: a process often steps many
    engines, each with its own weights (e.g. an RLlib env runner's 32 envs), all at one progress."""
    hit = _resolved_cache.get(id(w))
    if hit is not None and hit[0] is w and hit[1] == progress:  # the entry holds w, so its id is not reused
        return hit[2]
    c = _ResolvedWeights(w, progress)
    if len(_resolved_cache) >= _RESOLVED_CACHE_SIZE:
        _resolved_cache.clear()
    _resolved_cache[id(w)] = (w, progress, c)
    return c


def compute_reward(
    w: RewardWeights,
    s: Mapping[str, Any],
    prev: Mapping[str, Any] | None,
    outcome: Outcome | None,
    progress: float = 0.0,
    parts: dict[str, float] | None = None,
) -> float:
    """Spec §17.2, steps 1–18, from this step's signals `s` and the previous step's `prev`.

    With `parts`, each weighted term is also added to ``parts[<component>]`` (see `REWARD_COMPONENTS`), for
    TensorBoard; the reward itself is summed in the same order either way, so it is bit-identical.
    """
    t = _term if parts is not None else _untracked
    v = _resolved(w, progress)
    wd, wr = v.damage_dealt_reward_scale, v.damage_received_reward_scale
    if w.reward_on_damage_generated:
        dealt, received = s["damageGeneratedOnTargetScale"], s["damageGeneratedOnPlayerScale"]
    else:
        dealt, received = s["damageDealt"], s["damageReceived"]
    r = t(parts, "default", v.default_reward)
    r += t(parts, "damage", wd * dealt + wr * received)
    r += t(parts, "damage", wd * s["extraDamageDealtOnTargetScale"] + wr * s["extraDamageDealtOnPlayerScale"])
    if s["hitWithSmite"]:
        r += t(parts, "smite", v.smite_dealt_multiplier * wd * dealt)
    if s["targetAttackedWithSmite"]:
        r += t(parts, "smite", v.smite_received_multiplier * wr * received)
    if w.reward_heals:
        r -= t(parts, "heals", wr * s["playerHealedScale"], -1.0)
    if w.penalize_target_heals:
        r -= t(parts, "heals", wd * s["targetHealedScale"], -1.0)
    if "eatAtFoodScale" in s:
        r -= t(parts, "safe", v.safe_penalty, -1.0)
    if s["currentPrayerPercent"] == 0:
        r += t(parts, "no_prayer", v.no_prayer_tick_reward)
    if "protectedPrayer" in s:
        weight = v.protected_correct if s["protectedPrayer"] else v.protected_wrong
        r += t(parts, "prayer", weight * s["targetHitAttackSpeed"] / SPEED_NORMALISER)
    if "hitOffPrayer" in s:
        weight = v.attacked_correct if s["hitOffPrayer"] else v.attacked_wrong
        r += t(parts, "off_prayer_hits", weight * s["playerHitAttackSpeed"] / SPEED_NORMALISER)
    if prev is not None:
        if "attackTypeHit" in s:
            off = s["attackTypeHit"] != prev["currentTargetPrayerType"]
            weight = v.attacked_prev_correct if off else v.attacked_prev_wrong
            r += t(parts, "off_prayer_hits", weight * s["playerHitAttackSpeed"] / SPEED_NORMALISER)
        if "attackTypeReceived" in s and "playerPrayerType" in s:
            correct = s["playerPrayerType"] == prev["targetAttackStyleType"]
            weight = v.protected_prev_correct if correct else v.protected_prev_wrong
            r += t(parts, "prayer", weight * s["targetHitAttackSpeed"] / SPEED_NORMALISER)
        inc_p = s["playerFrozenTicks"] - prev["playerFrozenTicks"]
        if inc_p > 0:
            r += t(parts, "freeze", inc_p * v.player_frozen_tick_reward)
        inc_t = s["targetFrozenTicks"] - prev["targetFrozenTicks"]
        if inc_t > 0:
            r += t(parts, "freeze", inc_t * v.target_frozen_tick_reward)
    r += t(parts, "levels", (s["attackLevelScale"] - 1) * v.attack_level_scale_reward)
    r += t(parts, "levels", (s["strengthLevelScale"] - 1) * v.strength_level_scale_reward)
    r += t(parts, "levels", (s["defenceLevelScale"] - 1) * v.defence_level_scale_reward)
    r += t(parts, "levels", (s["rangedLevelScale"] - 1) * v.ranged_level_scale_reward)
    r += t(parts, "levels", (s["magicLevelScale"] - 1) * v.magic_level_scale_reward)
    hit_style = s.get("attackTypeHit")
    if hit_style is not None and s[_BOOST_SIGNAL[hit_style]] > 1:
        r += t(parts, "boosted_hits", (s[_BOOST_SIGNAL[hit_style]] - 1) * v.reward_on_hit_with_boost_scale)
    if w.penalize_wasted_food:
        food, brew = s.get("wastedFoodScale", 0.0), s.get("wastedBrewScale", 0.0)
        m = v.player_wasted_food_multiplier
        r += t(parts, "wasted_food", wr * food * m + wr * brew * m)
    if outcome is Outcome.WON:
        r += t(parts, "outcome", v.win_reward)
        if w.reward_target_food_on_death:
            m = _died_with_food(w, s["targetRemainingFoodScale"] + s["targetRemainingBrewScale"])
            r += t(
                parts, "food_on_death", wd * s["targetRemainingFoodScale"] * m + wd * s["targetRemainingBrewScale"] * m
            )
    elif outcome is Outcome.LOST:
        r += t(parts, "outcome", v.lose_reward)
        if w.penalize_food_on_death:
            m = _died_with_food(w, s["remainingFoodScale"] + s["remainingBrewScale"])
            r += t(parts, "food_on_death", wr * s["remainingFoodScale"] * m + wr * s["remainingBrewScale"] * m)
    elif outcome is Outcome.TIED:
        r += t(parts, "outcome", v.tie_reward)
    return r


REWARD_COMPONENTS: tuple[str, ...] = (
    "default",
    "damage",
    "smite",
    "heals",
    "safe",
    "no_prayer",
    "prayer",
    "off_prayer_hits",
    "freeze",
    "levels",
    "boosted_hits",
    "wasted_food",
    "outcome",
    "food_on_death",
)
"""Groups of §17.2 terms reported separately (TensorBoard ``fight/reward_<component>``)."""


def _term(parts: dict[str, float] | None, key: str, value: float, sign: float = 1.0) -> float:
    """Record `value` (as it enters the reward: times `sign`) under `key`, and return it unchanged."""
    assert parts is not None
    parts[key] = parts.get(key, 0.0) + sign * value
    return value


def _untracked(parts: dict[str, float] | None, key: str, value: float, sign: float = 1.0) -> float:
    return value


_BOOST_SIGNAL = {"MELEE": "strengthLevelScale", "RANGED": "rangedLevelScale", "MAGIC": "magicLevelScale"}
"""Signal of the boosted level that the style of a hit uses (§17.2 step 15)."""


def _died_with_food(w: RewardWeights, scale: float) -> float:
    if w.player_died_with_food_exponent == 0:
        return 1.0
    return float((scale + w.player_died_with_food_offset) ** w.player_died_with_food_exponent)
