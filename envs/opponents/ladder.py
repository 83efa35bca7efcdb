"""Scripted opponents of increasing strength, acting through the agent's own action interface.

Unlike the reference baseline of spec §18, which calls game operations directly, these opponents see
exactly what a policy sees — their own 176-entry observation (§15) and the 45-entry environment mask
(§14.3) — and produce a 12-head action that goes through `apply_dependencies_and_force` (§14.2). They
can therefore sit in any seat a policy can (self-play league, evaluation, smoke tests), and they can
never send an action that violates the mask or the head dependencies: the forcing step guarantees it.

The hand-written rungs (`envs.opponents.registry.LADDER` lists them with the graded NH levels of
`envs.opponents.nh_ladder`, in their measured order, docs/strength.md):

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

from dataclasses import dataclass
from enum import IntEnum
from typing import Any, Protocol, runtime_checkable

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
    needs_opponent_action: bool
    """True for a prescient player: `act` must get the other seat's action of the tick (hosts that cannot
    give it refuse such a player, see `envs.opponents.nh_ladder`)."""

    def reset(self, seed: int | None) -> None:
        """Start a new episode; `seed` seeds any randomness the policy uses."""
        ...

    def act(
        self, obs: npt.NDArray[np.float32], mask: npt.ArrayLike, opponent_action: npt.ArrayLike | None = None
    ) -> IntArray:
        """Return the 12 head values (int64) for this tick, legal under `mask` and §14.2.

        `opponent_action` is the other seat's action of the tick, given only to players that
        `needs_opponent_action`; honest players never get it.
        """
        ...


def _check_obs(obs: npt.NDArray[np.float32]) -> None:
    shape = obs.shape if isinstance(obs, np.ndarray) else np.shape(obs)
    if shape != (OBS_SIZE,):
        raise ValueError(f"observation must have shape ({OBS_SIZE},) (spec §15.2), got {np.shape(obs)}")


def _refuse_opponent_action(name: str, opponent_action: object) -> None:
    """Honest players must not see the other seat's action (only a prescient one may)."""
    if opponent_action is not None:
        raise ValueError(f"{name!r} is an honest player and must not be given the opponent's action")


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


class _Plain:
    """Plain-int copy of an IntEnum's members for the per-tick rules below.

    Reading `Enum.MEMBER` runs a Python-level descriptor on Python 3.11 (~130 ns), a plain attribute
    ~30 ns; the rules read dozens per tick. The values are the same integers.
    """

    def __init__(self, enum: type[IntEnum]) -> None:
        for member in enum:
            setattr(self, member.name, int(member))


_O: Any = _Plain(Obs)
_H: Any = _Plain(Head)
_A: Any = _Plain(AttackHead)


@dataclass(frozen=True, slots=True)
class _Thresholds:
    """The rule thresholds rounded to the observation's precision.

    The rules read the observation as a list of Python floats (one `tolist()` instead of a numpy scalar
    per entry), but numpy compares an array element with a Python float in the element's precision
    (NEP 50): a float32 entry equal to float32(0.9) is *not* below 0.9. Rounding the thresholds to the
    observation's dtype keeps every comparison exactly as numpy made it.
    """

    eat: float
    brew: float
    restore_prayer: float
    restore_magic: float
    boost: float
    spec: float


_THRESHOLDS: dict[np.dtype[Any], _Thresholds] = {}


def _thresholds(dtype: np.dtype[Any]) -> _Thresholds:
    th = _THRESHOLDS.get(dtype)
    if th is None:
        def r(x: float) -> float:
            return float(np.asarray(x, dtype=dtype)) if np.issubdtype(dtype, np.floating) else x

        th = _Thresholds(
            r(EAT_BELOW_HP_FRACTION),
            r(BREW_BELOW_HP_FRACTION),
            r(RESTORE_BELOW_PRAYER_FRACTION),
            r(RESTORE_BELOW_MAGIC_FRACTION),
            r(BOOST_BELOW_LEVEL_FRACTION),
            r(SPEC_BELOW_TARGET_HP_FRACTION),
        )
        _THRESHOLDS[dtype] = th
    return th


