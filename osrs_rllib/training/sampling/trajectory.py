"""One agent's trajectory within a fragment of the lockstep sampler (`osrs_rllib/training/sampling/lockstep.py`): its
rows, collected as lists by the dict path or as columns by the array path (`osrs_rllib/training/sampling/arrays.py`).

Apart from both loops so that the array path need not import the sampler that drives it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from ray.rllib.policy.sample_batch import SampleBatch

SB = SampleBatch


@dataclass
class Trajectory:
    """One agent's steps within one fragment of one episode."""

    policy_id: str
    agent_id: Any
    agent_index: int
    episode_id: int
    t0: int
    obs: list[np.ndarray] = field(default_factory=list)
    actions: list[np.ndarray] = field(default_factory=list)
    rewards: list[float] = field(default_factory=list)
    logp: list[float] = field(default_factory=list)
    dist_inputs: list[np.ndarray] = field(default_factory=list)
    vf_preds: list[float] = field(default_factory=list)
    terminated: bool = False
    truncated: bool = False
    gathered: dict[str, np.ndarray] | None = None
    """The array path's columns (`ArrayPath.gather`), in place of the lists above."""

    @property
    def size(self) -> int:
        return len(self.gathered[SB.REWARDS]) if self.gathered is not None else len(self.rewards)

    def columns(self) -> dict[str, np.ndarray]:
        """The trajectory's rows as the batch's columns (observations, actions, rewards, log-probabilities, values
        and distribution inputs)."""
        if self.gathered is not None:
            return dict(self.gathered)
        columns = {
            SB.OBS: np.stack(self.obs),
            SB.ACTIONS: np.stack(self.actions),
            SB.REWARDS: np.asarray(self.rewards, dtype=np.float32),
            SB.ACTION_LOGP: np.asarray(self.logp, dtype=np.float32),
            SB.VF_PREDS: np.asarray(self.vf_preds, dtype=np.float32),
        }
        if self.dist_inputs:
            columns[SB.ACTION_DIST_INPUTS] = np.stack(self.dist_inputs)
        return columns


def close_trajectory(
    traj: Trajectory,
    terminated: bool,
    final_obs: Any,
    flatten: Callable[[str, Any], np.ndarray],
    done: list[Trajectory],
    bootstrap: list[tuple[Trajectory, np.ndarray]],
) -> None:
    """End `traj` with its episode: a terminated one is done (no bootstrap), a truncated one is bootstrapped from
    the observation it was cut at (`final_obs`, which the environment must have given).

    Raises:
        RuntimeError: A truncated agent without a final observation.
    """
    traj.terminated, traj.truncated = terminated, not terminated
    if terminated:
        done.append(traj)
        return
    if final_obs is None:
        raise RuntimeError(f"agent {traj.agent_id!r} was truncated without a final observation")
    bootstrap.append((traj, flatten(traj.policy_id, final_obs)))
