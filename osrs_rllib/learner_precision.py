"""The number format of PPO's update (``ppo.learner_precision``): float32, or a bfloat16 autocast.

Half the learner's time is matrix products (the actor and critic trunks, the heads' first layer), and CPUs with
bfloat16 instructions (AVX512-BF16, AMX) multiply bfloat16 matrices 2-3 times faster than float32 ones. With
``bfloat16`` the PPO loss runs under ``torch.autocast``: the products read bfloat16 copies of the weights and
activations, while the weights, the optimiser's state and the gradient step stay float32 (the usual mixed
precision). The network returns its logits and values in float32 (`policies/network.py`), so the softmax, the
probability ratio, the clip, the value loss and the entropy are computed exactly as in float32, from inputs
rounded to bfloat16's 8 significant bits.

That rounding changes the update a little: on the shipped model's own fights the log-probability of a taken
action moves by 0.003 on average (0.03 at the 99th percentile), so the ratio PPO clips at 1 ± 0.2 starts at
1 ± 0.003 instead of exactly 1. Sampling, evaluation and serving never autocast: behaviour is computed in float32.
``float32`` (the default) keeps RLlib's update as it is.
"""

from __future__ import annotations

from typing import Any, Literal

import torch
from ray.rllib.algorithms.ppo.ppo_torch_policy import PPOTorchPolicy
from ray.rllib.policy.policy import PolicySpec

from osrs_rllib.grad_accumulation import ACCUMULATION_KEY, AccumulatingPPOTorchPolicy

Precision = Literal["float32", "bfloat16"]


class _BFloat16Loss:
    """Runs the policy's loss (forward only; backward follows the recorded dtypes) under a bfloat16 autocast."""

    device: torch.device

    def loss(self, model: Any, dist_class: Any, train_batch: Any) -> Any:
        with torch.autocast(self.device.type, dtype=torch.bfloat16):
            return super().loss(model, dist_class, train_batch)  # type: ignore[misc]


class BFloat16PPOTorchPolicy(_BFloat16Loss, PPOTorchPolicy):
    """RLlib's PPO torch policy with its loss under a bfloat16 autocast (module docstring)."""


class BFloat16AccumulatingPPOTorchPolicy(_BFloat16Loss, AccumulatingPPOTorchPolicy):
    """Gradient accumulation (`osrs_rllib/grad_accumulation.py`) with each micro-batch's loss under the autocast."""


def policy_spec(accumulation_steps: int, precision: Precision) -> PolicySpec:
    """The `PolicySpec` of a trainable policy: RLlib's own PPO policy for k = 1 in float32 (a run without either
    option is the run it was), else the class that adds gradient accumulation, the autocast, or both."""
    steps = int(accumulation_steps)
    config = {ACCUMULATION_KEY: steps} if steps > 1 else None
    if precision == "bfloat16":
        cls = BFloat16AccumulatingPPOTorchPolicy if steps > 1 else BFloat16PPOTorchPolicy
        return PolicySpec(policy_class=cls, config=config)
    if steps > 1:
        return PolicySpec(policy_class=AccumulatingPPOTorchPolicy, config=config)
    return PolicySpec()
