"""Fights spread over builds and fight types, and evaluation that reports every build."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from envs.nh.contract import HEAD_SIZES
from envs.nh.engine import NHEngine
from envs.nh.loadouts import Build
from envs.nh.params import FightParams, ParamError
from envs.nh.sim import Outcome
from osrs_rllib.evaluation.policy_fights import evaluate
from osrs_rllib.evaluation.stratified import SplitTally, parse_builds, spread, trained_builds

CORE = ["LMS_PURE", "LMS_ZERKER", "LMS_MED", "PURE", "ZERKER", "MED"]
CORE_OPTIONS = {
    "randomize_build": True,
    "random_build_options": CORE,
    "randomize_fight_type": True,
    "randomize_gear": True,
    "max_episode_ticks": 60,
}


def _first_legal(obs: np.ndarray, masks: np.ndarray, deterministic: bool) -> np.ndarray:
    """Each head's first legal value: a cheap, deterministic player for plumbing tests."""
    out = np.zeros((len(obs), len(HEAD_SIZES)), dtype=np.int64)
    offsets = np.cumsum([0, *HEAD_SIZES])
    for h, size in enumerate(HEAD_SIZES):
        head = masks[:, offsets[h] : offsets[h] + size]
        out[:, h] = np.where(head.any(axis=1), head.argmax(axis=1), 0)
    return out


def test_spread_plays_every_build_and_fight_type_equally_often_as_the_simulator_reports() -> None:
    base = FightParams.from_options(CORE_OPTIONS)
    plan = spread(base, 6 * 3 * 4, None)
    engine = NHEngine()
    played: Counter[tuple[str, str]] = Counter()
    for k, params in enumerate(plan):
        engine.reset(seed=k, params=params)
        played[(engine.sim.build.value, engine.sim.fight_mode.value)] += 1
    # Read back from the simulator: each (build, fight type) cell exactly 4 times.
    assert played == Counter({(b, t): 4 for b in CORE for t in ("NORMAL", "LMS", "PVP_ARENA")})


def test_spread_with_repeat_keeps_runs_on_one_build() -> None:
    base = FightParams.from_options({"randomize_build": True, "random_build_options": ["PURE", "MED"]})
    assert [p.account_build.value for p in spread(base, 6, repeat=2)] == ["PURE", "PURE", "MED", "MED", "PURE", "PURE"]
    assert all(not p.randomize_build for p in spread(base, 6, repeat=2))


def test_trained_builds_follow_the_params() -> None:
    assert trained_builds(FightParams()) == (Build.PURE,)
    weighted = FightParams.from_options(
        {"randomize_build": True, "random_build_options": ["PURE", "MED", "MAXED"], "random_build_weights": [1, 1, 0]}
    )
    assert trained_builds(weighted) == (Build.PURE, Build.MED)


def test_parse_builds() -> None:
    assert parse_builds("all") == tuple(Build)
    assert parse_builds("pure, LMS_MED") == (Build.PURE, Build.LMS_MED)
    with pytest.raises(ParamError, match="invalid build 'NOPE'"):
        parse_builds("PURE,NOPE")
    with pytest.raises(ParamError, match="twice"):
        parse_builds("PURE,PURE")


def test_split_tally_per_build_and_pooled() -> None:
    split = SplitTally()
    for _ in range(3):
        split.add(Build.PURE, "NORMAL", Outcome.WON)
    split.add(Build.MED, "LMS", Outcome.LOST)
    split.add(Build.MED, "LMS", Outcome.WON)
    split.add(Build.MED, "LMS", None)  # truncated: a tie
    assert split.by_build["MED"].to_dict()["ties"] == 1
    assert split.pooled(["PURE", "MED"]).wins == 4
    assert split.pooled(["ZERKER"]).fights == 0  # a build that played no fight adds nothing
    assert split.by_build["PURE"].win_rate == 1.0 and split.by_build["MED"].win_rate == pytest.approx(1 / 3)


def test_evaluation_reports_every_trained_build_and_the_unseen_one_apart() -> None:
    results = evaluate(
        _first_legal,
        ["baseline", "tribrid"],
        4,
        params=CORE_OPTIONS,
        seed=5,
        unseen_builds=[Build.MAXED],
    )
    for r in results:
        assert r.builds == CORE and r.unseen_builds == ["MAXED"]
        assert {b: row["fights"] for b, row in r.by_build.items()} == dict.fromkeys([*CORE, "MAXED"], 4)
        assert sum(row["fights"] for row in r.by_fight_type.values()) == 4 * 7
        assert set(r.by_fight_type) == {"NORMAL", "LMS", "PVP_ARENA"}
        # The headline counts the trained builds only, and equals the mean of their win rates.
        assert r.fights == 4 * len(CORE)
        assert r.wins == sum(r.by_build[b]["wins"] for b in CORE)
        assert r.win_rate == pytest.approx(np.mean([r.by_build[b]["win_rate"] for b in CORE]))


def test_evaluation_of_a_fixed_build_stays_one_build() -> None:
    (r,) = evaluate(_first_legal, ["baseline"], 3, params={"account_build": "MED", "max_episode_ticks": 30}, seed=1)
    assert r.builds == ["MED"] and list(r.by_build) == ["MED"] and r.fights == 3


def test_status_lines_name_the_weakest_build_next_to_the_mean() -> None:
    """The figure a user reads while training: the mean over builds never stands alone."""
    from osrs_rllib.config.schema import load_config
    from osrs_rllib.training import RunState, format_eval_line, format_line, summary_figures

    (row,) = evaluate(_first_legal, ["baseline"], 3, params=CORE_OPTIONS, seed=5, unseen_builds=[Build.MAXED])
    state = RunState()
    state.last_eval = {"iteration": 1, "results": [row.to_dict()]}
    cfg = load_config(Path(__file__).resolve().parents[2] / "configs" / "smoke.yml")
    figures = summary_figures({}, 1.0, state, cfg)
    worst = min(CORE, key=lambda b: row.by_build[b]["win_rate"])
    assert figures["eval_weakest_build"] == {"build": worst, "win_rate": row.by_build[worst]["win_rate"]}
    assert f"(6 builds, weakest {worst}" in format_line(figures)
    line = format_eval_line(row.to_dict())
    assert "mean of 6 builds" in line and "MAXED (unseen)" in line and "PVP_ARENA" in line
