"""``ppo.magnet``: main's PPO loss plus ``α · Σ_heads KL(π ‖ ρ)`` over legal values along the batch's own chain.

Checked against things computed outside the magnet's code: a uniform magnet's gradient is an entropy bonus's (RLlib's
own entropy term, which the magnet code never calls); the KL of a policy to its own copy is zero and to anything else
positive; what masked values hold changes nothing; the EMA moves by its decay through a real optimiser step; and a
real checkpoint written and loaded by RLlib brings the same magnet back.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from ray.rllib.algorithms.ppo.ppo_torch_policy import PPOTorchPolicy

from osrs_rllib.config.schema import ConfigError, load_config
from osrs_rllib.training.learner.ppo_policy import (
    MAGNET_KEY,
    MAGNET_STATE_KEY,
    NHPPOTorchPolicy,
    policy_spec,
)
from osrs_rllib.training.report import tensorboard_tag
from policies.magnet import Magnet, ema_update, head_kl, uniform_log_probs
from policies.network import MASKED_LOGIT, NHPolicyNetwork
from tests.osrs_rllib.learner_policies import ONE_SMALL_ITERATION, batch_of, make_policy, through_a_checkpoint

REPO = Path(__file__).resolve().parents[2]
SMOKE = REPO / "configs" / "smoke.yml"


def magnet(kind: str, coeff: float = 0.1, decay: float = 0.9, file: str | None = None) -> dict[str, Any]:
    return {"kind": kind, "coeff": coeff, "ema_decay": decay, "file": file}


def gradient(policy: Any, setting: dict[str, Any]) -> tuple[torch.Tensor, dict[str, Any]]:
    grads, info = policy.compute_gradients(batch_of(setting))
    return torch.cat([torch.as_tensor(g).flatten() for g in grads if g is not None]), info["learner_stats"]


# -- the KL itself ------------------------------------------------------------------------------------------
def chain(seed: int = 0) -> tuple[NHPolicyNetwork, torch.Tensor, torch.Tensor, torch.Tensor]:
    """A network, observations, a mask with some values ruled out, and actions it sampled under that mask."""
    torch.manual_seed(seed)
    net = NHPolicyNetwork(176, 269)
    obs = torch.randn(128, 176) * 3
    mask = (torch.rand(128, 45) > 0.3).float()
    with torch.no_grad():
        actions, _ = net(obs, mask)
    return net, obs, mask, actions


def test_kl_to_the_uniform_magnet_is_log_legal_count_minus_entropy() -> None:
    net, obs, mask, actions = chain()
    log_probs = net.head_log_probs(net.features(obs), mask, actions)
    legal = log_probs > -1e6
    entropy = -(log_probs.exp() * log_probs).sum(-1)  # as the network's own `_evaluate` computes it
    expected = legal.sum(-1).float().log() - entropy
    torch.testing.assert_close(head_kl(log_probs, uniform_log_probs(log_probs)), expected, atol=1e-5, rtol=1e-5)
    assert (legal.sum(-1) == 1).any()  # some heads have one legal value: their KL is 0, not undefined
    assert torch.all(head_kl(log_probs, uniform_log_probs(log_probs))[legal.sum(-1) == 1].abs() < 1e-6)


def test_kl_is_zero_to_itself_and_positive_to_another_policy() -> None:
    net, obs, mask, actions = chain()
    log_probs = net.head_log_probs(net.features(obs), mask, actions)
    assert head_kl(log_probs, log_probs).abs().max().item() < 1e-6
    other, *_ = chain(seed=1)
    theirs = other.head_log_probs(other.features(obs), mask, actions).detach()
    kl = head_kl(log_probs, theirs)
    assert kl.min().item() > -1e-6  # a KL is never negative
    assert kl.sum(-1).min().item() > 0  # every row differs somewhere


def test_masked_values_contribute_nothing() -> None:
    net, obs, mask, actions = chain()
    log_probs = net.head_log_probs(net.features(obs), mask, actions)
    other, *_ = chain(seed=1)
    theirs = other.head_log_probs(other.features(obs), mask, actions).detach()
    illegal = log_probs <= -1e6
    assert illegal.any()
    scrambled = theirs.masked_fill(illegal, 5.0)  # a magnet that would love every illegal value
    torch.testing.assert_close(head_kl(log_probs, scrambled), head_kl(log_probs, theirs))
    # and the uniform magnet spreads over legal values only
    uniform = uniform_log_probs(log_probs)
    assert torch.all(uniform[illegal] == MASKED_LOGIT)
    torch.testing.assert_close(uniform.exp().sum(-1), torch.ones(128, 12))


# -- the loss ------------------------------------------------------------------------------------------------
def test_uniform_magnet_gradient_is_rllibs_entropy_bonus(setting: dict[str, Any]) -> None:
    """α · KL(π ‖ uniform) = α · (log n − H): the same gradient as RLlib's entropy bonus with coefficient α."""
    plain = dict(entropy_coeff=0.0, entropy_coeff_schedule=None)
    ours, stats = gradient(make_policy(setting, **plain, **{MAGNET_KEY: magnet("uniform", 0.05)}), setting)
    theirs, _ = gradient(make_policy(setting, PPOTorchPolicy, entropy_coeff=0.05, entropy_coeff_schedule=None),
                         setting)  # fmt: skip
    torch.testing.assert_close(ours, theirs, rtol=1e-4, atol=1e-6)
    assert stats["magnet/coeff"] == 0.05
    assert all(stats[f"magnet/kl/{h}"] >= 0 for h in ("attack", "prayer", "food"))


