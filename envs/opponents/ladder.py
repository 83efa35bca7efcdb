"""Scripted opponents of increasing strength, acting through the agent's own action interface.

Unlike the reference baseline of spec §18, which calls game operations directly, these opponents see
exactly what a policy sees — their own 176-entry observation (§15) and the 45-entry environment mask
(§14.3) — and produce a 12-head action that goes through `apply_dependencies_and_force` (§14.2). They
can therefore sit in any seat a policy can (self-play league, evaluation, smoke tests), and they can
never send an action that violates the mask or the head dependencies: the forcing step guarantees it.

The ladder, weakest to strongest (`LADDER`):

* ``noop``: the most passive legal value of every head (the lowest legal value index).
* ``random``: a uniformly random legal value of every head (seeded).
* ``stay_alive``: eats, drinks and brews when low, otherwise attacks in one fixed style and keeps a
  protection prayer up.
* ``prayer_switcher``: ``stay_alive`` that prays against the opponent's visible weapon style.
* ``tribrid``: prays like ``prayer_switcher`` and attacks with a style the opponent is not protecting
  against, freezes an unfrozen target, specs a low target, restores and boosts.

Each scripted policy fills, once per tick, an ordered tuple of preferred values for every head; the
forcing step then asks it for a value only where two or more are legal, and it answers with its first
legal preference, or the lowest legal value when none of them is legal.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from envs.nh.contract import (
    NUM_HEADS,
    NUM_LOGITS,
    OBS_SIZE,
    AttackHead,
    BoolArray,
    FoodHead,
    Head,
    IntArray,
    KarambwanHead,
    MageType,
    MeleeType,
    Obs,
    PotionHead,
    PrayerHead,
    RangedType,
    VengHead,
    apply_dependencies_and_force,
    logit_index,
)

# Thresholds of the scripted rules. Fractions compare with the §15.2 ratio entries (e.g. entry 10,
# current HP / base HP); they are tuning choices of these bots, not game constants.
EAT_BELOW_HP_FRACTION = 0.60
"""Eat food and karambwan below this fraction of base HP (entry 10)."""
BREW_BELOW_HP_FRACTION = 0.50
"""Drink a Saradomin brew below this fraction of base HP (entry 10)."""
RESTORE_BELOW_PRAYER_FRACTION = 0.30
"""Drink a super restore below this fraction of base Prayer (entry 28)."""
RESTORE_BELOW_MAGIC_FRACTION = 0.90
"""Tribrid: drink a super restore when brews drained Magic below this fraction of base (entry 38)."""
BOOST_BELOW_LEVEL_FRACTION = 0.95
"""Tribrid: re-boost when Strength / Ranged is below this fraction of its boosted cap (entries 34, 37)."""
SPEC_BELOW_TARGET_HP_FRACTION = 0.55
"""Tribrid: use a special attack when the target's last seen HP fraction (entry 11) is at most this."""
ATTACK_PREPARE_TICKS = 1
"""Tribrid: commit to a style (switch gear) once its ATTACK remaining (entry 39) is at most this; with
more cooldown left it chooses no attack, which lets §14.2 force tank gear when the opponent can hit."""


@runtime_checkable
class ScriptedPolicy(Protocol):
    """A scripted opponent: acts from its own observation and environment mask only."""

    name: str

    def reset(self, seed: int | None) -> None:
        """Start a new episode; `seed` seeds any randomness the policy uses."""
        ...

    def act(self, obs: npt.NDArray[np.float32], mask: npt.ArrayLike) -> IntArray:
        """Return the 12 head values (int64) for this tick, legal under `mask` and §14.2."""
        ...


def _check_obs(obs: npt.NDArray[np.float32]) -> None:
    if np.shape(obs) != (OBS_SIZE,):
        raise ValueError(f"observation must have shape ({OBS_SIZE},) (spec §15.2), got {np.shape(obs)}")


# Logit positions read from the environment mask by the rules below.
_MELEE_SPEC = logit_index(Head.MELEE_ATTACK_TYPE, MeleeType.SPECIAL)
_RANGED_SPEC = logit_index(Head.RANGED_ATTACK_TYPE, RangedType.SPECIAL)
_MAGE_SPEC = logit_index(Head.MAGE_ATTACK_TYPE, MageType.SPECIAL)
_MAGE_ICE = logit_index(Head.MAGE_ATTACK_TYPE, MageType.ICE)