class _PreferencePolicy:
    """Base of the rule-based policies: `_plan` fills one tuple of preferred values per head."""

    name: str = ""
    needs_opponent_action: bool = False

    def __init__(self) -> None:
        self._prefs: list[Prefs] = [()] * NUM_HEADS
        self._th = _thresholds(np.dtype(np.float32))

    def reset(self, seed: int | None = None) -> None:
        """Rule-based policies keep no episode state and draw nothing."""

    def act(
        self, obs: npt.NDArray[np.float32], mask: npt.ArrayLike, opponent_action: npt.ArrayLike | None = None
    ) -> IntArray:
        _refuse_opponent_action(self.name, opponent_action)
        _check_obs(obs)
        env_mask = np.asarray(mask, dtype=np.bool_)
        if env_mask.shape != (NUM_LOGITS,):
            raise ValueError(f"action mask must have shape ({NUM_LOGITS},) (§14.2), got {env_mask.shape}")
        values = np.asarray(obs)
        self._th = _thresholds(values.dtype)
        self._plan(values.tolist(), env_mask)
        return apply_dependencies_and_force(env_mask, self._choose)

    def _plan(self, obs: list[float], mask: BoolArray) -> None:
        """Set `self._prefs[head]` for this tick. Heads left at `()` take their lowest legal value.

        `obs` is the observation as a Python list; compare it with `self._th`'s thresholds only.
        """

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
    needs_opponent_action: bool = False

    def __init__(self, seed: int | None = None) -> None:
        self._rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        """Re-seed the generator (None: fresh entropy)."""
        self._rng = np.random.default_rng(seed)

    def act(
        self, obs: npt.NDArray[np.float32], mask: npt.ArrayLike, opponent_action: npt.ArrayLike | None = None
    ) -> IntArray:
        _refuse_opponent_action(self.name, opponent_action)
        _check_obs(obs)
        return apply_dependencies_and_force(mask, self._choose)

    def _choose(self, head: Head, legal: BoolArray) -> int:
        values = [v for v, ok in enumerate(legal.tolist()) if ok]  # np.flatnonzero, without its overhead
        return values[self._rng.integers(len(values))]


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
        self._static_attack_prefs: tuple[tuple[int, Prefs], ...] = (
            (Head.MELEE_ATTACK_TYPE, (MeleeType.NORMAL,)),
            (Head.RANGED_ATTACK_TYPE, (RangedType.NORMAL,)),
            (Head.MAGE_ATTACK_TYPE, (MageType.ICE, MageType.BLOOD)),
        )

    def _plan(self, obs: list[float], mask: BoolArray) -> None:
        prefs = self._prefs
        low = obs[_O.PLAYER_HEALTH_PERCENT] < self._th.eat
        prefs[_H.ATTACK] = (_A.NONE, self.style) if low else (self.style, _A.NONE)
        for head, values in self._static_attack_prefs:
            prefs[head] = values
        prefs[_H.POTION] = self._potion_prefs(obs)
        prefs[_H.FOOD] = _EAT if low else ()
        prefs[_H.KARAMBWAN] = _EAT_KARAMBWAN if low else ()
        prefs[_H.VENG] = ()
        prefs[_H.PRAYER] = self._prayer_prefs(obs)

    def _potion_prefs(self, obs: list[float]) -> Prefs:
        if obs[_O.PLAYER_HEALTH_PERCENT] < self._th.brew:
            return _BREW
        if obs[_O.PRAYER_POINTS] < self._th.restore_prayer:
            return _RESTORE
        return ()

    def _prayer_prefs(self, obs: list[float]) -> Prefs:
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

    def _prayer_prefs(self, obs: list[float]) -> Prefs:
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

    def _plan(self, obs: list[float], mask: BoolArray) -> None:
        super()._plan(obs, mask)
        prefs = self._prefs
        unprotected = {
            _A.MAGIC: not obs[_O.TARGET_MAGIC_PRAYER],
            _A.RANGED: not obs[_O.TARGET_RANGED_PRAYER],
            _A.MELEE: not obs[_O.TARGET_MELEE_PRAYER],
        }
        spec_time = obs[_O.TARGET_HEALTH_PERCENT] <= self._th.spec
        freeze_time = obs[_O.TARGET_FROZEN_TICKS] <= 0 and obs[_O.TARGET_FROZEN_IMMUNITY_TICKS] <= 0
        hp = obs[_O.PLAYER_HEALTH_PERCENT]

        styles: list[int] = []
        if obs[_O.ATTACK_CYCLE_TICKS] > ATTACK_PREPARE_TICKS:
            styles.append(_A.NONE)
        if spec_time:
            for style, spec_logit in _SPECIAL_LOGITS:
                if unprotected[style] and mask[spec_logit]:
                    styles.append(style)
        if freeze_time and unprotected[_A.MAGIC] and mask[_MAGE_ICE]:
            styles.append(_A.MAGIC)
        in_melee_distance = bool(obs[_O.PLAYER_LOCATION_CAN_MELEE])
        for style in _STYLE_ORDER:
            if unprotected[style] and (style != _A.MELEE or in_melee_distance):
                styles.append(style)
        if unprotected[_A.MELEE]:
            styles.append(_A.MELEE)
        styles.append(_A.NONE)
        prefs[_H.ATTACK] = tuple(styles)

        prefs[_H.MELEE_ATTACK_TYPE] = _MELEE_SPECIAL_FIRST if spec_time else _MELEE_NORMAL
        prefs[_H.RANGED_ATTACK_TYPE] = _RANGED_SPECIAL_FIRST if spec_time else _RANGED_NORMAL
        mage: list[int] = [MageType.SPECIAL] if spec_time else []
        if freeze_time:
            mage.append(MageType.ICE)
        mage += (MageType.BLOOD, MageType.ICE) if hp < 1.0 else (MageType.ICE, MageType.BLOOD)
        prefs[_H.MAGE_ATTACK_TYPE] = tuple(mage)
        prefs[_H.VENG] = _CAST

    def _potion_prefs(self, obs: list[float]) -> Prefs:
        potions: list[int] = list(super()._potion_prefs(obs))
        th = self._th
        if obs[_O.PRAYER_POINTS] < th.restore_prayer or obs[_O.MAGIC_LEVEL] < th.restore_magic:
            potions.append(PotionHead.RESTORE)
        if obs[_O.RANGED_LEVEL] < th.boost:
            potions.append(PotionHead.RANGING)
        if obs[_O.STRENGTH_LEVEL] < th.boost:
            potions.append(PotionHead.COMBAT)
        return tuple(potions)


