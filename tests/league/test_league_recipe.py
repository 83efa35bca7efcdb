"""The league's robustness features in real RLlib training, counted from what happened: exploiter snapshots that
join main's pool and are played by main, the expert rung in the mix, a main exploiter reset to main's current
weights on every worker, per-head entropy weights on every learner, and the exploitability probe in TensorBoard
and ``status.json``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from league.callback import LeagueRunner, weights_checksum
from league.events import ResetEvent
from osrs_rllib.config.schema import load_config
from osrs_rllib.training import build_algorithm_config, fixed_policies, make_league, register_everything

REPO = Path(__file__).resolve().parents[2]
EXPLOITER = "main_exploiter_0"


@pytest.fixture(scope="module")
def exploiter_algo(ray_session: None, tmp_path_factory: pytest.TempPathFactory) -> Any:
    cfg = load_config(
        REPO / "configs" / "smoke.yml",
        [
            "opponents.mix={baseline: 0.3, expert: 0.2, exploiters: 0.5}",
            "opponents.league_slots=2",
            "league.main_exploiters=1",
            "league.snapshot_interval=1000",  # no snapshot of main: the pool is the exploiter's alone
            "league.exploiter_step_budget=100",  # a checkpoint (and a reset) of the exploiter every iteration
            "league.slot_refresh_interval=1",
            "env.params.max_episode_ticks=4",
            "ppo.train_batch_size=256",
            "ppo.minibatch_size=256",
            "ppo.num_epochs=1",
            "ppo.head_entropy_weights={attack: 5, prayer: 5}",
            "runners.num_env_runners=1",
            "runners.num_envs_per_env_runner=4",
        ],
    )
    register_everything()
    runner = LeagueRunner(make_league(cfg), tmp_path_factory.mktemp("league"), 2, fixed_policies(), seed=2)
    algo = build_algorithm_config(cfg, tuple(runner.league.learners)).build_algo()
    runner.plan(algo)
    yield runner, algo
    algo.stop()


def _checksums(algo: Any, policy_id: str) -> list[str]:
    """The policy's weight checksum on every env runner (local first) and on the learner's copy."""

    def one(worker: Any) -> str:
        return weights_checksum(worker.policy_map[policy_id].get_weights())

    return algo.env_runner_group.foreach_env_runner(one, local_env_runner=True)


def test_exploiter_snapshots_join_main_s_pool_as_they_are_taken(exploiter_algo: Any) -> None:
    """Counted on the league after four iterations: the exploiter is snapshotted every iteration, main plays its
    snapshots through the ``exploiters`` kind, and the expert rung and the baseline through theirs."""
    runner, algo = exploiter_algo
    pools = []
    for _ in range(4):
        result = algo.train()
        metrics = runner.after_iteration(algo, result["training_iteration"], 0)
        pools.append((set(runner.league.snapshots), set(runner.league.opponent_table("main").ids)))
    league = runner.league
    snapshots = list(league.snapshots)
    assert len(snapshots) >= 2 and all(s.startswith(f"{EXPLOITER}@v") for s in snapshots), snapshots
    assert league.exploiters[EXPLOITER].checkpoints == league.exploiters[EXPLOITER].resets == len(snapshots)
    assert all(taken <= pool for taken, pool in pools)  # every snapshot is in main's pool from its iteration on
    vs_snapshots = {s: league.payoff.games("main", s) for s in snapshots}
    assert sum(vs_snapshots.values()) > 0, vs_snapshots
    main_kinds = {kind: int(stats[0]) for kind, stats in league.kind_stats["main"].items()}
    assert main_kinds["exploiters"] == sum(vs_snapshots.values())
    assert main_kinds["scripted_expert"] > 0 and main_kinds["baseline"] > 0
    assert set(runner.played) == {"baseline", "scripted_expert", "exploiters", "main"}
    probed = int(league.kind_stats[EXPLOITER]["main"][0])
    assert metrics["league/probe/window_games"] == min(probed, league.config.probe_window) > 0
    assert 0.0 <= metrics["league/probe/exploiter_win_rate"] <= 1.0


def test_a_reset_copies_main_s_current_weights_into_the_exploiter_everywhere(exploiter_algo: Any) -> None:
    runner, algo = exploiter_algo
    algo.train()  # both learners train apart (no league step: no reset), so their weights differ before the reset
    main_before = weights_checksum(algo.get_policy("main").get_weights())
    assert weights_checksum(algo.get_policy(EXPLOITER).get_weights()) != main_before
    exploiter = algo.get_policy(EXPLOITER)
    assert any(opt.state for opt in exploiter._optimizers)  # Adam moments from its training
    runner.apply(algo, [ResetEvent(EXPLOITER, "main", "test")])
    assert weights_checksum(algo.get_policy(EXPLOITER).get_weights()) == main_before  # the learner's copy: exact
    # Every env runner (the local one first) plays the exploiter with the weights it plays main with. (A remote
    # runner receives both through RLlib's `set_weights`, which rounds float64 normaliser statistics to float32,
    # so its copies equal each other rather than the learner's.)
    local, remote = _checksums(algo, EXPLOITER)
    assert [local, remote] == _checksums(algo, "main") and local == main_before
    assert not any(opt.state for opt in exploiter._optimizers)
    # A copy, not a shared tensor: after one more iteration each learner has moved on from it its own way.
    algo.train()
    main_now = weights_checksum(algo.get_policy("main").get_weights())
    assert main_now != main_before and weights_checksum(exploiter.get_weights()) not in (main_before, main_now)


def test_a_fresh_reset_gives_the_exploiter_new_seeded_weights_everywhere(exploiter_algo: Any) -> None:
    """``exploiter_reset_to: fresh``: the exploiter starts again from a newly built network (its observation
    normaliser too), the same one for the same seed and reset count, on the learner and every env runner."""
    runner, algo = exploiter_algo
    algo.train()
    exploiter = algo.get_policy(EXPLOITER)
    main_before = weights_checksum(algo.get_policy("main").get_weights())
    trained = weights_checksum(exploiter.get_weights())
    seed = runner.fresh_seed(EXPLOITER)
    expected = exploiter.model.fresh_state(seed)
    assert weights_checksum({k: v.numpy() for k, v in expected.items()}) == weights_checksum(
        {k: v.numpy() for k, v in exploiter.model.fresh_state(seed).items()}
    )
    runner.apply(algo, [ResetEvent(EXPLOITER, "fresh", "test")])
    now = exploiter.model.state_dict()
    assert all(np.array_equal(now[k].numpy(), v.numpy()) for k, v in expected.items())
    assert weights_checksum(exploiter.get_weights()) not in (trained, main_before)
    assert weights_checksum(algo.get_policy("main").get_weights()) == main_before  # main untouched
    norm_counts = [v for k, v in now.items() if k.endswith("count")]
    assert norm_counts and all(float(v.sum()) == 0.0 for v in norm_counts)  # the normaliser starts empty too
    assert not any(opt.state for opt in exploiter._optimizers)
    local, remote = _checksums(algo, EXPLOITER)
    assert local == remote
    other_seed = exploiter.model.fresh_state(seed + 1)
    assert not all(np.array_equal(other_seed[k].numpy(), v.numpy()) for k, v in expected.items())


def test_head_entropy_weights_reach_every_learner(exploiter_algo: Any) -> None:
    _runner, algo = exploiter_algo
    from envs.nh.contract import Head

    expected = [5.0 if h in (Head.ATTACK, Head.PRAYER) else 1.0 for h in Head]
    for pid in ("main", EXPLOITER):
        weights = algo.get_policy(pid).model.head_entropy_weights
        assert np.asarray(weights).tolist() == expected, pid


def _games_with(state: dict[str, Any], player: str) -> dict[str, int]:
    """Games of `player` per opponent, from the payoff table of a saved league state (pairs are stored once)."""
    out: dict[str, int] = {}
    for a, b, *_counts, games in state["league"]["payoff"]["pairs"]:
        if player in (a, b):
            out[b if a == player else a] = int(games)
    return out


@pytest.mark.slow  # a whole `train` process: ~170 s on a busy 2-core machine
def test_exploiter_snapshots_join_main_s_pool_and_main_plays_them(tmp_path: Path) -> None:
    """A short run with a tiny exploiter step budget: the main exploiter is snapshotted (and reset) every
    iteration, its snapshots enter main's ``exploiters`` share as they are taken, main plays them and the expert
    rung, and the probe of the exploiter's win rate against main reaches TensorBoard and status.json."""
    sets = [
        f"experiments_dir={tmp_path}",
        "opponents.mix={baseline: 0.3, expert: 0.2, exploiters: 0.5}",
        "opponents.league_slots=2",
        "env.params.max_episode_ticks=4",  # short fights: every iteration ends many of them
        "league.main_exploiters=1",
        "league.snapshot_interval=1000",  # no snapshot of main: the pool is the exploiter's alone
        "league.exploiter_step_budget=100",
        "league.slot_refresh_interval=1",
        "evaluation.interval=0",
        "checkpoint.keep_best=false",
        "stop.iterations=4",
    ]
    cmd = [sys.executable, "-m", "osrs_rllib.cli", "train", "configs/smoke.yml"]
    for s in sets:
        cmd += ["--set", s]
    run = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    exp = tmp_path / "smoke"
    state = json.loads((exp / "checkpoints" / "iter-000004" / "league.json").read_text())
    league = state["league"]
    snapshots = [s["player_id"] for s in league["snapshots"]]
    exploiter_snaps = [s for s in snapshots if s.startswith(f"{EXPLOITER}@v")]
    assert len(exploiter_snaps) >= 2 and len(exploiter_snaps) == len(snapshots), snapshots
    (exploiter_state,) = league["exploiters"]
    assert exploiter_state["checkpoints"] == len(exploiter_snaps) and exploiter_state["resets"] == len(exploiter_snaps)
    # Who played whom, how often: main against the exploiter's snapshots (drawn by the ``exploiters`` kind), the
    # expert rung and the baseline; the exploiter against live main.
    games = _games_with(state, "main")
    vs_snapshots = {opponent: n for opponent, n in games.items() if opponent in exploiter_snaps}
    assert sum(vs_snapshots.values()) > 0, games
    assert league["kind_stats"]["main"]["exploiters"][0] == sum(vs_snapshots.values())
    assert league["kind_stats"]["main"]["scripted_expert"][0] > 0
    assert league["kind_stats"]["main"]["baseline"][0] > 0
    assert league["kind_stats"][EXPLOITER]["main"][0] > 0
    assert state["played"]["exploiters"] >= sum(vs_snapshots.values())
    assert set(state["played"]) == {"baseline", "scripted_expert", "exploiters", "main"}
    # The probe: the exploiter's games against main, in the saved state, TensorBoard and status.json.
    probe = league["probe"]
    assert len(probe["scores"]) == min(200, league["kind_stats"][EXPLOITER]["main"][0])
    assert probe["at_checkpoint"] is not None
    status = json.loads((exp / "status.json").read_text())
    assert status["exploitability_probe"]["exploiter_win_rate"] == pytest.approx(np.mean(probe["scores"]))
    assert status["exploitability_probe"]["window_games"] == len(probe["scores"])
    from tensorboard.backend.event_processing.event_multiplexer import EventMultiplexer

    mux = EventMultiplexer({"run": str(exp / "tensorboard")}, size_guidance={"scalars": 0})
    mux.Reload()
    tags = set(mux.Runs()["run"]["scalars"])
    assert {"league/probe/exploiter_win_rate", "league/probe/window_games", "league/main/games/exploiters"} <= tags
