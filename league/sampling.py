"""Opponent sampling: the weightings and strategies of OpenAI Five and AlphaStar, and the mix that combines them.

A *strategy* turns the league's current numbers into a distribution over opponent ids for one learner. A
`MixSampler` draws a *kind* with its configured share, then an opponent from that kind's strategy. Kinds:

=====================  ===========================================================================================
kind                   opponent
=====================  ===========================================================================================
``self_play``          the learner itself, live weights (pure self-play)
``latest``             the learner's most recent frozen snapshot
``prioritized``        a snapshot of the learner, softmax over quality scores (OpenAI Five)
``pfsp``               any frozen snapshot in the league, weighted by f(P[learner beats it]) (AlphaStar PFSP)
``exploiters``         a snapshot of an exploiter (main or league exploiter), uniformly
``exploiters_pfsp``    a snapshot of an exploiter, by PFSP weight
``main``               the current main policy (what main exploiters play)
``scripted``           a registered scripted opponent, uniformly
``baseline``           the in-simulator bot
``target``             a registered target model file, uniformly
any fixed id           that one registered player (``scripted_tribrid``, ``target_best``)
=====================  ===========================================================================================

A kind with no candidate right now (no snapshot yet, no target registered) is skipped and the other shares
are renormalised; when no kind has a candidate the learner plays itself. Everything is a pure function of
the league's numbers and an explicitly passed `numpy.random.Generator`, so draws are reproducible, and the
flattened `OpponentTable` is a small picklable value that can be pushed to processes that sample.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple, Protocol

import numpy as np

from league.players import MAIN, PlayerKind, parse_snapshot_id, player_kind

SELF_PLAY = "self_play"
LATEST = "latest"
PRIORITIZED = "prioritized"
PFSP = "pfsp"
EXPLOITERS = "exploiters"
EXPLOITERS_PFSP = "exploiters_pfsp"
CURRENT_MAIN = "main"
SCRIPTED = "scripted"
BASELINE_KIND = "baseline"
TARGET = "target"
OPPONENT_KINDS: tuple[str, ...] = (
    SELF_PLAY,
    LATEST,
    PRIORITIZED,
    PFSP,
    EXPLOITERS,
    EXPLOITERS_PFSP,
    CURRENT_MAIN,
    SCRIPTED,
    BASELINE_KIND,
    TARGET,
)
"""Every kind a mix may name (besides the id of one registered fixed player)."""
_FIXED_KIND_OF: dict[str, PlayerKind] = {
    SCRIPTED: PlayerKind.SCRIPTED,
    BASELINE_KIND: PlayerKind.BASELINE,
    TARGET: PlayerKind.TARGET,
}

DEFAULT_ETA = 0.01
"""Quality learning rate η of OpenAI Five's past-self sampling."""


# ---------------------------------------------------------------------------------------------------------
# PFSP weightings (AlphaStar pseudocode, ``pfsp``); x = P[learner beats opponent]
# ---------------------------------------------------------------------------------------------------------


def f_hard(x: float, p: float = 2.0) -> float:
    """(1 − x)^p: focus on opponents the learner loses to; p = 2 is AlphaStar's ``squared``."""
    return (1.0 - x) ** p


def f_var(x: float) -> float:
    """x(1 − x): focus on opponents of the learner's own level (AlphaStar's ``variance``)."""
    return x * (1.0 - x)


def f_linear(x: float) -> float:
    """1 − x: a milder version of `f_hard`."""
    return 1.0 - x


def f_linear_capped(x: float) -> float:
    """min(0.5, 1 − x): every opponent the learner does not beat at least half the time weighs the same."""
    return min(0.5, 1.0 - x)


PFSP_WEIGHTINGS: dict[str, Callable[..., float]] = {
    "hard": f_hard,
    "var": f_var,
    "linear": f_linear,
    "linear_capped": f_linear_capped,
}
"""PFSP weighting functions by config name; only ``hard`` takes the exponent p."""


