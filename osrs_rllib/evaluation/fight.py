"""Head-to-head fights between two named sides, summarised with a confidence interval.

A *side* is the in-simulator scripted baseline of spec §18 (``"baseline"``), a scripted ladder
opponent (`envs.opponents.LADDER`, weakest to strongest as measured in docs/strength.md: the hand-written
rungs and the graded NH levels ``novice`` … ``expert``, then ``prescient``, an upper bound that is shown its
opponent's action and so cannot face the baseline) or a trained policy's model file (``*.nhmodel``, e.g.
``experiments/nh/models/best.nhmodel``, deterministic actions). Side A is player 0 and side B player 1,
with two exceptions forced by the simulator, whose baseline can only sit in seat 1:

* A is ``baseline`` and B is not: the seats are swapped (B plays player 0) and every result is
  mirrored back to A's point of view.
* Both are ``baseline``: player 0 is a baseline too (``first_player_baseline``). Two baselines stay
  idle until one is hit (§18.2), so such fights normally end tied by truncation.

When a side is a model file, the fights follow the rules it was trained under (its training config's mask
options and ``death_match``, `policies.fight_rules`) unless the options set them; two model files trained under
different rules are refused until the options choose. Scripted-only fights use the spec's defaults. The
summary says which rules were used (`FightSummary.rules`).

Every figure in `FightSummary` is from side A's point of view. Fight ``k`` (0-based) uses the seed
``seed + k`` for the simulator, and each side's policy is seeded from ``(seed + k, seat)``, so a run
is reproducible from its arguments alone, whatever the number of fights played at once.

The fights are played by `osrs_rllib.evaluation.match.play_match`, the one way to play two sides that evaluation, `rate`
and the analysis API use as well, with side A in the same seat in every fight; this module only names the sides,
watches the fights (replays, stops) and sums up. It reads only what both engines
give (`tick`, `build`, `fight_mode`, `hitsplats(i)`), so it runs on the compiled core by default (``engine``:
``auto``); the summary, and the replays it records, are the same on both engines.

Example:
    >>> s = run_fights("random", "baseline", n=20, seed=0)  # doctest: +SKIP
    >>> s.wins + s.losses + s.ties == s.n
    True
"""

from __future__ import annotations

import dataclasses
import logging
import os
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from common.stats import CONFIDENCE_Z as CONFIDENCE_Z  # its old address
from common.stats import wilson_interval
from envs.nh.core_engine import AnyEngine, check_engine
from envs.nh.engine import EngineStep
from envs.nh.loadouts import Build
from envs.nh.params import OPPONENT_AGENT, OPPONENT_BASELINE, FightParams
from envs.nh.sim import Outcome
from envs.opponents import LADDER, needs_opponent_action
from osrs_rllib.evaluation.batched import LadderSeat, Seat, SeatNoise, seat_seed
from osrs_rllib.evaluation.match import FightHooks, SeatedPlayer, SeatedSide, SideFactory, play_match
from policies.fight_rules import FightRules, fight_rules_of, resolve_fight_rules
from policies.mixture_draw import fight_member, fight_members
from policies.torch_threads import torch_threads

logger = logging.getLogger(__name__)

BASELINE = OPPONENT_BASELINE
"""Name of the in-simulator scripted baseline of spec §18 as a side."""


RESERVED_OPTIONS = frozenset({"opponent", "first_player_baseline"})
"""Reset options that the choice of sides sets; passing them as options is an error."""

MODEL_SUFFIX = ".nhmodel"

SideSeat = SeatedSide
"""A side as `play_fights` seats it (`osrs_rllib.evaluation.match.SeatedSide`); a `SideFactory` builds one per seat, its
policies seeded from the fight seed and the seat."""


class ModelSide:
    """A model file (see `policies/model_file.py`) acting for every live fight in one forward pass; deterministic
    by default. Stochastic draws come from one generator per fight, seeded from (fight seed, seat), one torch
    seed per tick, so a fight's actions do not depend on which other fights share its batch. A per-fight mixture
    plays each fight with the member its seed draws (`policies.mixture_draw.fight_member`)."""

    def __init__(self, path: str | Any, seat: int, deterministic: bool = True) -> None:
        """`path`: a model file's path, or an already loaded `ModelFile` (named ``model`` then)."""
        from policies.model_file import load_model_file

        self.name = path if isinstance(path, str) else "model"
        self.model = load_model_file(path) if isinstance(path, str) else path
        self.deterministic = deterministic
        self._seat = seat
        self._noise = SeatNoise(seat)

    def __call__(self, obs: np.ndarray, masks: np.ndarray, seeds: Sequence[int]) -> np.ndarray:
        noise = None if self.deterministic else self._noise.draw(seeds)
        members = fight_members(seeds, self.model.member_count) if self.model.member_count > 1 else None
        return self.model.act(obs, masks.astype(np.float32), self.deterministic, noise=noise, members=members)

    def seat(self) -> Seat:
        return Seat(self, self.model.frame_stack)

    def forget(self, fight_seed: int) -> None:
        self._noise.forget(fight_seed)


