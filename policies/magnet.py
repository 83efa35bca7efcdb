"""The magnet of magnetic mirror descent: the policy PPO's update is pulled toward, and the KL that pulls it.

Magnetic mirror descent (Sokota et al., ICLR 2023) adds to a policy-gradient learner in self-play a term
``α · KL(π_θ ‖ ρ)`` toward a *magnet* policy ρ; in a two-player zero-sum game its last iterate converges to the
equilibrium of the game regularised toward ρ (a quantal response equilibrium for a uniform ρ) instead of cycling as
best responses do. Rudolph et al. (ICLR 2026) found PPO in self-play with such a term, tuned, as good as or better
than NFSP, PSRO and the CFR-based deep methods on exact exploitability; Maidment et al. ("EMAgnet", 2026) found a
magnet that is an exponential moving average of the learner's own parameters lower still in most games. The choices
each result gives this code are in docs/league.md ("Regularised self-play").

This module is plain torch (no RLlib): the KL over one batch of the 12 autoregressive heads and the magnets' own
log-probabilities. The learner's policy class (`osrs_rllib/training/learner/ppo_policy.py`) adds the term to PPO's loss.

The KL follows the autoregressive chain as PPO's loss does: every head's distribution is conditioned on the earlier
heads *as sampled* (the batch's actions), for the policy and the magnet alike, so both see the same legal values of
each head (the env mask and the §14.2 dependency rules applied to the same earlier choices), and the term is

    KL_h(s) = Σ_{a legal in head h} π_h(a | s, a_<h) · (log π_h(a | s, a_<h) − log ρ_h(a | s, a_<h))

per head; illegal and padding entries contribute nothing (π is exactly 0 there, and they are masked besides).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor, nn

from policies.network import MASKED_LOGIT, NHPolicyNetwork

MAGNET_KINDS: tuple[str, ...] = ("none", "uniform", "ema", "file")
"""``ppo.magnet.kind``: no magnet; uniform over each head's legal values; an exponential moving average of the
learner's own network; a frozen model file."""
LEGAL_THRESHOLD = MASKED_LOGIT / 2
"""A log-probability above this is a legal value: illegal and padding entries sit at ≈ −1e9 (`policies/network.py`),
any legal value's is larger than −1e3 in practice."""


def legal_values(log_probs: Tensor) -> Tensor:
    """(B, 12, MAX) bool: the values each head could take, read off its masked log-probabilities."""
    return log_probs > LEGAL_THRESHOLD


def uniform_log_probs(log_probs: Tensor) -> Tensor:
    """The uniform magnet's log-probabilities over each head's legal values (B, 12, MAX), the same legal values as
    `log_probs` (a head with one legal value has log-probability 0 there)."""
    legal = legal_values(log_probs)
    count = legal.sum(-1, keepdim=True).clamp(min=1).to(log_probs.dtype)
    return torch.where(legal, -torch.log(count), torch.full_like(log_probs, MASKED_LOGIT))


def head_kl(log_probs: Tensor, magnet_log_probs: Tensor) -> Tensor:
    """``KL(π_h ‖ ρ_h)`` of every row and head (B, 12) over the legal values of `log_probs` (the policy's, with
    gradient); `magnet_log_probs` (no gradient) holds the magnet's on the same rows and earlier choices."""
    legal = legal_values(log_probs)
    gap = (log_probs - magnet_log_probs.detach()).masked_fill(~legal, 0.0)
    return (log_probs.exp() * gap).sum(-1)


@torch.no_grad()
def ema_update(magnet: nn.Module, source: nn.Module, decay: float) -> None:
    """``magnet ← decay · magnet + (1 − decay) · source`` over the parameters (EMAgnet's average is of parameters);
    the buffers, the running normalisation statistics, are copied: the magnet reads its inputs normalised as the
    learner reads them now. An average of the statistics lags the learner's while they still move early in a run,
    and the magnet's network then reads inputs scaled as no network was trained on: measured on
    ``configs/equilibrium/selfplay-ema.yml``, averaging them too took main's entropy from 3.6 to 0.2 and its win
    rate against the baseline to 1 % at 3.6M env steps, where copying them gives 78 % at 0.8M (docs/league.md,
    "Regularised self-play")."""
    theirs = dict(source.named_parameters())
    for name, mine in magnet.named_parameters():
        mine.mul_(decay).add_(theirs[name].to(mine.dtype), alpha=1.0 - decay)
    their_buffers = dict(source.named_buffers())
    for name, mine in magnet.named_buffers():
        mine.copy_(their_buffers[name])


