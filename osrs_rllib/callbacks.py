"""RLlib callbacks of a training run: per-episode fight metrics plus the policy's normaliser sync.

Kept apart from `train.py` because RLlib instantiates the class inside every env runner process; it must
import cheaply and hold no driver state.
"""

from __future__ import annotations

from typing import Any

from osrs_rllib.opponents import LEARNER_AGENT
from policies.rllib_model import NormalizerCallbacks


class TrainingCallbacks(NormalizerCallbacks):
    """Adds the episode summary of `TrainingEnv` (see `osrs_rllib/episode_metrics.py`) to RLlib's custom
    metrics, which RLlib averages per iteration: ``won_mean`` is the training win rate, and
    ``win_vs_<kind>_mean`` the win rate against one opponent kind (set only in that kind's episodes)."""

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
