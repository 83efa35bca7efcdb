"""Training-only changes to what the learner sees and earns: a novelty reward and observation noise.

Both act in `osrs_rllib.training.sampling.TrainingEnv` on the learner's seats only (seat 0, and seat 1 when the learner
plays itself), never on the critic's full-state input or an opponent's observation, and never in evaluation,
`fight`, `rate` or serving, which do not build a `TrainingEnv`. Both are off by default (a scale or standard
deviation of 0), and off they draw no random number and change no value, so a run without them is bit for bit the
run it was before they existed.

* **Novelty reward** (`NoveltyReward`): ``scale × distance`` of chosen §15.2 entries of the observation the learner
  reaches from their running mean, each entry measured in its running standard deviation. It pays for reaching
  states the agent has rarely been in, on entries its own actions move (`NOVELTY_ENTRIES`), so that it explores
  what it can do rather than what the opponent does to it.
* **Observation noise** (`ObservationNoise`): Gaussian noise of a scheduled standard deviation, in the entries' raw
  units (§15.1), added to chosen entries of the learner's (stacked) observation: robustness to states and readings
  a little off those it trained on.

The schedules are functions of the trainer's sampled env steps (`osrs_rllib.config.schema.StepSchedule`, as ``ppo.lr``);
the trainer pushes the count to every environment after each iteration.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from envs.nh.contract import OBS_SIZE
from osrs_rllib.config import OBS_IDS

ScheduleFn = Callable[[float], float]
"""A value as a function of the trainer's sampled env steps (`osrs_rllib.config.schema.StepSchedule.value_at`)."""

NOVELTY_MIN_STD = 0.05
"""Floor of an entry's running standard deviation in the novelty distance (raw units): an entry that has barely
moved yet (a dose count early in a fight) would otherwise turn its first change into a huge reward."""
NOVELTY_WARMUP_SAMPLES = 2
"""Observations the running moments need before a novelty reward is paid (one sample has no variance)."""


def entry_indices(entries: Sequence[str]) -> npt.NDArray[np.int64]:
    """Indices of §15.2 entry ids in one 176-entry frame.

    Raises:
        ValueError: An id that is not in the layout (the config validates them first, with a suggestion).
    """
    index = {name: i for i, name in enumerate(OBS_IDS)}
    unknown = [e for e in entries if e not in index]
    if unknown:
        raise ValueError(f"unknown observation entries {unknown}")
    return np.array([index[e] for e in entries], dtype=np.int64)


class RunningMoments:
    """Count, mean and population variance of vectors seen so far (Welford, float64)."""

    def __init__(self, size: int) -> None:
        self.count = 0
        self.mean = np.zeros(size, dtype=np.float64)
        self._m2 = np.zeros(size, dtype=np.float64)

    def update(self, x: npt.ArrayLike) -> None:
        v = np.asarray(x, dtype=np.float64)
        self.count += 1
        delta = v - self.mean
        self.mean += delta / self.count
        self._m2 += delta * (v - self.mean)

    @property
    def var(self) -> npt.NDArray[np.float64]:
        return self._m2 / self.count if self.count else np.ones_like(self._m2)


class NoveltyReward:
    """``scale(steps) × RMS_j clip(|x_j − mean_j| / max(std_j, NOVELTY_MIN_STD), clip)`` over the chosen entries.

    The root mean square over the entries, not the sum, keeps the reward's size independent of how many entries
    are chosen: a scale of 0.01 pays about 0.01 for an observation one standard deviation away from the mean on
    every entry. The clip bounds what one rare value (a first brew sip) can pay. The moments are updated with each
    observation *after* its reward, so an observation is judged against what came before it; each environment keeps
    its own moments (they converge to the same ones) and starts them anew with the process (a resume).

    Args:
        scale: The scale as a function of the trainer's sampled env steps.
        entries: §15.2 entry ids.
        clip: The largest per-entry distance, in standard deviations.
    """

    def __init__(self, scale: ScheduleFn, entries: Sequence[str], clip: float) -> None:
        self.scale = scale
        self.indices = entry_indices(entries)
        self.clip = float(clip)
        self.moments = RunningMoments(len(self.indices))

    def distance(self, frame: npt.ArrayLike) -> float:
        """How far one 176-entry frame is from the running mean (0 before `NOVELTY_WARMUP_SAMPLES`)."""
        if self.moments.count < NOVELTY_WARMUP_SAMPLES:
            return 0.0
        x = np.asarray(frame, dtype=np.float64)[self.indices]
        std = np.maximum(np.sqrt(self.moments.var), NOVELTY_MIN_STD)
        z = np.minimum(np.abs(x - self.moments.mean) / std, self.clip)
        return float(np.sqrt(np.mean(z * z)))

    def observe(self, frame: npt.ArrayLike) -> None:
        """Add a frame to the running moments (reset observations: part of the mean, no reward)."""
        self.moments.update(np.asarray(frame, dtype=np.float64)[self.indices])

    def reward(self, frame: npt.ArrayLike, steps: float) -> float:
        """The reward for reaching `frame` at `steps` sampled env steps; the frame then joins the moments."""
        scale = float(self.scale(steps))
        value = scale * self.distance(frame) if scale > 0 else 0.0
        self.observe(frame)
        return value


class ObservationNoise:
    """Adds ``N(0, std(steps)²)`` to the chosen entries of every stacked frame of an observation.

    Each frame's copy of an entry draws its own noise at every tick (with ``frame_stack: 1``, nh.yml's, one reading
    per tick). The noise has its own generator, so the rest of the run (opponent draws, simulator seeds) draws what
    it drew without noise.

    Args:
        std: The standard deviation, in the entries' raw units, as a function of the sampled env steps.
        entries: §15.2 entry ids.
        frames: Frames in the stacked observation (each `OBS_SIZE` long).
        rng: The noise's own generator.
    """

    def __init__(self, std: ScheduleFn, entries: Sequence[str], frames: int, rng: np.random.Generator) -> None:
        self.std = std
        one = entry_indices(entries)
        self.indices = np.concatenate([one + k * OBS_SIZE for k in range(frames)])
        self.rng = rng

    def apply(self, stacked: npt.NDArray[np.float32], steps: float) -> npt.NDArray[np.float32]:
        """`stacked` with noise added to the chosen entries (a new array; `stacked` itself is left alone)."""
        std = float(self.std(steps))
        if std <= 0:
            return stacked
        out = np.array(stacked, dtype=np.float32, copy=True)
        out[self.indices] += self.rng.normal(0.0, std, size=len(self.indices)).astype(np.float32)
        return out
