"""Decayed win rates between league players, stored only for the pairs that have actually played.

This is AlphaStar's payoff table (Vinyals et al. 2019, pseudocode ``Payoff``): before each new game of a pair,
the pair's win, draw and loss counts are multiplied by ``decay``, then the new result adds 1. Old games thus
fade out geometrically, which matters because learners change while their results are being counted::

    P[a beats b] = (wins + 0.5 · draws) / (wins + draws + losses)      0.5 for a pair that never played

One entry is kept per unordered pair, from the point of view of the lexicographically smaller id, so
``P[a beats b] + P[b beats a] = 1`` holds exactly and the table costs O(pairs played), not O(N²).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from league.players import Outcome

UNPLAYED_WIN_RATE = 0.5
"""P[a beats b] for a pair with no games (and for a player against itself)."""


@dataclass(slots=True)
class PairRecord:
    """Decayed results of one pair, from the point of view of the pair's first (smaller) id."""

    wins: float = 0.0
    draws: float = 0.0
    losses: float = 0.0
    games: int = 0
    """Games actually played (not decayed); for reporting only."""

    @property
    def weight(self) -> float:
        """Decayed number of games (wins + draws + losses)."""
        return self.wins + self.draws + self.losses

    def to_list(self) -> list[float | int]:
        return [self.wins, self.draws, self.losses, self.games]


def decayed_win_rate(wins: float, draws: float, losses: float) -> float:
    """(wins + draws / 2) / games, or 0.5 when there are no games (AlphaStar's ``_win_rate``)."""
    total = wins + draws + losses
    if total <= 0.0:
        return UNPLAYED_WIN_RATE
    return (wins + 0.5 * draws) / total


def _pair_key(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a <= b else (b, a)


class PayoffTable:
    """Sparse decayed payoff table: ``win_rate(a, b)`` is P[a beats b], ties counting half.

    Args:
        decay: Factor applied to a pair's counts before each of its new games; 1 keeps plain averages,
            AlphaStar uses 0.99. Must be in (0, 1].
    """

    def __init__(self, decay: float = 0.99) -> None:
        if not 0.0 < decay <= 1.0:
            raise ValueError(f"payoff decay must be in (0, 1], got {decay!r}; 0.99 forgets a game over ~100 more")
        self.decay = float(decay)
        self._pairs: dict[tuple[str, str], PairRecord] = {}

    def __len__(self) -> int:
        """Number of pairs that have played."""
        return len(self._pairs)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PayoffTable):
            return NotImplemented
        return self.decay == other.decay and self._pairs == other._pairs

    def record(self, a: str, b: str, outcome: Outcome) -> None:
        """Count one game of `a` against `b` with `a`'s `outcome`; a game against oneself is ignored."""
        if a == b:
            return
        key = _pair_key(a, b)
        if key[0] != a:
            outcome = outcome.flipped()
        rec = self._pairs.get(key)
        if rec is None:
            rec = self._pairs[key] = PairRecord()
        rec.wins *= self.decay
        rec.draws *= self.decay
        rec.losses *= self.decay
        if outcome is Outcome.WIN:
            rec.wins += 1.0
        elif outcome is Outcome.DRAW:
            rec.draws += 1.0
        else:
            rec.losses += 1.0
        rec.games += 1

    def win_rate(self, a: str, b: str) -> float:
        """P[`a` beats `b`] (draws count half); 0.5 when they never played or `a` is `b`."""
        if a == b:
            return UNPLAYED_WIN_RATE
        key = _pair_key(a, b)
        rec = self._pairs.get(key)
        if rec is None:
            return UNPLAYED_WIN_RATE
        rate = decayed_win_rate(rec.wins, rec.draws, rec.losses)
        return rate if key[0] == a else 1.0 - rate

    def win_rates(self, a: str, opponents: Iterable[str]) -> list[float]:
        return [self.win_rate(a, b) for b in opponents]

    def games(self, a: str, b: str) -> int:
        """Games `a` and `b` have actually played against each other (undecayed)."""
        rec = self._pairs.get(_pair_key(a, b))
        return 0 if rec is None else rec.games

    def record_of(self, a: str, b: str) -> PairRecord | None:
        """The stored record of the pair (from the smaller id's side), or None."""
        return self._pairs.get(_pair_key(a, b))

    def remove_player(self, player: str) -> int:
        """Forget every pair involving `player` (evicted snapshot, reset learner); returns how many."""
        doomed = [key for key in self._pairs if player in key]
        for key in doomed:
            del self._pairs[key]
        return len(doomed)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``{"decay": d, "pairs": [[a, b, wins, draws, losses, games], ...]}`` with a < b."""
        return {"decay": self.decay, "pairs": [[a, b, *rec.to_list()] for (a, b), rec in self._pairs.items()]}

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> PayoffTable:
        table = cls(values["decay"])
        for a, b, wins, draws, losses, games in values["pairs"]:
            table._pairs[(a, b)] = PairRecord(float(wins), float(draws), float(losses), int(games))
        return table
