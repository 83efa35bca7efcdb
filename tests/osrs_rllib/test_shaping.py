"""The novelty reward and observation noise do what they say, and are nothing while off.

The environments are the training envs (`TrainingEnv` built from `train.env_config`, as the env runners build
them), stepped with seeded random legal actions; two envs of the same seeds play the same fight, so any difference
between them is the option's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from envs.nh.contract import OBS_SIZE, masked_random_actions
from osrs_rllib.config import NOISE_ENTRIES, NOVELTY_ENTRIES
from osrs_rllib.config.schema import ConfigError, StepSchedule, load_config
from osrs_rllib.training import env_config
from osrs_rllib.training.sampling import TrainingEnv
from osrs_rllib.training.sampling.shaping import (
    NoveltyReward,
    ObservationNoise,
    entry_indices,
)

REPO = Path(__file__).resolve().parents[2]
SMOKE = REPO / "configs" / "smoke.yml"


def make_env(overrides: list[str], mix: dict[str, float] | None = None, **extra: Any) -> TrainingEnv:
    cfg = load_config(SMOKE, overrides)
    return TrainingEnv({**env_config(cfg), "league": False, "opponent_mix": mix or {"baseline": 1.0}, **extra})


def play(env: TrainingEnv, ticks: int, seed: int = 7) -> list[tuple[dict[str, Any], dict[str, float]]]:
    """`ticks` ticks over as many episodes as it takes, seeded random legal actions: (obs, rewards) per tick."""
    rng = np.random.default_rng(seed)
    out = []
    obs, _ = env.reset(seed=seed)
    out.append((obs, {}))
    episode = 0
    while len(out) < ticks:
        actions = {a: masked_random_actions(rng, o["action_mask"] > 0.5) for a, o in obs.items()}
        obs, rewards, term, trunc, _ = env.step(actions)
        out.append((obs, rewards))
        if term["__all__"] or trunc["__all__"]:
            episode += 1
            obs, _ = env.reset(seed=seed + episode)
            out.append((obs, {}))
    return out


# -- novelty -------------------------------------------------------------------------------------------------
def test_novelty_pays_more_far_from_the_running_mean_than_at_it() -> None:
    rng = np.random.default_rng(0)
    novelty = NoveltyReward(StepSchedule.constant(0.01).value_at, NOVELTY_ENTRIES, clip=5.0)
    idx = entry_indices(NOVELTY_ENTRIES)
    centre = np.zeros(OBS_SIZE)
    centre[idx] = rng.uniform(0, 1, len(idx))
    for _ in range(2000):
        frame = centre.copy()
        frame[idx] += rng.normal(0.0, 0.2, len(idx))
        novelty.observe(frame)
    at_mean = centre.copy()
    at_mean[idx] = novelty.moments.mean
    far = at_mean.copy()
    far[idx] += 3 * 0.2  # three standard deviations on every entry
    d_mean, d_far = novelty.distance(at_mean), novelty.distance(far)
    assert d_mean == pytest.approx(0.0, abs=1e-12)
    assert d_far == pytest.approx(3.0, rel=0.05)
    # other entries (not chosen: the opponent's prayers, say) do not count
    elsewhere = at_mean.copy()
    elsewhere[np.setdiff1d(np.arange(OBS_SIZE), idx)] += 100.0
    assert novelty.distance(elsewhere) == pytest.approx(0.0, abs=1e-12)
    assert novelty.reward(far, steps=0) == pytest.approx(0.01 * d_far)
    assert novelty.reward(at_mean, steps=0) < 0.01 * 0.01  # the far frame joined the mean: nearly nothing


def test_novelty_off_by_default_gives_exactly_the_old_rewards_and_on_adds_the_scheduled_scale() -> None:
    """Off: the default config passes nothing to the envs, and a schedule at 0 changes no reward. On: the reward is
    the old one plus the schedule's scale at the pushed env steps times the distance, on every tick."""
    cfg = load_config(SMOKE)
    assert "novelty" not in env_config(cfg) and not cfg.env.novelty.enabled
    base = play(make_env([]), 400)
    schedule = "env.novelty.scale=[[0, 0.0], [1000, 0.02]]"
    zero = play(make_env([schedule]), 400)
    assert [r for _, r in zero] == [r for _, r in base]  # bit for bit: the schedule is 0 at step 0

    env = make_env([schedule])
    env.set_env_steps(500)  # halfway: 0.01
    probe = NoveltyReward(StepSchedule.constant(1.0).value_at, NOVELTY_ENTRIES, clip=5.0)  # the env's distances
    shaped = play(env, 400)
    paid = 0
    for (obs, new), (_, old) in zip(shaped, base, strict=True):
        if not new:  # a reset: the observation joins the moments
            probe.observe(env_frame(obs))
            continue
        distance = probe.reward(env_frame(obs), 0)
        assert new["player_0"] == pytest.approx(old["player_0"] + 0.01 * distance, abs=1e-9)
        paid += distance > 0
    assert paid > 300  # the reward is paid, not merely allowed


