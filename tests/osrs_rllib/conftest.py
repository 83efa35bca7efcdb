"""Shared fixtures of the trainer's tests."""

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
from osrs_rllib.config.schema import load_config
from osrs_rllib.training import build_algorithm_config, env_config
from osrs_rllib.training.sampling import TrainingEnv
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
