"""The RLlib adapter on real Ray: distribution/loss agreement, normaliser sync, scripted seats, learning."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
from gymnasium import spaces
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.models.modelv2 import restore_original_dimensions
from ray.rllib.models.preprocessors import get_preprocessor
from ray.rllib.policy.sample_batch import SampleBatch
from ray.tune.registry import register_env

from envs.nh.contract import HEAD_SIZES, NUM_HEADS, NUM_LOGITS, Head
from envs.opponents import LADDER, PRESCIENT
from envs.rllib_env import NHMultiAgentEnv
from osrs_rllib.training.sampling.lockstep import LockstepRolloutWorker
from policies.network_config import NetworkConfig
from policies.rllib_model import (
    NHActionDistribution,
    NHTorchModel,
    NormalizerCallbacks,
    export_policy,
    model_config,
    register,
)
from policies.scripted import ScriptedRLlibPolicy, scripted_policy_id, scripted_policy_spec
from tests.policies.dependent_heads_env import EPISODE_TICKS, PPO_TRAINING, DependentHeadsEnv
from tests.policies.test_network import violations

pytestmark = pytest.mark.usefixtures("ray_session")

SMALL = NetworkConfig(actor_hidden=(64, 64), critic_hidden=(64,), head_hidden=32)


def old_stack(env: str, **training: Any) -> PPOConfig:
    return (
        PPOConfig()
        .api_stack(enable_rl_module_and_learner=False, enable_env_runner_and_connector_v2=False)
        .environment(env)
        .framework("torch")
        .training(model=model_config(SMALL), **training)
        .reporting(min_sample_timesteps_per_iteration=0)
        .debugging(seed=0, log_level="ERROR")
    )


@pytest.fixture(scope="module", autouse=True)
def registered() -> None:
    register()
    register()  # repeating the registration is harmless
    register_env("nh_dependent_heads", lambda cfg: DependentHeadsEnv(cfg))
    register_env("nh_multiagent", lambda cfg: NHMultiAgentEnv(cfg))


@pytest.mark.parametrize("sampler", ["rllib", "lockstep"])
def test_ppo_learns_dependent_heads(sampler: str) -> None:
    """Issue bar: PPO through RLlib reaches near-maximal return where reward needs the right sub-action,
    sampled by RLlib's own env runner and by our lockstep loop (wrong advantages there would not learn)."""
    runner = {"env_runner_cls": LockstepRolloutWorker} if sampler == "lockstep" else {}
    config = (
        old_stack("nh_dependent_heads", **PPO_TRAINING)
        .env_runners(num_env_runners=0, num_envs_per_env_runner=8, rollout_fragment_length="auto", **runner)
        .multi_agent(policies={"main"}, policy_mapping_fn=lambda agent_id, *a, **k: "main")
        .callbacks(NormalizerCallbacks)
    )
    algo = config.build()
    try:
        if sampler == "lockstep":
            assert isinstance(algo.env_runner, LockstepRolloutWorker)
        maximum = 2 * EPISODE_TICKS  # two agents, one point per tick each
        returns = []
        for _ in range(25):
            result = algo.train()
            returns.append(result["env_runners"]["episode_return_mean"])
            if returns[-1] >= 0.95 * maximum:
                break
        assert returns[-1] >= 0.95 * maximum, f"returns per iteration: {returns}"
        assert returns[0] < 0.5 * maximum, "the task must not be solvable before learning"
        net = algo.get_policy("main").model.net
        assert float(net.obs_norm.count) > 0 and float(net.context_norm.count) > 0
    finally:
        algo.stop()


@pytest.fixture(scope="module")
def nh_algo() -> Any:
    """PPO on the NH multi-agent env with one remote env runner, the learner against a scripted tribrid."""
    config = (
        old_stack("nh_multiagent", train_batch_size=256, minibatch_size=128, num_epochs=1)
        .environment(
            env_config={
                "opponent": "agent",
                "params": {"max_episode_ticks": 60, "training": True, "include_opponent_observation": True},
            }
        )
        .env_runners(num_env_runners=1, num_envs_per_env_runner=2, rollout_fragment_length="auto")
        .multi_agent(
            policies={"main": (None, None, None, {}), scripted_policy_id("tribrid"): scripted_policy_spec("tribrid")},
            policy_mapping_fn=lambda agent_id, *a, **k: (
                "main" if agent_id == "player_0" else scripted_policy_id("tribrid")
            ),
            policies_to_train=["main"],
        )
        .callbacks(NormalizerCallbacks)
    )
    algo = config.build()
    yield algo
    algo.stop()


