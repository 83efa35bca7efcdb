"""The fight tools on both engines: `fight`, `rate`, `outcome`, the exploit evaluation, the
analysis API and replays give the same results on the compiled core and on the Python engine, and their
``engine`` option reaches the engine that actually plays (checked on the engines the fight loop hands its hooks).

A replay recorded on the core equals the one recorded on the Python engine for the same seed and seats, every
tick and field (``created_unix`` aside), and verifies on both engines.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import torch
from typer.testing import CliRunner

import osrs_rllib.evaluation.match as match_mod
from envs.nh.contract import CRITIC_SIZE, OBS_SIZE
from envs.nh.core_engine import CoreEngine, core_available
from envs.nh.engine import NHEngine
from envs.nh.loadouts import Build
from envs.nh.params import FightParams
from osrs_rllib.analysis.fights import play
from osrs_rllib.analysis.policies import AnalysisError
from osrs_rllib.cli import app
from osrs_rllib.evaluation import batched as batched_fights
from osrs_rllib.evaluation.fight import run_fights
from osrs_rllib.evaluation.outcome import collect
from osrs_rllib.evaluation.policy_fights import evaluate_vs_model
from osrs_rllib.evaluation.rate import resolve_players, tournament
from osrs_rllib.replay import verify
from osrs_rllib.replay.format import load_replay
from policies.model_file import load_model_file, save_model_file
from policies.network import NHPolicyNetwork
from policies.network_config import NetworkConfig

needs_core = pytest.mark.skipif(not core_available(), reason="the compiled core is not built here")
AUTO = CoreEngine if core_available() else NHEngine
"""The engine ``auto`` must pick here."""
SHORT = {"max_episode_ticks": 120}


@pytest.fixture(autouse=True)
def one_torch_thread() -> Any:
    """Small networks on a shared machine: extra intra-op threads only spin against the simulator."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An untrained small network as a model file: a real model side, cheap to run."""
    torch.manual_seed(3)
    net = NHPolicyNetwork(OBS_SIZE, CRITIC_SIZE, NetworkConfig(actor_hidden=(16,), critic_hidden=(16,), head_hidden=8))
    return save_model_file(net, tmp_path_factory.mktemp("engines") / "tiny.nhmodel", metadata={"experiment": "tiny"})


def spy_engines(monkeypatch: pytest.MonkeyPatch, module: Any) -> list[type]:
    """Wrap `module`'s `play_fights` (the real loop still plays) to note the type of every engine it resets."""
    seen: list[type] = []
    real = batched_fights.play_fights

    def spying(*args: Any, on_start: Callable[..., None] | None = None, **kwargs: Any) -> None:
        def start(k: int, engine: Any) -> None:
            seen.append(type(engine))
            if on_start is not None:
                on_start(k, engine)

        real(*args, on_start=start, **kwargs)

    monkeypatch.setattr(module, "play_fights", spying)
    return seen


# ---- fight ------------------------------------------------------------------------------------------------
FIGHTS = [
    ("random", "baseline", {**SHORT, "randomize_gear": True}, None),
    ("tribrid", "expert", {**SHORT, "randomize_fight_type": True}, list(Build)),
    ("baseline", "novice", SHORT, [Build.MED, Build.LMS_ZERKER]),  # A swapped into seat 1
    ("baseline", "baseline", {"max_episode_ticks": 40}, None),  # the simulator's baseline in both seats
    ("prescient", "veteran", SHORT, [Build.ZERKER]),
]


