"""The graded NH ladder: one parameterised scripted player, from a novice to an expert, plus a prescient rung.

Every rung is the same rule-based player (`GradedNH`) run with a different row of `LEVELS`, a frozen
`NHSkill` per level: the parameters are data, not code. Like the other rungs of `envs.opponents.ladder`, it
sees only its own 176-entry observation (§15.2) and the 45-entry environment mask (§14.3) and answers
through `apply_dependencies_and_force` (§14.2), so it can sit in any seat a policy can and never sends an
illegal action. Its randomness (prayer reactions that fail, mistakes) comes from one generator seeded at
`reset`, so a level's play is a function of its seed and what it sees.

What separates good NH play from bad, and which parameter grades it:

* **Prayer** (§6.5: a protection prayer active when a hit is *created* takes 40 % off it). The player prays
  against the opponent's visible weapon (entries 12–14) as it was `prayer_delay_ticks` ago, and makes a
  needed switch on a given tick with probability `prayer_accuracy`. With `predict_prayer` it also reasons
  about what the opponent cannot do: an opponent that shows melee but cannot reach melee distance (both
  frozen apart, §11.5, §14.3) will attack with ranged or magic, so it prays against the one the opponent
  used most (entries 68, 69).
* **Off-prayer attacks.** With probability `off_prayer_rate` an attack uses a style the target is not
  protecting against (entries 16–18); with `predict_prayer` it also avoids the protection the target is
  most likely to raise this tick (the one against its own visible weapon, which is what a reacting
  opponent prays against). Otherwise it attacks with `fixed_style`.
* **Gear-switch timing.** Gear is switched when the attack is `attack_lead_ticks` from ready: 0 switches
  and attacks in the same tick (§4.1: the opponent's prayer for that hit was chosen before it could see the
  switch), 1 or more shows the style early. With `tank_between_attacks` it chooses no attack while the
  attack cools down, which §14.2 turns into tank gear whenever the opponent can hit.
* **Eating** (§8.1–8.2): eat below `eat_below_hp`, brew below `brew_below_hp`, and combo-eat food, brew and
  karambwan in one tick (the §8.2 order food → potion → karambwan) below `combo_below_hp`. With
  `eat_on_cooldown`, routine eating waits for a tick where the attack has at least
  `EAT_MIN_ATTACK_COOLDOWN_TICKS` left (eating on a ready attack delays it by 3 ticks, §8.2), except in an
  emergency (below `combo_below_hp`).
* **Brews and restores** (§8.3): restore below `restore_below_prayer` of Prayer and, with
  `restore_below_magic`, when brews drained Magic; with `boost`, re-boost Ranged and Strength.
* **Special attacks** (§6.9) when the target's last seen HP fraction (entry 11) is at most
  `spec_below_target_hp` and a special of a style the target is not protecting is legal.
* **Freeze and step-out** (§11.5): with `freeze`, Ice spells on a target that is neither frozen nor immune;
  with `step_out`, when the target is frozen in melee distance and the own attack is cooling down, walk
  out of its reach (farcast, head 9 = 3) and stay out of melee.
* **Vengeance** (§5.6) whenever it is legal, with `vengeance`.
* **Mistakes**: on each tick, each of the attack, prayer and consumable heads is, with probability
  `mistake_rate`, a uniformly random legal value instead.

The **prescient** rung is the expert plus one thing no honest player has: it is shown the opponent's
chosen action for the tick before it acts (`needs_opponent_action`). It prays against the style the
opponent is attacking with this tick and attacks off the prayer the opponent is raising this tick: perfect
prayers. It is an upper bound for what the scripted rules can reach, not a fair opponent. Hosts that know
the other seat's action (the lockstep fight loop, the gym and RLlib environments) pass it as
``act(obs, mask, opponent_action=...)``; those that do not (serving, the in-simulator baseline as the
other seat, two prescient seats) refuse it with an error that says why.
"""

from __future__ import annotations

from collections import deque
from dataclasses import replace
from typing import Annotated