def test_distribution_logp_equals_sampling_logp(nh_algo: Any) -> None:
    """Issue bar: the log-probability recorded at sampling equals the loss's teacher-forced one (1e-5)."""
    policy = nh_algo.get_policy("main")
    env = NHMultiAgentEnv({"opponent": "agent", "params": {"include_opponent_observation": True, "training": True}})
    obs_rows: list[dict[str, np.ndarray]] = []
    for seed in range(16):
        obs, _ = env.reset(seed=seed)
        for _ in range(4):
            obs_rows.append(obs["player_0"])
            acts = {a: policy.compute_single_action(o)[0] for a, o in obs.items()}
            obs, *_ = env.step(acts)
    batch = {k: np.stack([o[k] for o in obs_rows]) for k in obs_rows[0]}
    actions, _, extra = policy.compute_actions(batch, explore=True)
    assert actions.shape == (len(obs_rows), NUM_HEADS)
    model = policy.model
    dist_inputs = torch.as_tensor(extra[SampleBatch.ACTION_DIST_INPUTS])
    dist = NHActionDistribution(dist_inputs, model)
    recomputed = dist.logp(torch.as_tensor(actions)).detach().numpy()
    np.testing.assert_allclose(recomputed, extra[SampleBatch.ACTION_LOGP], atol=1e-5)
    # What the loss sees: the policy's own log-likelihood computation on the same batch.
    loss_logp = policy.compute_log_likelihoods(actions, batch)
    np.testing.assert_allclose(np.asarray(loss_logp), extra[SampleBatch.ACTION_LOGP], atol=1e-5)
    assert violations(actions, batch["action_mask"]) == []


def test_training_against_a_scripted_seat_syncs_normalizers(nh_algo: Any) -> None:
    before = float(nh_algo.get_policy("main").model.net.obs_norm.count)
    result = nh_algo.train()
    learner = nh_algo.get_policy("main").model.net
    added = result["custom_metrics"].get("normalizer_samples_added/main")
    assert added and added > 0
    assert float(learner.obs_norm.count) == before + added
    remote = nh_algo.env_runner_group.foreach_env_runner(
        lambda w: float(w.get_policy("main").model.net.obs_norm.count), local_env_runner=False
    )
    assert remote == [float(learner.obs_norm.count)], "the remote runner must sample with the learner's statistics"
    remote_mean = nh_algo.env_runner_group.foreach_env_runner(
        lambda w: w.get_policy("main").model.net.obs_norm.shift.numpy(), local_env_runner=False
    )[0]
    np.testing.assert_array_equal(remote_mean, learner.obs_norm.shift.numpy())
    scripted = nh_algo.get_policy(scripted_policy_id("tribrid"))
    assert isinstance(scripted, ScriptedRLlibPolicy) and scripted.get_weights() == {}
    assert "main" in result["info"]["learner"] and scripted_policy_id("tribrid") not in result["info"]["learner"]
    assert "entropy_attack" in result["info"]["learner"]["main"]["model"]


def test_export_of_the_trained_policy(nh_algo: Any, tmp_path: Any) -> None:
    from policies.model_file import load_model_file

    policy = nh_algo.get_policy("main")
    path = export_policy(policy, tmp_path / "main.nhmodel", metadata={"iteration": nh_algo.iteration})
    model = load_model_file(path)
    env = NHMultiAgentEnv({"opponent": "baseline", "params": {"include_opponent_observation": True}})
    obs, _ = env.reset(seed=3)
    row = obs["player_0"]
    expected = policy.compute_single_action(row, explore=False)[0]
    got = model.act(row["observations"], row["action_mask"], deterministic=True)
    np.testing.assert_array_equal(got, expected)
    assert model.metadata["iteration"] == nh_algo.iteration


@pytest.mark.parametrize("name", [n for n in LADDER if n not in PRESCIENT])  # prescient: test_graded_ladder.py
def test_scripted_policy_acts_like_the_ladder(name: str) -> None:
    env = NHMultiAgentEnv({"opponent": "agent"})
    policy = ScriptedRLlibPolicy(env.observation_space, env.action_space, {"scripted_opponent": name})
    from envs.opponents import make_opponent

    bot = make_opponent(name, None)
    obs, _ = env.reset(seed=1)
    for _ in range(30):
        rows = [obs[a] for a in ("player_0", "player_1")]
        batch = {k: np.stack([r[k] for r in rows]) for k in rows[0]}
        actions, _, _ = policy.compute_actions(batch)
        if name != "random" and not getattr(bot, "stochastic", False):  # graded levels that draw: not comparable
            expected = [bot.act(r["observations"], r["action_mask"] > 0.5) for r in rows]
            np.testing.assert_array_equal(actions, np.stack(expected))
        obs, _, term, trunc, _ = env.step({"player_0": actions[0], "player_1": actions[1]})
        if term["__all__"] or trunc["__all__"]:
            break


def test_scripted_spec_rejects_unknown_names() -> None:
    with pytest.raises(ValueError, match="unknown scripted opponent 'boss'; valid choices"):
        scripted_policy_spec("boss")