_PROTECT_AGAINST: dict[AttackHead, PrayerHead] = {
    AttackHead.MAGIC: PrayerHead.PROTECT_MAGIC,
    AttackHead.RANGED: PrayerHead.PROTECT_MISSILES,
    AttackHead.MELEE: PrayerHead.PROTECT_MELEE,
}
_PROTECTIONS: tuple[PrayerHead, ...] = (
    PrayerHead.PROTECT_MELEE,
    PrayerHead.PROTECT_MISSILES,
    PrayerHead.PROTECT_MAGIC,
)

Prefs = tuple[int, ...]


class _PreferencePolicy:
    """Base of the rule-based policies: `_plan` fills one tuple of preferred values per head."""

    name: str = ""

    def __init__(self) -> None:
        self._prefs: list[Prefs] = [()] * NUM_HEADS

    def reset(self, seed: int | None = None) -> None:
        """Rule-based policies keep no episode state and draw nothing."""

    def act(self, obs: npt.NDArray[np.float32], mask: npt.ArrayLike) -> IntArray:
        _check_obs(obs)
        env_mask = np.asarray(mask, dtype=np.bool_)
        if env_mask.shape != (NUM_LOGITS,):
            raise ValueError(f"action mask must have shape ({NUM_LOGITS},) (§14.2), got {env_mask.shape}")
        self._plan(obs, env_mask)
        return apply_dependencies_and_force(env_mask, self._choose)

    def _plan(self, obs: npt.NDArray[np.float32], mask: BoolArray) -> None:
        """Set `self._prefs[head]` for this tick. Heads left at `()` take their lowest legal value."""

    def _choose(self, head: Head, legal: BoolArray) -> int:
        for value in self._prefs[head]:
            if legal[value]:
                return value
        return int(legal.argmax())  # the lowest legal value, the most passive one


class NoOp(_PreferencePolicy):
    """Always the most passive legal value: the lowest legal value of every head.

    It still attacks when its attack is ready, because "no attack" is then illegal (§14.3, head 0),
    and it keeps picking Protect from Magic while that is legal, because "no change" is never legal.
    """

    name: str = "noop"


class RandomLegal:
    """A uniformly random legal value for every head, drawn from a seeded `numpy.random.Generator`."""

    name: str = "random"

    def __init__(self, seed: int | None = None) -> None:
        self._rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        """Re-seed the generator (None: fresh entropy)."""
        self._rng = np.random.default_rng(seed)

    def act(self, obs: npt.NDArray[np.float32], mask: npt.ArrayLike) -> IntArray:
        _check_obs(obs)
        return apply_dependencies_and_force(mask, self._choose)

    def _choose(self, head: Head, legal: BoolArray) -> int:
        values = np.flatnonzero(legal)
        return int(values[self._rng.integers(len(values))])


class StayAlive(_PreferencePolicy):
    """Survives first: eats, brews and restores when low, otherwise attacks in one fixed style.

    Args:
        style: The attack style it uses whenever that style is legal (default ranged). When it is not
            and an attack is forced (§14.3: "no attack" is illegal while the attack is ready), the lowest
            legal style is used.
        prayer: The protection prayer it raises when none is active.
    """

    name: str = "stay_alive"

    def __init__(
        self, style: AttackHead = AttackHead.RANGED, prayer: PrayerHead = PrayerHead.PROTECT_MELEE
    ) -> None:
        super().__init__()
        if style == AttackHead.NONE:
            raise ValueError("style must be MAGIC, RANGED or MELEE; use NoOp for a passive opponent")
        if prayer not in _PROTECTIONS:
            raise ValueError(
                f"prayer must be a protection prayer {[p.name for p in _PROTECTIONS]}, got {prayer!r}"
            )
        self.style = AttackHead(style)
        self.prayer = PrayerHead(prayer)
        self._static_attack_prefs = {
            Head.MELEE_ATTACK_TYPE: (MeleeType.NORMAL,),
            Head.RANGED_ATTACK_TYPE: (RangedType.NORMAL,),
            Head.MAGE_ATTACK_TYPE: (MageType.ICE, MageType.BLOOD),
        }

    def _plan(self, obs: npt.NDArray[np.float32], mask: BoolArray) -> None:
        prefs = self._prefs
        low = bool(obs[Obs.PLAYER_HEALTH_PERCENT] < EAT_BELOW_HP_FRACTION)
        prefs[Head.ATTACK] = (AttackHead.NONE, self.style) if low else (self.style, AttackHead.NONE)
        for head, values in self._static_attack_prefs.items():
            prefs[head] = values
        prefs[Head.POTION] = self._potion_prefs(obs)
        prefs[Head.FOOD] = (FoodHead.EAT,) if low else ()
        prefs[Head.KARAMBWAN] = (KarambwanHead.EAT,) if low else ()
        prefs[Head.VENG] = ()
        prefs[Head.PRAYER] = self._prayer_prefs(obs)

    def _potion_prefs(self, obs: npt.NDArray[np.float32]) -> Prefs:
        if obs[Obs.PLAYER_HEALTH_PERCENT] < BREW_BELOW_HP_FRACTION:
            return (PotionHead.BREW,)
        if obs[Obs.PRAYER_POINTS] < RESTORE_BELOW_PRAYER_FRACTION:
            return (PotionHead.RESTORE,)
        return ()

    def _prayer_prefs(self, obs: npt.NDArray[np.float32]) -> Prefs:
        """Re-select the active protection (re-selecting is how a prayer is kept, §14.3), else raise one."""
        active = _active_protection(obs)
        if active is not None:
            return (active, self.prayer, *_PROTECTIONS)
        return (self.prayer, *_PROTECTIONS)