def env_frame(obs: dict[str, Any]) -> np.ndarray:
    """The newest 176-entry frame of the learner's observation (smoke.yml stacks one frame)."""
    return np.asarray(obs["player_0"]["observations"][:OBS_SIZE], dtype=np.float64)


# -- observation noise ---------------------------------------------------------------------------------------
def test_noise_has_the_scheduled_std_on_the_chosen_entries_only() -> None:
    schedule = StepSchedule.parse([[0, 0.0], [10_000, 0.2]])
    noise = ObservationNoise(schedule.value_at, NOISE_ENTRIES, frames=2, rng=np.random.default_rng(1))
    clean = np.arange(2 * OBS_SIZE, dtype=np.float32)
    samples = np.stack([noise.apply(clean, 7_500) for _ in range(4000)]) - clean
    chosen = np.concatenate([entry_indices(NOISE_ENTRIES) + k * OBS_SIZE for k in range(2)])
    others = np.setdiff1d(np.arange(2 * OBS_SIZE), chosen)
    assert np.all(samples[:, others] == 0)
    assert samples[:, chosen].std() == pytest.approx(0.15, rel=0.02)  # 7,500 of 10,000 steps: 0.15
    assert abs(samples[:, chosen].mean()) < 0.005
    assert noise.apply(clean, 0) is clean  # 0 at step 0: nothing drawn, nothing changed


def test_noise_changes_the_learners_observation_only_and_is_off_by_default() -> None:
    cfg = load_config(SMOKE)
    assert "observation_noise" not in env_config(cfg) and not cfg.env.observation_noise.enabled
    base = play(make_env([]), 300)
    std = "env.observation_noise.std=[[0, 0.0], [1000, 0.1]]"
    assert all(_same(a, b) for (a, _), (b, _) in zip(play(make_env([std]), 300), base, strict=True))

    env = make_env([std])
    env.set_env_steps(1000)
    noisy = play(env, 300)
    chosen = entry_indices(NOISE_ENTRIES)
    diffs = []
    for (obs, rew), (clean, clean_rew) in zip(noisy, base, strict=True):
        assert rew == clean_rew  # the fight itself is the same
        d = obs["player_0"]["observations"] - clean["player_0"]["observations"]
        assert np.all(np.delete(d, chosen) == 0)
        np.testing.assert_array_equal(obs["player_0"]["critic"], clean["player_0"]["critic"])
        np.testing.assert_array_equal(obs["player_0"]["action_mask"], clean["player_0"]["action_mask"])
        diffs.append(d[chosen])
    assert np.std(diffs) == pytest.approx(0.1, rel=0.05)


