"""The decayed payoff table against hand-computed numbers."""

from __future__ import annotations

import json

import pytest

from league.payoff import PayoffTable, decayed_win_rate
from league.players import Outcome


def test_unplayed_pairs_and_self_count_as_half() -> None:
    table = PayoffTable()
    assert table.win_rate("main", "main@v1") == 0.5
    assert table.win_rate("main", "main") == 0.5
    table.record("main", "main", Outcome.WIN)
    assert len(table) == 0


def test_decay_by_hand() -> None:
    """decay ½: W → 1/0/0; L → ½/0/1 (P = 1/3); D → ¼/1/½ (P = (¼ + ½)/(7/4) = 3/7)."""
    table = PayoffTable(decay=0.5)
    table.record("main", "main@v1", Outcome.WIN)
    assert table.win_rate("main", "main@v1") == 1.0
    table.record("main", "main@v1", Outcome.LOSS)
    assert table.win_rate("main", "main@v1") == pytest.approx(1 / 3, abs=1e-15)
    table.record("main", "main@v1", Outcome.DRAW)
    assert table.win_rate("main", "main@v1") == pytest.approx(3 / 7, abs=1e-15)
    assert table.win_rate("main@v1", "main") == pytest.approx(4 / 7, abs=1e-15)
    rec = table.record_of("main", "main@v1")
    assert rec is not None and (rec.wins, rec.draws, rec.losses, rec.games) == (0.25, 1.0, 0.5, 3)


def test_updates_are_symmetric_whichever_side_reports() -> None:
    """Recording 'b lost to a' is the same as recording 'a beat b'; the table keeps one entry per pair."""
    one, other = PayoffTable(0.9), PayoffTable(0.9)
    games = [("main", "main@v2", Outcome.WIN), ("main", "main@v2", Outcome.DRAW), ("main", "main@v2", Outcome.LOSS)]
    for a, b, o in games:
        one.record(a, b, o)
        other.record(b, a, o.flipped())
    assert one == other and len(one) == 1
    assert one.win_rate("main", "main@v2") + one.win_rate("main@v2", "main") == pytest.approx(1.0, abs=1e-15)


def test_no_decay_is_a_plain_average_with_ties_half() -> None:
    table = PayoffTable(decay=1.0)
    for o in (Outcome.WIN, Outcome.WIN, Outcome.DRAW, Outcome.LOSS):
        table.record("main_exploiter_0", "main", o)
    assert table.win_rate("main_exploiter_0", "main") == pytest.approx(2.5 / 4)
    assert decayed_win_rate(0, 0, 0) == 0.5


def test_remove_player_and_round_trip() -> None:
    table = PayoffTable(0.99)
    table.record("main", "main@v1", Outcome.WIN)
    table.record("main", "main@v2", Outcome.LOSS)
    table.record("main@v1", "main@v2", Outcome.DRAW)
    back = PayoffTable.from_dict(json.loads(json.dumps(table.to_dict())))
    assert back == table
    assert table.remove_player("main@v1") == 2
    assert len(table) == 1 and table.win_rate("main", "main@v1") == 0.5


def test_bad_decay_says_what_to_use() -> None:
    with pytest.raises(ValueError, match=r"\(0, 1\]"):
        PayoffTable(decay=0.0)