import numpy as np
import numpy.typing as npt
from pydantic import AfterValidator, ConfigDict, Field, Strict, model_validator
from pydantic.dataclasses import dataclass

from common.validation import Flag, Invalid, Probability, expect
from envs.nh.contract import (
    NUM_HEADS,
    NUM_LOGITS,
    AttackHead,
    BoolArray,
    FarcastHead,
    FoodHead,
    Head,
    IntArray,
    KarambwanHead,
    MageType,
    MeleeType,
    MovementHead,
    Obs,
    PotionHead,
    PrayerHead,
    RangedType,
    VengHead,
    apply_dependencies_and_force,
    check_action,
    logit_index,
)
from envs.opponents.ladder import _check_obs, _PreferencePolicy

EAT_MIN_ATTACK_COOLDOWN_TICKS = 2
"""With `eat_on_cooldown`: routine eating waits until the own ATTACK remaining (entry 39) is at least this,
so the §8.2 eating delay lands on ticks the attack was not going to fire anyway."""
BOOST_BELOW_LEVEL_FRACTION = 0.95
"""With `boost`: re-boost Ranged / Strength below this fraction of the boosted cap (entries 34, 37)."""
SWITCHER_MAX_RECENT_STYLE_SHARE = 0.8
"""With `predict_prayer`: an opponent none of whose styles made this share of its last 5 hits (entries 82–84)
switches styles; one that shows the style already prayed against is then expected to switch away from it."""
FREEZABLE_MAGIC_SHARE_BONUS = 1.0
"""With `predict_prayer`: while the player can be frozen (entries 29, 31) a switching opponent is expected to
cast (Ice, §6.7) before anything else: this is added to magic's share of its hits."""
MAGIC_STYLE_MIN_PREFERENCE_HP = 1.0
"""Blood spells heal (§6.7): below this HP fraction (entry 10) prefer Blood to Ice when not freezing."""


def _identifier(name: str) -> str:
    if not name.isidentifier():
        raise Invalid(f"got {name!r}", "a lower-case identifier (the level's name in commands and configs)")
    return name


def _attack_style(style: AttackHead) -> AttackHead:
    if style == AttackHead.NONE:
        raise Invalid("got NONE", "MAGIC, RANGED or MELEE")
    return style


Fraction = Annotated[float, Strict(), Field(ge=0, le=2), expect("an HP / level fraction in [0, 2]")]
"""A threshold compared with an observation's ratio entry (HP, Prayer, Magic: boosted levels go above 1)."""
Ticks = Annotated[int, Strict(), Field(ge=0, le=10), expect("a whole number of ticks in 0..10")]
Name = Annotated[str, Strict(), AfterValidator(_identifier)]
AttackStyle = Annotated[AttackHead, AfterValidator(_attack_style)]