def pfsp_weights(win_rates: Sequence[float], weighting: str = "hard", p: float = 2.0) -> np.ndarray:
    """Unnormalised PFSP weights f(x) of the win rates x = P[learner beats opponent]."""
    try:
        f = PFSP_WEIGHTINGS[weighting]
    except KeyError:
        raise ValueError(f"unknown PFSP weighting {weighting!r}; valid choices: {list(PFSP_WEIGHTINGS)}") from None
    if f is f_hard:
        return np.array([f_hard(x, p) for x in win_rates], dtype=np.float64)
    return np.array([f(x) for x in win_rates], dtype=np.float64)


def pfsp_probabilities(win_rates: Sequence[float], weighting: str = "hard", p: float = 2.0) -> np.ndarray:
    """PFSP sampling probabilities: the weights normalised to sum to 1.

    When every weight is zero (the learner beats everyone always under ``hard``/``linear``, or every result
    is certain under ``var``) there is no preference to express, so the draw falls back to uniform, as the
    AlphaStar pseudocode does; an empty input gives an empty array.
    """
    weights = pfsp_weights(win_rates, weighting, p)
    total = float(weights.sum())
    if len(weights) == 0:
        return weights
    if total <= 1e-12:
        return np.full(len(weights), 1.0 / len(weights))
    return weights / total


# ---------------------------------------------------------------------------------------------------------
# Prioritized past-self (OpenAI Five, Berner et al. 2019, appendix N)
# ---------------------------------------------------------------------------------------------------------


def softmax(values: Sequence[float]) -> np.ndarray:
    """exp(v_i) / Σ_j exp(v_j), shifted by the maximum for numerical safety."""
    v = np.asarray(values, dtype=np.float64)
    if v.size == 0:
        return v
    e = np.exp(v - v.max())
    return e / e.sum()


def initial_quality(existing: Sequence[float]) -> float:
    """A new snapshot enters at the highest existing quality (0 for a learner's first snapshot)."""
    return max(existing) if len(existing) else 0.0


def lowered_quality(quality: float, eta: float, num_snapshots: int, probability: float) -> float:
    """q_i − η / (N · p_i): the quality of snapshot i after the learner beat it.

    Dividing by p_i makes the expected update independent of how often i is drawn (an importance weight);
    N keeps the step size from shrinking as the pool grows.
    """
    return quality - eta / (num_snapshots * probability)


def entropy(probabilities: Sequence[float]) -> float:
    """Shannon entropy in nats (0 · log 0 = 0)."""
    return 0.0 - float(sum(p * math.log(p) for p in probabilities if p > 0.0))


# ---------------------------------------------------------------------------------------------------------
# Strategies
# ---------------------------------------------------------------------------------------------------------


class LeagueView(Protocol):
    """What the strategies read from the league (`league.league.League` implements it)."""

    def snapshots_of(self, source: str) -> list[str]:
        """Snapshot ids of the learner `source`, oldest first."""
        ...

    def all_snapshots(self) -> list[str]:
        """Every frozen snapshot in the league, oldest first."""
        ...

    def quality(self, snapshot: str) -> float: ...

    def win_rate(self, a: str, b: str) -> float: ...

    def fixed_players(self, kind: PlayerKind) -> list[str]:
        """Registered fixed players of one kind, in registration order."""
        ...

    def has_player(self, player_id: str) -> bool: ...


class Candidates(NamedTuple):
    """A strategy's answer: opponent ids and their probabilities (empty when it has nobody to offer)."""

    ids: tuple[str, ...]
    probabilities: np.ndarray


NO_CANDIDATES = Candidates((), np.zeros(0))


class Strategy(Protocol):
    def candidates(self, view: LeagueView, learner: str) -> Candidates: ...


def _uniform(ids: Sequence[str]) -> Candidates:
    if not ids:
        return NO_CANDIDATES
    return Candidates(tuple(ids), np.full(len(ids), 1.0 / len(ids)))


@dataclass(frozen=True)
class SelfPlay:
    """The learner plays its own live weights."""

    def candidates(self, view: LeagueView, learner: str) -> Candidates:
        return Candidates((learner,), np.ones(1))


