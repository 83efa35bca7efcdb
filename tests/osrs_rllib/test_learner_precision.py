"""``ppo.learner_precision: bfloat16``: the PPO loss's matrix products really run in bfloat16, everything PPO computes
from the network's outputs stays float32, and the update is the float32 update to bfloat16's rounding (the real
network, RLlib's real PPO loss, real gradients). ``auto`` resolves by what the CPU has."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from ray.rllib.algorithms.ppo.ppo_torch_policy import PPOTorchPolicy
from ray.rllib.policy.sample_batch import SampleBatch

from osrs_rllib.config.schema import ConfigError, load_config
from osrs_rllib.training.learner import precision as learner_precision
from osrs_rllib.training.learner.accumulation import AccumulatingPPOTorchPolicy
from osrs_rllib.training.learner.ppo_policy import PRECISION_KEY, NHPPOTorchPolicy, policy_spec
from osrs_rllib.training.learner.precision import (
    describe,
    resolve,
)
from policies.network import NHPolicyNetwork

SMOKE = Path(__file__).resolve().parents[2] / "configs" / "smoke.yml"
NH = SMOKE.parent / "nh.yml"


def gradients(
    setting: dict[str, Any], cls: type, steps: int = 1, extra: dict[str, Any] | None = None
) -> tuple[torch.Tensor, dict[str, Any], list[Any]]:
    """The flattened gradient of one PPO loss on the fixture's batch, its learner statistics, and the dtypes
    every Linear layer of the network produced during that loss."""
    config = {**setting["config"], "grad_accumulation_steps": steps, **(extra or {})}
    policy = cls(setting["space"], setting["action_space"], config)
    policy.model.load_state_dict({k: torch.as_tensor(v) for k, v in setting["weights"].items()})
    dtypes: list[Any] = []
    hooks = [
        m.register_forward_hook(lambda _m, _i, out: dtypes.append(out.dtype))
        for m in policy.model.modules()
        if isinstance(m, torch.nn.Linear)
    ]
    grads, info = policy.compute_gradients(SampleBatch({k: v.copy() for k, v in setting["batch"].items()}))
    for hook in hooks:
        hook.remove()
    assert all(p.dtype == torch.float32 for p in policy.model.parameters())  # float32 master weights
    flat = torch.cat([torch.as_tensor(g).flatten() for g in grads if g is not None])
    return flat, info["learner_stats"], dtypes


@pytest.mark.parametrize("steps", [1, 4])
def test_bfloat16_loss_is_the_float32_loss_to_rounding(setting: dict[str, Any], steps: int) -> None:
    base_cls = PPOTorchPolicy if steps == 1 else AccumulatingPPOTorchPolicy
    exact, exact_stats, exact_dtypes = gradients(setting, base_cls, steps)
    rounded, rounded_stats, rounded_dtypes = gradients(setting, NHPPOTorchPolicy, steps, {PRECISION_KEY: "bfloat16"})
    assert exact_dtypes and set(exact_dtypes) == {torch.float32}
    assert rounded_dtypes and set(rounded_dtypes) == {torch.bfloat16}  # every product of the loss ran in bfloat16
    assert torch.isfinite(rounded).all() and rounded.abs().sum() > 0
    cosine = torch.nn.functional.cosine_similarity(exact, rounded, dim=0).item()
    assert cosine > 0.99, cosine
    assert rounded.norm().item() == pytest.approx(exact.norm().item(), rel=0.05)
    for key in ("policy_loss", "vf_loss", "entropy"):
        assert rounded_stats[key] == pytest.approx(exact_stats[key], rel=0.02, abs=1e-3), key


def test_network_outputs_float32_under_autocast() -> None:
    torch.manual_seed(0)
    net = NHPolicyNetwork(176, 269)
    obs, critic, mask = torch.randn(64, 176), torch.randn(64, 269), torch.ones(64, 45)
    with torch.no_grad():
        actions, _ = net(obs, mask)
        exact = net.head_log_probs(net.features(obs), mask, actions)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            features = net.features(obs)
            log_probs = net.head_log_probs(features, mask, actions)
            value = net.value(critic)
    assert features.dtype == torch.bfloat16  # the trunk did run in bfloat16
    assert log_probs.dtype == torch.float32 and value.dtype == torch.float32
    legal = exact > -1e6
    np.testing.assert_allclose(log_probs[legal].numpy(), exact[legal].numpy(), atol=0.05)


def test_policy_spec_and_the_config_key() -> None:
    assert policy_spec(1, "float32").policy_class is None  # RLlib's own policy: the default run is unchanged
    spec = policy_spec(1, "bfloat16")
    assert spec.policy_class is NHPPOTorchPolicy and spec.config == {PRECISION_KEY: "bfloat16"}
    spec = policy_spec(3, "bfloat16")
    assert spec.policy_class is NHPPOTorchPolicy
    assert spec.config == {PRECISION_KEY: "bfloat16", "grad_accumulation_steps": 3}
    assert load_config(SMOKE, ["ppo.learner_precision=bfloat16"]).ppo.learner_precision == "bfloat16"
    with pytest.raises(ConfigError) as err:
        load_config(SMOKE, ["ppo.learner_precision=float16"])
    assert "ppo.learner_precision" in str(err.value) and "--set" in str(err.value)  # the key and where it came from


@pytest.mark.parametrize("native", [False, True])
def test_auto_is_bfloat16_only_where_the_cpu_multiplies_it_natively(
    monkeypatch: pytest.MonkeyPatch, native: bool
) -> None:
    for name in learner_precision.BFLOAT16_CPU_CHECKS:
        monkeypatch.setattr(torch.cpu, name, lambda native=native: native, raising=False)
    expected = "bfloat16" if native else "float32"
    assert resolve("auto") == expected
    assert (policy_spec(1, "auto").policy_class is NHPPOTorchPolicy) is native
    assert describe("auto") == (
        "learner: bfloat16 (ppo.learner_precision: auto; this CPU multiplies bfloat16 natively)"
        if native
        else "learner: float32 (ppo.learner_precision: auto; no native bfloat16 on this CPU)"
    )
    # an explicit setting is itself on any CPU
    assert resolve("float32") == "float32" and resolve("bfloat16") == "bfloat16"
    assert describe("float32") == "learner: float32 (ppo.learner_precision: float32)"
    with pytest.raises(ValueError, match="float16"):
        resolve("float16")


def test_auto_follows_torchs_own_detection_on_this_machine() -> None:
    native = bool(torch.cpu._is_avx512_bf16_supported() or torch.cpu._is_amx_tile_supported())
    assert resolve("auto") == ("bfloat16" if native else "float32")


def test_auto_is_the_default_and_the_main_jobs_setting() -> None:
    assert load_config(NH).ppo.learner_precision == "auto"
    assert load_config(SMOKE).ppo.learner_precision == "auto"
    assert load_config(SMOKE, ["ppo.learner_precision=float32"]).ppo.learner_precision == "float32"
