"""Elo and openskill ratings against hand-computed numbers."""

from __future__ import annotations

import math

import pytest

from league.players import Outcome
from league.ratings import (
    Ratings,
    conservative_rating,
    elo_expected_score,
    elo_update,
    interval_95,
    ratings_table,
)


def test_elo_between_equals() -> None:
    # E = 1/2, K = 32: a win moves each rating by 32 · 1/2 = 16.
    assert elo_update(1500.0, 1500.0, 1.0, k=32) == (1516.0, 1484.0)
    assert elo_update(1500.0, 1500.0, 0.5, k=32) == (1500.0, 1500.0)
    assert elo_update(1500.0, 1500.0, 0.0, k=32) == (1484.0, 1516.0)


def test_elo_favourite() -> None:
    # 1600 vs 1400: E = 1 / (1 + 10^(−200/400)) = 1 / (1 + 0.316227766) = 0.7597469266.
    assert elo_expected_score(1600.0, 1400.0) == pytest.approx(0.7597469266, abs=1e-10)
    new_a, new_b = elo_update(1600.0, 1400.0, 1.0, k=32)
    # 32 · (1 − 0.7597469266) = 7.6880983
    assert new_a == pytest.approx(1607.6880983, abs=1e-7) and new_b == pytest.approx(1392.3119017, abs=1e-7)


def test_openskill_first_game_by_hand() -> None:
    """Bradley-Terry (full pairing), openskill defaults μ = 25, σ = 25/3, β = 25/6, τ = 25/300.

    σ² + τ² = 69.4444444 + 0.0069444 = 69.4513889; c² = 2 · 69.4513889 + 2β² = 138.9027778 + 34.7222222
    = 173.625, c = 13.1766840. Equal means, so P[win] = 1/2 and Δμ = (σ²/c) · (1 − 1/2) = 2.6353895.
    γ = σ/c = 0.6324654; σ'² = σ² · (1 − γ · σ²/c² · 1/4) = 69.4513889 · (1 − 0.0632465) = 65.0588...,
    σ' = 8.0659014.
    """
    ratings = Ratings()
    ratings.update("main", "scripted_tribrid", Outcome.WIN)
    a, b = ratings.get("main"), ratings.get("scripted_tribrid")
    assert a.mu == pytest.approx(27.6353895, abs=1e-7) and b.mu == pytest.approx(22.3646105, abs=1e-7)
    assert a.sigma == pytest.approx(8.0659014, abs=1e-7) and b.sigma == a.sigma
    assert (a.elo, b.elo, a.games, b.games) == (1516.0, 1484.0, 1, 1)


def test_draws_and_self_games() -> None:
    ratings = Ratings()
    ratings.update("main", "baseline", Outcome.DRAW)
    assert ratings.get("main").mu == pytest.approx(25.0) and ratings.get("main").elo == 1500.0
    assert ratings.get("main").sigma < 25 / 3
    ratings.update("main", "main", Outcome.WIN)
    assert ratings.get("main").games == 1


def test_conservative_rating_and_interval() -> None:
    assert conservative_rating(25.0, 2.0) == 19.0
    low, high = interval_95(25.0, 2.0)
    assert low == pytest.approx(21.0800720, abs=1e-7) and high == pytest.approx(28.9199280, abs=1e-7)


def test_ratings_table_of_a_small_tournament() -> None:
    """Three frozen players, round robin twice: a beats everyone, b beats c."""
    games = [("a", "b", 1.0), ("a", "c", Outcome.WIN), ("b", "c", 1.0)] * 2 + [("c", "b", 0.5)]
    rows = ratings_table(games, elo_k=32, elo_start=1500)
    assert [r.name for r in rows] == ["a", "b", "c"]
    by_name = {r.name: r for r in rows}
    assert (by_name["a"].games, by_name["b"].games, by_name["c"].games) == (4, 5, 5)
    for r in rows:
        assert r.conservative == pytest.approx(r.mu - 3 * r.sigma)
        assert r.ci95_low < r.mu < r.ci95_high
        assert all(math.isfinite(x) for x in (r.elo, r.mu, r.sigma))
    assert sum(r.elo for r in rows) == pytest.approx(3 * 1500)
    assert set(rows[0].to_dict()) == {"name", "elo", "mu", "sigma", "conservative", "games", "ci95_low", "ci95_high"}


def test_tournament_sigma_only_shrinks_without_dynamics() -> None:
    rows = ratings_table([("a", "b", 0.5)] * 50)
    assert all(r.sigma < 25 / 3 / 2 for r in rows)


def test_copy_and_round_trip() -> None:
    ratings = Ratings(elo_k=16, elo_start=1200)
    ratings.update("main", "baseline", Outcome.WIN)
    ratings.copy_rating("main", "main@v1")
    assert ratings.get("main@v1").mu == ratings.get("main").mu and ratings.get("main@v1").games == 0
    assert Ratings.from_dict(ratings.to_dict()) == ratings
    ratings.remove("main@v1")
    assert "main@v1" not in ratings