def test_an_ema_magnet_starts_as_the_policy_and_adds_nothing(setting: dict[str, Any]) -> None:
    plain = dict(entropy_coeff=0.01, entropy_coeff_schedule=None)
    ours, stats = gradient(make_policy(setting, **plain, **{MAGNET_KEY: magnet("ema", 1.0)}), setting)
    theirs, _ = gradient(make_policy(setting, PPOTorchPolicy, **plain), setting)
    torch.testing.assert_close(ours, theirs, rtol=1e-4, atol=1e-6)
    kls = [v for k, v in stats.items() if k.startswith("magnet/kl/")]
    assert len(kls) == 12 and max(kls) < 1e-6


def test_the_ema_moves_by_its_decay_after_each_optimiser_step(setting: dict[str, Any]) -> None:
    decay = 0.9
    policy = make_policy(setting, **{MAGNET_KEY: magnet("ema", 0.1, decay)})
    policy.compute_gradients(batch_of(setting))  # the dummy loss built it already; this touches nothing
    assert isinstance(policy.magnet, Magnet) and policy.magnet.net is not None
    before = {k: v.clone() for k, v in policy.magnet.net.state_dict().items()}
    policy.learn_on_batch(batch_of(setting))  # one real step of Adam, then one EMA step
    after_policy = policy.model.net.state_dict()
    moved = 0
    parameters = {name for name, _ in policy.magnet.net.named_parameters()}
    for name, value in policy.magnet.net.state_dict().items():
        if name not in parameters:  # the statistics are the learner's own
            torch.testing.assert_close(value, after_policy[name], rtol=0, atol=0, msg=name)
            continue
        expected = decay * before[name] + (1 - decay) * after_policy[name].to(value.dtype)
        torch.testing.assert_close(value, expected, rtol=1e-6, atol=1e-7, msg=name)
        moved += int(not torch.equal(value, before[name]))
    assert moved > 10
    # and now the magnet differs from the policy, so the next loss pulls
    _, stats = gradient(policy, setting)
    assert sum(v for k, v in stats.items() if k.startswith("magnet/kl/")) > 0


def test_ema_update_averages_parameters_and_copies_statistics() -> None:
    a, b = NHPolicyNetwork(176, 269), NHPolicyNetwork(176, 269)
    b.update_normalizers(torch.randn(64, 176) * 5 + 2, torch.randn(64, 269))
    before = {k: v.clone() for k, v in a.state_dict().items()}
    ema_update(a, b, 0.75)
    parameters = {name for name, _ in a.named_parameters()}
    for name, value in a.state_dict().items():
        theirs = b.state_dict()[name]
        if name in parameters:
            torch.testing.assert_close(value, 0.75 * before[name] + 0.25 * theirs)
        else:
            assert torch.equal(value, theirs), name


def test_a_file_magnet_is_the_files_policy(setting: dict[str, Any], tmp_path: Path) -> None:
    """A magnet file holding the policy's own weights adds nothing; one holding other weights pulls."""
    from policies.model_file import save_model_file

    policy = make_policy(setting, **{MAGNET_KEY: magnet("ema", 1.0)})
    same = save_model_file(policy.model.net, tmp_path / "same.nhmodel")
    _, stats = gradient(make_policy(setting, **{MAGNET_KEY: magnet("file", 1.0, file=str(same))}), setting)
    assert max(v for k, v in stats.items() if k.startswith("magnet/kl/")) < 1e-5
    torch.manual_seed(3)
    other = NHPolicyNetwork(policy.model.net.obs_size, policy.model.net.critic_size, policy.model.net.config)
    other.load_state_dict(policy.model.net.state_dict())
    with torch.no_grad():
        other.head_out_bias.add_(torch.randn_like(other.head_out_bias))
    path = save_model_file(other, tmp_path / "other.nhmodel")
    _, stats = gradient(make_policy(setting, **{MAGNET_KEY: magnet("file", 1.0, file=str(path))}), setting)
    assert sum(v for k, v in stats.items() if k.startswith("magnet/kl/")) > 0.1


