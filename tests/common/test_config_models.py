"""`NetworkConfig`, `LeagueConfig`, `FightParams` and `RewardWeights` as frozen pydantic dataclasses: checked
on every construction (`dataclasses.replace` included), non-finite numbers refused, picklable for RLlib's
workers, and embedded directly in the training schema."""

from __future__ import annotations

import dataclasses
import math
import pickle
from typing import Any

import pytest

from envs.nh.loadouts import Build
from envs.nh.params import FightParams, ParamError
from envs.nh.rewards import CORE_REWARD_WEIGHTS, RewardWeightError, RewardWeights
from league.config import LeagueConfig
from policies.network_config import NetworkConfig

CONFIGS: list[Any] = [
    NetworkConfig(actor_hidden=(64,), activation="tanh"),
    LeagueConfig(main_exploiters=1, opponent_mix={"self_play": 1}),
    FightParams.from_options({"build": "med", "randomize_gear": True, "max_episode_ticks": 300}),
    CORE_REWARD_WEIGHTS,
]


@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda c: type(c).__name__)
def test_pickles_and_stays_frozen(cfg: Any) -> None:
    assert pickle.loads(pickle.dumps(cfg)) == cfg
    name = dataclasses.fields(cfg)[0].name
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(cfg, name, getattr(cfg, name))


@pytest.mark.parametrize(
    ("cfg", "change"),
    [
        (NetworkConfig(), {"head_hidden": -1}),
        (NetworkConfig(), {"obs_clip": math.inf}),
        (LeagueConfig(), {"eta": math.nan}),
        (LeagueConfig(), {"opponent_mix": {"pfsp": 0.0}}),
        (FightParams(), {"max_episode_ticks": -1}),
        (RewardWeights(), {"win_reward": math.nan}),
        (RewardWeights(), {"target_frozen_tick_reward": (0.1, 0.2, 0)}),
    ],
)
def test_replace_validates_like_construction(cfg: Any, change: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        dataclasses.replace(cfg, **change)


@pytest.mark.parametrize("cls", [NetworkConfig, LeagueConfig, FightParams, RewardWeights])
def test_unknown_keyword_is_refused(cls: type) -> None:
    with pytest.raises(ValueError, match="unexpected"):
        cls(no_such_option=1)


def test_fight_params_construction_coerces_like_from_options() -> None:
    built = FightParams(account_build="med", random_build_options=["PURE", "MED"], random_build_weights=[1, 3])
    assert built == FightParams.from_options(
        {"accountBuild": "MED", "random_build_options": ("pure", "med"), "random_build_weights": (1.0, 3.0)}
    )
    assert built.account_build is Build.MED and built.random_build_weights == (1.0, 3.0)
    with pytest.raises(ValueError, match="give one weight per build"):
        FightParams(random_build_weights=[1.0])


def test_from_options_copies_the_base_without_losing_fields() -> None:
    base = FightParams.from_options({"randomize_build": True, "max_episode_ticks": 300})
    episode = FightParams.from_options({"agent": "a", "episode_id": "7"}, base)
    assert episode == dataclasses.replace(base, agent="a", episode_id="7")
    assert base.agent == "" and episode.max_episode_ticks == 300


def test_param_error_names_the_option_as_given() -> None:
    with pytest.raises(ParamError) as info:
        FightParams.from_options({"fightType": "arena"})
    assert info.value.key == "fightType"


def test_reward_weight_errors_name_the_weight() -> None:
    with pytest.raises(RewardWeightError, match="did you mean 'win_reward'") as info:
        RewardWeights.from_mapping({"win_rewards": 1})
    assert info.value.key == "win_rewards"
    weights = RewardWeights.from_mapping({"win_reward": [1, 2, 10]})
    assert weights.win_reward == (1.0, 2.0, 10.0) and hash(weights) == hash(dataclasses.replace(weights))


def test_training_schema_embeds_them_directly() -> None:
    from osrs_rllib.config.schema import TrainConfig

    cfg = TrainConfig.model_validate({"model": {"actor_hidden": [32]}, "league": {"eta": 0.5}})
    assert isinstance(cfg.model, NetworkConfig) and cfg.model.actor_hidden == (32,)
    assert isinstance(cfg.league, LeagueConfig) and cfg.league.eta == 0.5
    assert "opponent_mix" not in cfg.to_dict()["league"]  # the league's mix is opponents.mix
