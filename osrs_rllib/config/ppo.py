"""The ``ppo:`` section of the training config: PPO's hyperparameters and the two things main's learner may keep
beside its network, the magnet its loss is pulled toward (`MagnetConfig`) and the running average of its parameters
(`AverageConfig`). `osrs_rllib/training/algorithm.py` turns the section into RLlib's `PPOConfig`;
`osrs_rllib/training/learner/ppo_policy.py` holds the update's options."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, PlainValidator, field_validator, model_validator

from common.suggest import closest
from common.validation import Invalid, one_of
from osrs_rllib.config.types import (
    NonNegativeStepSchedule,
    PositiveInt,
    PositiveStepSchedule,
    StepSchedule,
    _fragment_length,
    _learner_threads,
    _Section,
)
from policies.head_weights import head_names

__all__ = ["AverageConfig", "MagnetConfig", "PPOConfig"]


class AverageConfig(_Section):
    """A running average of main's parameters beside main (`policies/averaging.py`): an exponential moving average
    outside the loss, so training is the same with it or without it, exported with each checkpoint as
    ``average.nhmodel`` (and ``models/average.nhmodel``). An average of the iterates sits nearer the equilibrium
    than the last iterate of a learner that circles it (Yazıcı et al., ICLR 2019; docs/league.md, "Regularised
    self-play"). Off while `decay` is 0."""

    decay: float = Field(0.0, ge=0.0, lt=1.0)
    """Per optimiser step: ``average ← d · average + (1 − d) · main`` (with a warm-up, `policies.averaging`). With
    ``nh.yml``'s 16 optimiser steps per 8,192-env-step iteration, 0.9998 weighs main over about its last 5,000
    steps (~2.6M env steps); 0 turns it off."""

    @property
    def enabled(self) -> bool:
        return self.decay > 0.0


class MagnetConfig(_Section):
    """Magnetic mirror descent's regulariser (`policies/magnet.py`, `osrs_rllib/training/learner/ppo_policy.py`): main's
    PPO loss adds ``coeff · Σ_heads KL(π ‖ magnet)`` over the legal values of each head along the batch's own earlier
    choices, so that self-play's last iterate settles at a regularised equilibrium instead of chasing best responses
    (docs/league.md, "Regularised self-play"). Main only: the exploiters are best responses by design. Off while `kind`
    is none."""

    kind: Literal["none", "uniform", "ema", "file"] = "none"
    """``uniform``: each head's legal values equally likely (the gradient of an entropy bonus over legal values, as
    in the MMD paper's deep RL runs); ``ema``: an exponential moving average of main's own network, updated after
    every optimiser step (EMAgnet); ``file``: a frozen model file (`file`), e.g. a shipped model to stay near."""
    coeff: NonNegativeStepSchedule = StepSchedule.constant(0.0)
    """α, a constant or ``[[step, value], ...]`` on the clock of ``ppo.entropy_coeff`` (RLlib's sampled agent
    steps); the papers' best runs used 0.05-0.2 (Rudolph et al.), annealed or constant."""
    ema_decay: float = Field(0.999, ge=0.0, lt=1.0)
    """The EMA magnet's decay per optimiser step (``kind: ema``): ``magnet ← d · magnet + (1 − d) · main``. With
    ``nh.yml``'s 16 optimiser steps per 8,192-step iteration, 0.999 averages main over the last ~1,000 steps (~500k
    env steps)."""
    file: str | None = None
    """The model file of ``kind: file`` (a single model of the config's network shape); unused otherwise."""

    @property
    def enabled(self) -> bool:
        return self.kind != "none"

    @model_validator(mode="after")
    def _check_kind(self) -> MagnetConfig:
        if self.kind == "file" and not self.file:
            raise Invalid("kind file without a file", "a model file (*.nhmodel) in ppo.magnet.file", field="file")
        if self.kind != "file" and self.file:
            raise Invalid(f"a file with kind {self.kind}", "kind: file, or no file", field="file", related=("kind",))
        if self.kind == "none" and any(v > 0 for v in self.coeff.values):
            raise Invalid("a coefficient > 0 with kind none", "a kind (uniform, ema, file) or coeff 0", field="coeff",
                          related=("kind",))
        if self.kind != "none" and not any(v > 0 for v in self.coeff.values):
            raise Invalid(f"kind {self.kind} with coeff 0 everywhere", "a coefficient > 0 somewhere, or kind none",
                          field="coeff", related=("kind",))
        return self


class PPOConfig(_Section):
    """PPO's hyperparameters, all explicit: RLlib's defaults are not the ones that train NH agents."""

    gamma: float = Field(0.99, gt=0, le=1)
    """Discount per tick; 0.99 gives a ~100-tick horizon, longer than a typical kill sequence."""
    gae_lambda: float = Field(0.95, ge=0, le=1)
    """GAE λ: bias/variance trade-off of the advantage estimate; 0.95 is the usual PPO value."""
    clip_param: float = Field(0.2, gt=0)
    """PPO's policy-ratio clip ε; 0.2 as in the PPO paper."""
    vf_clip_param: float | None = Field(10.0, gt=0)
    """RLlib clips the *squared* value error at this; 10 only catches outliers (returns are within ±~3);
    null turns it off."""
    vf_loss_coeff: float = Field(0.5, ge=0)
    """Weight of the value loss in the total loss (0.5, CleanRL's value)."""
    entropy_coeff: NonNegativeStepSchedule = StepSchedule.constant(0.01)
    """Entropy bonus, a constant or ``[[step, value], ...]``; 0.01 keeps the 12 action heads exploring."""
    head_entropy_weights: dict[str, float] = Field(default_factory=dict)
    """Multipliers of the entropy bonus per action head, by head name (``{prayer: 4, attack: 4}``); heads not
    named weigh 1, so the default is PPO's plain sum. Why per head: the prayer and attack-style choices are a
    guessing game (spec §6.5: the protection up when the hit is made is what counts), where a fixed rule is what
    an exploiter reads (docs/league.md "What the exploiter finds"), while eating or gear choices have a right
    answer that a larger bonus on *every* head would only blur."""
    magnet: MagnetConfig = MagnetConfig()
    """Main's KL toward a magnet policy (off by default; `MagnetConfig`, docs/league.md "Regularised self-play")."""
    average: AverageConfig = AverageConfig()
    """A running average of main's parameters, exported as a model of its own (off by default; `AverageConfig`)."""
    lr: PositiveStepSchedule = StepSchedule.constant(3e-4)
    """Adam learning rate, a constant or ``[[step, value], ...]``; 3e-4 is PPO's standard starting value."""
    grad_clip: float | None = Field(0.5, gt=0)
    """Global gradient-norm clip (null = off); 0.5 as in CleanRL and SB3."""
    kl_coeff: float = Field(0.0, ge=0)
    """Initial coefficient of RLlib's adaptive KL penalty; 0 disables it (the ratio clip is enough)."""
    kl_target: float = Field(0.01, gt=0)
    """Target KL of the adaptive penalty (only read when kl_coeff > 0)."""
    train_batch_size: PositiveInt = 8192
    """Env steps per training iteration."""
    minibatch_size: PositiveInt = 1024
    """Steps per SGD minibatch (≤ train_batch_size); 8 minibatches per epoch with the defaults."""
    num_epochs: PositiveInt = 4
    """SGD passes over each train batch; 4 reuses samples without drifting far from the behaviour policy."""
    rollout_fragment_length: Annotated[int | Literal["auto"], PlainValidator(_fragment_length)] = "auto"
    """Steps each env contributes per sample call; ``auto`` = train batch / total envs, so batches fill evenly."""
    grad_accumulation_steps: PositiveInt = 1
    """Micro-batches each SGD minibatch is split into, their gradients summed (weighted by size) before one optimiser
    step: the same update with a k-th of the activations in memory (`osrs_rllib/training/learner/accumulation.py`); 1 =
    off."""
    learner_threads: Annotated[int | Literal["auto"], PlainValidator(_learner_threads)] = "auto"
    """Torch threads of the driver's learner, or ``auto``: measured per iteration, the faster of one and two kept.
    Two are ~1.7× faster on an idle machine, 5-10× slower beside any busy process
    (`osrs_rllib/training/learner/threads.py`)."""
    learner_precision: Literal["auto", "float32", "bfloat16"] = "auto"
    """Number format of the PPO update's matrix products: ``bfloat16`` autocasts the loss (float32 weights, optimiser
    and softmax; ~1.4× faster SGD steps on CPUs with bfloat16 instructions), ``auto`` does so only on such a CPU,
    `osrs_rllib/training/learner/precision.py`."""

    @field_validator("head_entropy_weights")
    @classmethod
    def _check_head_entropy_weights(cls, weights: dict[str, float]) -> dict[str, float]:
        names = head_names()
        for name, weight in weights.items():
            if name not in names:
                raise Invalid("unknown action head", one_of(names), field=name, suggestion=closest(name, names))
            if not weight >= 0:
                raise Invalid(f"got {weight!r}", "a weight ≥ 0", field=name)
        return weights

    @model_validator(mode="after")
    def _check_accumulation(self) -> PPOConfig:
        if self.grad_accumulation_steps > self.minibatch_size:
            raise Invalid(
                f"grad_accumulation_steps {self.grad_accumulation_steps} > minibatch_size {self.minibatch_size}",
                "at most one micro-batch per sample of a minibatch",
                field="grad_accumulation_steps",
                related=("minibatch_size",),
            )
        return self

    @model_validator(mode="after")
    def _check_sizes(self) -> PPOConfig:
        if self.minibatch_size > self.train_batch_size:
            raise Invalid(
                f"minibatch_size {self.minibatch_size} > train_batch_size {self.train_batch_size}",
                "minibatch_size ≤ train_batch_size",
                field="minibatch_size",
                related=("train_batch_size",),
            )
        return self