@dataclass(frozen=True, slots=True, config=ConfigDict(allow_inf_nan=False))
class NHSkill:
    """The parameters of one ladder level (see the module docstring for what each rule does).

    Fractions compare with the observation's ratio entries (HP entry 10, Prayer 28, Magic 38, target HP
    11); probabilities are per tick (prayer, mistakes) or per attack (off-prayer choice).
    """

    name: Name
    summary: Annotated[str, Strict()]
    """One line for help texts."""
    prayer_accuracy: Probability
    """Probability that a needed protection switch is made on a given tick."""
    prayer_delay_ticks: Ticks
    """Prays against the opponent's weapon as seen this many ticks ago (0: the latest observation)."""
    predict_prayer: Flag
    """Reason about the styles the opponent can use and the prayer it is about to raise."""
    off_prayer_rate: Probability
    """Probability that an attack picks a style the target is not protecting against."""
    fixed_style: AttackStyle
    """The style of attacks that do not look at the target's prayer."""
    attack_lead_ticks: Ticks
    """Switch gear (commit to a style) once the own ATTACK remaining is at most this (0: same tick)."""
    tank_between_attacks: Flag
    """Choose no attack while the attack cools down, so §14.2 forces tank gear."""
    eat_below_hp: Fraction
    brew_below_hp: Fraction
    combo_below_hp: Fraction
    """Food, brew and karambwan in one tick below this HP fraction (0: never combo)."""
    eat_on_cooldown: Flag
    """Routine eating waits for the attack cooldown (see `EAT_MIN_ATTACK_COOLDOWN_TICKS`)."""
    restore_below_prayer: Fraction
    restore_below_magic: Fraction
    """Drink a restore when brews drained Magic below this fraction of base (0: never for Magic)."""
    boost: Flag
    spec_below_target_hp: Fraction
    """Special attack when the target's HP fraction is at most this (0: never)."""
    freeze: Flag
    step_out: Flag
    vengeance: Flag
    mistake_rate: Probability
    prescient: Flag = False
    """Sees the opponent's action of the tick (an upper bound, not honest play)."""

    @property
    def stochastic(self) -> bool:
        """Whether the level draws from its generator (prayer reactions, off-prayer choice, mistakes) or keeps a
        history of what it saw (a reaction delay): such a level is not a pure function of one observation."""
        return (
            self.prayer_accuracy < 1.0
            or 0.0 < self.off_prayer_rate < 1.0
            or self.mistake_rate > 0.0
            or self.prayer_delay_ticks > 0
        )

    @model_validator(mode="after")
    def _combo_below_routine_eating(self) -> NHSkill:
        if self.combo_below_hp > self.eat_below_hp:
            raise Invalid(f"combo_below_hp {self.combo_below_hp} is above eat_below_hp {self.eat_below_hp}",
                          "combo eating as the emergency below routine eating", field="combo_below_hp")  # fmt: skip
        return self


_R, _M, _G = AttackHead.RANGED, AttackHead.MAGIC, AttackHead.MELEE

# fmt: off
LEVELS: tuple[NHSkill, ...] = (
    #       name          prayer acc, delay, predict  off-prayer, style, lead, tank   eat,  brew, combo, eat-on-cd
    #       restore prayer, magic, boost   spec   freeze step-out veng   mistakes
    NHSkill("novice", "slow, often wrong prayers; one attack style; eats late; frequent mistakes",
            0.25, 3, False, 0.0, _R, 2, False, 0.45, 0.35, 0.0, False,
            0.20, 0.0, False, 0.0, False, False, False, 0.15),
    NHSkill("apprentice", "half its prayer switches, a tick late; some off-prayer attacks; freezes; specs low targets",
            0.5, 1, False, 0.5, _R, 1, True, 0.50, 0.45, 0.25, False,
            0.25, 0.0, False, 0.45, True, False, False, 0.06),
    NHSkill("adept", "reacts to what it sees on 85 % of ticks; 80 % of attacks off-prayer; combo-eats; boosts",
            0.85, 0, False, 0.8, _R, 1, True, 0.55, 0.50, 0.30, False,
            0.30, 0.85, True, 0.50, True, False, True, 0.02),
    NHSkill("veteran", "predicts prayers but makes 70 % of its switches; 10 % of attacks on-prayer; steps out",
            0.7, 0, True, 0.9, _R, 0, True, 0.60, 0.50, 0.35, True,
            0.30, 0.90, True, 0.55, True, True, True, 0.03),
    NHSkill("expert", "good NH as well as a script can: perfect reactions, predicts prayers, no mistakes",
            1.0, 0, True, 1.0, _R, 0, True, 0.60, 0.50, 0.35, True,
            0.30, 0.90, True, 0.55, True, True, True, 0.0),
)
# fmt: on
LEVELS += (  # the expert's row with one difference: it is shown the opponent's action of the tick
    replace(
        LEVELS[-1],
        name="prescient",
        summary="UPPER BOUND, not honest play: the expert shown the opponent's action of the tick",
        prescient=True,
    ),
)
"""The graded levels, weakest to strongest (the measured order is in docs/strength.md)."""

LEVELS_BY_NAME: dict[str, NHSkill] = {level.name: level for level in LEVELS}
if len(LEVELS_BY_NAME) != len(LEVELS):
    raise ValueError("graded ladder: level names must be unique")

