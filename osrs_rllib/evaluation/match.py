"""One way to play side A against side B: over a plan of fights (builds, fight types), in the seats asked for,
with the result row built once.

Training's evaluation against the scripted opponents (`osrs_rllib.evaluation.policy_fights.evaluate`), the exploiter's
evaluation against a frozen model (`osrs_rllib.evaluation.policy_fights.evaluate_vs_model`, which head-to-head tables
and the league study use too) and the tournament of ``osrs-rllib rate`` (`osrs_rllib.evaluation.rate.play_pair`) all
play through `play_match`, and the two evaluations build their rows with `result_row`. They differ only in what
they pass: who the sides are, the plan, and side A's seat in every fight.

`osrs-rllib fight` (`osrs_rllib.evaluation.fight.run_fights`), the data collection of ``osrs-rllib outcome``
(`osrs_rllib.evaluation.outcome.collect`) and the analysis API (`osrs_rllib.analysis.play`) play through it too, with
one seating for every fight, and watch each tick through `FightHooks` (replays, per-tick rows, observations).

A side is a factory of its seated player (`SideFactory`: seat → an object with ``seat()`` and ``forget``),
or None for the simulator's own baseline, which can only sit in seat 1, or in both seats when both sides are
the baseline (``first_player_baseline``). Fights are grouped by seating, in the
order each seating first appears, and every group is one `play_fights` batch of up to `parallel` fights:
that grouping is part of the result (a batched forward pass), so it is fixed here, for every caller.

Every fight yields a `FightRecord` from side A's point of view (outcome, build, fight type, length and damage
as `EpisodeMetrics` counts them), in the order the fights ended.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from envs.nh.core_engine import AnyEngine
from envs.nh.engine import EngineStep
from envs.nh.loadouts import Build
from envs.nh.params import OPPONENT_AGENT, OPPONENT_BASELINE, FightParams
from envs.nh.sim import Outcome
from osrs_rllib.evaluation.batched import OnAct, OnStart, OnStep, Seat, play_fights
from osrs_rllib.evaluation.episode_metrics import EpisodeMetrics
from osrs_rllib.evaluation.stratified import SplitTally, Tally

ActFn = Callable[[np.ndarray, np.ndarray, bool], np.ndarray]
"""(observations (B, D) float32, masks (B, 45) bool, deterministic) → actions (B, 12) int64."""


class SeatedSide(Protocol):
    """A side as `play_fights` seats it: acts for a batch of live fights and forgets a fight once it ends."""

    def seat(self) -> Seat: ...

    def forget(self, fight_seed: int) -> None: ...


SideFactory = Callable[[int], SeatedSide]
"""Builds a side's player for the given seat (0 or 1)."""


class PolicySide:
    """A policy `ActFn` in a fixed mode (greedy or sampling with the caller's own generator): no per-fight state."""

    def __init__(self, act: ActFn, deterministic: bool, frame_stack: int | Sequence[int] = 1) -> None:
        self.act = act
        self.deterministic = deterministic
        self.frame_stack = frame_stack

    def __call__(self, seat: int) -> PolicySide:
        return self

    def seat(self) -> Seat:
        return Seat(lambda obs, masks, _seeds: self.act(obs, masks, self.deterministic), self.frame_stack)

    def forget(self, fight_seed: int) -> None:
        return None


class SeatedPlayer:
    """A player its caller seats once (its `Seat`, and what it drops when a fight ends) as a side: for callers with
    one seating that watch their own players (`fight`'s replays, `outcome`'s recorded observations)."""

    def __init__(self, seat: Seat, forget: Callable[[int], None] | None = None) -> None:
        self._seat = seat
        self._forget = forget

    def __call__(self, seat: int) -> SeatedPlayer:
        return self

    def seat(self) -> Seat:
        return self._seat

    def forget(self, fight_seed: int) -> None:
        if self._forget is not None:
            self._forget(fight_seed)


