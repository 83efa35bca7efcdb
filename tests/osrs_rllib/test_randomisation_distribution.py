"""What the training environments actually draw, counted, against what each preset's config says.

Why: once, with `randomize_build` on, every fight of the main job was LMS_PURE, and nothing noticed because
every figure went through the same blind spot. This test builds each preset's environments the way
training does (the config layer, `build_algorithm_config`, real RLlib env runners seeding their envs, the league
plan pushed by `LeagueRunner`), resets ≥ 1,000 episodes spread over several runners' envs, and compares the
empirical distributions of build, fight type, gear variants, spawn tiles and opponent kind with the
configuration using chi-square tests (fixed seeds, so the outcome is deterministic).

The expected values are written from the spec here, not read from the simulator's own tables: this is a
check from outside the code path that makes the draws.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats

from envs.nh.core_engine import CoreEngine
from envs.nh.state import Spellbook
from league.callback import LeagueRunner
from osrs_rllib.config.schema import load_config
from osrs_rllib.training import build_algorithm_config, fixed_policies, make_league, register_everything

REPO = Path(__file__).resolve().parents[2]
ALPHA = 1e-3
"""A failing p-value: below this the draws do not follow the configuration."""

# Spec §16.2: training spawn tiles of player 0, uniform over the inclusive box.
SPAWN_X = range(3041, 3102)
SPAWN_Y = range(3530, 3558)
FIGHT_TYPES = ("NORMAL", "LMS", "PVP_ARENA")  # §13.1 randomizeFightType: uniform over the three
SHARK, ANGLERFISH = 385, 13441
# Spec §12.6: the 10 % "primary food" line of every randomised build, and the 10 % Lunar spellbook line of the
# builds that have one (PURE and LMS_PURE have none).
VARIANT_FOOD = {"PURE": SHARK, "ZERKER": SHARK, "MED": SHARK, "LMS_PURE": ANGLERFISH, "LMS_ZERKER": ANGLERFISH}
VARIANT_FOOD["LMS_MED"] = ANGLERFISH
LUNAR_SHARE = {"PURE": 0.0, "ZERKER": 0.1, "MED": 0.1, "LMS_PURE": 0.0, "LMS_ZERKER": 0.1, "LMS_MED": 0.1}
EPISODES = 1_280
SPELLBOOKS = list(Spellbook)
"""The core numbers enums by position (`tests/envs/core_snapshots.py`)."""


def _player0(engine: Any) -> tuple[tuple[int, int], int, bool]:
    """Player 0's spawn, primary food and whether its spellbook is Lunar, read from whichever engine the
    env runs (`env.engine`: the Python simulator's objects, or the compiled core's plain state)."""
    if isinstance(engine, CoreEngine):
        loadout = engine.player_state(0)["loadout"]
        spawn = tuple(engine.player_state(0)["spawn"])
        return spawn, loadout["primary_food"], SPELLBOOKS[loadout["spellbook"]] is Spellbook.LUNAR
    p = engine.sim.players[0]
    return p.spawn, p.loadout.primary_food, p.loadout.spellbook is Spellbook.LUNAR


def _record(env: Any) -> dict[str, Any]:
    env.reset()
    info = env.engine.info(0)
    spawn, food, lunar = _player0(env.engine)
    return {
        "build": info["build"],
        "fight_type": info["fight_mode"],
        "x": spawn[0],
        "y": spawn[1],
        "food": food,
        "lunar": lunar,
        # The league names ladder rungs by their player id (scripted_<rung>); the mix by the rung's name.
        "kind": env.draw.kind.removeprefix("scripted_"),
        "learner": env.draw.learner,
    }


def _draw_episodes(preset: str, tmp_path: Path) -> tuple[Any, list[dict[str, Any]], Any]:
    # Only the scale changes: two runners fit this machine; the env config is the preset's own.
    cfg = load_config(
        REPO / "configs" / f"{preset}.yml",
        ["ray.address=null", "runners.num_env_runners=2", "runners.num_cpus_per_env_runner=0.5"],
    )
    register_everything()
    runner = None
    learners: tuple[str, ...] = ("main",)
    if cfg.league_enabled:
        runner = LeagueRunner(
            make_league(cfg),
            tmp_path,
            cfg.opponents.league_slots,
            fixed_policies(cfg.opponents.scripted_in_env),
            seed=cfg.seed,
        )
        learners = tuple(runner.league.learners)
    algo = build_algorithm_config(cfg, learners).build_algo()
    try:
        if runner is not None:
            for iteration in (1, 2):  # past selves (and exploiters' snapshots) to offer, as after a run's first ones
                for learner in learners:
                    snap = runner.league.add_snapshot(learner, iteration=iteration, training_steps=0)
                    runner.save_weights(snap[0].snapshot_id, algo.get_policy(learner).get_weights())
            runner.plan(algo)
        envs = cfg.runners.num_env_runners * cfg.runners.num_envs_per_env_runner
        per_env = -(-EPISODES // envs)
        gathered = algo.env_runner_group.foreach_env(lambda env: [_record(env) for _ in range(per_env)])
    finally:
        algo.stop()
    rows = [r for per_runner in gathered for per_env_rows in per_runner for r in per_env_rows]
    return cfg, rows, runner


def _chi2_uniform(values: list[Any], support: list[Any]) -> float:
    counts = Counter(values)
    assert set(counts) <= set(support), f"drawn outside the configured support: {set(counts) - set(support)}"
    observed = [counts.get(v, 0) for v in support]
    return float(stats.chisquare(observed).pvalue)


def _chi2(values: list[Any], expected: dict[Any, float]) -> float:
    counts = Counter(values)
    assert set(counts) <= set(expected), f"drawn but not configured: {set(counts) - set(expected)}"
    n = len(values)
    observed = [counts.get(k, 0) for k in expected]
    return float(stats.chisquare(observed, [p * n for p in expected.values()]).pvalue)


@pytest.mark.parametrize(
    "preset", ["nh", *(pytest.param(p, marks=pytest.mark.integration) for p in ("nh-exploiters", "nh-cluster"))]
)
def test_training_envs_draw_what_the_config_says(ray_session: None, tmp_path: Path, preset: str) -> None:
    cfg, rows, runner = _draw_episodes(preset, tmp_path)
    params = cfg.env.params
    assert len(rows) >= 1_000
    # Several runners' envs, each its own seed: the draws are not one stream repeated.
    assert len({(r["x"], r["y"], r["build"], r["food"]) for r in rows}) > len(rows) // 2

    # Build: one draw per episode over random_build_options (uniform unless weighted).
    options = list(params["random_build_options"])
    weights = params.get("random_build_weights") or [1.0] * len(options)
    expected_builds = {b: w / sum(weights) for b, w in zip(options, weights, strict=True) if w > 0}
    assert _chi2([r["build"] for r in rows], expected_builds) > ALPHA

    # Fight type: uniform over the three modes.
    assert params["randomize_fight_type"]
    assert _chi2_uniform([r["fight_type"] for r in rows], list(FIGHT_TYPES)) > ALPHA

    # Spawn tiles (training: random spawns of §16.2), each coordinate uniform over its range.
    assert params["training"]
    assert _chi2_uniform([r["x"] for r in rows], list(SPAWN_X)) > ALPHA
    assert _chi2_uniform([r["y"] for r in rows], list(SPAWN_Y)) > ALPHA

    # Gear variants (§12.6): per build, the 10 % primary-food line and the 10 % Lunar line.
    assert params["randomize_gear"]
    for build in expected_builds:
        mine = [r for r in rows if r["build"] == build]
        food = sum(r["food"] == VARIANT_FOOD[build] for r in mine)
        assert stats.binomtest(food, len(mine), 0.1).pvalue > ALPHA, (build, "food", food, len(mine))
        lunar = sum(r["lunar"] for r in mine)
        if LUNAR_SHARE[build] == 0:
            assert lunar == 0, build
        else:
            assert stats.binomtest(lunar, len(mine), LUNAR_SHARE[build]).pvalue > ALPHA, (build, "lunar", lunar)

    # Opponent kind: the main learner's episodes follow opponents.mix; each learner gets its planned share.
    mix = cfg.opponents.normalized()
    main_rows = [r for r in rows if r["learner"] == "main"]
    assert _chi2([r["kind"] for r in main_rows], mix) > ALPHA
    if runner is not None and len(runner.league.learners) > 1:
        learners = list(runner.league.learners)
        assert _chi2_uniform([r["learner"] for r in rows], learners) > ALPHA
    else:
        assert len(main_rows) == len(rows)


def test_the_count_would_catch_the_old_blind_spot() -> None:
    """The check above is not vacuous: a single build (what training once drew) fails it."""
    options = ["LMS_PURE", "LMS_ZERKER", "LMS_MED", "PURE", "ZERKER", "MED"]
    every_fight_lms_pure = ["LMS_PURE"] * EPISODES
    with pytest.raises(AssertionError):
        assert _chi2(every_fight_lms_pure, {b: 1 / 6 for b in options}) > ALPHA
    rng = np.random.default_rng(0)
    fair = [options[i] for i in rng.integers(0, 6, EPISODES)]
    assert _chi2(fair, {b: 1 / 6 for b in options}) > ALPHA