@dataclass(frozen=True)
class LatestSelf:
    """The learner plays its most recent frozen snapshot."""

    def candidates(self, view: LeagueView, learner: str) -> Candidates:
        snapshots = view.snapshots_of(learner)
        return Candidates((snapshots[-1],), np.ones(1)) if snapshots else NO_CANDIDATES


@dataclass(frozen=True)
class PrioritizedPastSelf:
    """OpenAI Five's past-self sampling: snapshot i of the learner is drawn with p_i = softmax(q)_i.

    Qualities live in the league; `League.record_game` applies `lowered_quality` when the learner beats a
    snapshot drawn by this strategy, and `initial_quality` when a snapshot is added.
    """

    eta: float = DEFAULT_ETA

    def candidates(self, view: LeagueView, learner: str) -> Candidates:
        snapshots = view.snapshots_of(learner)
        if not snapshots:
            return NO_CANDIDATES
        return Candidates(tuple(snapshots), softmax([view.quality(s) for s in snapshots]))


@dataclass(frozen=True)
class PrioritizedFictitiousSelfPlay:
    """AlphaStar's PFSP over every frozen snapshot in the league, weighted by f(P[learner beats it])."""

    weighting: str = "hard"
    p: float = 2.0

    def candidates(self, view: LeagueView, learner: str) -> Candidates:
        snapshots = view.all_snapshots()
        if not snapshots:
            return NO_CANDIDATES
        rates = [view.win_rate(learner, s) for s in snapshots]
        return Candidates(tuple(snapshots), pfsp_probabilities(rates, self.weighting, self.p))


def exploiter_snapshots(view: LeagueView) -> list[str]:
    """Every frozen snapshot of an exploiter (main or league exploiter), oldest first."""
    exploiters = (PlayerKind.MAIN_EXPLOITER, PlayerKind.LEAGUE_EXPLOITER)
    out = []
    for sid in view.all_snapshots():
        parsed = parse_snapshot_id(sid)
        if parsed is not None and player_kind(parsed[0]) in exploiters:
            out.append(sid)
    return out


@dataclass(frozen=True)
class ExploiterSnapshots:
    """The exploiters' snapshots only, uniformly or by PFSP weight: what the exploiters found, as main's opponents.

    Why a kind of its own: `pfsp` draws from every snapshot, and main's own snapshots (one every
    ``snapshot_interval`` iterations) outnumber the exploiters' (one per exploiter checkpoint) tens to one, so an
    exploiter's snapshot was a rare draw there. The hand-made fine-tune that lowered exploitability played frozen
    exploiters as targets at a fixed share; this kind gives the league's own exploiters that share as they are
    snapshotted, with no file copied by hand.
    """

    pfsp: bool = False
    weighting: str = "hard"
    p: float = 2.0

    def candidates(self, view: LeagueView, learner: str) -> Candidates:
        snapshots = exploiter_snapshots(view)
        if not snapshots or not self.pfsp:
            return _uniform(snapshots)
        rates = [view.win_rate(learner, s) for s in snapshots]
        return Candidates(tuple(snapshots), pfsp_probabilities(rates, self.weighting, self.p))


@dataclass(frozen=True)
class CurrentMain:
    """The live main policy (main exploiters' only opponent)."""

    def candidates(self, view: LeagueView, learner: str) -> Candidates:
        return Candidates((MAIN,), np.ones(1))


@dataclass(frozen=True)
class FixedOfKind:
    """Uniform over the registered fixed players of one kind (scripted, baseline, target)."""

    kind: PlayerKind

    def candidates(self, view: LeagueView, learner: str) -> Candidates:
        return _uniform(view.fixed_players(self.kind))


@dataclass(frozen=True)
class OnePlayer:
    """Always the same registered player, e.g. ``scripted_tribrid`` (nothing while it is not registered)."""

    player_id: str

    def candidates(self, view: LeagueView, learner: str) -> Candidates:
        return Candidates((self.player_id,), np.ones(1)) if view.has_player(self.player_id) else NO_CANDIDATES