@needs_core
@pytest.mark.parametrize(("a", "b", "options", "builds"), FIGHTS)
def test_fight_summary_is_the_same_on_both_engines(
    a: str, b: str, options: dict[str, Any], builds: list[Build] | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = spy_engines(monkeypatch, match_mod)  # fight plays through play_match
    n = 12 if builds else 6
    core = run_fights(a, b, n, seed=11, options=options, builds=builds, parallel=5, engine="core").to_dict()
    assert set(seen) == {CoreEngine} and len(seen) == n
    seen.clear()
    python = run_fights(a, b, n, seed=11, options=options, builds=builds, parallel=5, engine="python").to_dict()
    assert set(seen) == {NHEngine}
    assert core == python
    assert core["mean_damage_dealt"] > 0 or a == b == "baseline"


@needs_core
def test_fight_with_a_model_side_is_the_same_on_both_engines(tiny: Path) -> None:
    args = (str(tiny), "tribrid", 6)
    core = run_fights(*args, seed=2, options=SHORT, engine="core").to_dict()
    assert core == run_fights(*args, seed=2, options=SHORT, engine="python").to_dict()


def test_fight_engine_option_defaults_to_auto(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = spy_engines(monkeypatch, match_mod)  # fight plays through play_match
    run_fights("random", "baseline", 2, options=SHORT)
    assert seen == [AUTO, AUTO]
    seen.clear()
    run_fights("random", "baseline", 2, options=SHORT, record=None, engine="python")
    assert seen == [NHEngine, NHEngine]
    with pytest.raises(ValueError, match="unknown engine 'fast'"):
        run_fights("random", "baseline", 1, engine="fast")


@needs_core
def test_fight_cli_engine_flag_reaches_the_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = spy_engines(monkeypatch, match_mod)  # fight plays through play_match
    runner = CliRunner()
    out = {}
    for engine, expected in (("core", CoreEngine), ("python", NHEngine)):
        seen.clear()
        result = runner.invoke(
            app, ["fight", "random", "baseline", "--n", "3", "--set", "max_episode_ticks=60", "--engine", engine,
                  "--json"])  # fmt: skip
        assert result.exit_code == 0, result.output
        assert seen == [expected] * 3
        out[engine] = json.loads(result.stdout)
    assert out["core"] == out["python"]
    bad = runner.invoke(app, ["fight", "random", "baseline", "--n", "1", "--engine", "fast"])
    assert bad.exit_code != 0 and "'fast'" in bad.output  # names the engine asked for


# ---- rate -------------------------------------------------------------------------------------------------
@needs_core
def test_rate_table_is_the_same_on_both_engines(tiny: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen = spy_engines(monkeypatch, match_mod)  # rate plays through play_match
    players = resolve_players(["random", "tribrid", "baseline", str(tiny)], with_ladder=False)
    results = {}
    for engine in ("core", "python"):
        scores: dict[str, Any] = {}
        rows, games = tournament(
            players, 4, FightParams(max_episode_ticks=100), seed=6, parallel=3, builds=[Build.PURE, Build.MED],
            by_build=scores, engine=engine,
        )  # fmt: skip
        results[engine] = (rows, games, scores)
        assert set(seen) == {CoreEngine if engine == "core" else NHEngine}
        seen.clear()
    assert results["core"] == results["python"]
    rows, games, _ = results["core"]
    assert len(games) == 6 * 4 and {r.name for r in rows} == {p.name for p in players}


@needs_core
def test_rate_cli_engine_flag_reaches_the_engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen = spy_engines(monkeypatch, match_mod)  # rate plays through play_match
    runner = CliRunner()
    tables = {}
    for engine, expected in (("python", NHEngine), ("core", CoreEngine)):
        seen.clear()
        result = runner.invoke(app, [
            "rate", "random", "tribrid", "--no-ladder", "--fights", "2", "--set", "max_episode_ticks=50",
            "--out", str(tmp_path / engine), "--engine", engine, "--json",
        ])  # fmt: skip
        assert result.exit_code == 0, result.output
        assert set(seen) == {expected}
        tables[engine] = json.loads(result.stdout)
    assert tables["core"] == tables["python"]
    bad = runner.invoke(app, ["rate", "random", "tribrid", "--no-ladder", "--engine", "fast"])
    assert bad.exit_code != 0 and "'fast'" in bad.output  # names the engine asked for


# ---- outcome, exploit evaluation --------------------------------------------------------------------------
@needs_core
def test_outcome_collect_is_the_same_on_both_engines(tiny: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen = spy_engines(monkeypatch, match_mod)  # so does outcome's collection
    model = load_model_file(tiny)
    mix = {"self": 0.5, "baseline": 0.25, "tribrid": 0.25}
    params = {"max_episode_ticks": 80, "randomize_build": True}
    core = collect(model, 8, 3, mix, params, parallel=4, engine="core")
    assert set(seen) == {CoreEngine}
    python = collect(model, 8, 3, mix, params, parallel=4, engine="python")
    for name in ("obs", "won", "traj", "tick"):
        np.testing.assert_array_equal(getattr(core, name), getattr(python, name))
    for name in ("fight", "seat", "opponent", "build", "fight_type", "outcome", "length"):
        assert getattr(core, name) == getattr(python, name), name
    assert len(set(core.build)) > 1


@needs_core
def test_exploit_evaluation_is_the_same_on_both_engines(tiny: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen = spy_engines(monkeypatch, match_mod)  # so does evaluate_vs_model
    model = load_model_file(tiny)

    def act(obs: np.ndarray, masks: np.ndarray, deterministic: bool) -> np.ndarray:
        return model.act(obs, masks.astype(np.float32), deterministic=deterministic)

    params = {"max_episode_ticks": 40, "randomize_build": True}
    core = evaluate_vs_model(act, model, 1, params=params, seed=2, engine="core")
    assert set(seen) == {CoreEngine}
    assert core == evaluate_vs_model(act, model, 1, params=params, seed=2, engine="python")
    assert core["fights"] == len(core["builds"]) > 1


# ---- the analysis API -------------------------------------------------------------------------------------
@needs_core
@pytest.mark.parametrize(
    ("a", "b", "build"), [("tribrid", "baseline", None), ("random", "expert", ["MED", "LMS_PURE"])]
)
def test_analysis_frames_are_the_same_on_both_engines(
    a: str, b: str, build: list[str] | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = spy_engines(monkeypatch, match_mod)  # and the analysis API
    frames = {}
    for engine in ("core", "python"):
        seen.clear()
        frames[engine] = play(a, b, fights=4, seed=9, build=build, record=True, parallel=3, engine=engine,
                              max_episode_ticks=150, randomize_gear=True)  # fmt: skip
        assert set(seen) == {CoreEngine if engine == "core" else NHEngine}
    (core_fights, core_ticks), (py_fights, py_ticks) = frames["core"], frames["python"]
    pd.testing.assert_frame_equal(core_fights, py_fights)
    arrays = ["obs", "mask"]
    pd.testing.assert_frame_equal(core_ticks.drop(columns=arrays), py_ticks.drop(columns=arrays))
    for col in arrays:
        for x, y in zip(core_ticks[col], py_ticks[col], strict=True):
            assert (x is None and y is None) or np.array_equal(x, y)
    assert core_ticks["hit_damage"].sum() > 0 and core_ticks["food_eaten"].sum() >= 0


def test_analysis_engine_option_defaults_to_auto(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = spy_engines(monkeypatch, match_mod)  # and the analysis API
    play("random", "baseline", fights=2, max_episode_ticks=30)
    assert seen == [AUTO, AUTO]
    with pytest.raises(AnalysisError, match="unknown engine"):
        play("random", "baseline", fights=1, engine="fast")


# ---- replays ----------------------------------------------------------------------------------------------
def _replays(directory: Path) -> dict[str, Any]:
    """Every replay of a directory, by file name, without its creation time."""
    out = {}
    for path in sorted(directory.glob("*.nhreplay")):
        rep = load_replay(path)
        header = {k: v for k, v in rep.header.items() if k != "created_unix"}
        out[path.name] = (header, rep.ticks, rep.end)
    return out


def _melee_effects(replays: dict[str, Any]) -> set[tuple[str, bool]]:
    """(effect, executed in the tick it was created) of every melee hit with an effect tag."""
    seen = set()
    for _header, ticks, _end in replays.values():
        for tick in ticks:
            for p in (0, 1):
                for hit in tick["hits"][p]:
                    if hit["style"] == "melee" and hit["effect"]:
                        landed = tick["landed"][1 - p]
                        now = any(h["style"] == "melee" and h["damages"] == hit["damages"] for h in landed)
                        seen.add((hit["effect"], now))
    return seen


RECORDED = [
    # LMS_MED with randomised gear draws Statius's warhammer and the Ancient godsword as special weapons: fights
    # 12..24 land both specials, both in the tick they are made and a tick later (the effect-tag cases).
    ("expert", "veteran", 12, 13, {"randomize_gear": True, "account_build": "LMS_MED"}),
    ("random", "random", 3, 4, {"randomize_gear": True, "randomize_fight_type": True, "max_episode_ticks": 250}),
    ("tribrid", "baseline", 5, 3, {"randomize_build": True}),
    ("baseline", "novice", 1, 2, {"max_episode_ticks": 150}),
]


@needs_core
@pytest.mark.parametrize(("a", "b", "seed", "n", "options"), RECORDED)
def test_replays_are_the_same_on_both_engines(
    a: str, b: str, seed: int, n: int, options: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = spy_engines(monkeypatch, match_mod)  # fight plays through play_match
    summaries = {}
    for engine in ("core", "python"):
        summaries[engine] = run_fights(a, b, n, seed=seed, options=options, record=tmp_path / engine, engine=engine)
    assert seen == [CoreEngine] * n + [NHEngine] * n
    assert summaries["core"].to_dict() == summaries["python"].to_dict()
    core, python = _replays(tmp_path / "core"), _replays(tmp_path / "python")
    assert len(core) == n and core == python
    if a == "expert":
        assert _melee_effects(core) == {(e, now) for e in ("statius", "ags_sacrifice") for now in (True, False)}
    for path in sorted((tmp_path / "core").glob("*.nhreplay"))[:2]:
        for engine in ("core", "python"):
            check = verify(path, engine=engine)
            assert check.ok, check.summary()


@needs_core
def test_analysis_replays_and_verify_on_both_engines(tmp_path: Path) -> None:
    for engine in ("core", "python"):
        play("tribrid", "expert", fights=3, seed=4, record=tmp_path / engine, engine=engine, parallel=2,
             max_episode_ticks=200, randomize_gear=True)  # fmt: skip
    core = _replays(tmp_path / "core")
    assert len(core) == 3 and core == _replays(tmp_path / "python")
    path = sorted((tmp_path / "core").glob("*.nhreplay"))[0]
    runner = CliRunner()
    for engine in ("core", "python"):
        result = runner.invoke(app, ["replay", str(path), "--verify", "--engine", engine, "--json"])
        assert result.exit_code == 0, result.output
        check = json.loads(result.output)
        assert check["ok"] is True and check["problems"] == [] and check["engine"] == engine
        assert check["ticks"] == len(load_replay(path).ticks) - 1
    bad = runner.invoke(app, ["replay", str(path), "--verify", "--engine", "fast"])
    assert bad.exit_code != 0 and "'fast'" in bad.output  # names the engine asked for
    # Tampering is caught on the core as on the Python engine.
    rep = load_replay(path)
    rep.ticks[3]["players"][0]["hp"] += 1
    problems = verify(rep, engine="core").problems
    assert problems and problems[0].startswith("tick 3: players[0].hp")


@needs_core
@pytest.mark.slow
@pytest.mark.parametrize(("a", "b"), [("random", "random"), ("expert", "veteran"), ("adept", "baseline"),
                                      ("prescient", "tribrid")])  # fmt: skip
def test_many_replays_are_the_same_on_both_engines(a: str, b: str, tmp_path: Path) -> None:
    """Every build, gear and fight-type randomisation, 96 fights a matchup: the replays match tick for tick."""
    options = {"randomize_gear": True, "randomize_fight_type": True, "max_episode_ticks": 500}
    for engine in ("core", "python"):
        run_fights(a, b, 96, seed=1000, options=options, builds=list(Build), record=tmp_path / engine, engine=engine)
    core = _replays(tmp_path / "core")
    assert len(core) == 96 and core == _replays(tmp_path / "python")


@needs_core
def test_outcome_cli_engine_flag_reaches_the_engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from osrs_rllib.evaluation.outcome import train_winrate
    from policies.outcome import OutcomeConfig

    torch.manual_seed(4)
    net = NHPolicyNetwork(OBS_SIZE, CRITIC_SIZE, NetworkConfig(actor_hidden=(16,), critic_hidden=(16,), head_hidden=8))
    params = {"max_episode_ticks": 60, "randomize_build": True, "random_build_options": ["PURE", "MED"]}
    plain = save_model_file(net, tmp_path / "small.nhmodel", metadata={"config": {"env": {"params": params}}})
    config = OutcomeConfig(hidden=(8,), epoch_ticks=512, max_epochs=1, patience=1)
    trained = train_winrate(plain, 20, seed=0, mix={"self": 0.5, "noop": 0.5}, config=config, parallel=8,
                            engine="core").path  # fmt: skip
    seen = spy_engines(monkeypatch, match_mod)  # so does outcome's collection
    runner = CliRunner()
    reports = {}
    for engine, expected in (("core", CoreEngine), ("python", NHEngine)):
        seen.clear()
        result = runner.invoke(app, ["outcome", "check", str(trained), "--fights", "4", "--engine", engine, "--json"])
        assert result.exit_code == 0, result.output
        assert set(seen) == {expected} and len(seen) == 4
        reports[engine] = {k: v for k, v in json.loads(result.stdout).items() if k != "seconds"}
    assert reports["core"] == reports["python"]
    bad = runner.invoke(app, ["outcome", "check", str(trained), "--fights", "4", "--engine", "fast"])
    assert bad.exit_code != 0 and "'fast'" in bad.output  # names the engine asked for
