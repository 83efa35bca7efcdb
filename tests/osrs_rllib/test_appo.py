"""Issue 25 item 4, APPO (``algorithm: appo``): V-trace along stored trajectories equals RLlib's own V-trace, the
loss takes the behaviour policy from the sampler's exact log-probabilities, the lockstep sampler writes the
bootstrapped values V-trace needs, and a real run trains, checkpoints, resumes and exports through the CLI."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from ray.rllib.algorithms.impala import vtrace_torch
from ray.rllib.models.preprocessors import get_preprocessor
from ray.rllib.policy.sample_batch import SampleBatch
from ray.rllib.utils.metrics import NUM_AGENT_STEPS_SAMPLED

from envs.nh.contract import masked_random_actions
from osrs_rllib.appo import NHAPPOTorchPolicy, trajectory_starts, vtrace
from osrs_rllib.config import ConfigError, load_config
from osrs_rllib.opponents import TrainingEnv
from osrs_rllib.train import build_algorithm_config, env_config
from policies.rllib_model import register
from tests.osrs_rllib.test_train import run_cli

REPO = Path(__file__).resolve().parents[2]
SMOKE = REPO / "configs" / "smoke.yml"
SB = SampleBatch
GAMMA = 0.97


def rllib_vtrace(log_rhos: np.ndarray, rewards: np.ndarray, values: np.ndarray, bootstrap: float, terminal: bool,
                 clip_rho: float, clip_pg_rho: float) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """RLlib's time-major V-trace on one trajectory (T rows, batch of 1); it computes in float32."""
    discounts = np.full(len(rewards), GAMMA)
    if terminal:
        discounts[-1] = 0.0

    def col(x: np.ndarray) -> torch.Tensor:
        return torch.as_tensor(x, dtype=torch.float64)[:, None]

    out = vtrace_torch.from_importance_weights(
        log_rhos=col(log_rhos),
        discounts=col(discounts),
        rewards=col(rewards),
        values=col(values),
        bootstrap_value=torch.tensor([bootstrap], dtype=torch.float64),
        clip_rho_threshold=clip_rho,
        clip_pg_rho_threshold=clip_pg_rho,
    )
    return out.vs[:, 0].numpy(), out.pg_advantages[:, 0].numpy()