_PROTECT_AGAINST = {
    int(AttackHead.MAGIC): int(PrayerHead.PROTECT_MAGIC),
    int(AttackHead.RANGED): int(PrayerHead.PROTECT_MISSILES),
    int(AttackHead.MELEE): int(PrayerHead.PROTECT_MELEE),
}
_STYLE_PROTECTED_BY = {p: s for s, p in _PROTECT_AGAINST.items()}
_PROTECTIONS = (int(PrayerHead.PROTECT_MELEE), int(PrayerHead.PROTECT_MISSILES), int(PrayerHead.PROTECT_MAGIC))
_NONE, _MAGIC, _RANGED, _MELEE = (int(a) for a in AttackHead)
_MISTAKE_HEADS = frozenset({int(Head.ATTACK), int(Head.PRAYER), int(Head.POTION), int(Head.FOOD)})
_MELEE_SPEC = logit_index(Head.MELEE_ATTACK_TYPE, MeleeType.SPECIAL)
_RANGED_SPEC = logit_index(Head.RANGED_ATTACK_TYPE, RangedType.SPECIAL)
_MAGE_SPEC = logit_index(Head.MAGE_ATTACK_TYPE, MageType.SPECIAL)
_MAGE_ICE = logit_index(Head.MAGE_ATTACK_TYPE, MageType.ICE)
_SPECIAL_LOGITS = ((_MELEE, _MELEE_SPEC), (_RANGED, _RANGED_SPEC), (_MAGIC, _MAGE_SPEC))
_DAMAGE_ORDER = (_RANGED, _MELEE, _MAGIC)
"""Plain styles by preference when several are off-prayer (melee only from melee distance)."""
_FALLBACK_STYLES = (_RANGED, _MAGIC, _MELEE, _NONE)
"""Tried after the planned styles: some attack is forced whenever the attack is ready (§14.3, head 0)."""
_STEP_OUT_DISTANCES = (int(FarcastHead.DISTANCE_2), int(FarcastHead.DISTANCE_3))


def _visible_style(obs: list[float], melee: int, ranged: int, mage: int) -> int:
    """The attack style of a visible weapon class (entries 0–2 or 12–14), NONE when unknown."""
    if obs[mage]:
        return _MAGIC
    if obs[ranged]:
        return _RANGED
    if obs[melee]:
        return _MELEE
    return _NONE


def _protection_of(obs: list[float], melee: int, ranged: int, magic: int) -> int:
    """The protection prayer active by entries (melee, ranged, magic), 0 when none."""
    if obs[magic]:
        return int(PrayerHead.PROTECT_MAGIC)
    if obs[ranged]:
        return int(PrayerHead.PROTECT_MISSILES)
    if obs[melee]:
        return int(PrayerHead.PROTECT_MELEE)
    return 0


