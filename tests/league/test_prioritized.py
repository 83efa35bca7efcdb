"""OpenAI Five's prioritized past-self sampling, with the quality update written out by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from league import League, LeagueConfig, Outcome
from league.sampling import PRIORITIZED, initial_quality, lowered_quality, softmax


def test_softmax_probabilities_by_hand() -> None:
    # exp(0), exp(ln 2), exp(ln 3) = 1, 2, 3 → 1/6, 2/6, 3/6
    np.testing.assert_allclose(softmax([0.0, math.log(2), math.log(3)]), [1 / 6, 2 / 6, 3 / 6], rtol=1e-12)
    np.testing.assert_allclose(softmax([5.0, 5.0]), [0.5, 0.5])
    np.testing.assert_allclose(softmax([1000.0, 0.0]), [1.0, 0.0], atol=1e-300)  # no overflow


def test_quality_update_formula() -> None:
    # q = ln 3, η = 0.01, N = 3, p = 1/2: ln 3 − 0.01 / 1.5 = 1.0986122887 − 0.0066666667
    assert lowered_quality(math.log(3), 0.01, 3, 0.5) == pytest.approx(1.0919456220, abs=1e-10)
    assert initial_quality([]) == 0.0
    assert initial_quality([-0.3, 0.2, -0.1]) == 0.2


def _league_with_three_snapshots() -> League:
    league = League(LeagueConfig(eta=0.01, opponent_mix={"prioritized": 1.0}))
    for it in (1, 2, 3):
        league.add_snapshot("main", iteration=it, training_steps=it * 100, created_at=0.0)
    league.qualities.update({"main@v1": 0.0, "main@v2": math.log(2), "main@v3": math.log(3)})
    return league


def test_three_snapshot_example_by_hand() -> None:
    """q = (0, ln 2, ln 3) so p = (1/6, 2/6, 3/6); η = 0.01, N = 3.

    1. main beats v3 (p = 1/2): q3 = ln 3 − 0.01/(3 · 1/2) = 1.0986122887 − 0.0066666667 = 1.0919456220.
    2. Now exp(q) = (1, 2, 3 e^{−1/150}) = (1, 2, 2.9800665188), Z = 5.9800665188, p1 = 0.1672222202.
       main beats v1: q1 = 0 − 0.01/(3 · 0.1672222202) = −0.0199335551.
    3. A loss or a draw changes nothing; neither does a win drawn by another kind (PFSP, say).
    """
    league = _league_with_three_snapshots()
    table = league.opponent_table("main")
    assert table.ids == ("main@v1", "main@v2", "main@v3")
    np.testing.assert_allclose(table.probs, [1 / 6, 2 / 6, 3 / 6], rtol=1e-12)

    league.record_game("main", "main@v3", Outcome.WIN, kind=PRIORITIZED)
    assert league.qualities["main@v3"] == pytest.approx(1.0919456220, abs=1e-10)
    assert league.qualities["main@v1"] == 0.0 and league.qualities["main@v2"] == pytest.approx(math.log(2))

    probs = softmax([league.qualities[s] for s in ("main@v1", "main@v2", "main@v3")])
    assert probs[0] == pytest.approx(0.1672222202, abs=1e-10)
    league.record_game("main", "main@v1", Outcome.WIN, kind=PRIORITIZED)
    assert league.qualities["main@v1"] == pytest.approx(-0.0199335551, abs=1e-10)

    before = dict(league.qualities)
    league.record_game("main", "main@v2", Outcome.LOSS, kind=PRIORITIZED)
    league.record_game("main", "main@v2", Outcome.DRAW, kind=PRIORITIZED)
    league.record_game("main", "main@v2", Outcome.WIN, kind="pfsp")
    assert league.qualities == before


def test_win_reported_from_the_snapshot_side_counts_too() -> None:
    league = _league_with_three_snapshots()
    league.record_game("main@v3", "main", Outcome.LOSS)
    assert league.qualities["main@v3"] == pytest.approx(1.0919456220, abs=1e-10)


def test_new_snapshot_enters_at_the_highest_quality() -> None:
    league = _league_with_three_snapshots()
    league.qualities["main@v3"] = -0.5
    league.add_snapshot("main", iteration=4, training_steps=400, created_at=0.0)
    assert league.qualities["main@v4"] == math.log(2)


def test_prioritized_only_offers_the_learners_own_snapshots() -> None:
    league = League(LeagueConfig(opponent_mix={"prioritized": 1.0}, main_exploiters=1))
    league.add_snapshot("main_exploiter_0", created_at=0.0)
    assert league.opponent_table("main").ids == ("main",)  # no main snapshot yet: self-play fallback
    league.add_snapshot("main", created_at=0.0)
    assert league.opponent_table("main").ids == ("main@v1",)