@pytest.mark.parametrize(("clip_rho", "clip_pg_rho"), [(1.0, 1.0), (0.8, 1.5)])
def test_vtrace_along_stored_trajectories_equals_rllibs_per_trajectory(clip_rho: float, clip_pg_rho: float) -> None:
    """Three trajectories one after another (cut, terminated, cut), off-policy ratios well above and below 1: each
    trajectory's targets and advantages are RLlib's V-trace of that trajectory alone."""
    rng = np.random.default_rng(3)
    lengths, terminal = [5, 8, 3], [False, True, False]
    parts = []
    for n, done in zip(lengths, terminal, strict=True):
        parts.append({
            "log_rhos": rng.normal(0, 0.7, n), "rewards": rng.normal(0, 1, n), "values": rng.normal(0, 1, n),
            "bootstrap": float(rng.normal()), "terminal": done,
        })  # fmt: skip
    cat = {k: np.concatenate([p[k] for p in parts]) for k in ("log_rhos", "rewards", "values")}
    pairs = list(zip(lengths, parts, strict=True))
    bootstraps = np.concatenate([np.append(np.full(n - 1, 99.0), p["bootstrap"]) for n, p in pairs])
    terminated = np.concatenate([np.append(np.zeros(n - 1, bool), p["terminal"]) for n, p in pairs])
    starts = np.concatenate([np.append(True, np.zeros(n - 1, bool)) for n in lengths])
    vs, adv = vtrace(cat["log_rhos"], cat["rewards"], cat["values"], bootstraps, terminated, starts, GAMMA,
                     clip_rho, clip_pg_rho)  # fmt: skip
    at = 0
    for n, p in zip(lengths, parts, strict=True):
        want_vs, want_adv = rllib_vtrace(p["log_rhos"], p["rewards"], p["values"], p["bootstrap"], p["terminal"],
                                         clip_rho, clip_pg_rho)  # fmt: skip
        np.testing.assert_allclose(vs[at : at + n], want_vs, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(adv[at : at + n], want_adv, rtol=1e-5, atol=1e-6)
        at += n


def test_on_policy_vtrace_targets_are_discounted_returns() -> None:
    rewards = np.array([0.1, -0.2, 0.0, 1.0])
    values = np.array([0.3, 0.1, -0.4, 0.2])
    terminated, starts = np.array([0, 0, 0, 1], bool), np.array([1, 0, 0, 0], bool)
    vs, _ = vtrace(np.zeros(4), rewards, values, np.zeros(4), terminated, starts, GAMMA)
    expected = [sum(GAMMA**k * r for k, r in enumerate(rewards[t:])) for t in range(4)]
    np.testing.assert_allclose(vs, expected, rtol=1e-12)


def test_trajectory_starts_at_new_episode_agent_or_time_gap() -> None:
    eps = np.array([7, 7, 7, 7, 8, 8, 8])
    agent = np.array([0, 0, 1, 1, 0, 0, 0])
    t = np.array([3, 4, 4, 5, 0, 1, 5])
    assert trajectory_starts(eps, agent, t).tolist() == [True, False, True, False, True, False, True]


@pytest.fixture(scope="module")
def appo_policy() -> dict[str, Any]:
    """The smoke config under APPO: a policy built outside Ray and a batch of real observations with its own
    actions, exact log-probabilities and values."""
    register()
    cfg = load_config(SMOKE, ["algorithm=appo"])
    env = TrainingEnv({**env_config(cfg), "league": False, "opponent_mix": {"baseline": 1.0}})
    prep = get_preprocessor(env.observation_space)(env.observation_space)
    config = build_algorithm_config(cfg).to_dict()
    rng = np.random.default_rng(0)
    obs, _ = env.reset(seed=1)
    rows, rewards, terms = [], [], []
    while len(rows) < 120:
        rows.append(prep.transform(obs["player_0"]))
        action = masked_random_actions(rng, obs["player_0"]["action_mask"] > 0.5)
        obs, reward, term, trunc, _ = env.step({"player_0": action})
        rewards.append(float(reward["player_0"]))
        terms.append(bool(term["__all__"]))
        if term["__all__"] or trunc["__all__"]:
            obs, _ = env.reset(seed=len(rows))
    torch.manual_seed(0)
    policy = NHAPPOTorchPolicy(prep.observation_space, env.action_space, config)
    flat = np.stack(rows).astype(np.float32)
    actions, _, extra = policy.compute_actions(flat, explore=True)
    n = len(rows)
    batch = {
        SB.OBS: flat,
        SB.ACTIONS: actions,
        SB.REWARDS: np.asarray(rewards, np.float32),
        SB.TERMINATEDS: np.asarray(terms),
        SB.ACTION_LOGP: extra[SB.ACTION_LOGP],
        SB.ACTION_DIST_INPUTS: extra[SB.ACTION_DIST_INPUTS],
        SB.VF_PREDS: extra[SB.VF_PREDS],
        SB.VALUES_BOOTSTRAPPED: np.zeros(n, np.float32),  # fights end in deaths; the last one's cut end: any value
        SB.EPS_ID: np.cumsum(np.append(0, terms[:-1])).astype(np.int64),
        SB.AGENT_INDEX: np.zeros(n, np.int64),
        SB.T: np.arange(n, dtype=np.int64),
    }
    return {"policy": policy, "batch": batch}


def _loss(setting: dict[str, Any], **changes: np.ndarray) -> tuple[float, dict[str, Any]]:
    policy: NHAPPOTorchPolicy = setting["policy"]
    batch = policy._lazy_tensor_dict(SampleBatch({**{k: v.copy() for k, v in setting["batch"].items()}, **changes}))
    with torch.no_grad():
        loss = float(policy.loss(policy.model, policy.dist_class, batch))
    return loss, policy.stats_fn(batch)


def test_behaviour_policy_is_the_sampled_log_probability_not_the_dist_inputs(appo_policy: dict[str, Any]) -> None:
    """On-policy (the target network is the model and ACTION_LOGP is exact), every importance ratio is 1. Garbled
    ``ACTION_DIST_INPUTS`` change nothing (RLlib's APPO would rebuild the behaviour policy from them); a behaviour
    log-probability made ln 2 higher doubles the behaviour-to-target ratio (clamped at 2), as it must."""
    loss, stats = _loss(appo_policy)
    assert stats["mean_IS"] == pytest.approx(1.0, abs=1e-5) and stats["var_IS"] == pytest.approx(0.0, abs=1e-8)
    garbled = np.random.default_rng(1).normal(size=appo_policy["batch"][SB.ACTION_DIST_INPUTS].shape)
    same, _ = _loss(appo_policy, **{SB.ACTION_DIST_INPUTS: garbled.astype(np.float32)})
    assert same == pytest.approx(loss, rel=1e-6)
    shifted = appo_policy["batch"][SB.ACTION_LOGP] + np.float32(np.log(2.0))
    moved, stats = _loss(appo_policy, **{SB.ACTION_LOGP: shifted})
    assert stats["mean_IS"] == pytest.approx(2.0, abs=1e-4)
    assert moved != pytest.approx(loss, rel=1e-3)


def test_one_learner_step_moves_the_weights(appo_policy: dict[str, Any]) -> None:
    policy: NHAPPOTorchPolicy = appo_policy["policy"]
    before = {k: v.clone() for k, v in policy.model.state_dict().items()}
    fetches = policy.learn_on_batch(SampleBatch({k: v.copy() for k, v in appo_policy["batch"].items()}))
    stats = fetches["learner_stats"]
    assert np.isfinite(stats["total_loss"]) and stats["entropy"] > 0
    changed = [k for k, v in policy.model.state_dict().items() if not torch.equal(v, before[k])]
    assert any("actor" in k or "head" in k for k in changed), changed


def check_bootstraps(batch: SampleBatch, gamma: float, kinds: set[str]) -> None:
    starts = trajectory_starts(batch[SB.EPS_ID], batch[SB.AGENT_INDEX], batch[SB.T])
    for a, b in itertools.pairwise([*np.flatnonzero(starts), batch.count]):
        boot = batch[SB.VALUES_BOOTSTRAPPED][a:b]
        assert not boot[:-1].any()  # RLlib's convention (compute_bootstrap_value): only the last row holds one
        if batch[SB.TERMINATEDS][b - 1]:
            kinds.add("terminated")
            assert boot[-1] == 0.0
        else:
            kinds.add("cut or truncated")
            last_r = (batch["value_targets"][b - 1] - batch[SB.REWARDS][b - 1]) / gamma
            assert boot[-1] == pytest.approx(last_r, abs=1e-4)


@pytest.mark.usefixtures("ray_session")
def test_lockstep_sampler_writes_the_next_observations_value() -> None:
    """Per trajectory of a real APPO sample, ``VALUES_BOOTSTRAPPED`` as RLlib writes it: 0 on every row but the
    last, which holds 0 after a terminal step and, after a cut or truncation, the bootstrap GAE used (recovered from
    the last value target)."""
    from osrs_rllib.train import register_everything

    register_everything()
    cfg = load_config(SMOKE, ["algorithm=appo", "opponents.mix.baseline=0", "opponents.mix.prayer_switcher=0",
                              "opponents.mix.tribrid=0", "opponents.mix.self_play=1",
                              "runners.num_envs_per_env_runner=4"])  # fmt: skip
    algo = build_algorithm_config(cfg).build_algo()
    kinds: set[str] = set()
    try:
        for _ in range(10):  # 128 ticks per env each: until some fight has ended in a death
            check_bootstraps(algo.env_runner.sample().policy_batches["main"], cfg.ppo.gamma, kinds)
            if "terminated" in kinds:
                break
        algo.train()  # and the driver's policy is on PPO's schedule clock after an iteration
        policy = algo.get_policy("main")
        sampled = algo._counters[NUM_AGENT_STEPS_SAMPLED]
        assert sampled > 0 and policy.schedule_clock == sampled
        assert policy.cur_lr == pytest.approx(np.interp(sampled, [0, 1536], [3e-4, 1e-4]))  # smoke.yml's ppo.lr
    finally:
        algo.stop()
    assert kinds == {"terminated", "cut or truncated"}, kinds


def test_schedules_run_on_sampled_steps_not_on_impalas_trained_steps(appo_policy: dict[str, Any]) -> None:
    """IMPALA hands the policy its *trained* steps (each batch once per epoch); the learning rate must follow the
    clock the driver sets, PPO's sampled steps (smoke.yml: ppo.lr 3e-4 → 1e-4 over 1,536 steps)."""
    policy: NHAPPOTorchPolicy = appo_policy["policy"]
    try:
        policy.set_schedule_clock(0)
        policy.on_global_var_update({"timestep": 10**9})  # what IMPALA would pass: ignored
        assert policy.cur_lr == pytest.approx(3e-4)
        policy.set_schedule_clock(768)
        assert policy.cur_lr == pytest.approx(2e-4)
        policy.on_global_var_update({"timestep": 0})
        assert policy.cur_lr == pytest.approx(2e-4)
    finally:
        policy.set_schedule_clock(0)


def test_appo_trains_checkpoints_resumes_and_exports_through_the_cli(tmp_path: Path) -> None:
    """``osrs-rllib train configs/smoke.yml --set algorithm=appo`` as a user runs it: iterations of the configured
    size, a checkpoint, a resume that continues the counters, and a model file that fights."""
    base = ("--set", f"experiments_dir={tmp_path}", "--set", "algorithm=appo")
    first = run_cli("train", "configs/smoke.yml", *base, "--set", "stop.iterations=2")
    assert first.returncode == 0, first.stderr[-3000:]
    assert "reached 2 iterations" in first.stdout
    again = run_cli("train", "configs/smoke.yml", *base, "--set", "stop.iterations=3", "--resume")
    assert again.returncode == 0, again.stderr[-3000:]
    assert "resumed smoke from iter-000002 (iteration 2)" in again.stdout
    model = tmp_path / "smoke" / "models" / "latest.nhmodel"
    fight = run_cli("fight", str(model), "baseline", "--n", "2")
    assert fight.returncode == 0, fight.stderr[-3000:]


def test_appo_refuses_gradient_accumulation() -> None:
    with pytest.raises(ConfigError, match="grad_accumulation_steps"):
        load_config(SMOKE, ["algorithm=appo", "ppo.grad_accumulation_steps=2"])
