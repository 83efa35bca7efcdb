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
``float32`` keeps RLlib's update as it is. The autocast itself is applied by the trainable policies' class
(`osrs_rllib/training/learner/ppo_policy.py`).

``auto`` (the default) is ``bfloat16`` where the learner's CPU multiplies bfloat16 natively (AVX512-BF16 or AMX, as
torch's own dispatch detects them) and ``float32`` elsewhere: without those instructions the autocast only adds
conversions. Measured on `nh.yml` (docs/training.md, "Where the time goes"), the bfloat16 learner trains 1.09-1.12
times the env steps of the float32 one in the same minutes, and its curves against the baseline and the expert stay
within the spread of the float32 learner's (one seed per setting).
"""

from __future__ import annotations

from typing import Literal

import torch

Precision = Literal["float32", "bfloat16"]
AUTO = "auto"
BFLOAT16_CPU_CHECKS = ("_is_avx512_bf16_supported", "_is_amx_tile_supported")
"""torch's own checks (`torch.cpu`) for the instructions that multiply bfloat16 matrices natively."""


def cpu_has_bfloat16() -> bool:
    """Whether this process's CPU has native bfloat16 matrix instructions, by torch's detection (which is what
    decides whether its bfloat16 kernels are fast); False where this torch has no such check."""
    for name in BFLOAT16_CPU_CHECKS:
        check = getattr(torch.cpu, name, None)
        if check is not None and bool(check()):
            return True
    return False


def device_has_bfloat16(device: str) -> bool:
    """Whether the learner's device multiplies bfloat16 natively: the CPU's instructions, or a CUDA GPU that torch
    says supports it (Ampere and later)."""
    if device == "cuda":
        return bool(torch.cuda.is_available() and torch.cuda.is_bf16_supported())
    return cpu_has_bfloat16()


def resolve(setting: str, device: str = "cpu") -> Precision:
    """The precision a setting means for a learner on `device`: ``auto`` becomes ``bfloat16`` where the device
    multiplies it natively, else ``float32``; the other two are themselves."""
    if setting == AUTO:
        return "bfloat16" if device_has_bfloat16(device) else "float32"
    if setting not in ("float32", "bfloat16"):
        raise ValueError(f"learner precision must be auto, float32 or bfloat16, got {setting!r}")
    return setting  # type: ignore[return-value]


def describe(setting: str, device: str = "cpu") -> str:
    """The run's start-up line: what the learner computes in, and why (for ``auto``, what its device has)."""
    precision = resolve(setting, device)
    if setting != AUTO:
        return f"learner: {precision} (ppo.learner_precision: {setting})"
    where = "this GPU" if device == "cuda" else "this CPU"
    why = f"{where} multiplies bfloat16 natively" if precision == "bfloat16" else f"no native bfloat16 on {where}"
    return f"learner: {precision} (ppo.learner_precision: auto; {why})"
