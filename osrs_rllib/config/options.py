"""The config sections of the training options that are off by default: a warm start from a model
file, a novelty reward and observation noise for the learner, and the per-fight mixture a run writes at its end
(the learner's own options, the magnet and the parameter average, are in `ppo`). `osrs_rllib/training/warm_start.py`,
`osrs_rllib/training/sampling/shaping.py` and `osrs_rllib/training/mixture.py` hold what they do;
`osrs_rllib/config/schema.py` puts them in `init`, `env` and `mixture`.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, field_validator

from common.validation import Invalid
from envs.nh.contract import OBS_LAYOUT
from osrs_rllib.config.types import NonNegativeInt, NonNegativeStepSchedule, StepSchedule, _known_once, _Section

__all__ = ["InitConfig", "MixtureConfig", "NoveltyConfig", "ObservationNoiseConfig"]


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
