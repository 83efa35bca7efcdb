"""`env.engine`: which simulator the training envs step, and that the choice changes nothing but speed.

The training env (`TrainingEnv`, what every env runner builds from `env_config`) on the compiled core and on
the Python engine plays the same episodes: the same observations, rewards, terminations and the same
end-of-episode metrics (which read the players' base hitpoints through `engine.base_hp`, not the simulator).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from envs.nh.contract import apply_dependencies_and_force
from envs.nh.core_engine import CoreEngine, core_available
from envs.nh.engine import NHEngine
from osrs_rllib.config.schema import load_config
from osrs_rllib.training import TrainingError, env_config
from osrs_rllib.training.report import engine_line
from osrs_rllib.training.sampling import TrainingEnv

NH = Path(__file__).resolve().parents[2] / "configs" / "nh.yml"

needs_core = pytest.mark.skipif(not core_available(), reason="the compiled core is not built here")


def _env(engine: str, mix: dict[str, float]) -> TrainingEnv:
    cfg = load_config(NH, [f"env.engine={engine}"])
    return TrainingEnv({**env_config(cfg), "league": False, "opponent_mix": mix, "mix_seed": 5})


def _episodes(env: TrainingEnv, seeds: tuple[int, ...]) -> list[Any]:
    rng = np.random.default_rng(11)
    out: list[Any] = []
    for seed in seeds:
        obs, _ = env.reset(seed=seed)
        while True:
            actions = {}
            for agent, o in obs.items():
                mask = o["action_mask"] > 0.5
                actions[agent] = apply_dependencies_and_force(
                    mask, lambda h, legal: int(rng.choice(np.flatnonzero(legal))))
            obs, rewards, term, trunc, infos = env.step(actions)
            out.append(({a: o["observations"].tobytes() for a, o in obs.items()}, rewards, term, trunc))
            if term["__all__"] or trunc["__all__"]:
                out.append((infos["player_0"]["episode_metrics"], infos["player_0"]["opponent_kind"]))
                break
    return out


@needs_core
@pytest.mark.parametrize("mix", [{"baseline": 1.0}, {"self_play": 1.0}, {"novice": 1.0}, {"prescient": 1.0}])
def test_training_env_on_the_core_plays_the_python_engines_episodes(mix: dict[str, float]) -> None:
    core, python = _env("core", mix), _env("python", mix)
    assert isinstance(core.engine, CoreEngine) and isinstance(python.engine, NHEngine)
    assert _episodes(core, (3, 4)) == _episodes(python, (3, 4))


def test_auto_picks_the_core_where_it_is_built() -> None:
    env = _env("auto", {"baseline": 1.0})
    assert isinstance(env.engine, CoreEngine if core_available() else NHEngine)


def test_a_forced_core_that_is_not_built_stops_training_before_ray(monkeypatch: pytest.MonkeyPatch) -> None:
    import envs.nh.core_engine

    monkeypatch.setattr(envs.nh.core_engine, "core_available", lambda: False)
    with pytest.raises(TrainingError, match=r"env\.engine is core but the compiled simulator core is not built"):
        engine_line(load_config(NH, ["env.engine=core"]))
    lines = [engine_line(load_config(NH, ["env.engine=auto"]))]
    assert lines == ["simulator: the Python engine (the compiled core is not built (pip install -e .))"]


@needs_core
@pytest.mark.parametrize("opponent", ["baseline", "tribrid"])
def test_evaluation_on_the_core_gives_the_python_engines_results(opponent: str) -> None:
    """Training evaluates on `env.engine` too: the same fights, so the same figures, only sooner."""
    from envs.nh.contract import masked_random_actions
    from osrs_rllib.evaluation.policy_fights import evaluate

    def act(obs: np.ndarray, masks: np.ndarray, deterministic: bool) -> np.ndarray:
        # A policy with no state of its own: actions are a function of the observation, so both runs see the
        # same policy whatever order the fights are stepped in.
        seed = int(np.frombuffer(obs.tobytes(), dtype=np.uint32).sum() % (2**31))
        return masked_random_actions(np.random.default_rng(seed), masks).astype(np.int64)

    cfg = load_config(NH)
    params = {k: v for k, v in cfg.env.params.items() if k != "include_opponent_observation"}
    rows = {engine: [r.to_dict() for r in evaluate(act, [opponent], 2, params=params, seed=7, engine=engine)]
            for engine in ("python", "core")}
    assert rows["core"] == rows["python"]
    assert rows["core"][0]["fights"] >= 12
