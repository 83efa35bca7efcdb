"""The gymnasium and RLlib adapters: checkers, seeding, options and the episode contract."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import envs
from envs.gym_env import NHGymEnv
from envs.nh.contract import OBS_SIZE, apply_dependencies_and_force
from envs.nh.params import ParamError
from envs.rllib_env import NHMultiAgentEnv


def legal_action(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return apply_dependencies_and_force(
        np.asarray(mask, dtype=bool), lambda head, legal: int(rng.choice(np.flatnonzero(legal)))
    )


def test_gymnasium_checker_passes() -> None:
    env = gym.make(envs.ENV_ID)
    check_env(env.unwrapped, skip_render_check=True)


def test_gymnasium_checker_with_critic_and_frames() -> None:
    env = NHGymEnv(params={"include_opponent_observation": True}, frame_stack=3)
    check_env(env, skip_render_check=True)
    obs, _ = env.reset(seed=3)
    assert obs["observations"].shape == (3 * OBS_SIZE,)
    assert obs["critic"].shape == (3 * 269,)
    assert not obs["observations"][OBS_SIZE:].any()  # frames before the start are zeros


@pytest.mark.parametrize("opponent", ["baseline", "noop", "random", "tribrid"])
def test_same_seed_replays_the_same_fight(opponent: str) -> None:
    def run() -> list[float]:
        env = NHGymEnv()
        rng = np.random.default_rng(0)
        obs, _ = env.reset(seed=42, options={"opponent": opponent, "randomize_gear": True, "training": True})
        rewards = []
        for _ in range(400):
            obs, r, term, trunc, _ = env.step(legal_action(obs["action_mask"], rng))
            rewards.append(float(obs["observations"].sum()) + r)
            if term or trunc:
                break
        return rewards

    assert run() == run()


def test_bad_reset_options_list_valid_choices() -> None:
    env = NHGymEnv()
    with pytest.raises(ParamError, match="PURE"):
        env.reset(seed=0, options={"build": "NOT_A_BUILD"})
    with pytest.raises(ParamError, match="tribrid"):
        env.reset(seed=0, options={"opponent": "nobody"})
    with pytest.raises(ParamError, match="unknown reset option; expected one of"):
        env.reset(seed=0, options={"acountBuild": "PURE"})
    with pytest.raises(ParamError, match="non-negative"):
        env.reset(seed=-1)


def test_step_after_end_and_before_reset_is_an_error() -> None:
    env = NHGymEnv(params={"max_episode_ticks": 3})
    with pytest.raises(RuntimeError, match="reset"):
        env.step(np.zeros(12, dtype=np.int64))
    obs, _ = env.reset(seed=0)
    for _ in range(3):
        obs, _, term, trunc, _ = env.step(legal_action(obs["action_mask"], np.random.default_rng(0)))
    assert trunc and not term
    with pytest.raises(RuntimeError):
        env.step(np.zeros(12, dtype=np.int64))


def test_rllib_multi_agent_checker_passes() -> None:
    from ray.rllib.utils.pre_checks.env import check_multiagent_environments

    check_multiagent_environments(NHMultiAgentEnv({"opponent": "agent", "params": {"training": True}}))
    check_multiagent_environments(NHMultiAgentEnv({"opponent": "baseline"}))


def test_rllib_self_play_mirrors_outcomes() -> None:
    env = NHMultiAgentEnv({"opponent": "agent", "params": {"training": True}})
    rng = np.random.default_rng(1)
    obs, _ = env.reset(seed=7)
    assert set(obs) == {"player_0", "player_1"}
    for _ in range(5000):
        acts = {a: legal_action(o["action_mask"], rng) for a, o in obs.items()}
        obs, _rew, term, trunc, infos = env.step(acts)
        if term["__all__"] or trunc["__all__"]:
            break
    assert term["__all__"] and not trunc["__all__"], "this seed's fight must end in a result, not the tick limit"
    o0, o1 = infos["player_0"]["outcome"], infos["player_1"]["outcome"]
    assert {o0, o1} in ({"won", "lost"}, {"tied"})


def test_rllib_env_against_ladder_has_one_agent() -> None:
    env = NHMultiAgentEnv({"opponent": "tribrid"})
    obs, _ = env.reset(seed=1)
    assert list(obs) == ["player_0"]
    obs, _ = env.reset(seed=1, options={"opponent": "agent"})
    assert set(obs) == {"player_0", "player_1"}


@pytest.mark.parametrize(
    ("action", "problem"),
    [
        ([0] * 11, r"12 integers, one per head \(shape \(12,\)\); got shape \(11,\)"),
        ([0] * 11 + [6], r"head 11 \(prayer\) value 6 is out of range 0..5"),
        ([-1] + [0] * 11, r"head 0 \(attack\) value -1 is out of range 0..3"),
        ([0.5] * 12, "12 integers; got"),
    ],
)
def test_a_bad_action_is_a_value_error_that_says_what_an_action_is(action: list[float], problem: str) -> None:
    """Not a bare AssertionError (gone under python -O): both envs name the shape and ranges."""
    env = NHGymEnv()
    env.reset(seed=0)
    with pytest.raises(ValueError, match=problem):
        env.step(action)
    multi = NHMultiAgentEnv({"opponent": "baseline"})
    multi.reset(seed=0)
    with pytest.raises(ValueError, match=problem):
        multi.step({"player_0": action})


def test_unknown_multi_agent_env_config_keys_are_an_error() -> None:
    with pytest.raises(ValueError, match=r"unknown NHMultiAgentEnv config key\(s\) \['parms'\]"):
        NHMultiAgentEnv({"parms": {"training": True}})
