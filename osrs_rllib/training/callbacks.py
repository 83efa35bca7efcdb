"""RLlib callbacks of a training run: per-episode fight metrics plus the policy's normaliser sync.

Kept apart from `train.py` because RLlib instantiates the class inside every env runner process; it must
import cheaply and hold no driver state.
"""

from __future__ import annotations

import time
from typing import Any

from osrs_rllib.training.learner import threads as learner_threads
from osrs_rllib.training.sampling.env import LEARNER_AGENT
from osrs_rllib.training.time_account import NORMALIZER_SYNC_TIMER
from policies.rllib_model import NormalizerCallbacks


class TrainingCallbacks(NormalizerCallbacks):
    """Adds the episode summary of `TrainingEnv` (see `osrs_rllib/evaluation/episode_metrics.py`) to RLlib's
    custom metrics, which RLlib averages per iteration: ``won_mean`` is the training win rate, and
    ``win_vs_<kind>_mean`` the win rate against one opponent kind (set only in that kind's episodes), and
    ``win_build_<BUILD>_mean`` / ``win_fight_type_<TYPE>_mean`` the same per build and fight type."""

    def on_episode_end(self, *, episode: Any, **kwargs: Any) -> None:
        info = episode.last_info_for(LEARNER_AGENT) or {}
        summary = info.get("episode_metrics")
        if not summary:
            return
        metrics = episode.custom_metrics
        for key, value in summary.items():
            metrics[key] = value
        kind = info.get("opponent_kind")
        if kind:
            metrics[f"win_vs_{kind}"] = summary["won"]
        # Per build and fight type, from what the simulator played (a pooled rate can hide an unlearned build).
        if info.get("build"):
            metrics[f"win_build_{info['build']}"] = summary["won"]
        if info.get("fight_mode"):
            metrics[f"win_fight_type_{info['fight_mode']}"] = summary["won"]

    def on_train_result(self, *, algorithm: Any, result: dict[str, Any], **kwargs: Any) -> None:
        """The normalisation sync, timed: RLlib has no timer around callbacks, and the run's time account
        (`osrs_rllib.training.time_account`) counts it as sync."""
        t0 = time.perf_counter()
        super().on_train_result(algorithm=algorithm, result=result, **kwargs)
        result.setdefault("timers", {})[NORMALIZER_SYNC_TIMER] = (time.perf_counter() - t0) * 1000
        threads = learner_threads.after_iteration(algorithm)  # ``ppo.learner_threads: auto`` measures and picks
        if threads is not None:
            result.setdefault("info", {})["learner_threads"] = threads
