"""``ppo.grad_accumulation_steps: k`` splits a minibatch into k micro-batches and gives the update
of the whole minibatch, to float tolerance: the real network, RLlib's real PPO loss, one real optimiser step."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
from ray.rllib.algorithms.ppo.ppo_torch_policy import PPOTorchPolicy
from ray.rllib.policy.sample_batch import SampleBatch

from osrs_rllib.training.learner.accumulation import AccumulatingPPOTorchPolicy, micro_batch_bounds
from osrs_rllib.training.learner.ppo_policy import PRECISION_KEY, NHPPOTorchPolicy, policy_spec


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
    samples = len(setting["batch"][SampleBatch.ACTIONS])  # 300 (tests/osrs_rllib/conftest.py): uneven micro-batches
    assert whole_calls == [samples]
    assert split_calls == [b - a for a, b in micro_batch_bounds(samples, steps)] and len(split_calls) == steps
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
    assert policy_spec(1, "float32").policy_class is None
    spec = policy_spec(4, "float32")
    assert spec.policy_class is NHPPOTorchPolicy
    assert spec.config == {PRECISION_KEY: "float32", "grad_accumulation_steps": 4}
    assert micro_batch_bounds(3, 8) == [(0, 1), (1, 2), (2, 3)]
