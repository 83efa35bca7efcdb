"""Ratings of league players: Elo, and a Bayesian skill with uncertainty from `openskill`.

Elo is familiar and cheap but says nothing about how sure it is. The openskill rating (Weng & Lin 2011,
Bradley-Terry model, full pairing; for 1v1 games all of openskill's models reduce to a pairwise comparison)
carries a mean μ and a standard deviation σ, so a player with three games is visibly less certain than one
with three thousand. The conservative rating μ − 3σ ranks players by what they have *proven*.

Both are updated from each game in order. Within the league, openskill's default dynamics τ = μ₀/300 add a
little uncertainty before every game because learners keep changing; `ratings_table` rates frozen players
(a tournament) and sets τ = 0.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

from openskill.models import BradleyTerryFull

from league.players import GameResult, Outcome, as_outcome

ELO_START = 1500.0
ELO_K = 32.0
ELO_SCALE = 400.0
"""Rating difference at which the expected score is 10:1 (the chess convention)."""
CONSERVATIVE_SIGMAS = 3.0
"""μ − 3σ: the conservative rating (TrueSkill's leaderboard value)."""
Z_95 = 1.959963984540054
"""Two-sided 95 % quantile of the normal distribution."""


def elo_expected_score(rating_a: float, rating_b: float) -> float:
    """E[score of a] = 1 / (1 + 10^((R_b − R_a) / 400))."""
    return 1.0 / (1.0 + 10.0 ** ((rating_b - rating_a) / ELO_SCALE))


def elo_update(rating_a: float, rating_b: float, score_a: float, k: float = ELO_K) -> tuple[float, float]:
    """New (R_a, R_b) after one game: R_a + K(S_a − E_a), R_b − the same amount (zero-sum)."""
    delta = k * (score_a - elo_expected_score(rating_a, rating_b))
    return rating_a + delta, rating_b - delta


def conservative_rating(mu: float, sigma: float) -> float:
    return mu - CONSERVATIVE_SIGMAS * sigma


def interval_95(mu: float, sigma: float) -> tuple[float, float]:
    """μ ± 1.96σ: where the player's skill lies with 95 % probability under the model."""
    return mu - Z_95 * sigma, mu + Z_95 * sigma


@dataclass(slots=True)
class Rating:
    """One player's ratings and number of rated games."""

    elo: float
    mu: float
    sigma: float
    games: int = 0

    @property
    def conservative(self) -> float:
        return conservative_rating(self.mu, self.sigma)


@dataclass(frozen=True, slots=True)
class RatingRow:
    """One line of a ratings table."""

    name: str
    elo: float
    mu: float
    sigma: float
    conservative: float
    games: int
    ci95_low: float
    ci95_high: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class Ratings:
    """Elo and openskill ratings of every player seen in a game; unseen players start at the defaults.

    Args:
        elo_k: Elo's K factor (32: a win between equals moves each rating by 16).
        elo_start: Elo of a new player.
        tau: openskill's per-game added uncertainty; None keeps openskill's default (μ₀/300).
    """

    def __init__(self, elo_k: float = ELO_K, elo_start: float = ELO_START, tau: float | None = None) -> None:
        self.elo_k = float(elo_k)
        self.elo_start = float(elo_start)
        self.tau = tau
        self._model = BradleyTerryFull() if tau is None else BradleyTerryFull(tau=tau)
        self._ratings: dict[str, Rating] = {}

    def __contains__(self, player: str) -> bool:
        return player in self._ratings

    def __len__(self) -> int:
        return len(self._ratings)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Ratings):
            return NotImplemented
        return (self.elo_k, self.elo_start, self.tau, self._ratings) == (
            other.elo_k,
            other.elo_start,
            other.tau,
            other._ratings,
        )

    def players(self) -> list[str]:
        return list(self._ratings)

    def new_rating(self) -> Rating:
        return Rating(self.elo_start, self._model.mu, self._model.sigma)

    def get(self, player: str) -> Rating:
        """The player's rating (a fresh default one, not stored, for a player never rated)."""
        return self._ratings.get(player) or self.new_rating()

    def _entry(self, player: str) -> Rating:
        if player not in self._ratings:
            self._ratings[player] = self.new_rating()
        return self._ratings[player]

    def update(self, a: str, b: str, outcome: Outcome) -> None:
        """Rate one game of `a` against `b` with `a`'s `outcome`; a game against oneself is ignored."""
        if a == b:
            return
        ra, rb = self._entry(a), self._entry(b)
        ra.elo, rb.elo = elo_update(ra.elo, rb.elo, outcome.score, self.elo_k)
        ranks = {Outcome.WIN: [0, 1], Outcome.DRAW: [0, 0], Outcome.LOSS: [1, 0]}[outcome]
        teams = [[self._model.rating(mu=ra.mu, sigma=ra.sigma)], [self._model.rating(mu=rb.mu, sigma=rb.sigma)]]
        (new_a,), (new_b,) = self._model.rate(teams, ranks=ranks)
        ra.mu, ra.sigma = float(new_a.mu), float(new_a.sigma)
        rb.mu, rb.sigma = float(new_b.mu), float(new_b.sigma)
        ra.games += 1
        rb.games += 1

    def copy_rating(self, source: str, dest: str, keep_games: bool = False) -> None:
        """Give `dest` `source`'s current rating: a snapshot or a reset exploiter starts where its weights were."""
        src = self.get(source)
        self._ratings[dest] = Rating(src.elo, src.mu, src.sigma, src.games if keep_games else 0)

    def remove(self, player: str) -> None:
        self._ratings.pop(player, None)

    def row(self, player: str) -> RatingRow:
        r = self.get(player)
        low, high = interval_95(r.mu, r.sigma)
        return RatingRow(player, r.elo, r.mu, r.sigma, r.conservative, r.games, low, high)

    def table(self) -> list[RatingRow]:
        """Every rated player, best conservative rating first (ties by name)."""
        return sorted((self.row(p) for p in self._ratings), key=lambda row: (-row.conservative, row.name))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: settings plus ``{player: [elo, mu, sigma, games]}``."""
        return {
            "elo_k": self.elo_k,
            "elo_start": self.elo_start,
            "tau": self.tau,
            "players": {p: [r.elo, r.mu, r.sigma, r.games] for p, r in self._ratings.items()},
        }

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> Ratings:
        ratings = cls(values["elo_k"], values["elo_start"], values["tau"])
        for player, (elo, mu, sigma, games) in values["players"].items():
            ratings._ratings[player] = Rating(float(elo), float(mu), float(sigma), int(games))
        return ratings


def ratings_table(
    results: Iterable[GameResult | tuple[str, str, Outcome | float]],
    elo_k: float = ELO_K,
    elo_start: float = ELO_START,
    tau: float = 0.0,
) -> list[RatingRow]:
    """Rate a list of games (a round-robin tournament between frozen players) from scratch.

    Games are applied in the order given; Elo depends on that order, openskill much less. With ``tau = 0``
    (the default here) σ only shrinks, which suits players whose skill does not change.

    Args:
        results: ``(player_a, player_b, outcome)`` triples; the outcome is `player_a`'s (an `Outcome` or 1/0.5/0).

    Returns:
        One `RatingRow` per player (name, elo, mu, sigma, conservative μ − 3σ, games, 95 % interval of μ),
        best conservative rating first.
    """
    ratings = Ratings(elo_k, elo_start, tau)
    for a, b, outcome in results:
        ratings.update(a, b, as_outcome(outcome))
    return ratings.table()