@dataclass(frozen=True)
class FightRecord:
    """One fight, from side A's point of view."""

    fight: int
    """Its index in the plan (its simulator seed is the caller's ``seeds[fight]``)."""
    seat: int
    """Side A's seat."""
    build: str
    fight_type: str
    outcomes: tuple[Outcome | None, Outcome | None]
    """Seat 0's and seat 1's outcome (None: truncated, a tie)."""
    ticks: float
    damage_dealt: float
    damage_received: float

    @property
    def outcome(self) -> Outcome | None:
        return self.outcomes[self.seat]


@dataclass(frozen=True)
class FightHooks:
    """What a caller watches of every fight beyond its `FightRecord` (`play_fights`' hooks), each called with the
    fight's index in the plan, whichever seating's batch it ran in."""

    on_start: OnStart | None = None
    on_act: OnAct | None = None
    on_step: OnStep | None = None
    """Called before the fight's record is taken and its players forget it."""


def alternating_seats(fights: int) -> list[int]:
    """Side A's seat in fight k is ``k % 2``: every build of a `spread(..., repeat=2)` plan from both seats."""
    return [k % 2 for k in range(fights)]


def play_match(
    a: SideFactory | None,
    b: SideFactory | None,
    plan: Sequence[FightParams],
    seeds: Sequence[int],
    seats: Sequence[int],
    *,
    parallel: int,
    engine: str = "auto",
    kind: str = "",
    hooks: FightHooks | None = None,
    opponent_observation: bool = False,
) -> list[FightRecord]:
    """Play fight k of `plan` with simulator seed ``seeds[k]`` and side A in seat ``seats[k]``; None as a side is
    the simulator's baseline (seat 1, or both seats when both sides are None). Returns a record per fight, in the
    order the fights ended. `opponent_observation` builds the opponent's observation too (a critic that reads it);
    the simulator draws the same numbers either way.

    Raises:
        ValueError: The lists differ in length, or the baseline would sit in seat 0 facing a player.
    """
    if not len(plan) == len(seeds) == len(seats):
        raise ValueError(f"{len(plan)} fights, {len(seeds)} seeds and {len(seats)} seats: give one of each per fight")
    groups: dict[int, list[int]] = {}
    for k, seat in enumerate(seats):
        groups.setdefault(int(seat), []).append(k)
    records: list[FightRecord] = []
    for seat, ks in groups.items():
        seated = (a, b) if seat == 0 else (b, a)
        if seated[0] is None and seated[1] is not None:
            raise ValueError("the simulator's baseline plays seat 1 only; seat the other side in seat 0")
        watch = (hooks or FightHooks(), opponent_observation)
        records += _play_seated(seated, seat, ks, plan, seeds, parallel, engine, kind, watch)
    return records


