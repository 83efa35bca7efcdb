"""The RLlib `Policy` plumbing shared by opponents that act but never learn (ladder rungs, frozen model files).

RLlib's old API stack asks a policy for far more than acting: view requirements, log-likelihoods, weights to
sync, a learning step. An opponent that only acts answers those the same way whatever it is, so the answers
live here once and a subclass writes only how it turns a batch of observations into actions.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import tree
from ray.rllib.models.modelv2 import restore_original_dimensions
from ray.rllib.policy.policy import Policy
from ray.rllib.policy.sample_batch import SampleBatch


class FixedPolicy(Policy):
    """A policy that acts from the env's ``observations`` / ``action_mask`` entries and has nothing to train."""

    def act_batch(self, obs: Mapping[str, np.ndarray]) -> np.ndarray:
        """The (batch, 12) int64 actions for a batch of Dict observations, keyed as the environment keys them."""
        raise NotImplementedError

    def init_view_requirements(self) -> None:
        super().init_view_requirements()
        infos = self.view_requirements[SampleBatch.INFOS]
        infos.used_for_training = False
        infos.used_for_compute_actions = False

    def _unflatten(self, obs_batch: Any) -> Mapping[str, np.ndarray]:
        if isinstance(obs_batch, Mapping):
            return {k: np.asarray(v) for k, v in obs_batch.items()}
        return restore_original_dimensions(np.asarray(obs_batch, dtype=np.float32), self.observation_space, "numpy")

    def compute_actions(
        self,
        obs_batch: Any,
        state_batches: Any = None,
        prev_action_batch: Any = None,
        prev_reward_batch: Any = None,
        info_batch: Any = None,
        episodes: Any = None,
        explore: bool | None = None,
        timestep: int | None = None,
        **kwargs: Any,
    ) -> tuple[np.ndarray, list[Any], dict[str, Any]]:
        return np.asarray(self.act_batch(self._unflatten(obs_batch)), dtype=np.int64), [], {}

    def learn_on_batch(self, samples: SampleBatch) -> dict[str, Any]:
        return {}

    def compute_log_likelihoods(self, actions: Any, obs_batch: Any, *args: Any, **kwargs: Any) -> np.ndarray:
        return np.zeros(len(tree.flatten(obs_batch)[0]), dtype=np.float32)

    def get_weights(self) -> dict[str, Any]:
        return {}

    def set_weights(self, weights: Mapping[str, Any]) -> None:
        return None
