"""Fights spread evenly over builds and fight types, and results split by them.

Why this exists: an agent's strength is only known per build. A win rate pooled over fights whose builds
nobody counted can hide that every fight was one build (once, every training and evaluation fight of the
main job was LMS_PURE while it claimed six builds). Evaluation, `osrs-rllib fight` and `osrs-rllib rate`
therefore *assign* builds and fight types to fights (stratified, not drawn: equal counts per build make the
per-build intervals as tight as the fight count allows) and *tally* results by the build and fight type each
fight actually had, read back from the simulator rather than from the plan.

Example:
    >>> from envs.nh.params import FightParams
    >>> base = FightParams.from_options({"randomize_build": True, "random_build_options": ["PURE", "MED"]})
    >>> [p.account_build.name for p in spread(base, 4)]
    ['PURE', 'MED', 'PURE', 'MED']
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from common.stats import wilson_interval
from envs.nh.loadouts import Build
from envs.nh.params import FightParams, ParamError
from envs.nh.sim import Outcome
from envs.nh.state import FightMode

FIGHT_TYPES: tuple[FightMode, ...] = (FightMode.NORMAL, FightMode.LMS, FightMode.PVP_ARENA)
"""The fight modes `randomize_fight_type` draws from (spec §13.1), in the order of its draw."""

ALL_BUILDS = "all"
"""`parse_builds` keyword for every build of spec §12."""


def trained_builds(params: FightParams) -> tuple[Build, ...]:
    """The builds a policy trained with `params` fights: the drawable options, or the one fixed build."""
    if not params.randomize_build:
        return (params.account_build,)
    weights = params.random_build_weights or (1.0,) * len(params.random_build_options)
    return tuple(b for b, w in zip(params.random_build_options, weights, strict=True) if w > 0)


def parse_builds(text: str) -> tuple[Build, ...]:
    """``PURE``, ``PURE,MED`` or ``all`` (case-insensitive) as builds, in the order given.

    Raises:
        ParamError: An unknown build name (the message lists the valid ones) or a build named twice.
    """
    if text.strip().lower() == ALL_BUILDS:
        return tuple(Build)
    names = [t.strip().upper() for t in text.split(",") if t.strip()]
    valid = [b.name for b in Build]
    bad = [n for n in names if n not in valid]
    if bad or not names:
        raise ParamError(f"invalid build {bad[0] if bad else text!r}; valid: {', '.join(valid)} or '{ALL_BUILDS}'")
    if len(set(names)) != len(names):
        raise ParamError(f"{text!r} names a build twice")
    return tuple(Build[n] for n in names)


def spread(base: FightParams, n: int, builds: Sequence[Build] | None = None, repeat: int = 1) -> list[FightParams]:
    """Parameters of `n` fights: fight k plays ``builds[(k // repeat) % len(builds)]`` and, when `base`
    randomises the fight type, ``FIGHT_TYPES[(k // (repeat * len(builds))) % 3]``, so every build meets every
    fight type equally often.

    `builds` defaults to `trained_builds(base)`. `repeat` keeps runs of fights on one build (a tournament
    alternating seats uses 2, so that each build is played from both seats). Everything else (gear
    randomisation, spawns, masks) stays as in `base` and is drawn from each fight's seed as usual.
    """
    chosen = tuple(builds) if builds else trained_builds(base)
    out = []
    for k in range(n):
        block = k // repeat
        changes: dict[str, Any] = {"randomize_build": False, "account_build": chosen[block % len(chosen)]}
        if base.randomize_fight_type:
            changes["randomize_fight_type"] = False
            changes["fight_type"] = FIGHT_TYPES[(block // len(chosen)) % len(FIGHT_TYPES)]
        out.append(dataclasses.replace(base, **changes))
    return out


@dataclass
class Tally:
    """Wins, losses and ties of some fights, with the win rate's 95 % Wilson interval."""

    wins: int = 0
    losses: int = 0
    ties: int = 0

    @property
    def fights(self) -> int:
        return self.wins + self.losses + self.ties

    @property
    def win_rate(self) -> float:
        return self.wins / self.fights if self.fights else 0.0

    @property
    def interval(self) -> tuple[float, float]:
        return wilson_interval(self.wins, self.fights)

    def add(self, outcome: Outcome | None) -> None:
        """One fight from the tallied side's view; None (truncated) is a tie."""
        if outcome is Outcome.WON:
            self.wins += 1
        elif outcome is Outcome.LOST:
            self.losses += 1
        else:
            self.ties += 1

    def to_dict(self) -> dict[str, Any]:
        low, high = self.interval
        return {
            "fights": self.fights,
            "wins": self.wins,
            "losses": self.losses,
            "ties": self.ties,
            "win_rate": self.win_rate,
            "win_rate_low": low,
            "win_rate_high": high,
        }


@dataclass
class SplitTally:
    """Results split by build and by fight type, as the simulator reported them (not as planned)."""

    by_build: dict[str, Tally] = field(default_factory=dict)
    by_fight_type: dict[str, Tally] = field(default_factory=dict)

    def add(self, build: Build | str, fight_type: FightMode | str, outcome: Outcome | None) -> None:
        b = build.value if isinstance(build, Build) else str(build)
        t = fight_type.value if isinstance(fight_type, FightMode) else str(fight_type)
        self.by_build.setdefault(b, Tally()).add(outcome)
        self.by_fight_type.setdefault(t, Tally()).add(outcome)

    def pooled(self, builds: Iterable[Build | str]) -> Tally:
        """The listed builds' fights as one tally (its interval is the headline's when counts are equal)."""
        total = Tally()
        for b in builds:
            tally = self.by_build.get(b.value if isinstance(b, Build) else str(b))
            if tally is not None:
                total.wins += tally.wins
                total.losses += tally.losses
                total.ties += tally.ties
        return total

    def to_dict(self) -> dict[str, Any]:
        return {
            "by_build": {k: v.to_dict() for k, v in self.by_build.items()},
            "by_fight_type": {k: v.to_dict() for k, v in self.by_fight_type.items()},
        }


def format_split(split: dict[str, Any], unseen: Iterable[str] = ()) -> str:
    """One line of per-build and per-fight-type win rates, for terminals and logs."""
    unseen = set(unseen)
    parts = [
        f"{name}{' (unseen)' if name in unseen else ''} {row['win_rate']:.0%}"
        for name, row in split.get("by_build", {}).items()
    ]
    types = [f"{name} {row['win_rate']:.0%}" for name, row in split.get("by_fight_type", {}).items()]
    return " ".join(parts) + (" | " + " ".join(types) if types else "")