def copy_network(source: NHPolicyNetwork) -> NHPolicyNetwork:
    """A frozen twin of `source` (same shape, its weights and statistics, no gradient): the EMA magnet's start."""
    twin = NHPolicyNetwork(source.obs_size, source.critic_size, source.config)
    twin.load_state_dict(source.state_dict())
    twin.requires_grad_(False)
    return twin.to(next(source.parameters()).device)


def network_log_probs(net: nn.Module, obs: Tensor, mask: Tensor, actions: Tensor) -> Tensor:
    """The log-probabilities (B, 12, MAX) a network (eager, or the TorchScript module of a model file) gives along
    the actions' chain: its own trunk on its own normalisation of the actor input, then its heads."""
    with torch.no_grad():
        return net.head_log_probs(net.features(obs), mask, actions)


def load_file_magnet(path: str, obs_size: int) -> nn.Module:
    """The TorchScript network of a single model file whose actor reads `obs_size` inputs.

    Raises:
        ValueError: The file does not load, is a per-fight mixture, or reads another input size (frame stack).
    """
    from policies.model_file import ModelFileError, load_model_file

    try:
        model = load_model_file(path)
    except ModelFileError as exc:
        raise ValueError(f"ppo.magnet.file {path}: {exc}") from None
    if model.obs_size != obs_size:
        raise ValueError(
            f"ppo.magnet.file {path}: its actor reads {model.obs_size} inputs, this run's {obs_size} (env.frame_stack "
            "must be the file's)"
        )
    return model.module


@dataclass
class Magnet:
    """The learner's magnet: uniform (no network), an EMA twin of the learner's network, or a frozen model file."""

    kind: str
    net: nn.Module | None = None
    decay: float = 0.0

    @classmethod
    def build(cls, kind: str, learner: NHPolicyNetwork, decay: float, file: str | None = None) -> Magnet:
        """The magnet of ``ppo.magnet`` for a learner's network; an EMA magnet starts as the learner's twin."""
        if kind == "uniform":
            return cls(kind)
        if kind == "ema":
            return cls(kind, copy_network(learner), float(decay))
        if kind == "file":
            if not file:
                raise ValueError("ppo.magnet.kind file needs ppo.magnet.file")
            device = next(learner.parameters()).device
            return cls(kind, load_file_magnet(file, learner.obs_size).to(device))
        raise ValueError(f"ppo.magnet.kind {kind!r}; expected one of {', '.join(MAGNET_KINDS[1:])}")

    def log_probs(self, obs: Tensor, mask: Tensor, actions: Tensor, policy_log_probs: Tensor) -> Tensor:
        """The magnet's log-probabilities on the rows and earlier choices the policy's `policy_log_probs` are of."""
        if self.net is None:
            return uniform_log_probs(policy_log_probs.detach())
        return network_log_probs(self.net, obs, mask, actions)

    def follow(self, learner: nn.Module) -> None:
        """One EMA step toward the learner's network (after each optimiser step); other magnets stay put."""
        if self.kind == "ema" and self.net is not None:
            ema_update(self.net, learner, self.decay)

    def reset(self, learner: nn.Module) -> None:
        """The EMA magnet becomes the learner's network as it is now (a warm start)."""
        if self.kind == "ema" and self.net is not None:
            self.net.load_state_dict(learner.state_dict())

    def state(self) -> dict[str, np.ndarray] | None:
        """What a checkpoint keeps: the EMA network's state dict, dtype for dtype (None for the other kinds, which
        the config rebuilds)."""
        if self.kind != "ema" or self.net is None:
            return None
        return {k: v.detach().cpu().numpy().copy() for k, v in self.net.state_dict().items()}

    def load_state(self, state: Mapping[str, np.ndarray]) -> None:
        if self.kind == "ema" and self.net is not None:
            device = next(self.net.parameters()).device
            self.net.load_state_dict({k: torch.as_tensor(np.asarray(v)).to(device) for k, v in state.items()})


__all__ = [
    "MAGNET_KINDS",
    "Magnet",
    "copy_network",
    "ema_update",
    "head_kl",
    "legal_values",
    "load_file_magnet",
    "network_log_probs",
    "uniform_log_probs",
]
