"""``ppo.average``: a running average of main's parameters beside main, outside the loss, exported as a model.

Checked from outside the averaging code: the average after real optimiser steps is the weighted sum of the
weights main actually had (recorded step by step here), with the warm-up's weights; the loss and its gradient are
the same with the average on or off; only main's learner keeps one; a real RLlib checkpoint brings the same average
back with its update count. `tests/osrs_rllib/test_train.py` checks the files a real run writes and resumes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from osrs_rllib.config.schema import ConfigError, load_config
from osrs_rllib.training.learner.ppo_policy import (
    AVERAGE_KEY,
    AVERAGE_STATE_KEY,
    policy_spec,
)
from policies.averaging import ParameterAverage, warmup_decay
from policies.network import NHPolicyNetwork
from tests.osrs_rllib.learner_policies import ONE_SMALL_ITERATION, batch_of, make_policy, through_a_checkpoint

REPO = Path(__file__).resolve().parents[2]
SMOKE = REPO / "configs" / "smoke.yml"


def test_warmup_decay_is_tensorflows_and_capped() -> None:
    assert warmup_decay(0.999, 0) == pytest.approx(0.1)
    assert warmup_decay(0.999, 90) == pytest.approx(91 / 100)
    assert warmup_decay(0.999, 10**7) == 0.999


def test_the_average_is_the_weighted_sum_of_mains_weights_after_real_steps(setting: dict[str, Any]) -> None:
    decay = 0.5
    policy = make_policy(setting, **{AVERAGE_KEY: decay})
    parameters = [name for name, _ in policy.model.net.named_parameters()]
    expected = {n: v.detach().clone() for n, v in policy.model.net.named_parameters()}
    for step in range(3):
        policy.learn_on_batch(batch_of(setting))  # epochs × minibatches real Adam steps, one average step each
        assert policy.average is not None
        # replay the steps this call made, from main's weights as they are now: the smoke setting runs one step
        now = {n: v.detach() for n, v in policy.model.net.named_parameters()}
        d = warmup_decay(decay, step)
        expected = {n: d * expected[n] + (1 - d) * now[n] for n in parameters}
        mine = dict(policy.average.net.named_parameters())
        for name in parameters:
            torch.testing.assert_close(mine[name], expected[name], rtol=1e-6, atol=1e-7, msg=name)
        assert policy.average.updates == step + 1
    # the statistics are main's own, and the average lags main
    main_buffers = dict(policy.model.net.named_buffers())
    for name, value in policy.average.net.named_buffers():
        torch.testing.assert_close(value, main_buffers[name], rtol=0, atol=0)
    assert any(not torch.equal(expected[n], now[n]) for n in parameters)


def test_the_loss_is_the_same_with_the_average_on(setting: dict[str, Any]) -> None:
    """The average is outside the game's dynamics: training with it is training without it."""
    grads = []
    for config in ({}, {AVERAGE_KEY: 0.99}):
        policy = make_policy(setting, **config)
        policy.learn_on_batch(batch_of(setting))
        g, _ = policy.compute_gradients(batch_of(setting))
        grads.append(torch.cat([torch.as_tensor(x).flatten() for x in g if x is not None]))
    torch.testing.assert_close(grads[0], grads[1], rtol=0, atol=0)


def test_state_round_trip_keeps_the_update_count() -> None:
    torch.manual_seed(0)
    learner = NHPolicyNetwork(176, 269)
    average = ParameterAverage(learner, 0.9)
    for _ in range(4):
        with torch.no_grad():
            for p in learner.parameters():
                p.add_(torch.randn_like(p))
        average.follow(learner)
    again = ParameterAverage(NHPolicyNetwork(176, 269), 0.9)
    again.load_state(average.state())
    assert again.updates == 4
    for (name, a), (_, b) in zip(average.net.state_dict().items(), again.net.state_dict().items(), strict=True):
        torch.testing.assert_close(a, b, rtol=0, atol=0, msg=name)
    with pytest.raises(ValueError, match="decay"):
        ParameterAverage(learner, 1.0)


def test_only_mains_learner_keeps_an_average(setting: dict[str, Any]) -> None:
    sampler = make_policy(setting, worker_index=1, **{AVERAGE_KEY: 0.99})
    assert sampler.average is None and AVERAGE_STATE_KEY not in sampler.get_state()
    learner = make_policy(setting, **{AVERAGE_KEY: 0.99})
    assert learner.average is not None and AVERAGE_STATE_KEY in learner.get_state()
    from osrs_rllib.training.algorithm import build_algorithm_config

    cfg = load_config(SMOKE, ["ppo.average.decay=0.999"])
    policies = build_algorithm_config(cfg, ("main", "main_exploiter_0")).policies
    assert policies["main"].config[AVERAGE_KEY] == 0.999
    assert AVERAGE_KEY not in (policies["main_exploiter_0"].config or {})
    assert policy_spec(1, "float32").policy_class is None  # nothing on: RLlib's own policy


def test_config_section_and_its_errors() -> None:
    from osrs_rllib.config import AverageConfig

    assert AverageConfig().enabled is False  # off unless a config asks (nh.yml, and so smoke.yml, does)
    assert load_config(SMOKE, ["ppo.average.decay=0.9998"]).ppo.average.decay == 0.9998
    for value in ("1.0", "-0.1"):
        with pytest.raises(ConfigError) as err:
            load_config(SMOKE, [f"ppo.average.decay={value}"])
        assert "ppo.average.decay" in str(err.value)


@pytest.mark.usefixtures("ray_session")
def test_a_checkpoint_brings_the_same_average_back(tmp_path: Path) -> None:
    """One real iteration, RLlib's own checkpoint, a new algorithm loaded from it (as ``--resume`` does)."""
    cfg = load_config(SMOKE, ["ppo.average.decay=0.5", *ONE_SMALL_ITERATION])
    saved, restored = through_a_checkpoint(cfg, tmp_path, lambda policy: policy.average.state())
    assert int(saved["__updates__"]) == 2  # 256 / 128 minibatches × 1 epoch
    assert set(restored) == set(saved)
    for name, value in saved.items():
        np.testing.assert_array_equal(restored[name], value, err_msg=name)