def strategy_for(kind: str, eta: float = DEFAULT_ETA, weighting: str = "hard", p: float = 2.0) -> Strategy:
    """The strategy behind a mix key: a kind of `OPPONENT_KINDS` or the id of one fixed player."""
    if kind == SELF_PLAY:
        return SelfPlay()
    if kind == LATEST:
        return LatestSelf()
    if kind == PRIORITIZED:
        return PrioritizedPastSelf(eta)
    if kind == PFSP:
        return PrioritizedFictitiousSelfPlay(weighting, p)
    if kind in (EXPLOITERS, EXPLOITERS_PFSP):
        return ExploiterSnapshots(kind == EXPLOITERS_PFSP, weighting, p)
    if kind == CURRENT_MAIN:
        return CurrentMain()
    if kind in _FIXED_KIND_OF:
        return FixedOfKind(_FIXED_KIND_OF[kind])
    return OnePlayer(kind)


# ---------------------------------------------------------------------------------------------------------
# The mix
# ---------------------------------------------------------------------------------------------------------


class OpponentChoice(NamedTuple):
    """One draw: who to play and through which kind of the mix (for the per-kind metrics)."""

    opponent_id: str
    kind: str


@dataclass(frozen=True)
class OpponentTable:
    """A learner's full opponent distribution, flattened: entry j is (ids[j], kinds[j]) with probs[j].

    Small, immutable and picklable: the driver can push it to the processes that pick opponents, which then
    sample from it with their own generator instead of holding the league.
    """

    ids: tuple[str, ...]
    kinds: tuple[str, ...]
    probs: tuple[float, ...]

    def sample(self, rng: np.random.Generator) -> OpponentChoice:
        j = int(rng.choice(len(self.ids), p=np.asarray(self.probs)))
        return OpponentChoice(self.ids[j], self.kinds[j])

    def kind_shares(self) -> dict[str, float]:
        """Total probability of each kind in the table."""
        shares: dict[str, float] = {}
        for kind, prob in zip(self.kinds, self.probs, strict=True):
            shares[kind] = shares.get(kind, 0.0) + prob
        return shares


class MixSampler:
    """Combine strategies with configured shares: draw a kind by its share, then an opponent within it.

    Args:
        shares: Mix key → share (≥ 0; normalised). Keys are kinds of `OPPONENT_KINDS` or fixed player ids.
        strategies: Optional strategy per key; keys without one get `strategy_for(key, eta, weighting, p)`.
        eta, weighting, p: Parameters of the default prioritized and PFSP strategies.
    """

    def __init__(
        self,
        shares: Mapping[str, float],
        strategies: Mapping[str, Strategy] | None = None,
        *,
        eta: float = DEFAULT_ETA,
        weighting: str = "hard",
        p: float = 2.0,
    ) -> None:
        positive = {str(k): float(v) for k, v in shares.items() if float(v) > 0.0}
        if any(float(v) < 0.0 for v in shares.values()):
            raise ValueError(f"opponent shares must be ≥ 0, got {dict(shares)}")
        if not positive:
            raise ValueError(f"the opponent mix needs at least one kind with a positive share, got {dict(shares)}")
        self.shares = positive
        strategies = dict(strategies or {})
        self.strategies: dict[str, Strategy] = {
            k: strategies.get(k) or strategy_for(k, eta, weighting, p) for k in positive
        }

    def table(self, view: LeagueView, learner: str) -> OpponentTable:
        """The flattened distribution for `learner`; kinds without candidates are dropped and the rest renormalised."""
        ids: list[str] = []
        kinds: list[str] = []
        probs: list[float] = []
        for kind, share in self.shares.items():
            cands = self.strategies[kind].candidates(view, learner)
            for pid, prob in zip(cands.ids, cands.probabilities, strict=True):
                if prob > 0.0:
                    ids.append(pid)
                    kinds.append(kind)
                    probs.append(share * float(prob))
        total = sum(probs)
        if total <= 0.0:
            return OpponentTable((learner,), (SELF_PLAY,), (1.0,))
        return OpponentTable(tuple(ids), tuple(kinds), tuple(x / total for x in probs))

    def sample(self, view: LeagueView, learner: str, rng: np.random.Generator) -> OpponentChoice:
        """One opponent; the same law as drawing a kind by its renormalised share, then an opponent in it."""
        return self.table(view, learner).sample(rng)
