"""A running average of a learner's parameters, kept beside it and played as a model of its own.

Why: in a two-player zero-sum game, a learner that best-responds to its opponents circles around the equilibrium
instead of reaching it, and its last iterate is always at some point of that circle, where a fresh exploiter finds
the line it currently overplays. An average of the iterates sits nearer the centre. Yazıcı et al. ("The Unusual
Effectiveness of Averaging in GAN Training", ICLR 2019) keep an exponential moving average of one player's
parameters *outside* the training loop (the game's dynamics are untouched) and show that it shrinks the circling's
amplitude in bilinear games and improves every GAN they trained; the average, not the last iterate, is what they
evaluate. This module is that average for main's network: a frozen twin whose parameters follow main's after
every optimiser step, never read by the learner, exported with each checkpoint as a model file of its own
(``average.nhmodel``). Here a per-fight mixture of late models read lower than the last iterate against a fresh
exploiter (docs/league.md); the average is one network, playable as deployed.

The decay has TensorFlow's ``ExponentialMovingAverage`` warm-up, ``min(decay, (1 + n) / (10 + n))`` after n
updates, so the random first weights leave the average within the first few thousand updates instead of weighing
on it for the whole run. The running normalisation statistics (buffers) are copied, not averaged: the average
reads its inputs scaled as main reads them now (`policies.magnet.ema_update`).

Plain torch, no RLlib: the learner's policy class (`osrs_rllib/training/learner/ppo_policy.py`) owns one.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import torch
from torch import nn

from policies.magnet import copy_network, ema_update
from policies.network import NHPolicyNetwork

WARMUP_OFFSET = 10.0
"""The warm-up's ``(1 + n) / (WARMUP_OFFSET + n)``: TensorFlow's ``ExponentialMovingAverage(num_updates=n)``."""
UPDATES_KEY = "__updates__"
"""The update count inside `ParameterAverage.state`, beside the network's state dict."""


def warmup_decay(decay: float, updates: int) -> float:
    """The decay of update number `updates` (0 for the first): never more than `decay`, less while the average is
    young, so that it forgets the network's first weights as fast as they are left behind."""
    return min(decay, (1.0 + updates) / (WARMUP_OFFSET + updates))


class ParameterAverage:
    """An exponential moving average of a network's parameters (the module docstring says why)."""

    def __init__(self, learner: NHPolicyNetwork, decay: float) -> None:
        if not 0.0 < decay < 1.0:
            raise ValueError(f"an average's decay must be in (0, 1), got {decay}")
        self.decay = float(decay)
        self.net = copy_network(learner)
        self.updates = 0

    def follow(self, learner: nn.Module) -> None:
        """One step toward the learner's parameters (after each optimiser step)."""
        ema_update(self.net, learner, warmup_decay(self.decay, self.updates))
        self.updates += 1

    def reset(self, learner: nn.Module) -> None:
        """Start over at the learner's weights as they are now (a warm start: the model the run starts from)."""
        self.net.load_state_dict(learner.state_dict())
        self.updates = 0

    def state(self) -> dict[str, np.ndarray]:
        """What a checkpoint keeps: the network's state dict, dtype for dtype, and the update count."""
        saved = {k: v.detach().cpu().numpy().copy() for k, v in self.net.state_dict().items()}
        saved[UPDATES_KEY] = np.asarray(self.updates, dtype=np.int64)
        return saved

    def load_state(self, state: Mapping[str, np.ndarray]) -> None:
        state = dict(state)
        self.updates = int(np.asarray(state.pop(UPDATES_KEY, 0)))
        device = next(self.net.parameters()).device
        self.net.load_state_dict({k: torch.as_tensor(np.asarray(v)).to(device) for k, v in state.items()})


__all__ = ["ParameterAverage", "warmup_decay"]