class _LadderSide(LadderSeat):
    """A ladder rung seated by `run_fights`: one bot per fight, seeded from (fight seed, seat)."""

    def __init__(self, name: str, seat: int) -> None:
        super().__init__(name, lambda fight_seed: seat_seed(fight_seed, seat))


def is_model_path(name: str) -> bool:
    return name.endswith(MODEL_SUFFIX)


def side_names() -> tuple[str, ...]:
    """Every valid side name: ``baseline`` followed by the ladder, weakest to strongest as measured."""
    return (BASELINE, *LADDER)


def resolve_side(name: str, model_sampling: bool | None = False) -> SideFactory | None:
    """Turn a side name into a factory of its seated player; None means the in-simulator baseline.

    This is the single place that knows what a side can be. With `model_sampling` a model side samples its action
    heads (seeded per fight and seat) instead of taking each head's most probable legal value; None seats it in
    its file's default mode of play (`policies.play_mode`: greedy when the file names none).

    Raises:
        ValueError: `name` is not a valid side; the message lists the valid names.
    """
    if name == BASELINE:
        return None
    if name in LADDER:
        return lambda seat: _LadderSide(name, seat)
    if is_model_path(name):
        from policies.model_file import ModelFileError, read_model_meta
        from policies.play_mode import samples_by_default

        try:
            meta = read_model_meta(name)  # fail now, with the model file's own message, not at the first fight
            sampling = samples_by_default(meta.get("metadata") or {}) if model_sampling is None else model_sampling
        except ModelFileError as exc:
            raise ValueError(str(exc)) from None
        return lambda seat: ModelSide(name, seat, deterministic=not sampling)
    raise ValueError(
        f"unknown opponent {name!r}; valid names: {', '.join(side_names())}, or a model file (*{MODEL_SUFFIX})"
    )


@dataclass(frozen=True, slots=True)
class Matchup:
    """Who sits where, and the fight parameters that follow from it."""

    a: str
    b: str
    params: FightParams
    seats: tuple[SideFactory | None, SideFactory | None]
    """Player factory of player 0 and player 1 (None: the simulator's baseline plays that seat)."""
    swapped: bool
    """True when side A plays player 1 (results are mirrored back to A's view)."""
    rules: FightRules
    """The rules `params` carry: the model sides' training rules, the options' or the spec's defaults."""


def plan_matchup(
    a: str, b: str, options: Mapping[str, Any] | None = None, model_sampling: bool | None = False
) -> Matchup:
    """Resolve both sides, seat them, settle the fight rules and validate the reset options (spec §13.1).

    The rules (`policies.fight_rules.RULE_KEYS`) are the model sides' training rules unless `options` set them.

    Raises:
        ValueError: An unknown side name, an unknown or invalid reset option, an option that the
            sides decide (`RESERVED_OPTIONS`), or two model sides trained under different rules that the
            options leave open (`policies.fight_rules.RulesConflict`, naming the keys and the ``--set`` to use),
            or `model_sampling` with no model side.
    """
    policy_a, policy_b = resolve_side(a, model_sampling), resolve_side(b, model_sampling)
    if model_sampling and not (is_model_path(a) or is_model_path(b)):
        raise ValueError("model sampling asks a model side to sample its actions, but neither side is a model file")
    reserved = sorted(RESERVED_OPTIONS & set(options or {}))
    if reserved:
        raise ValueError(
            f"reset option(s) {reserved} are set by the choice of sides; remove them and name the "
            f"sides instead (valid names: {', '.join(side_names())})"
        )
    prescient = [n for n in (a, b) if needs_opponent_action(n)]
    if prescient and (len(prescient) == 2 or BASELINE in (a, b)):
        raise ValueError(
            f"{prescient[0]!r} is prescient: it must see its opponent's action of the tick, which "
            + (
                "another prescient side"
                if len(prescient) == 2
                else "the in-simulator baseline (it decides inside the simulator)"
            )
            + " cannot give first; pick another opponent"
        )
    rules = resolve_fight_rules([fight_rules_of(n) for n in (a, b) if is_model_path(n)], options)
    base = FightParams.from_options({**rules.options(), **(options or {})})
    swapped = policy_a is None and policy_b is not None
    seats = (policy_b, policy_a) if swapped else (policy_a, policy_b)
    params = dataclasses.replace(
        base,
        opponent=OPPONENT_BASELINE if seats[1] is None else OPPONENT_AGENT,
        first_player_baseline=seats[0] is None,
    )
    return Matchup(a=a, b=b, params=params, seats=seats, swapped=swapped, rules=rules)


