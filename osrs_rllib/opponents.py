"""Who the learner fights, for the code that imports it from here: the mix (`osrs_rllib/opponent_mix.py`), and
the training environment with the policy-mapping function (`osrs_rllib/training_env.py`)."""

from __future__ import annotations

from osrs_rllib.opponent_mix import LEAGUE_KINDS, LEARNER_POLICY, OpponentDraw, OpponentMix, draw_for_kind
from osrs_rllib.training_env import LEARNER_AGENT, OPPONENT_AGENT, TrainingEnv, episode_env, policy_mapping_fn

__all__ = [
    "LEAGUE_KINDS",
    "LEARNER_AGENT",
    "LEARNER_POLICY",
    "OPPONENT_AGENT",
    "OpponentDraw",
    "OpponentMix",
    "TrainingEnv",
    "draw_for_kind",
    "episode_env",
    "policy_mapping_fn",
]
