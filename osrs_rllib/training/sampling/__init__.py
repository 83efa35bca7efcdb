"""Sampling: who the learner fights and how experience is collected.

`opponent_mix` draws each episode's opponent kind by its share; `env` is the training environment (the draw at reset,
the policy-mapping function that reads it back, the episode's metrics (`osrs_rllib.evaluation.episode_metrics`), the
novelty reward and observation noise of `shaping`); `lockstep` is the rollout loop that steps every environment of a
runner together, on arrays (`arrays`) where that is exact, each agent's rows kept in a `trajectory`.
"""

from __future__ import annotations

from common.lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "LEAGUE_KINDS": "opponent_mix",
    "LEARNER_POLICY": "opponent_mix",
    "OpponentDraw": "opponent_mix",
    "OpponentMix": "opponent_mix",
    "draw_for_kind": "opponent_mix",
    "LEARNER_AGENT": "env",
    "OPPONENT_AGENT": "env",
    "TrainingEnv": "env",
    "episode_env": "env",
    "policy_mapping_fn": "env",
}
__all__ = sorted(_EXPORTS)
__getattr__ = lazy_exports(__name__, _EXPORTS)