@dataclass(frozen=True, slots=True)
class FightSummary:
    """Results of `n` fights from side A's point of view.

    `wins + losses + ties == n`; a fight cut off at `max_episode_ticks` has no winner and counts as
    a tie, and `truncations` says how many of the ties were such cut-offs.
    """

    a: str
    b: str
    n: int
    seed: int
    wins: int
    losses: int
    ties: int
    truncations: int
    win_rate: float
    """wins / n (ties count as not won)."""
    win_rate_ci95: tuple[float, float]
    """95% Wilson score interval of `win_rate`."""
    mean_ticks: float
    median_ticks: float
    mean_damage_dealt: float
    """Hitpoints of damage side A's opponent took per fight (sum of its hitsplats)."""
    mean_damage_received: float
    """Hitpoints of damage side A took per fight (sum of its hitsplats)."""
    options: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    """The reset options the fights were run with."""
    by_build: Mapping[str, Mapping[str, Any]] = dataclasses.field(default_factory=dict)
    """Per build the simulator actually played: fights, wins, losses, ties, win rate and its interval."""
    by_fight_type: Mapping[str, Mapping[str, Any]] = dataclasses.field(default_factory=dict)
    """The same per fight type (NORMAL, LMS, PVP_ARENA)."""
    rules: FightRules | None = None
    """The rules every fight was played by and where each came from (`policies.fight_rules`)."""
    model_sampling: bool | None = False
    """Model sides sampled their action heads instead of playing greedy (``fight --model-sampling``): how a model's
    sampling exploit run meets it, and how ``serve`` answers a request that leaves out ``deterministic``; None: two
    model sides whose files name different default modes each played its own (`policies.play_mode`)."""
    not_played: int = 0
    """Fights asked for but not played to their end because a stop was requested (`n` counts only those that
    ended; every figure is over them alone)."""
    by_member: Mapping[str, Mapping[str, Any]] = dataclasses.field(default_factory=dict)
    """When side A is a per-fight mixture (`policies.mixture`): the same per member (``m0``, ``m1``, …, the member
    each fight's seed drew), so a mixture's figure shows which member carries or costs it; empty otherwise."""

    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly dict of every field."""
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        d["win_rate_ci95"] = list(self.win_rate_ci95)
        d["options"] = dict(self.options)
        d["rules"] = None if self.rules is None else self.rules.to_dict()
        d["by_build"] = {k: dict(v) for k, v in self.by_build.items()}
        d["by_fight_type"] = {k: dict(v) for k, v in self.by_fight_type.items()}
        d["by_member"] = {k: dict(v) for k, v in self.by_member.items()}
        return d


DEFAULT_PARALLEL = 16
"""Fights `run_fights` plays at once: enough for a model side's batched forward pass to pay, few enough to keep
the engines' memory small."""


class _Stopped(Exception):
    """Raised inside the fight loop to abandon the fights in flight once a stop is requested."""


class FightsStopped(Exception):
    """A stop was requested before any fight ended: there is nothing to summarise."""

    def __init__(self, not_played: int) -> None:
        super().__init__(f"stopped before any fight ended ({not_played} not played)")
        self.not_played = not_played


_MIRROR = {Outcome.WON: Outcome.LOST, Outcome.LOST: Outcome.WON, Outcome.TIED: Outcome.TIED}


