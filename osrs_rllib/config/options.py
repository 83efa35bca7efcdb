"""The config sections of the training options that are off by default: a warm start from a model
file, a novelty reward and observation noise for the learner, the magnet of PPO's update, and the per-fight mixture
a run writes at its end. `osrs_rllib/training/warm_start.py`, `osrs_rllib/training/sampling/shaping.py`,
`osrs_rllib/training/learner/ppo_policy.py` and
`osrs_rllib/training/mixture.py` hold what they do; `osrs_rllib/config/schema.py` puts them in `init`, `env`, `ppo` and
`mixture`.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from common.validation import Invalid
from envs.nh.contract import OBS_LAYOUT
from osrs_rllib.config.types import NonNegativeInt, NonNegativeStepSchedule, StepSchedule, _known_once, _Section

__all__ = ["InitConfig", "MagnetConfig", "MixtureConfig", "NoveltyConfig", "ObservationNoiseConfig"]


OBS_IDS: tuple[str, ...] = tuple(e.id for e in OBS_LAYOUT)
"""The §15.2 entry ids, the names ``entries`` lists take."""

NOVELTY_ENTRIES: tuple[str, ...] = (
    # own weapon style (gear head) and protection prayers (prayer head)
    "player_using_melee",
    "player_using_ranged",
    "player_using_mage",
    "player_melee_prayer",
    "player_ranged_prayer",
    "player_magic_prayer",
    # both health bars: eating moves its own, attacking the opponent's
    "player_health_percent",
    "target_health_percent",
    # supplies and the boosts they give (potion, food and karambwan heads)
    "range_potion_doses",
    "combat_potion_doses",
    "super_restore_doses",
    "brew_doses",
    "food_count",
    "karambwan_count",
    "prayer_points",
    "strength_level",
    "attack_level",
    "defense_level",
    "ranged_level",
    "magic_level",
    # freezing the opponent (ice and blood spells), movement and vengeance
    "target_frozen_ticks",
    "player_is_moving",
    "player_to_target_distance",
    "is_veng_active",
)
"""Default novelty entries: those the learner's own heads move. Left out: what the opponent decides (its prayers,
weapon, vengeance), what only the clock moves (attack and food timers), constants of the episode (levels, gear
sums) and the running hit statistics, which drift with the fight's length rather than with a choice; novelty
there would pay for long fights or for the opponent's behaviour, not for exploring."""

NOISE_ENTRIES: tuple[str, ...] = (
    "player_health_percent",
    "target_health_percent",
    "prayer_points",
    "strength_level",
    "attack_level",
    "defense_level",
    "ranged_level",
    "magic_level",
    *(e.id for e in OBS_LAYOUT if 66 <= e.index <= 95),  # §15.2 66–95: the hit and prayer statistics, fractions
)
"""Default noise entries: the fractions of §15.2 (health, prayer, boosted levels, hit and prayer statistics), all
within [0, ~1], so one standard deviation in raw units means the same relative error on each. Flags, counts, tick
timers and gear sums are left out: noise there makes values the game never shows (a fractional tick count)."""


class NoveltyConfig(_Section):
    """A novelty reward for the learner (`osrs_rllib.training.sampling.shaping.NoveltyReward`): off while `scale`
    is 0."""

    scale: NonNegativeStepSchedule = StepSchedule.constant(0.0)
    """Reward per standard deviation of distance from the running mean (RMS over `entries`), a constant or
    ``[[env_step, value], ...]``; 0 = off. The §17 rewards are ±1 for the fight, so 0.001–0.01 explores without
    outweighing a hit."""
    entries: Annotated[list[str], _known_once(OBS_IDS, "observation entry", "an")] = Field(
        default_factory=lambda: list(NOVELTY_ENTRIES)
    )
    """§15.2 entry ids measured; by default those the learner's own heads move (`NOVELTY_ENTRIES`)."""
    clip: float = Field(5.0, gt=0)
    """The largest distance one entry counts, in standard deviations: one rare value cannot pay a fight's worth."""

    @property
    def enabled(self) -> bool:
        return any(v > 0 for v in self.scale.values)


class ObservationNoiseConfig(_Section):
    """Gaussian noise on entries of the learner's observation (`osrs_rllib.training.sampling.shaping.ObservationNoise`):
    off while `std` is 0."""

    std: NonNegativeStepSchedule = StepSchedule.constant(0.0)
    """Standard deviation in the entries' raw units (§15.1), a constant or ``[[env_step, value], ...]``; 0 = off."""
    entries: Annotated[list[str], _known_once(OBS_IDS, "observation entry", "an")] = Field(
        default_factory=lambda: list(NOISE_ENTRIES)
    )
    """§15.2 entry ids that get noise; by default the fractions (health, prayer, levels, hit statistics)."""

    @property
    def enabled(self) -> bool:
        return any(v > 0 for v in self.std.values)


class InitConfig(_Section):
    """A warm start (`osrs_rllib/training/warm_start.py`): every trainable policy starts from a model file's weights."""

    model: str | None = None
    """A ``*.nhmodel`` of the config's network shape (``train --init``); null = fresh networks. Ignored by
    ``--resume``, which continues from the checkpoint's weights."""
    member: NonNegativeInt | None = None
    """Which member of a per-fight mixture file to start from (``m0`` is the first the mixture lists: a run's
    latest model by its `mixture` rule); required for a mixture, since a run trains one network, and an error for a
    single model unless 0. Null: the file is a single model."""
    critic: bool = True
    """Also take the file's critic (value trunk, head and critic-input statistics). On: a PPO-trained file's critic
    already predicts the §17 returns, and a random one would feed the first iterations noisy advantages that undo
    the warm policy; a cloned file's critic is its untrained initialisation, as good as a fresh one. Off when the
    rewards changed (other `env.reward_weights`): the old values would then mislead."""


class MixtureConfig(_Section):
    """The per-fight mixture a run writes when it ends, ``models/mixture.nhmodel`` (`osrs_rllib.training.mixture`):
    main's late models, one drawn per fight, so that an exploiter must beat several policies at once. Off while
    `members` is 0. The members are chosen from the run's models in this order, each kept only if it was taken in
    the last part of the run (`from_fraction`) and is `min_gap_env_steps` from every member kept before it: the
    latest model, the best (``best.nhmodel``), then the milestones (`checkpoint.milestone_env_steps`), newest first."""

    members: NonNegativeInt = Field(0, le=16)
    """Most members; 0 = no mixture. Fewer are written when fewer models pass the rule (never fewer than 2)."""
    from_fraction: float = Field(0.5, ge=0.0, lt=1.0)
    """A member is taken at or after this fraction of the run's env steps: the run's late models."""
    min_gap_env_steps: NonNegativeInt = 1_000_000
    """Least distance in env steps between two members: a model taken just before another plays nearly as it does
    and adds nothing an exploiter has to learn anew."""

    @field_validator("members")
    @classmethod
    def _not_one(cls, value: int) -> int:
        if value == 1:
            raise Invalid("1 member", "0 (no mixture) or at least 2: a mixture of one model is that model")
        return value


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
