"""The config sections of the training options that are off by default: a warm start from a model
file, a novelty reward and observation noise for the learner. `osrs_rllib/warm_start.py` and
`osrs_rllib/shaping.py` hold what they do; `osrs_rllib/config.py` puts them in `init` and `env`.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from osrs_rllib.config_types import NonNegativeStepSchedule, StepSchedule, _known_once, _Section
from osrs_rllib.shaping import NOISE_ENTRIES, NOVELTY_ENTRIES, OBS_IDS

__all__ = ["InitConfig", "NoveltyConfig", "ObservationNoiseConfig"]


class NoveltyConfig(_Section):
    """A novelty reward for the learner (`osrs_rllib.shaping.NoveltyReward`): off while `scale` is 0."""

    scale: NonNegativeStepSchedule = StepSchedule.constant(0.0)
    """Reward per standard deviation of distance from the running mean (RMS over `entries`), a constant or
    ``[[env_step, value], ...]``; 0 = off. The §17 rewards are ±1 for the fight, so 0.001–0.01 explores without
    outweighing a hit."""
    entries: Annotated[list[str], _known_once(OBS_IDS, "observation entry", "an")] = Field(
        default_factory=lambda: list(NOVELTY_ENTRIES)
    )
    """§15.2 entry ids measured; by default those the learner's own heads move (`shaping.NOVELTY_ENTRIES`)."""
    clip: float = Field(5.0, gt=0)
    """The largest distance one entry counts, in standard deviations: one rare value cannot pay a fight's worth."""

    @property
    def enabled(self) -> bool:
        return any(v > 0 for v in self.scale.values)


class ObservationNoiseConfig(_Section):
    """Gaussian noise on entries of the learner's observation (`osrs_rllib.shaping.ObservationNoise`): off while
    `std` is 0."""

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
    """A warm start (`osrs_rllib/warm_start.py`): every trainable policy starts from a model file's weights."""

    model: str | None = None
    """A ``*.nhmodel`` of the config's network shape (``train --init``); null = fresh networks. Ignored by
    ``--resume``, which continues from the checkpoint's weights."""
    critic: bool = True
    """Also take the file's critic (value trunk, head and critic-input statistics). On: a PPO-trained file's critic
    already predicts the §17 returns, and a random one would feed the first iterations noisy advantages that undo
    the warm policy; a cloned file's critic is its untrained initialisation, as good as a fresh one. Off when the
    rewards changed (other `env.reward_weights`): the old values would then mislead."""