def run_fights(
    a: str,
    b: str,
    n: int,
    seed: int = 0,
    options: Mapping[str, Any] | None = None,
    progress: Callable[[int], None] | None = None,
    builds: Sequence[Build] | None = None,
    record: str | os.PathLike[str] | None = None,
    parallel: int = DEFAULT_PARALLEL,
    engine: str = "auto",
    model_sampling: bool | None = False,
    should_stop: Callable[[], bool] | None = None,
) -> FightSummary:
    """Fight side A against side B `n` times and summarise the results from A's view, overall and per build
    and fight type.

    Args:
        a: Side A (player 0 unless A is ``baseline`` and B is not); see `side_names()`.
        b: Side B.
        n: Number of fights, ≥ 1.
        seed: Base seed, ≥ 0; fight k uses seed + k.
        options: Reset options (spec §13.1, `FightParams.from_options`), e.g. ``{"account_build": "MED"}``; the
            rules among them (`policies.fight_rules.RULE_KEYS`) override a model side's training rules.
        progress: Called after every fight with the number of fights completed so far.
        builds: Spread the fights evenly over these builds (fight k plays ``builds[k % len]``) and, when the
            options randomise the fight type, over fight types too (`osrs_rllib.evaluation.stratified.spread`).
        record: Write each fight as a replay file ``fight-<k>.nhreplay`` into this directory
            (`osrs_rllib.replay`, docs/replays.md); fights are then played one at a time.
        parallel: Fights played at once in lockstep (`osrs_rllib.evaluation.batched.play_fights`), so that a model
            side runs one forward pass per tick for all of them; the results do not depend on it.
        engine: The simulator (`envs.nh.core_engine.make_engine`): ``auto`` (the compiled core when built, else
            the Python engine with one log line), ``core`` or ``python``; the summary and the replays are the
            same on both.
        model_sampling: Model sides sample their action heads (seeded per fight and seat, so the same seed gives
            the same fights) instead of taking each head's most probable legal value; None: each model side plays
            its file's default mode (`policies.play_mode`).
        should_stop: Polled every tick of every fight; once it says so, the fights in flight are abandoned and the
            summary covers the fights that ended (`FightSummary.not_played` counts the rest).

    Returns:
        The `FightSummary`.

    Raises:
        ValueError: Bad side names or options (see `plan_matchup`), n < 1, seed < 0 or an unknown engine.
        FightsStopped: A stop was requested before any fight ended.
    """
    check_engine(engine)
    if n < 1 or seed < 0:
        raise ValueError(f"n must be at least 1, got {n}" if n < 1 else f"seed must be >= 0, got {seed}")
    from osrs_rllib.evaluation.stratified import spread

    m = plan_matchup(a, b, options, model_sampling)
    plan = spread(m.params, n, builds) if builds else [m.params] * n
    players = [None if f is None else f(seat) for seat, f in enumerate(m.seats)]
    side_a = 1 if m.swapped else 0
    recording = None if record is None else _recording(record, m, players)
    if recording is not None:
        plan = recording.params(plan)
        parallel = 1  # one recorder, one fight at a time
    logger.info("fighting %s vs %s: n=%d seed=%d params=%s", a, b, n, seed, m.params)

    outcomes: list[Outcome | None] = [None] * n
    """Each fight's outcome from A's view, then tallied in fight order (fights may end in any order)."""
    truncated, lengths = [False] * n, [0] * n
    splits: list[tuple[Any, Any]] = [(None, None)] * n
    dealt, received = [0] * n, [0] * n  # per fight: the hitpoints side A's opponent and side A lost
    pending: dict[int, tuple[list[Any], Any]] = {}
    done = 0

    def on_start(k: int, fight: AnyEngine) -> None:
        if recording is not None:
            recording.start(k, seed + k, fight)

    def on_act(k: int, fight: AnyEngine, actions: list[Any]) -> None:
        if recording is not None:
            pending[k] = (actions, recording.readings(fight))

    def on_step(k: int, fight: AnyEngine, step: EngineStep) -> None:
        nonlocal done
        if should_stop is not None and should_stop():
            raise _Stopped
        if recording is not None:
            actions, readings = pending.pop(k)
            recording.stepped(fight, step, actions, readings)
        dealt[k] += sum(fight.hitsplats(1 - side_a))
        received[k] += sum(fight.hitsplats(side_a))
        if not (step.terminated or step.truncated):
            return
        outcome0 = step.outcomes[0]
        if outcome0 is None:  # truncated: nobody won
            outcomes[k], truncated[k] = Outcome.TIED, True
        else:
            outcomes[k] = _MIRROR[outcome0] if m.swapped else outcome0
        lengths[k] = fight.tick
        splits[k] = (fight.build, fight.fight_mode)  # play_match makes the players forget the fight
        logger.debug("fight %d (seed %d): %s after %d ticks", k, seed + k, outcomes[k], fight.tick)
        done += 1
        if progress is not None:
            progress(done)

    sides = [None if p is None else SeatedPlayer(p.seat(), p.forget) for p in players]  # the recorder reads them
    hooks = FightHooks(on_start=on_start, on_act=on_act, on_step=on_step)
    try:
        with torch_threads(1):  # two collapse beside any busy process (policies/torch_threads.py)
            play_match(sides[side_a], sides[1 - side_a], plan, [seed + k for k in range(n)], [side_a] * n,
                       parallel=max(1, parallel), engine=engine, hooks=hooks,
                       opponent_observation=any(p.include_opponent_observation for p in plan))  # fmt: skip
    except _Stopped:
        logger.warning("stop requested: %d of %d fights ended; the rest are not played", done, n)
        if not done:
            raise FightsStopped(n) from None
    ended = [k for k in range(n) if outcomes[k] is not None]
    summary = _summarise(a, b, seed, options, [outcomes[k] for k in ended], [truncated[k] for k in ended],
                         [lengths[k] for k in ended], [splits[k] for k in ended],
                         (sum(dealt[k] for k in ended), sum(received[k] for k in ended)), m.rules,
                         model_sampling)  # fmt: skip
    summary = dataclasses.replace(summary, not_played=n - len(ended),
                                  by_member=_by_member(players[side_a], [seed + k for k in ended],
                                                       [outcomes[k] for k in ended]))  # fmt: skip
    logger.info("%s vs %s: %d-%d-%d (win rate %.3f)", a, b, summary.wins, summary.losses, summary.ties,
                summary.win_rate)  # fmt: skip
    return summary