class PrayerSwitcher(StayAlive):
    """`StayAlive` that prays against the opponent's visible weapon style (entries 12–14).

    Protect from Magic / Missiles / Melee against a staff / ranged weapon / anything else; when that
    prayer is masked (e.g. Protect from Melee while nobody can reach melee distance, §14.3) it keeps
    its current protection.
    """

    name: str = "prayer_switcher"

    def _prayer_prefs(self, obs: npt.NDArray[np.float32]) -> Prefs:
        wanted = _protection_against_target(obs)
        if wanted is None:
            return super()._prayer_prefs(obs)
        active = _active_protection(obs)
        return (wanted, active, *_PROTECTIONS) if active is not None else (wanted, *_PROTECTIONS)


class Tribrid(PrayerSwitcher):
    """An NH "tribrid" bot built from the observation alone.

    * Prays against the opponent's weapon style (as `PrayerSwitcher`).
    * Attacks with a style the opponent is not protecting against (entries 16–18), preferring, in
      order: a special attack when the target's HP fraction (entry 11) is low and a special of an
      unprotected style is legal (the mask encodes the energy check, §14.3); Ice spells when the target
      is neither frozen nor immune (entries 30, 32); then ranged, melee when in melee distance
      (entry 33), magic, melee. While its attack is still cooling down it chooses no attack, so that
      tank gear is forced whenever the opponent can hit (§14.2).
    * Eats, brews and restores like `StayAlive`, also restores Magic drained by brews, keeps Ranged and
      Strength boosted, and casts Vengeance whenever it is legal.
    """

    name: str = "tribrid"

    def _plan(self, obs: npt.NDArray[np.float32], mask: BoolArray) -> None:
        super()._plan(obs, mask)
        prefs = self._prefs
        unprotected = {
            AttackHead.MAGIC: not obs[Obs.TARGET_MAGIC_PRAYER],
            AttackHead.RANGED: not obs[Obs.TARGET_RANGED_PRAYER],
            AttackHead.MELEE: not obs[Obs.TARGET_MELEE_PRAYER],
        }
        spec_time = bool(obs[Obs.TARGET_HEALTH_PERCENT] <= SPEC_BELOW_TARGET_HP_FRACTION)
        freeze_time = bool(obs[Obs.TARGET_FROZEN_TICKS] <= 0 and obs[Obs.TARGET_FROZEN_IMMUNITY_TICKS] <= 0)
        hp = obs[Obs.PLAYER_HEALTH_PERCENT]

        styles: list[int] = []
        if obs[Obs.ATTACK_CYCLE_TICKS] > ATTACK_PREPARE_TICKS:
            styles.append(AttackHead.NONE)
        if spec_time:
            for style, spec_logit in (
                (AttackHead.MELEE, _MELEE_SPEC),
                (AttackHead.RANGED, _RANGED_SPEC),
                (AttackHead.MAGIC, _MAGE_SPEC),
            ):
                if unprotected[style] and mask[spec_logit]:
                    styles.append(style)
        if freeze_time and unprotected[AttackHead.MAGIC] and mask[_MAGE_ICE]:
            styles.append(AttackHead.MAGIC)
        in_melee_distance = bool(obs[Obs.PLAYER_LOCATION_CAN_MELEE])
        for style in (AttackHead.RANGED, AttackHead.MELEE, AttackHead.MAGIC):
            if unprotected[style] and (style != AttackHead.MELEE or in_melee_distance):
                styles.append(style)
        if unprotected[AttackHead.MELEE]:
            styles.append(AttackHead.MELEE)
        styles.append(AttackHead.NONE)
        prefs[Head.ATTACK] = tuple(styles)

        prefs[Head.MELEE_ATTACK_TYPE] = (
            (MeleeType.SPECIAL, MeleeType.NORMAL) if spec_time else (MeleeType.NORMAL,)
        )
        prefs[Head.RANGED_ATTACK_TYPE] = (
            (RangedType.SPECIAL, RangedType.NORMAL) if spec_time else (RangedType.NORMAL,)
        )
        mage: list[int] = [MageType.SPECIAL] if spec_time else []
        if freeze_time:
            mage.append(MageType.ICE)
        mage += (MageType.BLOOD, MageType.ICE) if hp < 1.0 else (MageType.ICE, MageType.BLOOD)
        prefs[Head.MAGE_ATTACK_TYPE] = tuple(mage)
        prefs[Head.VENG] = (VengHead.CAST,)

    def _potion_prefs(self, obs: npt.NDArray[np.float32]) -> Prefs:
        potions: list[int] = list(super()._potion_prefs(obs))
        if obs[Obs.PRAYER_POINTS] < RESTORE_BELOW_PRAYER_FRACTION or (
            obs[Obs.MAGIC_LEVEL] < RESTORE_BELOW_MAGIC_FRACTION
        ):
            potions.append(PotionHead.RESTORE)
        if obs[Obs.RANGED_LEVEL] < BOOST_BELOW_LEVEL_FRACTION:
            potions.append(PotionHead.RANGING)
        if obs[Obs.STRENGTH_LEVEL] < BOOST_BELOW_LEVEL_FRACTION:
            potions.append(PotionHead.COMBAT)
        return tuple(potions)


