"""``ppo.grad_accumulation_steps: k`` splits a minibatch into k micro-batches and gives the update
of the whole minibatch, to float tolerance: the real network, RLlib's real PPO loss, one real optimiser step."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from ray.rllib.algorithms.ppo.ppo_torch_policy import PPOTorchPolicy
from ray.rllib.evaluation.postprocessing import Postprocessing
from ray.rllib.models.preprocessors import get_preprocessor
from ray.rllib.policy.sample_batch import SampleBatch

from envs.nh.contract import masked_random_actions
from osrs_rllib.config import load_config
from osrs_rllib.grad_accumulation import AccumulatingPPOTorchPolicy, micro_batch_bounds, policy_spec
from osrs_rllib.opponents import TrainingEnv
from osrs_rllib.train import build_algorithm_config, env_config
from policies.rllib_model import register

SMOKE = Path(__file__).resolve().parents[2] / "configs" / "smoke.yml"
SAMPLES = 300  # not a multiple of 4: micro-batches of 75; and of 7: uneven ones


@pytest.fixture(scope="module")
def setting() -> dict[str, Any]:
    """The smoke config's spaces and policy config, and a batch of real observations with the policy's own
    actions, log-probabilities and values (advantages drawn at random: the loss does not care where they came
    from)."""
    register()
    cfg = load_config(SMOKE, ["ppo.vf_clip_param=null", "ppo.kl_coeff=0.2"])  # every loss term in play
    env = TrainingEnv({**env_config(cfg), "league": False, "opponent_mix": {"baseline": 1.0}})
    prep = get_preprocessor(env.observation_space)(env.observation_space)
    config = build_algorithm_config(cfg).to_dict()
    rng = np.random.default_rng(0)
    obs, _ = env.reset(seed=1)
    rows = []
    while len(rows) < SAMPLES:
        rows.append(prep.transform(obs["player_0"]))
        action = masked_random_actions(rng, obs["player_0"]["action_mask"] > 0.5)
        obs, _, term, trunc, _ = env.step({"player_0": action})
        if term["__all__"] or trunc["__all__"]:
            obs, _ = env.reset(seed=len(rows))
    torch.manual_seed(0)
    policy = PPOTorchPolicy(prep.observation_space, env.action_space, config)
    flat = np.stack(rows).astype(np.float32)
    actions, _, extra = policy.compute_actions(flat, explore=True)
    advantages = rng.normal(size=SAMPLES).astype(np.float32)
    batch = {
        SampleBatch.OBS: flat,
        SampleBatch.ACTIONS: actions,
        SampleBatch.ACTION_LOGP: extra[SampleBatch.ACTION_LOGP],
        SampleBatch.ACTION_DIST_INPUTS: extra[SampleBatch.ACTION_DIST_INPUTS],
        SampleBatch.VF_PREDS: extra[SampleBatch.VF_PREDS],
        Postprocessing.ADVANTAGES: advantages,
        Postprocessing.VALUE_TARGETS: extra[SampleBatch.VF_PREDS] + advantages,
    }
    return {"space": prep.observation_space, "action_space": env.action_space, "config": config,
            "weights": policy.get_state()["weights"], "batch": batch}  # fmt: skip


def one_update(setting: dict[str, Any], steps: int) -> tuple[dict[str, np.ndarray], dict[str, Any], Any]:
    config = {**setting["config"], "grad_accumulation_steps": steps}
    cls = AccumulatingPPOTorchPolicy if steps > 1 else PPOTorchPolicy
    policy = cls(setting["space"], setting["action_space"], config)
    policy.model.load_state_dict({k: torch.as_tensor(v) for k, v in setting["weights"].items()})
    calls = []
    loss = policy.loss
    policy.loss = lambda model, dist, batch: calls.append(batch.count) or loss(model, dist, batch)  # type: ignore[method-assign]
    fetches = policy.learn_on_batch(SampleBatch({k: v.copy() for k, v in setting["batch"].items()}))
    return {k: v.detach().clone() for k, v in policy.model.state_dict().items()}, fetches, calls


@pytest.mark.parametrize("steps", [4, 7])
def test_k_micro_batches_give_the_update_of_one_minibatch(setting: dict[str, Any], steps: int) -> None:
    whole, whole_fetches, whole_calls = one_update(setting, 1)
    split, split_fetches, split_calls = one_update(setting, steps)
    assert whole_calls == [SAMPLES]
    assert split_calls == [b - a for a, b in micro_batch_bounds(SAMPLES, steps)] and len(split_calls) == steps
    before = {k: torch.as_tensor(v) for k, v in setting["weights"].items()}
    moved = 0
    for name, value in whole.items():
        if not value.is_floating_point():
            continue
        torch.testing.assert_close(split[name], value, rtol=1e-5, atol=1e-6, msg=name)
        moved += int(not torch.equal(value, before[name].to(value.dtype)))
    assert moved > 10  # the step changed the network: the equality above is of two real updates
    a, b = whole_fetches["learner_stats"], split_fetches["learner_stats"]
    for key in ("total_loss", "policy_loss", "vf_loss", "entropy", "kl"):
        assert b[key] == pytest.approx(a[key], rel=1e-4, abs=1e-6), key


def test_one_step_keeps_rllibs_own_policy() -> None:
    assert policy_spec(1).policy_class is None
    assert policy_spec(4).policy_class is AccumulatingPPOTorchPolicy and policy_spec(4).config == {
        "grad_accumulation_steps": 4
    }
    assert micro_batch_bounds(3, 8) == [(0, 1), (1, 2), (2, 3)]