def test_only_the_learner_builds_a_magnet(setting: dict[str, Any]) -> None:
    sampler = make_policy(setting, worker_index=1, **{MAGNET_KEY: magnet("ema", 0.1)})
    assert sampler.magnet is None and MAGNET_STATE_KEY not in sampler.get_state()
    learner = make_policy(setting, **{MAGNET_KEY: magnet("ema", 0.1)})
    assert learner.magnet is not None and MAGNET_STATE_KEY in learner.get_state()


# -- the config ------------------------------------------------------------------------------------------------
def test_config_section_and_its_errors(tmp_path: Path) -> None:
    cfg = load_config(SMOKE, ["ppo.magnet.kind=ema", "ppo.magnet.coeff=[[0, 0.1], [1000000, 0.02]]"])
    assert cfg.ppo.magnet.kind == "ema" and cfg.ppo.magnet.coeff.value_at(500_000) == pytest.approx(0.06)
    assert load_config(SMOKE).ppo.magnet.enabled is False
    for sets, words in (
        (["ppo.magnet.kind=ema"], "coeff 0 everywhere"),
        (["ppo.magnet.coeff=0.1"], "kind none"),
        (["ppo.magnet.kind=file", "ppo.magnet.coeff=0.1"], "without a file"),
        (["ppo.magnet.kind=uniform", "ppo.magnet.coeff=0.1", "ppo.magnet.file=x.nhmodel"], "kind: file"),
        (["ppo.magnet.kind=magnetic", "ppo.magnet.coeff=0.1"], "ppo.magnet.kind"),
        (["ppo.magnet.ema_decay=1.0"], "ppo.magnet.ema_decay"),
    ):
        with pytest.raises(ConfigError) as err:
            load_config(SMOKE, sets)
        assert words in str(err.value) and "ppo.magnet." in str(err.value), (sets, str(err.value))


def test_main_alone_gets_the_magnet() -> None:
    from osrs_rllib.training.algorithm import build_algorithm_config

    cfg = load_config(SMOKE, ["ppo.magnet.kind=uniform", "ppo.magnet.coeff=0.05"])
    policies = build_algorithm_config(cfg, ("main", "main_exploiter_0")).policies
    assert policies["main"].policy_class is NHPPOTorchPolicy
    assert policies["main"].config[MAGNET_KEY]["kind"] == "uniform"
    assert MAGNET_KEY not in (policies["main_exploiter_0"].config or {})
    assert policy_spec(1, "float32", None).policy_class is None  # no option on: RLlib's own policy


def test_tensorboard_shows_the_magnet_under_its_own_group() -> None:
    assert tensorboard_tag("info/learner/main/learner_stats/magnet/kl/attack") == "magnet/kl/attack"
    assert tensorboard_tag("info/learner/main/learner_stats/magnet/coeff") == "magnet/coeff"
    assert tensorboard_tag("info/learner/main/learner_stats/entropy") == "learner/main/entropy"


# -- a real checkpoint -----------------------------------------------------------------------------------------
@pytest.mark.usefixtures("ray_session")
def test_a_checkpoint_brings_the_same_magnet_back(tmp_path: Path) -> None:
    """One real iteration with an EMA magnet, RLlib's own checkpoint, a new algorithm loaded from it (as
    ``--resume`` does): the magnet is the one saved, dtype for dtype, and not the policy's weights."""
    cfg = load_config(SMOKE, ["ppo.magnet.kind=ema", "ppo.magnet.coeff=0.1", "ppo.magnet.ema_decay=0.5",
                              *ONE_SMALL_ITERATION])  # fmt: skip
    (saved, policy_weights), (restored, _) = through_a_checkpoint(
        cfg, tmp_path, lambda policy: (policy.magnet.state(), policy.model.net.state_dict())
    )
    assert any(not np.array_equal(v, policy_weights[k].numpy()) for k, v in saved.items())  # it lags the policy
    assert restored is not None and set(restored) == set(saved)
    for name, value in saved.items():
        assert restored[name].dtype == value.dtype, name
        np.testing.assert_array_equal(restored[name], value, err_msg=name)