def _play_seated(
    seated: tuple[SideFactory | None, SideFactory | None],
    seat_of_a: int,
    ks: list[int],
    plan: Sequence[FightParams],
    seeds: Sequence[int],
    parallel: int,
    engine: str,
    kind: str,
    watch: tuple[FightHooks, bool],
) -> list[FightRecord]:
    """One seating's fights as one `play_fights` batch."""
    hooks, opponent_observation = watch
    options = {
        "opponent": OPPONENT_BASELINE if seated[1] is None else OPPONENT_AGENT,
        "include_opponent_observation": opponent_observation,
        **({"first_player_baseline": True} if seated[0] is None else {}),
    }
    players = [None if factory is None else factory(seat) for seat, factory in enumerate(seated)]
    metrics: dict[int, EpisodeMetrics] = {}
    records: list[FightRecord] = []

    def on_start(fight: int, fight_engine: AnyEngine) -> None:
        metrics[fight] = EpisodeMetrics()
        metrics[fight].reset(fight_engine, kind)
        if hooks.on_start is not None:
            hooks.on_start(ks[fight], fight_engine)

    def on_act(fight: int, fight_engine: AnyEngine, actions: list[np.ndarray | None]) -> None:
        assert hooks.on_act is not None
        hooks.on_act(ks[fight], fight_engine, actions)

    def on_step(fight: int, fight_engine: AnyEngine, step: EngineStep) -> None:
        if hooks.on_step is not None:
            hooks.on_step(ks[fight], fight_engine, step)
        metrics[fight].record(step)
        if not (step.terminated or step.truncated):
            return
        summary = metrics.pop(fight).summary()  # seat 0's view
        dealt, received = summary["damage_dealt"], summary["damage_received"]
        build, fight_type = fight_engine.build, fight_engine.fight_mode
        records.append(
            FightRecord(
                fight=ks[fight],
                seat=seat_of_a,
                build=build.value if isinstance(build, Build) else str(build),
                fight_type=getattr(fight_type, "value", str(fight_type)),
                outcomes=(step.outcomes[0], step.outcomes[1]),
                ticks=summary["fight_ticks"],
                damage_dealt=dealt if seat_of_a == 0 else received,
                damage_received=received if seat_of_a == 0 else dealt,
            )
        )
        for player in players:
            if player is not None:
                player.forget(int(seeds[ks[fight]]))

    play_fights(
        [FightParams.from_options(options, plan[k]) for k in ks],
        [seeds[k] for k in ks],
        *(None if p is None else p.seat() for p in players),
        parallel=max(1, min(parallel, len(ks))),
        on_start=on_start,
        on_step=on_step,
        on_act=None if hooks.on_act is None else on_act,
        engine=engine,
    )
    return records


def result_row(
    records: Sequence[FightRecord],
    *,
    opponent: str,
    mode: str,
    trained: Sequence[Build | str],
    unseen: Sequence[Build | str] = (),
    extra: Mapping[str, Any] | None = None,
    by_seat: bool = False,
    by_member: Mapping[str, Sequence[FightRecord]] | None = None,
) -> dict[str, Any]:
    """The result row of side A (`osrs_rllib.evaluation.policy_fights.EvalResult`'s fields): the headline and the means
    over the `trained` builds, ``by_build`` (unseen builds too) and ``by_fight_type``; `extra` goes after ``mode``
    (an evaluation's rules, a model's mode), ``by_seat`` and ``by_member`` (a mixture's members) at the end."""
    split = SplitTally()
    trained_names = {b.value if isinstance(b, Build) else str(b) for b in trained}
    ticks = dealt = received = 0.0
    for record in records:
        split.add(record.build, record.fight_type, record.outcome)
        if record.build in trained_names:
            ticks += record.ticks
            dealt += record.damage_dealt
            received += record.damage_received
    headline: Tally = split.pooled(trained)
    n = max(1, headline.fights)
    low, high = headline.interval
    row: dict[str, Any] = {
        "opponent": opponent,
        "mode": mode,
        **{k: v for k, v in (extra or {}).items() if k != "rules"},
        "fights": headline.fights,
        "wins": headline.wins,
        "losses": headline.losses,
        "ties": headline.ties,
        "win_rate": headline.win_rate,
        "win_rate_low": low,
        "win_rate_high": high,
        "mean_fight_ticks": ticks / n,
        "mean_damage_dealt": dealt / n,
        "mean_damage_received": received / n,
        "builds": _names(trained),
        "unseen_builds": _names(unseen),
        "by_build": {k: v.to_dict() for k, v in split.by_build.items()},
        "by_fight_type": {k: v.to_dict() for k, v in split.by_fight_type.items()},
    }
    if extra and "rules" in extra:
        row["rules"] = extra["rules"]
    if by_seat:
        row["by_seat"] = {f"seat_{s}": _tally(r for r in records if r.seat == s).to_dict() for s in (0, 1)}
    if by_member is not None:
        row["by_member"] = {name: _tally(rs).to_dict() for name, rs in by_member.items()}
    return row


def _names(builds: Iterable[Build | str]) -> list[str]:
    return [b.value if isinstance(b, Build) else str(b) for b in builds]


def _tally(records: Iterable[FightRecord]) -> Tally:
    tally = Tally()
    for record in records:
        tally.add(record.outcome)
    return tally