# preference tuples that do not depend on the tick, built once
_EAT: Prefs = (FoodHead.EAT,)
_EAT_KARAMBWAN: Prefs = (KarambwanHead.EAT,)
_BREW: Prefs = (PotionHead.BREW,)
_RESTORE: Prefs = (PotionHead.RESTORE,)
_CAST: Prefs = (VengHead.CAST,)
_MELEE_SPECIAL_FIRST: Prefs = (MeleeType.SPECIAL, MeleeType.NORMAL)
_MELEE_NORMAL: Prefs = (MeleeType.NORMAL,)
_RANGED_SPECIAL_FIRST: Prefs = (RangedType.SPECIAL, RangedType.NORMAL)
_RANGED_NORMAL: Prefs = (RangedType.NORMAL,)
_SPECIAL_LOGITS = ((_A.MELEE, _MELEE_SPEC), (_A.RANGED, _RANGED_SPEC), (_A.MAGIC, _MAGE_SPEC))
"""Tribrid: the special of each style in its order of preference, with its mask logit."""
_STYLE_ORDER = (_A.RANGED, _A.MELEE, _A.MAGIC)
"""Tribrid: the plain styles in order of preference."""


def _active_protection(obs: list[float]) -> PrayerHead | None:
    """The protection prayer the observer has on (entries 5–7), if any."""
    if obs[_O.PLAYER_MAGIC_PRAYER]:
        return _PROTECT_MAGIC
    if obs[_O.PLAYER_RANGED_PRAYER]:
        return _PROTECT_MISSILES
    if obs[_O.PLAYER_MELEE_PRAYER]:
        return _PROTECT_MELEE
    return None


def _protection_against_target(obs: list[float]) -> PrayerHead | None:
    """The protection matching the opponent's visible weapon style (entries 12–14), if any is set."""
    if obs[_O.TARGET_USING_MAGE]:
        return _PROTECT_MAGIC
    if obs[_O.TARGET_USING_RANGED]:
        return _PROTECT_MISSILES
    if obs[_O.TARGET_USING_MELEE]:
        return _PROTECT_MELEE
    return None


_PROTECT_MAGIC = _PROTECT_AGAINST[AttackHead.MAGIC]
_PROTECT_MISSILES = _PROTECT_AGAINST[AttackHead.RANGED]
_PROTECT_MELEE = _PROTECT_AGAINST[AttackHead.MELEE]
