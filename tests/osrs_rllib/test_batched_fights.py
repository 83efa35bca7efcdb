"""The lockstep fight loop behind evaluation and `osrs-rllib rate`."""

from __future__ import annotations

import pytest

from envs.nh.engine import EngineStep, NHEngine
from envs.nh.params import OPPONENT_AGENT, OPPONENT_BASELINE, FightParams
from osrs_rllib.evaluation.batched import LadderSeat, Seat, play_fights

SEEDS = [11, 12, 13, 14, 15, 16, 17]


def _courses(params: FightParams, seat1: Seat | None, parallel: int) -> dict[int, tuple[int, object]]:
    """Per fight: (ticks, outcome of seat 0)."""
    ticks: dict[int, int] = {}
    out: dict[int, tuple[int, object]] = {}

    def on_step(fight: int, engine: NHEngine, step: EngineStep) -> None:
        ticks[fight] = ticks.get(fight, 0) + 1
        if step.terminated or step.truncated:
            out[fight] = (ticks[fight], step.outcomes[0])

    seat0 = Seat(LadderSeat("random", lambda s: s * 2))
    play_fights(params, SEEDS, seat0, seat1, parallel=parallel, on_step=on_step)
    return out


@pytest.mark.parametrize("opponent", ["tribrid", OPPONENT_BASELINE])
def test_a_fight_depends_only_on_its_seed_not_on_how_many_run_at_once(opponent: str) -> None:
    in_sim = opponent == OPPONENT_BASELINE
    params = FightParams(opponent=OPPONENT_BASELINE if in_sim else OPPONENT_AGENT, max_episode_ticks=300)
    seat1 = None if in_sim else Seat(LadderSeat(opponent, lambda s: s * 2 + 1))
    one_at_a_time = _courses(params, seat1, parallel=1)
    seat1 = None if in_sim else Seat(LadderSeat(opponent, lambda s: s * 2 + 1))
    all_at_once = _courses(params, seat1, parallel=len(SEEDS))
    assert set(one_at_a_time) == set(range(len(SEEDS)))
    assert one_at_a_time == all_at_once


def test_seat_one_must_match_the_engines_opponent() -> None:
    seat = Seat(LadderSeat("random", lambda s: s))
    with pytest.raises(ValueError, match="needs a player"):
        play_fights(FightParams(opponent=OPPONENT_AGENT), SEEDS, seat, None, parallel=2)
    with pytest.raises(ValueError, match="played by the engine"):
        play_fights(FightParams(opponent=OPPONENT_BASELINE), SEEDS, seat, seat, parallel=2)
