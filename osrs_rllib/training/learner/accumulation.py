"""Gradient accumulation for RLlib's PPO (old API stack): ``ppo.grad_accumulation_steps: k``.

Each SGD minibatch is split into k micro-batches; each micro-batch's PPO loss is run forward and backward on its
own, scaled by its share of the minibatch's samples, so the gradients summed in ``.grad`` are the minibatch's own;
then the gradient norm is clipped and the optimiser steps once, as without accumulation. Only the activations of
one micro-batch are alive at a time: the point is memory (a larger ``minibatch_size`` or network than fits
otherwise), not speed, which is a little lower (k smaller matrix products instead of one).

Why the update is the same: every term of RLlib's PPO loss (the clipped surrogate, the value loss, the entropy
bonus and the KL penalty) is a mean over the minibatch's samples, and advantages are standardised over the whole
train batch before any minibatch is cut, so ``Σ_i (n_i / n) · mean_i = mean``: the same gradient to float rounding
(`tests/osrs_rllib/test_grad_accumulation.py`). The learner statistics (losses, entropy, explained variance) are
the same weighted means of the micro-batches' figures; the explained variance, not a mean, is approximated so.

With k = 1 the trainer keeps RLlib's own `PPOTorchPolicy` (`osrs_rllib.training.learner.ppo_policy.policy_spec`), so a
run without accumulation is the run it was.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import torch
from ray.rllib.algorithms.ppo.ppo_torch_policy import PPOTorchPolicy
from ray.rllib.policy.sample_batch import SampleBatch
from ray.rllib.utils.annotations import override
from ray.rllib.utils.typing import GradInfoDict, TensorType

ACCUMULATION_KEY = "grad_accumulation_steps"
"""The policy config key that carries k (RLlib keeps unknown keys of a policy's config overrides)."""


def micro_batch_bounds(size: int, steps: int) -> list[tuple[int, int]]:
    """``(start, end)`` of `steps` nearly equal, non-empty slices of `size` samples (fewer when size < steps)."""
    edges = np.linspace(0, size, min(steps, size) + 1).round().astype(int)
    return [(int(a), int(b)) for a, b in itertools.pairwise(edges) if b > a]


class AccumulatingPPOTorchPolicy(PPOTorchPolicy):
    """RLlib's PPO torch policy whose gradient step sums the gradients of k micro-batches (module docstring)."""

    def __init__(self, observation_space: Any, action_space: Any, config: dict[str, Any]) -> None:
        self.grad_accumulation_steps = int(config.get(ACCUMULATION_KEY, 1))
        super().__init__(observation_space, action_space, config)

    @override(PPOTorchPolicy)
    def _multi_gpu_parallel_grad_calc(
        self, sample_batches: list[SampleBatch]
    ) -> list[tuple[list[TensorType], GradInfoDict]]:
        """One device's loss and gradients, computed micro-batch by micro-batch (RLlib's own path on several
        devices, or with k = 1: accumulation is for a single CPU or GPU learner)."""
        if self.grad_accumulation_steps <= 1 or len(sample_batches) != 1 or len(self._optimizers) != 1:
            return super()._multi_gpu_parallel_grad_calc(sample_batches)
        batch = sample_batches[0]
        model = self.model_gpu_towers[0]
        optimizer = self._optimizers[0]
        parameters = list(model.parameters())
        for param in parameters:
            if param.grad is not None:
                param.grad.data.zero_()
        total = batch.count
        stats: dict[str, torch.Tensor] = {}
        head_entropy: list[torch.Tensor] = []
        total_loss = torch.zeros((), device=self.device)
        for start, end in micro_batch_bounds(total, self.grad_accumulation_steps):
            micro = self._lazy_tensor_dict(batch.slice(start, end), device=self.device)
            micro.set_training(True)
            share = (end - start) / total
            loss = self.loss(model, self.dist_class, micro)
            if hasattr(model, "custom_loss"):
                loss = model.custom_loss([loss], micro)[0]
            (loss * share).backward()
            total_loss = total_loss + loss.detach() * share
            for key, value in model.tower_stats.items():
                if torch.is_tensor(value) and value.dim() == 0:
                    stats[key] = stats.get(key, 0.0) + value.detach() * share
            entropy = getattr(model, "_head_entropy", None)  # NHTorchModel's per-head entropies, for its metrics
            if torch.is_tensor(entropy):
                head_entropy.append(entropy.detach())
        model.tower_stats.update(stats)
        if head_entropy:
            model._head_entropy = torch.cat(head_entropy)
        grad_info: GradInfoDict = {"allreduce_latency": 0.0}
        grad_info.update(self.extra_grad_process(optimizer, total_loss))  # the global-norm clip, once
        grads = [p.grad for p in parameters]
        return [(grads, grad_info)]