def _by_member(player: Any, seeds: Sequence[int], outcomes: Sequence[Outcome | None]) -> dict[str, Any]:
    """Side A's results per mixture member (the member each fight's seed drew); {} unless A is a mixture."""
    from osrs_rllib.evaluation.stratified import Tally

    model = getattr(player, "model", None)
    count = model.member_count if model is not None else 1
    if count < 2:
        return {}
    tallies = {f"m{i}": Tally() for i in range(count)}
    for fight_seed, outcome in zip(seeds, outcomes, strict=True):
        tallies[f"m{fight_member(fight_seed, count)}"].add(outcome)
    return {name: t.to_dict() for name, t in tallies.items()}


def _recording(record: str | os.PathLike[str], m: Matchup, players: Sequence[Any]) -> Any:
    """The replay recorder of `run_fights` (`osrs_rllib.replay.recording`), with the sides as seated."""
    from osrs_rllib.replay.recording import FightsRecording

    seated = (m.b, m.a) if m.swapped else (m.a, m.b)
    return FightsRecording(record, seated, ("b", "a") if m.swapped else ("a", "b"), players)


def _summarise(
    a: str,
    b: str,
    seed: int,
    options: Mapping[str, Any] | None,
    outcomes: Sequence[Outcome | None],
    truncated: Sequence[bool],
    lengths: Sequence[int],
    splits: Sequence[tuple[Any, Any]],
    damage: Sequence[float],
    rules: FightRules,
    model_sampling: bool | None,
) -> FightSummary:
    """The `FightSummary` of fights tallied in fight order (side A's view)."""
    from osrs_rllib.evaluation.stratified import SplitTally

    n = len(outcomes)
    split = SplitTally()
    counts = {Outcome.WON: 0, Outcome.LOST: 0, Outcome.TIED: 0}
    for outcome, (build, mode) in zip(outcomes, splits, strict=True):
        assert outcome is not None, "play_fights ends every fight"
        counts[outcome] += 1
        split.add(build, mode, outcome)
    truncations = sum(truncated)
    dealt_total, received_total = damage

    wins = counts[Outcome.WON]
    return FightSummary(
        a=a,
        b=b,
        n=n,
        seed=seed,
        wins=wins,
        losses=counts[Outcome.LOST],
        ties=counts[Outcome.TIED],
        truncations=truncations,
        win_rate=wins / n,
        win_rate_ci95=wilson_interval(wins, n),
        mean_ticks=statistics.fmean(lengths),
        median_ticks=float(statistics.median(lengths)),
        mean_damage_dealt=dealt_total / n,
        mean_damage_received=received_total / n,
        options=dict(options or {}),
        by_build={k: v.to_dict() for k, v in split.by_build.items()},
        by_fight_type={k: v.to_dict() for k, v in split.by_fight_type.items()},
        rules=rules,
        model_sampling=model_sampling,
    )
