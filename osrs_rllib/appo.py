"""APPO (``algorithm: appo``): RLlib's asynchronous PPO on the old API stack, fitted to the NH policy network.

Why a policy class of our own: RLlib's `APPOTorchPolicy` rebuilds the behaviour and the old policy's
distributions from stored ``ACTION_DIST_INPUTS`` and, for a ``MultiDiscrete`` space, splits them into
independent per-head logits; and it computes V-trace on time-major rows of ``rollout_fragment_length``
consecutive steps. Neither holds here:

* Our distribution is autoregressive: its inputs are the trunk's features and the mask, and the 12 heads are
  computed from them by a network (`policies.rllib_model.NHActionDistribution`). Rebuilt RLlib's way, the
  behaviour log-probability would use the *current* heads on old features, so every importance ratio would be
  wrong. Here the behaviour log-probability is the sampler's exact ``ACTION_LOGP`` (the column PPO's ratio uses)
  and the old policy's is computed by the target network's own heads.
* Our batches are not made of equal rows of one agent: seats finish at different ticks and a self-play fight
  gives the learner two trajectories of one env. V-trace here runs along each trajectory as stored (contiguous
  rows of one episode and agent, `trajectory_starts`), bootstrapped at its end from ``VALUES_BOOTSTRAPPED`` on
  its last row (the critic's value of the observation it was cut at, 0 after a terminal step), which both
  samplers write.

The rest is RLlib's APPO loss, term for term: V-trace targets and advantages against the target network
(IMPALA's ρ̄ and c̄, ``vtrace_clip_rho_threshold`` and ``vtrace_clip_pg_rho_threshold``, c̄ = 1), the clipped
surrogate on ``is_ratio · π/μ`` with the behaviour-to-target ratio clamped to [0, 2], the value loss on the
V-trace targets, the entropy bonus, the optional KL term.

What APPO changes against our PPO: env runners sample continuously and a learner thread in the driver trains on
batches as they arrive; the new weights reach the runners every ``appo.broadcast_interval`` updates. PPO stops
the runners while the driver learns. On a 2-core laptop both share the same two cores, so the gain is the overlap,
not more compute (`benchmarks/appo_vs_ppo.py` measures it). Kept as in PPO: the network, the schedules, gradient
clipping, the lockstep sampler, the league's policies, callbacks, checkpoints and exports.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from ray.rllib.algorithms.appo.appo_torch_policy import APPOTorchPolicy
from ray.rllib.models.modelv2 import ModelV2
from ray.rllib.policy.policy import PolicySpec
from ray.rllib.policy.sample_batch import SampleBatch
from ray.rllib.utils.annotations import override
from ray.rllib.utils.torch_utils import explained_variance

SB = SampleBatch


def trajectory_starts(eps_id: np.ndarray, agent_index: np.ndarray, t: np.ndarray) -> np.ndarray:
    """True where a row starts a new trajectory: another episode or agent than the row before, or a gap in time
    (two fragments of one trajectory that are not adjacent in the batch)."""
    starts = np.ones(len(t), dtype=bool)
    if len(t) > 1:
        starts[1:] = (eps_id[1:] != eps_id[:-1]) | (agent_index[1:] != agent_index[:-1]) | (t[1:] != t[:-1] + 1)
    return starts


def vtrace(
    log_rhos: np.ndarray,
    rewards: np.ndarray,
    values: np.ndarray,
    bootstraps: np.ndarray,
    terminated: np.ndarray,
    starts: np.ndarray,
    gamma: float,
    clip_rho: float = 1.0,
    clip_pg_rho: float = 1.0,
) -> tuple[np.ndarray, np.ndarray]:
    """V-trace targets ``vs`` and policy-gradient advantages (Espeholt et al. 2018, eq. 1 and §4.2) along
    trajectories stored one after another.

    A trajectory's next value is the following row's value inside it and `bootstraps` at its last row (the
    critic's value of the observation it was cut at; any value at a terminal row, where the discount is 0). With
    all ``log_rhos`` 0 (on-policy) ``vs`` is the λ = 1 return and the advantages are the one-step TD errors
    against ``vs``, as in IMPALA.
    """
    n = len(rewards)
    rhos = np.exp(log_rhos)
    clipped_rhos = np.minimum(clip_rho, rhos)
    cs = np.minimum(1.0, rhos)
    discounts = gamma * (1.0 - terminated.astype(np.float64))
    last = np.ones(n, dtype=bool)
    last[:-1] = starts[1:]
    next_values = np.where(last, bootstraps, np.append(values[1:], 0.0))
    deltas = clipped_rhos * (rewards + discounts * next_values - values)
    acc = np.zeros(n)
    carry = 0.0
    for i in range(n - 1, -1, -1):  # a linear recurrence; n is one learner batch (~2,000 rows): fast in Python
        if last[i]:
            carry = 0.0
        carry = deltas[i] + discounts[i] * cs[i] * carry
        acc[i] = carry
    vs = values + acc
    next_vs = np.where(last, bootstraps, np.append(vs[1:], 0.0))
    advantages = np.minimum(clip_pg_rho, rhos) * (rewards + discounts * next_vs - values)
    return vs, advantages


class NHAPPOTorchPolicy(APPOTorchPolicy):
    """RLlib's APPO policy with exact log-probabilities and V-trace along stored trajectories (module docstring).

    Its schedules (learning rate, entropy coefficient) run on PPO's clock, the agent steps *sampled*
    (`set_schedule_clock`, called by the driver after every iteration), not on IMPALA's: IMPALA passes the steps
    *trained*, each batch counted once per epoch and only the learner's own rows, which would run ``ppo.lr``'s
    ``[[env_step, value], ...]`` several times faster under APPO than under PPO.
    """

    schedule_clock: int = 0
    """PPO's schedule timestep: the algorithm's sampled agent steps as of the last iteration."""

    def set_schedule_clock(self, timestep: int) -> None:
        self.schedule_clock = int(timestep)
        self.on_global_var_update({"timestep": self.schedule_clock})

    @override(APPOTorchPolicy)
    def on_global_var_update(self, global_vars: dict[str, Any]) -> None:
        super().on_global_var_update({**global_vars, "timestep": self.schedule_clock})

    @override(APPOTorchPolicy)
    def loss(self, model: ModelV2, dist_class: Any, train_batch: SampleBatch) -> torch.Tensor:
        target_model = self.target_models[model]
        model_out, _ = model(train_batch)
        action_dist = dist_class(model_out, model)
        values = model.value_function()
        with torch.no_grad():
            target_out, _ = target_model(train_batch)
            old_logp = dist_class(target_out, target_model).logp(train_batch[SB.ACTIONS])
        actions = train_batch[SB.ACTIONS]
        logp = action_dist.logp(actions)  # last: the entropy below follows this call's actions and model
        behaviour_logp = train_batch[SB.ACTION_LOGP]

        def numpy(x: torch.Tensor) -> np.ndarray:
            return x.detach().cpu().numpy().astype(np.float64)

        vs, pg_advantages = vtrace(
            numpy(old_logp - behaviour_logp),
            numpy(train_batch[SB.REWARDS]),
            numpy(values),
            numpy(train_batch[SB.VALUES_BOOTSTRAPPED]),
            train_batch[SB.TERMINATEDS].cpu().numpy(),
            trajectory_starts(*(train_batch[k].cpu().numpy() for k in (SB.EPS_ID, SB.AGENT_INDEX, SB.T))),
            self.config["gamma"],
            self.config["vtrace_clip_rho_threshold"],
            self.config["vtrace_clip_pg_rho_threshold"],
        )
        value_targets = torch.as_tensor(vs, dtype=values.dtype, device=values.device)
        advantages = torch.as_tensor(pg_advantages, dtype=values.dtype, device=values.device)

        is_ratio = torch.clamp(torch.exp(behaviour_logp - old_logp), 0.0, 2.0)
        ratio = is_ratio * torch.exp(logp - behaviour_logp)
        self._is_ratio = is_ratio.unsqueeze(1)  # RLlib's stats_fn reads it as [T, B]
        clip = self.config["clip_param"]
        surrogate = torch.min(advantages * ratio, advantages * torch.clamp(ratio, 1 - clip, 1 + clip))
        mean_policy_loss = -surrogate.mean()
        mean_vf_loss = 0.5 * torch.pow(values - value_targets, 2.0).mean()
        mean_entropy = action_dist.entropy().mean()

        total_loss = mean_policy_loss - self.entropy_coeff * mean_entropy
        total_loss = total_loss + self.config["vf_loss_coeff"] * mean_vf_loss
        mean_kl_loss = torch.zeros((), device=total_loss.device)
        if self.config["use_kl_loss"]:
            mean_kl_loss = dist_class(target_out, target_model).kl(action_dist).mean()
            total_loss = total_loss + self.kl_coeff * mean_kl_loss

        model.tower_stats["total_loss"] = total_loss
        model.tower_stats["mean_policy_loss"] = mean_policy_loss
        model.tower_stats["mean_kl_loss"] = mean_kl_loss
        model.tower_stats["mean_vf_loss"] = mean_vf_loss
        model.tower_stats["mean_entropy"] = mean_entropy
        model.tower_stats["value_targets"] = value_targets
        model.tower_stats["vf_explained_var"] = explained_variance(value_targets, values)
        return total_loss

    @override(APPOTorchPolicy)
    def get_batch_divisibility_req(self) -> int:
        """Any batch size: the loss never reshapes a batch into time-major rows."""
        return 1


def appo_policy_spec() -> PolicySpec:
    """The `PolicySpec` of a trainable policy under APPO."""
    return PolicySpec(policy_class=NHAPPOTorchPolicy)


def set_schedule_clocks(algorithm: Any) -> None:
    """Put the driver's APPO policies on PPO's schedule clock (`NHAPPOTorchPolicy`); a no-op under PPO. The env
    runners' copies need no clock: the learning rate and entropy coefficient act in the driver's loss only."""
    from ray.rllib.utils.metrics import NUM_AGENT_STEPS_SAMPLED

    timestep = algorithm._counters[NUM_AGENT_STEPS_SAMPLED]
    for pid in algorithm.env_runner.get_policies_to_train():
        policy = algorithm.get_policy(pid)
        if isinstance(policy, NHAPPOTorchPolicy):
            policy.set_schedule_clock(timestep)
