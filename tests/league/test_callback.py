"""The league wired into real RLlib training: the mix actually played, frozen snapshot weights on the
workers, and a resume with the league intact."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from league.callback import LeagueRunner, slot_policy_id, weights_checksum
from osrs_rllib.config.schema import load_config
from osrs_rllib.training import build_algorithm_config, fixed_policies, make_league, register_everything

REPO = Path(__file__).resolve().parents[2]
MIX = {"baseline": 0.3, "self_play": 0.2, "prioritized": 0.25, "pfsp": 0.15, "tribrid": 0.1}


@pytest.fixture(scope="module")
def trained(ray_session: None, tmp_path_factory: pytest.TempPathFactory) -> Any:
    mix = "{" + ", ".join(f"{k}: {v}" for k, v in MIX.items()) + "}"
    cfg = load_config(
        REPO / "configs" / "smoke.yml",
        [
            f"opponents.mix={mix}",
            "opponents.league_slots=3",
            "env.params.max_episode_ticks=4",  # short fights: thousands of episodes in a few iterations
            "ppo.train_batch_size=1024",
            "ppo.minibatch_size=512",
            "ppo.num_epochs=1",
            "runners.num_env_runners=1",
            "runners.num_envs_per_env_runner=8",
            "league.snapshot_interval=100",
        ],
    )
    register_everything()
    runner = LeagueRunner(make_league(cfg), tmp_path_factory.mktemp("league"), 3, fixed_policies(), seed=1)
    algo = build_algorithm_config(cfg, tuple(runner.league.learners)).build_algo()
    # Two snapshots before the first episode, so every kind of the mix has someone to offer.
    for iteration in (1, 2):
        snap = runner.league.add_snapshot("main", iteration=iteration, training_steps=0)
        runner.save_weights(snap[0].snapshot_id, algo.get_policy("main").get_weights())
    runner.plan(algo)
    yield cfg, runner, algo
    algo.stop()


def test_snapshots_play_with_their_own_frozen_weights(trained: Any) -> None:
    _cfg, runner, algo = trained
    checksums = runner.slot_checksums(algo)
    assert len(checksums) == 2  # the local runner and one remote
    for i, content in enumerate(runner.slot_contents):
        if content is None:
            continue
        expected = weights_checksum(runner.load_weights(content[0]))
        for per_runner in checksums:
            assert per_runner[slot_policy_id(i)] == expected
    # Snapshots are copies: training main afterwards does not move them.
    before = weights_checksum(runner.load_weights("main@v1"))
    algo.train()
    assert weights_checksum(runner.load_weights("main@v1")) == before


def test_mix_played_matches_the_configured_mix(trained: Any) -> None:
    _cfg, runner, algo = trained
    runner.played.clear()
    iterations = 0
    while sum(runner.played.values()) < 2000 and iterations < 40:
        result = algo.train()
        runner.after_iteration(algo, result["training_iteration"], int(result.get("num_env_steps_sampled_lifetime", 0)))
        iterations += 1
    total = sum(runner.played.values())
    assert total >= 2000, f"only {total} episodes in {iterations} iterations"
    expected = {"scripted_tribrid" if k == "tribrid" else k: v for k, v in MIX.items()}
    for kind, share in expected.items():
        played = runner.played.get(kind, 0) / total
        assert abs(played - share) < 0.02, f"{kind}: played {played:.3f}, configured {share:.3f} ({runner.played})"
    metrics = runner.league.metrics()
    assert metrics["league/size"] == 2.0


@pytest.mark.integration
def test_training_with_the_league_resumes_with_it(tmp_path: Path) -> None:
    base = [
        sys.executable,
        "-m",
        "osrs_rllib.cli",
        "train",
        "configs/smoke.yml",
        "--set",
        f"experiments_dir={tmp_path}",
        "--set",
        "opponents.mix={baseline: 0.5, prioritized: 0.5}",
        "--set",
        "league.snapshot_interval=1",
        "--set",
        "opponents.league_slots=2",
    ]
    first = subprocess.run([*base, "--set", "stop.iterations=2"], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    state = json.loads((tmp_path / "smoke" / "checkpoints" / "iter-000002" / "league.json").read_text())
    assert sorted(s["player_id"] for s in state["league"]["snapshots"]) == ["main@v1", "main@v2"]
    assert (tmp_path / "smoke" / "league" / "main@v2.npz").exists()
    second = subprocess.run(
        [*base, "--resume", "--set", "stop.iterations=3"], cwd=REPO, capture_output=True, text=True, timeout=600
    )
    assert second.returncode == 0, second.stdout[-3000:] + second.stderr[-3000:]
    resumed = json.loads((tmp_path / "smoke" / "checkpoints" / "iter-000003" / "league.json").read_text())
    assert sorted(s["player_id"] for s in resumed["league"]["snapshots"]) == ["main@v1", "main@v2", "main@v3"]
    assert resumed["generation"] > state["generation"]


@pytest.mark.integration
def test_exploiters_snapshot_reset_and_resume(tmp_path: Path) -> None:
    """Exploiters train beside main, enter the league as snapshots, get reset, and survive a resume."""
    base = [
        sys.executable,
        "-m",
        "osrs_rllib.cli",
        "train",
        "configs/smoke.yml",
        "--set",
        f"experiments_dir={tmp_path}",
        "--set",
        "opponents.mix={baseline: 0.4, prioritized: 0.3, pfsp: 0.3}",
        "--set",
        "opponents.league_slots=4",
        "--set",
        "league.snapshot_interval=1",
        "--set",
        "league.main_exploiters=1",
        "--set",
        "league.league_exploiters=1",
        "--set",
        "league.exploiter_step_budget=50",
        "--set",
        "league.league_exploiter_reset_probability=1.0",
    ]
    first = subprocess.run([*base, "--set", "stop.iterations=3"], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    state = json.loads((tmp_path / "smoke" / "checkpoints" / "iter-000003" / "league.json").read_text())
    sources = {s["source"] for s in state["league"]["snapshots"]}
    assert {"main", "main_exploiter_0", "league_exploiter_0"} <= sources, sources
    resets = {e["player_id"]: e["resets"] for e in state["league"]["exploiters"]}
    assert resets["main_exploiter_0"] >= 1, resets  # reset (to main) at its checkpoint
    from tensorboard.backend.event_processing.event_multiplexer import EventMultiplexer

    mux = EventMultiplexer({"run": str(tmp_path / "smoke" / "tensorboard")}, size_guidance={"scalars": 0})
    mux.Reload()
    tags = set(mux.Runs()["run"]["scalars"])
    assert {"league/size", "league/events/snapshots", "league/events/resets"} <= tags
    second = subprocess.run(
        [*base, "--resume", "--set", "stop.iterations=4"], cwd=REPO, capture_output=True, text=True, timeout=600
    )
    assert second.returncode == 0, second.stdout[-3000:] + second.stderr[-3000:]
    resumed = json.loads((tmp_path / "smoke" / "checkpoints" / "iter-000004" / "league.json").read_text())
    assert len(resumed["league"]["snapshots"]) > len(state["league"]["snapshots"])


def test_games_against_snapshots_are_scored_when_fights_outlast_an_iteration(
    ray_session: None, tmp_path: Path
) -> None:
    """Fights longer than an iteration (as in nh.yml: ~270 ticks against 128 env steps per env per iteration)
    must still be scored against the snapshot that played them: redrawing the slots every iteration left almost
    every such game unscored, so prioritized qualities and PFSP's payoff never moved. Slots are now redrawn every
    `slot_refresh_interval` iterations and the plan's generation only moves then."""
    cfg = load_config(
        REPO / "configs" / "smoke.yml",
        [
            "opponents.mix={prioritized: 1.0}",
            "opponents.league_slots=2",
            "env.params.max_episode_ticks=48",  # a fight lasts up to 48 ticks: 1.5 iterations of 32 steps per env
            "ppo.train_batch_size=256",
            "ppo.minibatch_size=256",
            "ppo.num_epochs=1",
            "runners.num_env_runners=1",
            "runners.num_envs_per_env_runner=8",
            "league.snapshot_interval=1000",
            "league.slot_refresh_interval=6",
        ],
    )
    register_everything()
    runner = LeagueRunner(make_league(cfg), tmp_path / "league", 2, fixed_policies(), seed=3)
    algo = build_algorithm_config(cfg, tuple(runner.league.learners)).build_algo()
    try:
        for iteration in (1, 2, 3):
            snap = runner.league.add_snapshot("main", iteration=iteration, training_steps=0)
            runner.save_weights(snap[0].snapshot_id, algo.get_policy("main").get_weights())
        generations, contents = [], []
        runner.plan(algo)
        for _ in range(13):
            result = algo.train()
            generations.append(runner.generation)
            contents.append(list(runner.slot_contents))
            runner.after_iteration(algo, result["training_iteration"], 0)
        played = runner.played.get("prioritized", 0)
        scored = int(runner.league.kind_stats.get("main", {}).get("prioritized", [0])[0])
        # The slots were redrawn on the first plan and then every 6 plans, never in between.
        assert generations == [1] * 6 + [2] * 6 + [3], generations
        assert all(contents[i] == contents[0] for i in range(6)) and all(c == contents[6] for c in contents[6:12])
        # A fight is lost to scoring only when a redraw falls inside it: ~1.5 of every 6 iterations.
        assert played >= 40 and scored >= 0.5 * played, (scored, played)
        payoff_games = sum(runner.league.payoff.games("main", s) for s in ("main@v1", "main@v2", "main@v3"))
        assert payoff_games == scored  # every scored game reached the payoff table
    finally:
        algo.stop()
