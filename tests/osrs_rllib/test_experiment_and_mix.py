"""Experiment bookkeeping, the opponent mix and evaluation fights, without Ray."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from envs.nh.contract import NUM_HEADS, apply_dependencies_and_force
from osrs_rllib.evaluation.policy_fights import evaluate
from osrs_rllib.experiments.layout import STATE_FILE, CheckpointInfo, Experiment, ExperimentError, write_json_atomic
from osrs_rllib.training.sampling import LEARNER_POLICY, OpponentMix, TrainingEnv, draw_for_kind


def fake_checkpoint(exp: Experiment, iteration: int) -> Path:
    with exp.writing_checkpoint(iteration) as tmp:
        (tmp / "weights").write_text("w")
        write_json_atomic(tmp / STATE_FILE, {"iteration": iteration})
    return exp.checkpoint_dir_for(iteration)


def test_retention_keeps_last_k_and_the_best(tmp_path: Path) -> None:
    exp = Experiment(tmp_path, "run")
    rates = {1: 0.2, 2: 0.7, 3: 0.4, 4: None, 5: 0.5}
    for it, rate in rates.items():
        path = fake_checkpoint(exp, it)
        exp.record_checkpoint(CheckpointInfo(it, path, it * 100, rate), keep_last=2, keep_best=True)
    assert [c.iteration for c in exp.checkpoints()] == [2, 4, 5]
    assert exp.best_checkpoint() is not None and exp.best_checkpoint().iteration == 2
    assert sorted(p.name for p in exp.checkpoints_dir.iterdir()) == [
        "index.json",
        "iter-000002",
        "iter-000004",
        "iter-000005",
    ]


def test_failed_checkpoint_write_leaves_nothing_behind(tmp_path: Path) -> None:
    exp = Experiment(tmp_path, "run")
    with pytest.raises(RuntimeError), exp.writing_checkpoint(7) as tmp:
        (tmp / "half").write_text("x")
        raise RuntimeError("disk full")
    assert not exp.checkpoint_dir_for(7).exists()
    assert list(exp.checkpoints_dir.iterdir()) == []
    assert exp.latest_checkpoint() is None


def test_directory_without_state_file_is_never_listed(tmp_path: Path) -> None:
    exp = Experiment(tmp_path, "run")
    path = fake_checkpoint(exp, 1)
    exp.record_checkpoint(CheckpointInfo(1, path, 10, None), keep_last=3, keep_best=False)
    (path / STATE_FILE).unlink()
    assert exp.checkpoints() == []


def test_new_run_over_existing_needs_force_and_dead_runs_are_detected(tmp_path: Path) -> None:
    exp = Experiment(tmp_path, "run")
    exp.prepare_new(force=False)
    exp.config_path.write_text("name: run\n")
    # A run that failed before its first checkpoint has nothing to lose; its name is free again.
    exp.prepare_new(force=False)
    assert not exp.config_path.exists()
    exp.config_path.write_text("name: run\n")
    path = fake_checkpoint(exp, 1)
    exp.record_checkpoint(CheckpointInfo(1, path, 10, None), keep_last=3, keep_best=False)
    with pytest.raises(ExperimentError, match=r"already exists.*--resume.*--force"):
        exp.prepare_new(force=False)
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    exp.write_run(state="running", pid=child.pid)
    assert exp.effective_state() == "dead"
    exp.write_run(state="running", pid=os.getpid())
    assert exp.effective_state() == "running"
    exp.prepare_new(force=True, keep=("run.json",))
    assert not exp.config_path.exists() and exp.run_path.exists()
    assert json.loads(exp.run_path.read_text())["pid"] == os.getpid()


def test_mix_draw_frequencies_match_the_shares() -> None:
    mix = OpponentMix({"baseline": 0.6, "self_play": 0.2, "tribrid": 0.2, "noop": 0.0})
    rng = np.random.default_rng(0)
    draws = [mix.sample(rng).kind for _ in range(20_000)]
    freq = {k: draws.count(k) / len(draws) for k in set(draws)}
    assert set(freq) == {"baseline", "self_play", "tribrid"}
    assert abs(freq["baseline"] - 0.6) < 0.015 and abs(freq["tribrid"] - 0.2) < 0.015
    assert mix.policy_ids() == {LEARNER_POLICY}  # ladder rungs run inside the env by default
    as_policies = OpponentMix({"self_play": 0.5, "tribrid": 0.5}, scripted_in_env=False)
    assert as_policies.policy_ids() == {LEARNER_POLICY, "scripted_tribrid"}
    assert draw_for_kind("baseline").policy_id is None
    with pytest.raises(ValueError, match="unknown opponent kind 'boss'"):
        draw_for_kind("boss")


def test_training_env_seats_follow_the_draw() -> None:
    env = TrainingEnv(
        {
            "opponent_mix": {"baseline": 0.5, "tribrid": 0.5},
            "mix_seed": 3,
            "params": {"max_episode_ticks": 50},
            "scripted_in_env": False,
        }
    )
    seen = set()
    for seed in range(12):
        obs, _ = env.reset(seed=seed)
        seen.add(env.draw.kind)
        expected = ["player_0"] if env.draw.kind == "baseline" else ["player_0", "player_1"]
        assert sorted(obs) == expected
    assert seen == {"baseline", "tribrid"}
    # An episode ends with the learner's metrics in its last info.
    env.reset(seed=1, options={"opponent": "baseline"})
    rng = np.random.default_rng(0)
    while True:
        row = env._obs(0)
        action = apply_dependencies_and_force(
            row["action_mask"] > 0.5, lambda h, legal: int(rng.choice(np.flatnonzero(legal)))
        )
        _, _, term, trunc, infos = env.step({"player_0": action})
        if term["__all__"] or trunc["__all__"]:
            break
    metrics = infos["player_0"]["episode_metrics"]
    assert infos["player_0"]["opponent_kind"] == "baseline"
    assert metrics["won"] + metrics["lost"] + metrics["tied"] == 1.0
    assert metrics["fight_ticks"] > 0 and metrics["damage_received"] >= 0


def random_act(seed: int):
    rng = np.random.default_rng(seed)

    def act(obs: np.ndarray, masks: np.ndarray, deterministic: bool) -> np.ndarray:
        out = np.zeros((len(obs), NUM_HEADS), dtype=np.int64)
        for i, mask in enumerate(masks):
            out[i] = apply_dependencies_and_force(mask, lambda h, legal: int(rng.choice(np.flatnonzero(legal))))
        return out

    return act


def test_evaluation_is_reproducible_and_counts_every_fight() -> None:
    a = evaluate(random_act(1), ["baseline", "noop"], 12, seed=5, parallel=4, params={"max_episode_ticks": 200})
    b = evaluate(random_act(1), ["baseline", "noop"], 12, seed=5, parallel=4, params={"max_episode_ticks": 200})
    assert a == b
    for r in a:
        assert r.wins + r.losses + r.ties == 12
        assert r.win_rate_low <= r.win_rate <= r.win_rate_high
    assert [r.opponent for r in a] == ["baseline", "noop"]
    with pytest.raises(ValueError, match="unknown evaluation opponent"):
        evaluate(random_act(0), ["boss"], 1)


def test_cluster_yml_is_a_valid_autoscaler_config() -> None:
    import yaml
    from ray.autoscaler._private.util import fillout_defaults, validate_config

    config = yaml.safe_load((Path(__file__).resolve().parents[2] / "cluster.yml").read_text())
    validate_config(fillout_defaults(config))
    assert config["head_start_ray_commands"] and "osrs-rllib" in " ".join(config["setup_commands"])


def test_reward_components_add_up_to_the_reward() -> None:
    from osrs_rllib.config.schema import load_config
    from osrs_rllib.training import env_config

    cfg = load_config(Path(__file__).resolve().parents[2] / "configs" / "nh.yml")
    env = TrainingEnv({**env_config(cfg), "league": False, "opponent_mix": {"baseline": 1.0}})
    rng = np.random.default_rng(4)
    for seed in (2, 3):
        obs, _ = env.reset(seed=seed)
        total = 0.0
        while True:
            mask = obs["player_0"]["action_mask"] > 0.5
            action = apply_dependencies_and_force(mask, lambda h, legal: int(rng.choice(np.flatnonzero(legal))))
            obs, rewards, term, trunc, infos = env.step({"player_0": action})
            total += rewards["player_0"]
            if term["__all__"] or trunc["__all__"]:
                break
        metrics = infos["player_0"]["episode_metrics"]
        parts = {k: v for k, v in metrics.items() if k.startswith("reward_")}
        assert {"reward_damage", "reward_outcome", "reward_prayer"} <= set(parts)
        assert sum(parts.values()) == pytest.approx(total, abs=1e-9)
