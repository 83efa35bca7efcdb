"""`osrs_rllib.evaluation.match.play_match`: the one way to play two sides over builds and seats, and its result row."""

from __future__ import annotations

import pytest

from envs.nh.loadouts import Build
from envs.nh.params import FightParams
from envs.nh.sim import Outcome
from osrs_rllib.evaluation.batched import LadderSeat
from osrs_rllib.evaluation.match import FightRecord, SideFactory, alternating_seats, play_match, result_row
from osrs_rllib.evaluation.rate import LadderPlayer, Player, play_pair
from osrs_rllib.evaluation.stratified import spread

SHORT = FightParams(max_episode_ticks=40)


def rung(name: str) -> SideFactory:
    return lambda seat: LadderSeat(name, lambda fight_seed: fight_seed * 2 + seat)


def test_fights_are_grouped_by_seating_and_recorded_from_side_a() -> None:
    plan = spread(SHORT, 4, [Build.PURE, Build.MED], repeat=2)
    records = play_match(rung("tribrid"), rung("noop"), plan, [7, 8, 9, 10], alternating_seats(4), parallel=4)
    assert sorted(r.fight for r in records) == [0, 1, 2, 3]
    assert [r.seat for r in records] == [0, 0, 1, 1]  # seat 0's batch first, then seat 1's
    assert {r.fight: r.seat for r in records} == {0: 0, 1: 1, 2: 0, 3: 1}
    assert {r.fight: r.build for r in records} == {0: "PURE", 1: "PURE", 2: "MED", 3: "MED"}
    for r in records:
        assert r.outcome == r.outcomes[r.seat]


def test_the_baseline_sits_in_seat_one_only_and_every_fight_needs_a_seed_and_a_seat() -> None:
    with pytest.raises(ValueError, match="seat 1 only"):
        play_match(None, rung("noop"), [SHORT], [1], [0], parallel=1)
    with pytest.raises(ValueError, match="one of each per fight"):
        play_match(rung("noop"), None, [SHORT, SHORT], [1], [0, 0], parallel=1)


def test_the_row_averages_over_the_trained_builds_and_splits_by_seat() -> None:
    def record(fight: int, seat: int, build: str, outcome: Outcome) -> FightRecord:
        other = {Outcome.WON: Outcome.LOST, Outcome.LOST: Outcome.WON, Outcome.TIED: Outcome.TIED}[outcome]
        outcomes = (outcome, other) if seat == 0 else (other, outcome)
        return FightRecord(fight, seat, build, "NORMAL", outcomes, 10.0 * (fight + 1), 5.0, 1.0)

    records = [
        record(0, 0, "PURE", Outcome.WON),
        record(1, 1, "PURE", Outcome.LOST),
        record(2, 0, "MAXED", Outcome.WON),  # unseen: in by_build, not in the headline
    ]
    row = result_row(records, opponent="x", mode="deterministic", trained=[Build.PURE], unseen=[Build.MAXED],
                     by_seat=True)  # fmt: skip
    assert (row["fights"], row["wins"], row["losses"]) == (2, 1, 1)
    assert row["mean_fight_ticks"] == 15.0 and row["builds"] == ["PURE"] and row["unseen_builds"] == ["MAXED"]
    assert row["by_build"]["MAXED"]["wins"] == 1
    assert row["by_seat"]["seat_0"]["wins"] == 2 and row["by_seat"]["seat_1"]["losses"] == 1
    assert "rules" not in row and "by_member" not in row


def test_rate_seats_the_baseline_in_seat_one_and_alternates_otherwise() -> None:
    games = play_pair(Player("baseline"), LadderPlayer("noop"), 3, SHORT, seed=1, parallel=3)
    assert [(g.player_a, g.player_b) for g in games] == [("noop", "baseline")] * 3
    games = play_pair(LadderPlayer("tribrid"), LadderPlayer("noop"), 4, SHORT, seed=1, parallel=2)
    assert sorted((g.player_a, g.player_b) for g in games) == [("noop", "tribrid")] * 2 + [("tribrid", "noop")] * 2
