"""`osrs-rllib fight` plays its fights in `play_fights`; these pin the results the old one-fight-at-a-time loop
gave for the same seeds, so moving onto the shared loop provably changed nothing.

Each row was recorded with the sequential loop `osrs_rllib/evaluation/fight.py` once had (same arguments, same
code of the simulator and the ladder). A change of the simulator or a ladder rung that moves these numbers is
a behaviour change to explain, not a reason to re-record blindly.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from envs.nh.loadouts import Build
from osrs_rllib.evaluation.fight import run_fights

# a, b, n, seed, options, all builds?, (wins, losses, ties, truncations), mean ticks, dealt, received
OLD_LOOP = [
    ("random", "baseline", 4, 3, {}, False, (1, 3, 0, 0), 211.5, 436.5, 482.5),
    ("baseline", "novice", 4, 11, {}, False, (2, 2, 0, 0), 152.75, 368.0, 320.5),
    ("tribrid", "adept", 4, 5, {}, True, (1, 3, 0, 0), 392.5, 488.25, 580.75),
    ("prescient", "expert", 3, 7, {}, False, (3, 0, 0, 0), 683 / 3, 1888 / 3, 1028 / 3),
    ("stay_alive", "prescient", 3, 2, {}, False, (0, 3, 0, 0), 509 / 3, 595 / 3, 2012 / 3),
    ("baseline", "baseline", 2, 0, {"max_episode_ticks": 60}, False, (0, 0, 2, 2), 60.0, 0.0, 0.0),
]


COLUMNS = ("a", "b", "n", "seed", "options", "all_builds", "record", "ticks", "dealt", "received")


@pytest.mark.parametrize(COLUMNS, OLD_LOOP)
@pytest.mark.parametrize("parallel", [1, 3])
def test_fights_match_the_old_sequential_loop(
    a: str,
    b: str,
    n: int,
    seed: int,
    options: dict[str, int],
    all_builds: bool,
    record: tuple[int, int, int, int],
    ticks: float,
    dealt: float,
    received: float,
    parallel: int,
) -> None:
    s = run_fights(a, b, n, seed, options, builds=list(Build) if all_builds else None, parallel=parallel)
    assert (s.wins, s.losses, s.ties, s.truncations) == record
    assert s.mean_ticks == pytest.approx(ticks)
    assert s.mean_damage_dealt == pytest.approx(dealt)
    assert s.mean_damage_received == pytest.approx(received)


def test_spread_over_builds_reports_each_build_like_the_old_loop() -> None:
    s = run_fights("tribrid", "adept", 4, 5, builds=list(Build), parallel=4)
    assert {k: (v["wins"], v["losses"], v["ties"]) for k, v in s.by_build.items()} == {
        "PURE": (0, 1, 0),
        "ZERKER": (0, 1, 0),
        "MED": (1, 0, 0),
        "MAXED": (0, 1, 0),
    }


def _tiny_model(tmp_path: Path) -> str:
    import torch

    from envs.nh.contract import CRITIC_SIZE, OBS_SIZE
    from policies.model_file import save_model_file
    from policies.network import NHPolicyNetwork
    from policies.network_config import NetworkConfig

    torch.manual_seed(0)
    network = NHPolicyNetwork(OBS_SIZE, CRITIC_SIZE, NetworkConfig(actor_hidden=(32,), critic_hidden=(32,)))
    return str(save_model_file(network, tmp_path / "tiny.nhmodel"))


def test_a_model_side_plays_the_same_fights_alone_or_batched(tmp_path: Path) -> None:
    """A model acts for all live fights in one forward pass; each fight must come out as if played alone."""
    path = _tiny_model(tmp_path)
    options = {"max_episode_ticks": 150}
    alone = run_fights("veteran", path, 5, 4, options, parallel=1)
    batched = run_fights("veteran", path, 5, 4, options, parallel=5)
    assert alone == batched
    assert alone.wins + alone.losses + alone.ties == 5


def test_a_stochastic_model_side_draws_per_fight(tmp_path: Path) -> None:
    """Sampling noise comes from each fight's own stream, so batching does not change a stochastic side either."""
    from osrs_rllib.evaluation.batched import play_fights
    from osrs_rllib.evaluation.fight import ModelSide, plan_matchup

    path = _tiny_model(tmp_path)
    m = plan_matchup(path, "random", {"max_episode_ticks": 40})
    results: dict[int, list[list[int]]] = {}
    for parallel in (1, 3):
        side = ModelSide(path, 0, deterministic=False)
        actions: dict[int, list[list[int]]] = {}
        bot = m.seats[1]
        assert bot is not None

        def on_act(k: int, _engine: object, acts: list[object], store: dict[int, list[list[int]]] = actions) -> None:
            store.setdefault(k, []).append([int(x) for x in acts[0]])  # type: ignore[union-attr]

        play_fights(m.params, [10, 11, 12], side.seat(), bot(1).seat(), parallel=parallel, on_act=on_act)
        results[parallel] = [actions[k] for k in range(3)]
    assert results[1] == results[3]


def test_play_fights_checks_who_plays_seat_zero() -> None:
    """The simulator's baseline plays seat 0 only when the params ask for it, and then seat 1 too."""
    from envs.nh.params import OPPONENT_BASELINE, FightParams
    from osrs_rllib.evaluation.batched import LadderSeat, play_fights

    both = FightParams(opponent=OPPONENT_BASELINE, first_player_baseline=True, max_episode_ticks=5)
    seat = LadderSeat("noop", lambda s: s).seat()
    with pytest.raises(ValueError, match="seat 0 is played by the engine"):
        play_fights(both, [0], seat, None, parallel=1)
    with pytest.raises(ValueError, match="seat 0 needs a player"):
        play_fights(FightParams(opponent=OPPONENT_BASELINE), [0], None, None, parallel=1)
    ticks: list[int] = []
    play_fights(both, [0, 1], None, None, parallel=2, on_act=lambda k, e, a: ticks.append(e.tick))
    assert ticks == [0, 1, 2, 3, 4] * 2  # on_act sees the state before each step, both fights to the cut-off