def test_noise_reaches_both_seats_in_self_play_and_never_an_opponent_seat() -> None:
    std = "env.observation_noise.std=0.1"
    selfplay = make_env([std], {"self_play": 1.0})
    obs, _ = selfplay.reset(seed=3)
    clean_env = make_env([], {"self_play": 1.0})
    clean, _ = clean_env.reset(seed=3)
    for seat in ("player_0", "player_1"):
        assert not np.array_equal(obs[seat]["observations"], clean[seat]["observations"])

    rung = make_env([std], {"tribrid": 1.0}, scripted_in_env=False)  # the rung acts as an RLlib policy in seat 1
    obs, _ = rung.reset(seed=3)
    clean_env = make_env([], {"tribrid": 1.0}, scripted_in_env=False)
    clean, _ = clean_env.reset(seed=3)
    assert rung.learner_seats() == (0,)
    np.testing.assert_array_equal(obs["player_1"]["observations"], clean["player_1"]["observations"])
    assert not np.array_equal(obs["player_0"]["observations"], clean["player_0"]["observations"])


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return a.keys() == b.keys() and all(
        all(np.array_equal(a[agent][k], b[agent][k]) for k in a[agent]) for agent in a
    )


@pytest.mark.parametrize(
    ("override", "words"),
    [
        ("env.novelty.entries=[target_health_percnt]", "did you mean 'target_health_percent'"),
        ("env.observation_noise.std=-0.1", "≥ 0"),
        ("ppo.grad_accumulation_steps=0", "> 0"),
        ("ppo.grad_accumulation_steps=129", "minibatch_size 128"),
        ("init.critc=true", "did you mean 'critic'"),
    ],
)
def test_bad_values_name_the_key(override: str, words: str) -> None:
    with pytest.raises(ConfigError) as err:
        load_config(SMOKE, [override])
    key = override.split("=")[0]
    assert str(err.value).startswith(f"--set: {key}") and words in str(err.value)


@pytest.mark.integration
def test_training_with_every_option_on_reports_novelty_and_resumes(tmp_path: Path) -> None:
    """The three options through `osrs-rllib train` as a user runs it: the envs pay the novelty reward (its episode
    sum reaches TensorBoard), the learner is the accumulating PPO policy (with the autocast where `auto` resolves to
    bfloat16), and a resume rebuilds it."""
    import json
    import pickle
    import subprocess
    import sys

    from tests.osrs_rllib.test_train import tensorboard_tags

    sets = ["stop.iterations=2", "evaluation.interval=0", "checkpoint.keep_best=false", "env.novelty.scale=0.01",
            "env.observation_noise.std=0.05", "ppo.grad_accumulation_steps=4",
            f"experiments_dir={tmp_path}"]  # fmt: skip

    def train(*extra: str) -> subprocess.CompletedProcess[str]:
        args = [sys.executable, "-m", "osrs_rllib.cli", "train", "configs/smoke.yml", *extra]
        args += [a for s in sets for a in ("--set", s)]
        return subprocess.run(args, cwd=REPO, capture_output=True, text=True, timeout=900, check=False)

    proc = train()
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    run = tmp_path / "smoke"
    assert "fight/novelty_return_mean" in tensorboard_tags(run / "tensorboard")
    state = pickle.loads((run / "checkpoints" / "iter-000002" / "policies" / "main" / "policy_state.pkl").read_bytes())
    # accumulating, and autocast where the default learner precision (auto) resolves to bfloat16 on this CPU
    from osrs_rllib.training.learner.ppo_policy import PRECISION_KEY
    from osrs_rllib.training.learner.precision import resolve

    assert state["policy_spec"]["policy_class"].__name__ == "NHPPOTorchPolicy"
    assert state["policy_spec"]["config"]["grad_accumulation_steps"] == 4
    assert state["policy_spec"]["config"][PRECISION_KEY] == resolve("auto")
    sets[0] = "stop.iterations=3"
    resumed = train("--resume")
    assert resumed.returncode == 0, resumed.stdout[-3000:] + resumed.stderr[-3000:]
    assert json.loads((run / "run.json").read_text())["resumed_from"]["checkpoint"] == "iter-000002"
