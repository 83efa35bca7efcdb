"""The trainable policies' class: RLlib's PPO torch policy (old API stack) with the three options of ``ppo:`` that
change the update, each off unless its key says otherwise.

* ``ppo.grad_accumulation_steps`` (`osrs_rllib/training/learner/accumulation.py`): each minibatch's gradient summed over
  k micro-batches, for memory.
* ``ppo.learner_precision`` (`osrs_rllib/training/learner/precision.py`): the loss's matrix products under a bfloat16
  autocast, for speed on CPUs that multiply bfloat16 natively.
* ``ppo.magnet`` (`policies/magnet.py`): main's loss adds ``α · Σ_heads KL(π ‖ ρ)`` toward a magnet ρ (magnetic mirror
  descent); the EMA magnet follows main's network after every optimiser step, rides in every checkpoint (the
  policy's state) and is restored by ``--resume``; ``magnet/kl/<head>`` and ``magnet/coeff`` go to TensorBoard.
* ``ppo.average`` (`policies/averaging.py`): a running average of main's parameters, outside the loss, that follows
  main after every optimiser step and is exported with each checkpoint as a model of its own; in the checkpoint's
  policy state like the magnet.

With none of them on, the trainer keeps RLlib's own `PPOTorchPolicy` (`policy_spec`), so such a run is the run it
was. The magnet and the average live in the learner's process only (worker 0, where the old API stack learns): the
env runners build the same class to sample, and sampling reads neither.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import torch
from ray.rllib.policy.policy import PolicySpec
from ray.rllib.policy.sample_batch import SampleBatch
from ray.rllib.utils.annotations import override

from envs.nh.contract import Head
from osrs_rllib.training.learner.accumulation import ACCUMULATION_KEY, AccumulatingPPOTorchPolicy
from osrs_rllib.training.learner.precision import resolve
from policies.averaging import ParameterAverage
from policies.magnet import Magnet, head_kl

PRECISION_KEY = "osrs_learner_precision"
"""The policy config key that carries the resolved precision (``float32`` or ``bfloat16``)."""
MAGNET_KEY = "osrs_magnet"
"""The policy config key that carries ``ppo.magnet`` (its JSON form); absent for a policy without a magnet."""
MAGNET_STATE_KEY = "osrs_magnet_state"
"""The EMA magnet's state dict inside the policy's state (and so inside every checkpoint's ``policy_state.pkl``)."""
AVERAGE_KEY = "osrs_average_decay"
"""The policy config key that carries ``ppo.average.decay``; absent for a policy without an average."""
AVERAGE_STATE_KEY = "osrs_average_state"
"""The parameter average's state inside the policy's state (every checkpoint's ``policy_state.pkl``)."""
HEAD_NAMES: tuple[str, ...] = tuple(h.name.lower() for h in Head)
MAGNET_TAG = "magnet/"
"""Prefix of the magnet's learner statistics, which TensorBoard shows as they are (`train_report.tensorboard_tag`)."""


class NHPPOTorchPolicy(AccumulatingPPOTorchPolicy):
    """RLlib's PPO torch policy with accumulation, the bfloat16 autocast, the magnet and the parameter average
    (module docstring)."""

    def __init__(self, observation_space: Any, action_space: Any, config: dict[str, Any]) -> None:
        self.precision = str(config.get(PRECISION_KEY, "float32"))
        self.magnet_settings: Mapping[str, Any] | None = config.get(MAGNET_KEY)
        self.magnet: Magnet | None = None
        self.magnet_coeff = 0.0
        self._magnet_schedule: Any = None
        self._learns = int(config.get("worker_index", 0) or 0) == 0
        self.average_decay: float | None = config.get(AVERAGE_KEY)
        self.average: ParameterAverage | None = None
        if self.magnet_settings is not None:
            from osrs_rllib.config import StepSchedule

            self._magnet_schedule = StepSchedule.parse(self.magnet_settings["coeff"])
            self.magnet_coeff = self._magnet_schedule.initial
        super().__init__(observation_space, action_space, config)

    # -- the magnet ----------------------------------------------------------------------------------
    def _ensure_magnet(self) -> Magnet | None:
        """The learner's magnet, built on first use (the model exists only once RLlib's constructor made it)."""
        if self.magnet is None and self.magnet_settings is not None and self._learns:
            settings = self.magnet_settings
            self.magnet = Magnet.build(
                str(settings["kind"]), self.model.net, float(settings["ema_decay"]), settings.get("file")
            )
        return self.magnet

    def reset_twins(self) -> None:
        """Put the EMA magnet and the average on main's current weights: a warm start's are the model it starts
        from."""
        magnet = self._ensure_magnet()
        if magnet is not None:
            magnet.reset(self.model.net)
        average = self._ensure_average()
        if average is not None:
            average.reset(self.model.net)

    # -- the parameter average -----------------------------------------------------------------------
    def _ensure_average(self) -> ParameterAverage | None:
        """The learner's parameter average, built on first use (from main's weights as they are then)."""
        if self.average is None and self.average_decay is not None and self._learns:
            self.average = ParameterAverage(self.model.net, float(self.average_decay))
        return self.average

    def _magnet_term(self, model: Any, train_batch: SampleBatch) -> torch.Tensor:
        """``α · Σ_h mean_batch KL_h`` on the batch the PPO loss just evaluated, and its per-head statistics."""
        magnet = self._ensure_magnet()
        log_probs, model._head_log_probs = model._head_log_probs, None
        if magnet is None or log_probs is None:
            return torch.zeros((), device=self.device)
        actions = train_batch[SampleBatch.ACTIONS].long()
        theirs = magnet.log_probs(model._actor_in, model._env_mask, actions, log_probs)
        per_head = head_kl(log_probs, theirs).mean(0)
        for h, name in enumerate(HEAD_NAMES):
            model.tower_stats[f"{MAGNET_TAG}kl/{name}"] = per_head[h].detach()
        return self.magnet_coeff * per_head.sum()

    # -- RLlib's hooks -------------------------------------------------------------------------------
    def loss(self, model: Any, dist_class: Any, train_batch: Any) -> Any:
        if self.precision == "bfloat16":
            with torch.autocast(self.device.type, dtype=torch.bfloat16):
                return super().loss(model, dist_class, train_batch) + self._magnet_term(model, train_batch)
        return super().loss(model, dist_class, train_batch) + self._magnet_term(model, train_batch)

    @override(AccumulatingPPOTorchPolicy)
    def apply_gradients(self, gradients: Any) -> None:
        super().apply_gradients(gradients)
        if self.magnet is not None:
            self.magnet.follow(self.model.net)
        average = self._ensure_average()
        if average is not None:
            average.follow(self.model.net)

    def on_global_var_update(self, global_vars: dict[str, Any]) -> None:
        super().on_global_var_update(global_vars)
        if self._magnet_schedule is not None:
            self.magnet_coeff = self._magnet_schedule.value_at(global_vars["timestep"])

    def stats_fn(self, train_batch: SampleBatch) -> dict[str, Any]:
        stats = super().stats_fn(train_batch)
        if self.magnet is not None:
            stats[f"{MAGNET_TAG}coeff"] = self.magnet_coeff
            for name in HEAD_NAMES:
                key = f"{MAGNET_TAG}kl/{name}"
                stats[key] = float(torch.mean(torch.stack(self.get_tower_stats(key))))
        return stats

    def get_state(self) -> dict[str, Any]:
        state = super().get_state()
        saved = self.magnet.state() if self.magnet is not None else None
        if saved is not None:
            state[MAGNET_STATE_KEY] = saved
        average = self._ensure_average()
        if average is not None:
            state[AVERAGE_STATE_KEY] = average.state()
        return state

    def set_state(self, state: Mapping[str, Any]) -> None:
        state = dict(state)
        saved = state.pop(MAGNET_STATE_KEY, None)
        saved_average = state.pop(AVERAGE_STATE_KEY, None)
        super().set_state(state)
        magnet = self._ensure_magnet()
        if magnet is not None and saved is not None:
            magnet.load_state({k: np.asarray(v) for k, v in saved.items()})
        average = self._ensure_average()
        if average is not None and saved_average is not None:
            average.load_state({k: np.asarray(v) for k, v in saved_average.items()})


def magnet_settings(magnet: Any) -> dict[str, Any] | None:
    """The policy-config form of a ``ppo.magnet`` section (None when off); a file magnet's path made absolute, so
    the learner finds it whatever directory Ray's worker runs in."""
    if magnet is None or not magnet.enabled:
        return None
    settings = magnet.model_dump(mode="json")
    if settings.get("file"):
        settings["file"] = str(Path(settings["file"]).expanduser().resolve())
    return settings


def policy_spec(
    accumulation_steps: int, setting: str, magnet: Mapping[str, Any] | None = None, device: str = "cpu",
    average_decay: float | None = None,
) -> PolicySpec:
    """The `PolicySpec` of a trainable policy: RLlib's own PPO policy when no option is on (a run without them is
    the run it was), else `NHPPOTorchPolicy` with the options in its config. `setting` (``ppo.learner_precision``)
    is resolved for the learner's `device` on the calling process, the driver, where the old API stack learns;
    `magnet` is `magnet_settings`' form and `average_decay` ``ppo.average.decay``, each given for main only."""
    precision = resolve(setting, device)
    steps = int(accumulation_steps)
    if steps <= 1 and precision == "float32" and magnet is None and average_decay is None:
        return PolicySpec()
    config: dict[str, Any] = {PRECISION_KEY: precision}
    if steps > 1:
        config[ACCUMULATION_KEY] = steps
    if magnet is not None:
        config[MAGNET_KEY] = dict(magnet)
    if average_decay is not None:
        config[AVERAGE_KEY] = float(average_decay)
    return PolicySpec(policy_class=NHPPOTorchPolicy, config=config)