def _active_protection(obs: npt.NDArray[np.float32]) -> PrayerHead | None:
    """The protection prayer the observer has on (entries 5–7), if any."""
    if obs[Obs.PLAYER_MAGIC_PRAYER]:
        return PrayerHead.PROTECT_MAGIC
    if obs[Obs.PLAYER_RANGED_PRAYER]:
        return PrayerHead.PROTECT_MISSILES
    if obs[Obs.PLAYER_MELEE_PRAYER]:
        return PrayerHead.PROTECT_MELEE
    return None


def _protection_against_target(obs: npt.NDArray[np.float32]) -> PrayerHead | None:
    """The protection matching the opponent's visible weapon style (entries 12–14), if any is set."""
    if obs[Obs.TARGET_USING_MAGE]:
        return _PROTECT_AGAINST[AttackHead.MAGIC]
    if obs[Obs.TARGET_USING_RANGED]:
        return _PROTECT_AGAINST[AttackHead.RANGED]
    if obs[Obs.TARGET_USING_MELEE]:
        return _PROTECT_AGAINST[AttackHead.MELEE]
    return None


LADDER: dict[str, Callable[[], ScriptedPolicy]] = {
    NoOp.name: NoOp,
    RandomLegal.name: RandomLegal,
    StayAlive.name: StayAlive,
    PrayerSwitcher.name: PrayerSwitcher,
    Tribrid.name: Tribrid,
}
"""Scripted opponents by name, ordered weakest to strongest."""


def make_opponent(name: str, seed: int | None = None) -> ScriptedPolicy:
    """Build the ladder opponent `name` and reset it with `seed`.

    Raises:
        ValueError: `name` is not in `LADDER` (the message lists the valid names).
    """
    try:
        factory = LADDER[name]
    except KeyError:
        raise ValueError(
            f"unknown scripted opponent {name!r}; valid names, weakest to strongest: {', '.join(LADDER)}"
        ) from None
    policy = factory()
    policy.reset(seed)
    return policy
