"""Settings of the league, as one frozen pydantic dataclass (mirrors `policies/network_config.py`).

It imports no Ray, so the application's config schema embeds it as the ``league`` section; the kind
names and PFSP weightings it validates against come from `league.sampling`. Each field's check is its type
(`common.validation`: the style and wording every config shares); the mix has a validator of its own.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from types import MappingProxyType
from typing import Annotated, Any

from pydantic import ConfigDict, Field, PlainValidator, Strict
from pydantic.dataclasses import dataclass

from common.suggest import closest
from common.validation import (
    Count,
    Flag,
    Invalid,
    KeyedError,
    Number,
    PositiveCount,
    PositiveNumber,
    Probability,
    choice,
    describe,
    expect,
    from_mapping,
    is_number,
    one_of,
    positive_count_or_null,
)
from league.exploiters import RESET_TARGETS
from league.players import SCRIPTED_PREFIX, TARGET_PREFIX
from league.sampling import CURRENT_MAIN, OPPONENT_KINDS, PFSP, PFSP_WEIGHTINGS, PRIORITIZED, SELF_PLAY

DEFAULT_OPPONENT_MIX: Mapping[str, float] = MappingProxyType({SELF_PLAY: 0.5, PRIORITIZED: 0.3, PFSP: 0.2})
"""Main's default mix: half pure self-play (OpenAI Five used 80 %), the rest spread over past selves."""
MAIN_MIX_KINDS: tuple[str, ...] = tuple(k for k in OPPONENT_KINDS if k != CURRENT_MAIN)
"""Kinds main's mix may use (``main`` would be self-play again)."""


class LeagueConfigError(KeyedError):
    """A league setting is unknown or invalid; `key` names it."""


_Limit = positive_count_or_null("no limit")
_SnapshotInterval = positive_count_or_null("no snapshots of main")
_MainShare = Annotated[
    Annotated[float, Strict(), Field(gt=0, lt=1)] | None,
    expect("a number in (0, 1), or null (every learner an equal share)"),
]


def _check_mix(values: Any) -> Mapping[str, float]:
    """Check every key and share of the mix; returns a read-only copy with float shares."""
    if isinstance(values, Mapping):
        items = list(values.items())
    elif isinstance(values, list | tuple) and all(isinstance(x, list | tuple) and len(x) == 2 for x in values):
        items = [tuple(x) for x in values]
    else:
        raise Invalid(f"got {describe(values)}", "a mapping of kind to share")
    for kind, share in items:
        fixed_id = isinstance(kind, str) and kind.startswith((SCRIPTED_PREFIX, TARGET_PREFIX))
        if kind not in MAIN_MIX_KINDS and not fixed_id:
            raise Invalid(
                "unknown opponent kind",
                f"{one_of(MAIN_MIX_KINDS)}, or a fixed player id ('scripted_<name>', 'target_<slug>')",
                field=str(kind),
                suggestion=closest(kind, MAIN_MIX_KINDS),
            )
        if not is_number(share) or share < 0:
            raise Invalid(f"got {describe(share)}", "a share ≥ 0", field=str(kind))
    if not any(share > 0 for _, share in items):
        raise Invalid(f"every share is zero ({dict(items)})", "one kind with a share > 0")
    return MappingProxyType({str(k): float(v) for k, v in items})