def test_model_rejects_an_observation_without_mask() -> None:
    space = spaces.Dict({"observations": spaces.Box(-1, 1, (10,), np.float32)})
    with pytest.raises(ValueError, match="needs a Dict observation space with 'observations' and 'action_mask'"):
        NHTorchModel(space, spaces.MultiDiscrete([4] * NUM_HEADS), 64 + NUM_LOGITS, model_config(SMALL), "m")


def test_scripted_sampling_twin_follows_weight_updates(nh_algo: Any) -> None:
    policy = nh_algo.get_policy("main")
    model = policy.model
    twin = model.inference_network()
    assert not any("_scripted" in k for k in model.state_dict()), "the twin must not enter checkpoints"
    weights = {k: v + 0.05 if v.dtype == np.float32 else v for k, v in policy.get_weights().items()}
    policy.set_weights(weights)
    features = torch.randn(8, model.net.feature_size)
    mask = torch.ones(8, NUM_LOGITS)
    with torch.no_grad():
        eager, _, _ = model.net.sample_from_features(features, mask, True, None)
        scripted, _, _ = twin.sample_from_features(features, mask, True, None)
    assert torch.equal(eager, scripted)
    assert torch.equal(twin.head_trunk.weight, model.net.head_trunk.weight)


def _model_and_dist(weights: dict[str, float] | None) -> tuple[NHTorchModel, NHActionDistribution]:
    """A model on the real observation space, and its distribution over a batch of real observations."""
    env = NHMultiAgentEnv({"opponent": "agent", "params": {"include_opponent_observation": True}})
    space = env.observation_space  # each seat's Dict space
    prep = get_preprocessor(space)(space)
    flat = prep.observation_space
    flat.original_space = space
    torch.manual_seed(0)
    model = NHTorchModel(
        flat, spaces.MultiDiscrete(list(HEAD_SIZES)), 64 + NUM_LOGITS, model_config(SMALL, weights), "m"
    )
    rows = [prep.transform(env.reset(seed=seed)[0]["player_0"]) for seed in range(8)]
    inputs = torch.as_tensor(np.stack(rows), dtype=torch.float32)
    dist_inputs, _ = model({"obs": restore_original_dimensions(inputs, flat, "torch")}, [], None)
    return model, NHActionDistribution(dist_inputs, model)


def test_head_entropy_weights_scale_each_heads_entropy_in_the_loss() -> None:
    """``ppo.head_entropy_weights`` reaches the loss: the entropy PPO maximises is Σ w_h·H_h along the batch's
    actions, and with no weights it is bit-identical to the plain sum (the study's recipes rely on that)."""
    plain_model, plain = _model_and_dist(None)
    actions, _, _ = plain.net.sample_from_features(plain.features.detach(), plain.mask)
    plain.logp(actions)
    per_head = plain_model._head_entropy
    assert per_head is not None and float(per_head[:, Head.PRAYER].mean()) > 0.1  # a fresh policy still mixes
    assert torch.equal(plain.entropy(), per_head.sum(-1))

    weighted_model, weighted = _model_and_dist({"prayer": 4.0, "attack": 0.0})
    weighted.logp(actions)
    assert torch.equal(weighted_model._head_entropy, per_head)  # same seed, same network, same batch
    expected = per_head.sum(-1) + 3.0 * per_head[:, Head.PRAYER] - per_head[:, Head.ATTACK]
    torch.testing.assert_close(weighted.entropy(), expected)
    # The bonus's gradient reaches the prayer head's logits, and none reaches the attack head's (weight 0).
    weighted.entropy().sum().backward()
    bias_grad = weighted_model.net.head_out_bias.grad
    assert bias_grad is not None
    assert float(bias_grad[Head.ATTACK].abs().sum()) == 0.0
    assert float(bias_grad[Head.PRAYER].abs().sum()) > 0.0


def test_the_recipe_s_head_entropy_weights_reach_the_rllib_model_config() -> None:
    from pathlib import Path

    from osrs_rllib.config.schema import load_config
    from osrs_rllib.training.algorithm import _algorithm_config

    configs = Path(__file__).resolve().parents[2] / "configs"
    mixing = _algorithm_config(load_config(configs / "study" / "exploiters-mixing.yml")).model["custom_model_config"]
    expected = [5.0 if h in (Head.ATTACK, Head.PRAYER) else 1.0 for h in Head]
    assert mixing["head_entropy_weights"] == expected
    plain = _algorithm_config(load_config(configs / "nh-no-exploiter.yml")).model["custom_model_config"]
    assert plain["head_entropy_weights"] == [1.0] * NUM_HEADS
    hunted = _algorithm_config(load_config(configs / "nh.yml")).model["custom_model_config"]
    assert hunted["head_entropy_weights"] == [3.0 if h in (Head.ATTACK, Head.PRAYER) else 1.0 for h in Head]