class GradedNH(_PreferencePolicy):
    """One level of the graded NH ladder (`LEVELS`); see the module docstring for its rules.

    Args:
        skill: The level's parameters.
        seed: Seed of its generator (failed prayer reactions, mistakes); `reset` re-seeds it.
    """

    def __init__(self, skill: NHSkill, seed: int | None = None) -> None:
        super().__init__()
        if not isinstance(skill, NHSkill):
            raise TypeError(f"skill must be an NHSkill, got {type(skill).__name__}")
        self.skill = skill
        self.name = skill.name
        self.needs_opponent_action = skill.prescient
        self.stochastic = skill.stochastic
        self._rng = np.random.default_rng(seed)
        self._seen_styles: deque[int] = deque(maxlen=skill.prayer_delay_ticks + 1)
        self._opponent_action: list[int] | None = None

    def reset(self, seed: int | None = None) -> None:
        """Start a new episode: re-seed the generator (None: fresh entropy) and forget what was seen."""
        self._rng = np.random.default_rng(seed)
        self._seen_styles.clear()
        self._opponent_action = None

    def act(
        self, obs: npt.NDArray[np.float32], mask: npt.ArrayLike, opponent_action: npt.ArrayLike | None = None
    ) -> IntArray:
        """The 12 head values for this tick.

        Args:
            obs: Own 176-entry observation (§15.2).
            mask: Own 45-entry environment mask (§14.3).
            opponent_action: The other seat's 12 head values of this tick. Required by the prescient level
                (it is what makes it prescient), refused by the honest ones (they must not see it).

        Raises:
            ValueError: Bad shapes, a prescient level without the opponent's action, or an honest level
                given one.
        """
        if self.needs_opponent_action:
            if opponent_action is None:
                raise ValueError(
                    f"{self.name!r} needs the opponent's action of the tick (act(obs, mask, opponent_action=...)); "
                    "only a host that knows the other seat's action before this one acts can play it (the fight "
                    "loop, the gym and RLlib environments), not serving, whose clients do not send it"
                )
            self._opponent_action = check_action(opponent_action).tolist()
        elif opponent_action is not None:
            raise ValueError(f"{self.name!r} is an honest level and must not see the opponent's action")
        _check_obs(obs)
        env_mask = np.asarray(mask, dtype=np.bool_)
        if env_mask.shape != (NUM_LOGITS,):
            raise ValueError(f"action mask must have shape ({NUM_LOGITS},) (§14.2), got {env_mask.shape}")
        values = np.asarray(obs, dtype=np.float32)
        self._plan(values.tolist(), env_mask)
        return apply_dependencies_and_force(env_mask, self._choose)

    # ---- the plan of one tick -------------------------------------------------------------------
    def _plan(self, obs: list[float], mask: BoolArray) -> None:
        s = self.skill
        prefs = self._prefs
        for head in range(NUM_HEADS):
            prefs[head] = ()
        self._seen_styles.append(_visible_style(obs, Obs.TARGET_USING_MELEE, Obs.TARGET_USING_RANGED,
                                                Obs.TARGET_USING_MAGE))  # fmt: skip
        hp = obs[Obs.PLAYER_HEALTH_PERCENT]
        emergency = hp < s.combo_below_hp
        self._plan_consumables(obs, hp, emergency)
        target_prayer = _protection_of(obs, Obs.TARGET_MELEE_PRAYER, Obs.TARGET_RANGED_PRAYER,
                                       Obs.TARGET_MAGIC_PRAYER)  # fmt: skip
        own_style = _visible_style(obs, Obs.PLAYER_USING_MELEE, Obs.PLAYER_USING_RANGED, Obs.PLAYER_USING_MAGE)
        opp = self._opponent_action
        if opp is not None and opp[Head.PRAYER] in _STYLE_PROTECTED_BY:
            avoid = (opp[Head.PRAYER],)  # prescient: the prayer the opponent raises this tick
        elif s.predict_prayer and own_style != _NONE:
            avoid = (target_prayer, _PROTECT_AGAINST[own_style])
        else:
            avoid = (target_prayer,)
        self._plan_attack(obs, mask, avoid, own_style)
        self._plan_movement(obs)
        prefs[Head.PRAYER] = self._prayer_prefs(obs)
        prefs[Head.VENG] = (int(VengHead.CAST),) if s.vengeance else ()

    def _plan_consumables(self, obs: list[float], hp: float, emergency: bool) -> None:
        s, prefs = self.skill, self._prefs
        routine_ok = not s.eat_on_cooldown or obs[Obs.ATTACK_CYCLE_TICKS] >= EAT_MIN_ATTACK_COOLDOWN_TICKS
        eat = emergency or (hp < s.eat_below_hp and routine_ok)
        prefs[Head.FOOD] = (int(FoodHead.EAT),) if eat else ()
        prefs[Head.KARAMBWAN] = (int(KarambwanHead.EAT),) if emergency or (eat and hp < s.brew_below_hp) else ()
        potions: list[int] = []
        if emergency or hp < s.brew_below_hp:
            potions.append(int(PotionHead.BREW))
        if obs[Obs.PRAYER_POINTS] < s.restore_below_prayer or obs[Obs.MAGIC_LEVEL] < s.restore_below_magic:
            potions.append(int(PotionHead.RESTORE))
        if s.boost:
            if obs[Obs.RANGED_LEVEL] < BOOST_BELOW_LEVEL_FRACTION:
                potions.append(int(PotionHead.RANGING))
            if obs[Obs.STRENGTH_LEVEL] < BOOST_BELOW_LEVEL_FRACTION:
                potions.append(int(PotionHead.COMBAT))
        prefs[Head.POTION] = tuple(potions)

    def _plan_attack(
        self, obs: list[float], mask: BoolArray, avoid: tuple[int, ...], own_style: int
    ) -> None:
        s, prefs = self.skill, self._prefs
        styles: list[int] = []
        if obs[Obs.ATTACK_CYCLE_TICKS] > s.attack_lead_ticks:
            # Not yet time to commit: no attack (tank gear, §14.2) or keep the current style, which keeps
            # auto-attacking in the gear the opponent already sees.
            styles.append(_NONE if s.tank_between_attacks or own_style == _NONE else own_style)
        in_melee = bool(obs[Obs.PLAYER_LOCATION_CAN_MELEE])
        spec_time = s.spec_below_target_hp > 0 and obs[Obs.TARGET_HEALTH_PERCENT] <= s.spec_below_target_hp
        freeze_time = (
            s.freeze and obs[Obs.TARGET_FROZEN_TICKS] <= 0 and obs[Obs.TARGET_FROZEN_IMMUNITY_TICKS] <= 0
        )
        off_prayer = s.off_prayer_rate >= 1.0 or self._rng.random() < s.off_prayer_rate
        if off_prayer:
            # First styles off every prayer in `avoid`, then styles off the target's current prayer only.
            for against in (avoid, avoid[:1]) if len(avoid) > 1 else (avoid,):
                free = [st for st in _DAMAGE_ORDER if _PROTECT_AGAINST[st] not in against]
                if spec_time:
                    styles += [st for st, logit in _SPECIAL_LOGITS if st in free and mask[logit]]
                if freeze_time and _MAGIC in free and mask[_MAGE_ICE]:
                    styles.append(_MAGIC)
                styles += [st for st in free if st != _MELEE or in_melee]
        else:
            fixed = int(s.fixed_style)
            if spec_time:
                styles += [st for st, logit in _SPECIAL_LOGITS if st == fixed and mask[logit]]
            styles.append(fixed)
        styles += _FALLBACK_STYLES
        prefs[Head.ATTACK] = tuple(styles)
        prefs[Head.MELEE_ATTACK_TYPE] = (
            (int(MeleeType.SPECIAL), int(MeleeType.NORMAL)) if spec_time else (int(MeleeType.NORMAL),)
        )
        prefs[Head.RANGED_ATTACK_TYPE] = (
            (int(RangedType.SPECIAL), int(RangedType.NORMAL)) if spec_time else (int(RangedType.NORMAL),)
        )
        mage: list[int] = [int(MageType.SPECIAL)] if spec_time else []
        if freeze_time:
            mage.append(int(MageType.ICE))
        hurt = obs[Obs.PLAYER_HEALTH_PERCENT] < MAGIC_STYLE_MIN_PREFERENCE_HP
        mage += (int(MageType.BLOOD), int(MageType.ICE)) if hurt else (int(MageType.ICE), int(MageType.BLOOD))
        prefs[Head.MAGE_ATTACK_TYPE] = tuple(mage)

    def _plan_movement(self, obs: list[float]) -> None:
        """Step out of a frozen target's melee reach while the own attack cools down (§11.5, §14.3)."""
        s, prefs = self.skill, self._prefs
        if (
            s.step_out
            and obs[Obs.TARGET_FROZEN_TICKS] > 0
            and obs[Obs.PLAYER_FROZEN_TICKS] <= 0
            and obs[Obs.PLAYER_LOCATION_CAN_MELEE]
            and obs[Obs.ATTACK_CYCLE_TICKS] >= 1
        ):
            prefs[Head.MOVEMENT] = (int(MovementHead.FARCAST),)
            prefs[Head.FARCAST_DISTANCE] = _STEP_OUT_DISTANCES
        else:
            prefs[Head.MOVEMENT] = (int(MovementHead.STAY),)

    def _prayer_prefs(self, obs: list[float]) -> tuple[int, ...]:
        s = self.skill
        active = _protection_of(obs, Obs.PLAYER_MELEE_PRAYER, Obs.PLAYER_RANGED_PRAYER, Obs.PLAYER_MAGIC_PRAYER)
        wanted = self._wanted_protection(obs)
        if wanted and wanted != active and active and s.prayer_accuracy < 1.0:
            if self._rng.random() >= s.prayer_accuracy:
                wanted = active  # the switch this tick is missed
        first = (wanted,) if wanted else ()
        keep = (active,) if active else ()
        return (*first, *keep, *_PROTECTIONS)

    def _wanted_protection(self, obs: list[float]) -> int:
        opp = self._opponent_action
        if opp is not None and opp[Head.ATTACK] != _NONE:
            return _PROTECT_AGAINST[opp[Head.ATTACK]]  # prescient: the style it attacks with this tick
        style = self._seen_styles[0]
        if self.skill.predict_prayer and style != _NONE:
            can_melee = self._opponent_can_melee(obs)
            active = _protection_of(obs, Obs.PLAYER_MELEE_PRAYER, Obs.PLAYER_RANGED_PRAYER, Obs.PLAYER_MAGIC_PRAYER)
            recent = (obs[Obs.RECENT_TARGET_MAGIC_HIT_PERCENT], obs[Obs.RECENT_TARGET_RANGED_HIT_PERCENT],
                      obs[Obs.RECENT_TARGET_MELEE_HIT_PERCENT])  # fmt: skip
            switcher = max(recent) < SWITCHER_MAX_RECENT_STYLE_SHARE
            freezable = obs[Obs.PLAYER_FROZEN_TICKS] <= 0 and obs[Obs.PLAYER_FROZEN_IMMUNITY_TICKS] <= 0
            if switcher and not active and freezable and obs[Obs.TARGET_MAGIC_HIT_PERCENT] > 0:
                # Unprotected and freezable (Smite or no prayer on, §14.3 forces one while protections are
                # masked): a caster's first choice is a freeze (§6.7).
                style = _MAGIC
            elif (style == _MELEE and not can_melee) or (switcher and active == _PROTECT_AGAINST[style]):
                # It will not (cannot) hit with what it shows: expect the other style it uses most.
                share = {
                    _MAGIC: obs[Obs.TARGET_MAGIC_HIT_PERCENT],
                    _RANGED: obs[Obs.TARGET_RANGED_HIT_PERCENT],
                    _MELEE: obs[Obs.TARGET_MELEE_HIT_PERCENT] if can_melee else -1.0,
                }
                if freezable:
                    share[_MAGIC] += FREEZABLE_MAGIC_SHARE_BONUS  # an unfrozen target invites a freeze
                style = max((st for st in _DAMAGE_ORDER if st != style), key=lambda st: share[st])
        return _PROTECT_AGAINST.get(style, 0)

    @staticmethod
    def _opponent_can_melee(obs: list[float]) -> bool:
        """The opponent can reach melee distance: already there, or one of the two can move (§14.3)."""
        return bool(obs[Obs.PLAYER_LOCATION_CAN_MELEE]) or obs[Obs.TARGET_FROZEN_TICKS] <= 0 or (
            obs[Obs.PLAYER_FROZEN_TICKS] <= 0
        )

    def _choose(self, head: Head, legal: BoolArray) -> int:
        rate = self.skill.mistake_rate
        if rate > 0.0 and head in _MISTAKE_HEADS and self._rng.random() < rate:
            values = [v for v, ok in enumerate(legal.tolist()) if ok]
            return values[int(self._rng.integers(len(values)))]
        return super()._choose(head, legal)