@dataclass(frozen=True, config=ConfigDict(extra="forbid", allow_inf_nan=False))
class LeagueConfig:
    """How the league grows, whom the learners play, and how results are rated (see `docs/league.md`)."""

    snapshot_interval: _SnapshotInterval = 10
    """Training iterations between two snapshots of main (its first one is taken at this iteration); null = main
    is never snapshotted (an exploit run: nothing plays past exploiters, so their snapshots would only cost)."""
    opponent_mix: Annotated[Mapping[str, float], PlainValidator(_check_mix), Field(exclude=True)] = dataclasses.field(
        default_factory=lambda: DEFAULT_OPPONENT_MIX, hash=False
    )
    """Main's opponent mix, kind → share (normalised; read-only). Kinds: `OPPONENT_KINDS` except ``main``, or
    one fixed player id; a kind with nobody to offer yet is skipped."""
    eta: PositiveNumber = 0.01
    """Quality learning rate η of prioritized past-self sampling (OpenAI Five)."""
    pfsp_weighting: Annotated[str, choice(PFSP_WEIGHTINGS)] = "hard"
    """PFSP weighting: ``hard`` (1−x)^p, ``var`` x(1−x), ``linear`` 1−x or ``linear_capped`` min(½, 1−x)."""
    pfsp_p: PositiveNumber = 2.0
    """Exponent p of the ``hard`` weighting (2 is AlphaStar's ``squared``)."""
    payoff_decay: Annotated[float, Strict(), Field(gt=0, le=1), expect("a number in (0, 1]")] = 0.99
    """Decay applied to a pair's counts before each new game of the pair (1 = plain average)."""
    main_exploiters: Count = 0
    """Number of main exploiters (they play only main)."""
    league_exploiters: Count = 0
    """Number of league exploiters (they play PFSP over every snapshot)."""
    exploiter_win_threshold: Probability = 0.7
    """An exploiter is checkpointed when its mean score over its recent games is above this share."""
    exploiter_min_games: PositiveCount = 100
    """Length of that window of recent games; no win-rate decision before it is full."""
    exploiter_step_budget: _Limit = 5_000_000
    """Env steps after which an exploiter is checkpointed whatever its win rate (null: never)."""
    main_share: _MainShare = None
    """Share of the episodes whose learner is main while exploiters train beside it; the exploiters split the
    rest equally (null: every learner an equal share). Episodes are the learners' one shared budget: drawn
    equally, main's own games were 30 % of a three-learner run's env steps (docs/league.md), so main met its mix
    (the scripted rungs, its past selves) far less than in a one-learner run of the same length."""
    main_learns_from_exploiters: Flag = True
    """Whether main learns from the games the exploiters play against it (main sits in seat 1 of each). True: main
    trains on them too, best-responding to whatever the exploiter found, a cycle in a game of guesses (docs/league.md).
    False: a frozen copy of main, refreshed every iteration, plays them; the exploiter still hunts main's current
    policy (its probe reads the same), and main's updates come from its own mix alone."""
    league_exploiter_reset_probability: Probability = 0.25
    """Chance that a league exploiter is reset after a checkpoint (main exploiters: always)."""
    exploiter_reset_to: Annotated[str, choice(RESET_TARGETS)] = "main"
    """What a reset exploiter starts again from: ``main``, a copy of main's current weights (it begins where main
    is and looks for the nearest weakness), or ``fresh``, newly initialised weights (a seeded draw per reset, the
    observation normaliser's statistics included), the learner `osrs-rllib exploit` measures with."""
    elo_k: PositiveNumber = 32.0
    """Elo K factor."""
    elo_start: Number = 1500.0
    """Elo of a new player (snapshots start at their source's rating instead)."""
    slot_refresh_interval: PositiveCount = 10
    """Training iterations between two redraws of the snapshots in the opponent slots. A fight lasts longer than
    an iteration (nh.yml: ~270 ticks against 128 env steps per environment per iteration), and a fight whose slot
    is refilled before it ends cannot be scored (its opponent changed mid-fight), so redrawing every iteration
    left nearly every game against a snapshot unscored: no quality or payoff update, PFSP uniform. Every 10
    iterations about four in five are scored (`league/games_scored_this_iteration`)."""
    max_snapshots: _Limit = None
    """Cap on frozen snapshots (null: no cap); over it, the lowest-quality snapshot of the learner with the
    most snapshots is evicted, the oldest among equal qualities."""
    seed: Count = 0
    """Seed of the league's own generator (the league-exploiter reset draws)."""
    probe_window: PositiveCount = 200
    """Games between a main exploiter and main in the exploitability probe's rolling window (TensorBoard
    ``league/probe/exploiter_win_rate``): the exploiters' share of those games, never cleared by a checkpoint or a
    reset, so it reads how easy main is to beat for an opponent that studies it, over the whole run."""

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle through `to_dict`: a read-only mix (`MappingProxyType`) cannot be pickled itself."""
        return LeagueConfig.from_dict, (self.to_dict(),)

    @property
    def mix(self) -> dict[str, float]:
        """`opponent_mix` as a mapping."""
        return dict(self.opponent_mix)

    @classmethod
    def from_dict(cls, values: Mapping[str, Any] | None) -> LeagueConfig:
        """Build from a plain mapping (YAML, a checkpoint); unknown keys name the closest valid one."""
        return from_mapping(cls, values, LeagueConfigError)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready mapping (the mix as a mapping); `from_dict(to_dict())` round-trips."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)} | {"opponent_mix": self.mix}
