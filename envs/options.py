"""What both environment adapters (`envs/gym_env.py`, `envs/rllib_env.py`) accept as configuration.

Shared here rather than imported from one adapter by the other, so that neither adapter depends on the
other's framework and the rules for a config value are written once.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from envs.nh.params import OPPONENT_BASELINE, FightParams
from envs.nh.rewards import RewardWeights
from envs.opponents import LADDER

SCRIPTED_OPPONENTS = (OPPONENT_BASELINE, *LADDER)
"""Opponents a single-agent episode can face: the in-simulator baseline or a ladder policy."""


def as_params(params: FightParams | Mapping[str, Any] | None) -> FightParams:
    """Fight parameters from a config mapping (camelCase or snake_case keys), validated by `FightParams`."""
    if params is None:
        return FightParams()
    if isinstance(params, FightParams):
        return params
    return FightParams.from_options(params)


def as_weights(weights: RewardWeights | Mapping[str, Any] | None) -> RewardWeights:
    """Reward weights from a config mapping, validated by `RewardWeights`."""
    if weights is None:
        return RewardWeights()
    if isinstance(weights, RewardWeights):
        return weights
    return RewardWeights.from_mapping(weights)


DEFAULT_ENGINE = "auto"
"""The adapters' default `engine`: the compiled core where it is built (bit-identical, several times faster),
else the Python engine with one log line (`envs/nh/core_engine.py`). ``python`` forces the reference engine,
for code that reads the simulator's own objects (`engine.sim`)."""


def as_engine(engine: str | None) -> str:
    """The `engine` option (`auto`, `core`, `python`), checked; None is the default."""
    from envs.nh.core_engine import check_engine

    return DEFAULT_ENGINE if engine is None else check_engine(engine)
