"""`osrs_rllib.analysis` against a real (tiny) trained experiment: real files, real fights, the real CLI."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from pandas.testing import assert_frame_equal

from osrs_rllib import analysis
from osrs_rllib.analysis import AnalysisError, tables
from osrs_rllib.analysis.fights import STYLES
from osrs_rllib.experiments.layout import MODEL_NAME, Experiment
from policies.model_file import META_ENTRY, ModelFileError, read_model_meta

REPO = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-m", "osrs_rllib.cli"]
SMOKE_DIR = "analysis-smoke-experiment"


def trained_smoke_experiment(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`osrs-rllib train configs/smoke.yml` once per test run (the analysis and notebook tests share it).

    The directory lives beside the session's base temp dir, where every pytest-xdist worker of the run finds it;
    a file lock lets the first worker train it while the others wait. To iterate on these tests without
    retraining, point ``OSRS_TEST_SMOKE_EXPERIMENT`` at a finished smoke experiment: it is copied (never
    modified) instead.
    """
    from filelock import FileLock

    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base  # xdist: one run, several workers
    root = shared / SMOKE_DIR
    exp = Experiment(root, "smoke")
    with FileLock(str(shared / f"{SMOKE_DIR}.lock")):
        given = os.environ.get("OSRS_TEST_SMOKE_EXPERIMENT")
        if exp.read_run().get("state") != "finished" and given:
            shutil.copytree(given, exp.dir, ignore=shutil.ignore_patterns("analysis"), dirs_exist_ok=True)
        if exp.read_run().get("state") != "finished":
            shutil.rmtree(root, ignore_errors=True)
            milestone = ["--set", "checkpoint.milestone_env_steps=1000"]  # one milestone: iteration 2, 1,024 steps
            proc = subprocess.run(
                [*CLI, "train", "configs/smoke.yml", "--set", f"experiments_dir={root}", *milestone],
                cwd=REPO,
                capture_output=True,
                text=True,
                timeout=600,
                check=False,
            )
            assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return exp.dir


@pytest.fixture(scope="session")
def smoke(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return trained_smoke_experiment(tmp_path_factory)


@pytest.fixture(scope="session")
def recorded(smoke: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    return analysis.play(smoke / "checkpoints" / "iter-000003", "baseline", fights=4, seed=11, record=True)


# ---------------------------------------------------------------------------------------------------------
# open_experiment, scalars
# ---------------------------------------------------------------------------------------------------------
def test_open_experiment_reads_checkpoints_models_and_league(smoke: Path) -> None:
    exp = analysis.open_experiment(smoke)
    cps = exp.checkpoints
    assert list(cps["iteration"]) == [2, 3]  # smoke keeps the last 2 (and the best, iteration 2)
    assert list(cps["env_steps"]) == [1024, 1536]
    assert cps["contract_ok"].all() and (cps["train_seconds"] > 0).all()
    assert cps.loc[cps.iteration == 2, "best"].item()
    # Iteration 2 was evaluated (evaluation.interval 2): its figures are in its row, with the interval.
    row = cps[cps.iteration == 2].iloc[0]
    assert row["eval/baseline/deterministic/win_rate_low"] <= row["eval/baseline/deterministic/win_rate"]
    assert row["eval/baseline/deterministic/win_rate"] == row["eval_win_rate"]
    assert set(exp.models) == {"average", "best", "latest", "milestones/main-1024"}  # average: ppo.average (nh.yml)
    assert read_model_meta(exp.models["milestones/main-1024"])["metadata"]["iteration"] == 2
    assert exp.config["name"] == "smoke"
    assert "main" in set(exp.ratings["player"]) and exp.ratings["elo"].is_monotonic_decreasing
    assert exp.checkpoint("latest").name == "iter-000003" and exp.checkpoint("best").name == "iter-000002"
    assert "include_opponent_observation" not in exp.fight_options
    with pytest.raises(AnalysisError, match=r"iteration 7.*kept: \[2, 3\]"):
        exp.checkpoint(7)


def test_missing_or_foreign_experiment_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(AnalysisError, match=r"no experiment at .*found nothing"):
        analysis.open_experiment(tmp_path / "nope")
    (tmp_path / "stuff.txt").write_text("x")
    with pytest.raises(AnalysisError, match=r"is not an experiment.*stuff\.txt"):
        analysis.open_experiment(tmp_path)


def test_scalars_are_a_tidy_frame(smoke: Path) -> None:
    s = analysis.scalars(smoke, ["charts/env_steps", "eval/*/win_rate*"])
    assert list(s.columns) == ["tag", "step", "wall_time", "value"]
    steps = s[s.tag == "charts/env_steps"]
    assert list(steps["step"]) == [1, 2, 3] and list(steps["value"]) == [512, 1024, 1536]
    assert {"eval/baseline/deterministic/win_rate", "eval/baseline/deterministic/win_rate_low"} <= set(s.tag)
    assert pd.api.types.is_datetime64_any_dtype(s["wall_time"])
    with pytest.raises(AnalysisError, match=r"no scalar 'fight/won_mea'.*fight/won_mean"):
        analysis.scalars(smoke, "fight/won_mea")


# ---------------------------------------------------------------------------------------------------------
# load_policy
# ---------------------------------------------------------------------------------------------------------
def test_checkpoint_model_file_and_ladder_load_as_the_same_kind_of_object(smoke: Path) -> None:
    ckpt = analysis.load_policy(smoke / "checkpoints" / "iter-000003")
    model = analysis.load_policy(smoke / "models" / "latest.nhmodel")
    rung = analysis.load_policy("tribrid")
    assert (ckpt.kind, model.kind, rung.kind) == ("model", "model", "ladder")
    assert ckpt.name == "iter-000003" and ckpt.metadata["iteration"] == 3
    rng = np.random.default_rng(0)
    obs = rng.normal(size=(5, 176)).astype(np.float32)
    masks = np.ones((5, 45), dtype=bool)
    for p in (ckpt, model, rung):
        assert isinstance(p, analysis.Policy)
        actions = p.act(obs, masks, seed=1)
        assert actions.shape == (5, 12) and actions.dtype == np.int64
        assert p.act(obs[0], masks[0], seed=1).shape == (12,)
    # The checkpoint's model and models/latest.nhmodel are the same network.
    assert np.array_equal(ckpt.act(obs, masks), model.act(obs, masks))
    with pytest.raises(AnalysisError, match="act"):
        analysis.load_policy("baseline").act(obs, masks)


def test_load_policy_errors_name_the_problem(smoke: Path, tmp_path: Path) -> None:
    with pytest.raises(AnalysisError, match=r"nothing at that path.*ladder name"):
        analysis.load_policy("tribird")
    with pytest.raises(AnalysisError, match=r"experiment: use .*latest\.nhmodel"):
        analysis.load_policy(smoke)
    # A damaged model file: cut in half.
    src = smoke / "checkpoints" / "iter-000003" / MODEL_NAME
    cut = tmp_path / "cut.nhmodel"
    cut.write_bytes(src.read_bytes()[: src.stat().st_size // 2])
    with pytest.raises(ModelFileError, match="damaged"):
        analysis.load_policy(cut)
    # A checkpoint from another contract version: same archive, other version in its metadata.
    other = tmp_path / "iter-000009"
    other.mkdir()
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(other / MODEL_NAME, "w") as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename.endswith(META_ENTRY):
                meta = json.loads(data)
                meta["contract_version"] = "nh-contract/0"
                data = json.dumps(meta).encode()
            zout.writestr(item, data)
    with pytest.raises(ModelFileError, match=r"expected contract nh-contract/\d+, found 'nh-contract/0'"):
        analysis.load_policy(other)


# ---------------------------------------------------------------------------------------------------------
# play
# ---------------------------------------------------------------------------------------------------------
def test_per_fight_figures_add_up_with_the_per_tick_data(recorded: tuple[pd.DataFrame, pd.DataFrame]) -> None:
    fights, ticks = recorded
    assert len(fights) == 4 and list(fights["fight"]) == [0, 1, 2, 3] and list(fights["seed"]) == [11, 12, 13, 14]
    assert len(ticks) == 2 * fights["ticks"].sum()
    a, b = ticks[ticks.player == "a"].groupby("fight"), ticks[ticks.player == "b"].groupby("fight")
    f = fights.set_index("fight")
    assert (a["tick"].max() == f["ticks"]).all() and (a.size() == f["ticks"]).all()
    assert (b["damage_taken"].sum() == f["damage_dealt"]).all()
    assert (a["damage_taken"].sum() == f["damage_received"]).all()
    for style in STYLES:
        assert (a[f"hit_damage_{style}"].sum() == f[f"damage_dealt_{style}"]).all()
        assert (b[f"hit_damage_{style}"].sum() == f[f"damage_received_{style}"]).all()
    for col in ("food_eaten", "karambwans_eaten", "brew_doses", "food_wasted_hp", "specials_used", "frozen_ticks"):
        assert (a[col].sum() == f[col]).all(), col
    assert (b["food_eaten"].sum() == f["opp_food_eaten"]).all()
    assert (a["hits_received_protected"].sum() == f["hits_received_protected"]).all()
    assert (b["hits_received_protected"].sum() == f["hits_on_prayer"]).all()
    # Food eaten is what left the inventory: the first tick's count plus what was eaten then, minus the last.
    first, last = a.head(1).set_index("fight"), a.tail(1).set_index("fight")
    assert ((first["food_left"] + first["food_eaten"] - last["food_left"]) == f["food_eaten"]).all()
    assert (last["hp"] == f["hp_left"]).all()
    # The loser ends at 0 hitpoints.
    for _, row in fights.iterrows():
        if row["winner"] == "a":
            assert row["opp_hp_left"] == 0 and row["hp_left"] > 0
        elif row["winner"] == "b":
            assert row["hp_left"] == 0
    # The model's rows carry its actions, value estimate and the observation it acted on; the baseline's do not.
    mine = ticks[ticks.player == "a"]
    assert (mine[list(analysis.ACTION_COLUMNS)] >= 0).all().all()
    assert mine["value"].notna().all() and mine["obs"].map(len).eq(176).all()
    theirs = ticks[ticks.player == "b"]
    assert (theirs[list(analysis.ACTION_COLUMNS)] == -1).all().all() and theirs["obs"].isna().all()
    assert set(ticks["overhead"]) <= {"", "protect_from_magic", "protect_from_missiles", "protect_from_melee",
                                      "smite", "redemption"}  # fmt: skip


def _without_arrays(ticks: pd.DataFrame) -> pd.DataFrame:
    return ticks.drop(columns=["obs", "mask"])


def test_play_is_reproducible_whatever_the_batching(smoke: Path, recorded: tuple[pd.DataFrame, pd.DataFrame]) -> None:
    fights, ticks = recorded
    again, again_ticks = analysis.play(
        smoke / "checkpoints" / "iter-000003", "baseline", fights=4, seed=11, record=True, parallel=3
    )
    assert_frame_equal(fights, again)
    # Every choice, state and event is exact; the critic's outputs are float32 sums whose rounding follows the
    # batch's shape (the BLAS kernel's blocking), so they agree to float32 precision, not bit for bit.
    critic = ["value", "win_prob"]
    assert_frame_equal(_without_arrays(ticks).drop(columns=critic), _without_arrays(again_ticks).drop(columns=critic),
                       check_exact=True)  # fmt: skip
    assert_frame_equal(ticks[critic], again_ticks[critic], rtol=1e-4, atol=1e-6)
    mine = ticks["obs"].notna()
    assert all(np.array_equal(x, y) for x, y in zip(ticks.loc[mine, "obs"], again_ticks.loc[mine, "obs"], strict=True))
    # Without recording, the per-fight frame is the same.
    assert_frame_equal(fights, analysis.play(smoke / "models" / "latest.nhmodel", "baseline", fights=4, seed=11)
                       .assign(a="iter-000003"))  # fmt: skip
    other = analysis.play(smoke / "models" / "latest.nhmodel", "baseline", fights=4, seed=12)
    assert not other["ticks"].equals(fights["ticks"])


def test_sampling_model_and_ladder_are_seeded_per_fight(smoke: Path) -> None:
    model = smoke / "models" / "latest.nhmodel"
    one = analysis.play(model, "tribrid", fights=5, seed=3, deterministic=False, parallel=5, build=["PURE", "MED"])
    two = analysis.play(model, "tribrid", fights=5, seed=3, deterministic=False, parallel=2, build=["PURE", "MED"])
    assert_frame_equal(one, two)
    assert list(one["build"]) == ["PURE", "MED", "PURE", "MED", "PURE"]
    # Fight 3 alone (seed 6) is fight 3 of the batch: nothing depends on the neighbours.
    alone = analysis.play(model, "tribrid", fights=1, seed=6, deterministic=False, build="MED")
    assert_frame_equal(alone.drop(columns=["fight"]), one.iloc[[3]].drop(columns=["fight"]).reset_index(drop=True))


def test_workers_give_the_same_fights_as_one_process(smoke: Path) -> None:
    model = smoke / "models" / "latest.nhmodel"
    single = analysis.play(model, "random", fights=6, seed=21, max_episode_ticks=150)
    split = analysis.play(model, "random", fights=6, seed=21, max_episode_ticks=150, workers=2)
    assert_frame_equal(single, split)


def test_play_rejects_bad_requests(smoke: Path) -> None:
    with pytest.raises(AnalysisError, match="only be side B"):
        analysis.play("baseline", "tribrid", fights=1)
    with pytest.raises(AnalysisError, match="set by play"):
        analysis.play("tribrid", "baseline", fights=1, opponent="agent")
    with pytest.raises(AnalysisError, match="give the build once"):
        analysis.play("tribrid", "baseline", fights=1, build="MED", account_build="PURE")
    with pytest.raises(AnalysisError, match=r"invalid.*expected one of"):
        analysis.play("tribrid", "baseline", fights=1, build="WIZARD")
    with pytest.raises(ValueError, match="max_ticks: unknown reset option"):
        analysis.play("tribrid", "baseline", fights=1, max_ticks=5)
    with pytest.raises(AnalysisError, match="fights must be at least 1"):
        analysis.play("tribrid", "baseline", fights=0)


# ---------------------------------------------------------------------------------------------------------
# checkpoint_table, action_distribution
# ---------------------------------------------------------------------------------------------------------
def _fight_cli(model: Path, opponent: str, n: int, seed: int) -> dict[str, object]:
    proc = subprocess.run(
        [*CLI, "fight", str(model), opponent, "--n", str(n), "--seed", str(seed), "--json"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def test_checkpoint_table_matches_fight_cli_and_is_cached(smoke: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    table = analysis.checkpoint_table(smoke, ["baseline", "prayer_switcher"], fights=12, seed=5)
    assert list(table.columns) == list(tables.TABLE_COLUMNS)
    assert list(zip(table.iteration, table.opponent, strict=True)) == [
        (2, "baseline"), (2, "prayer_switcher"), (3, "baseline"), (3, "prayer_switcher"),
    ]  # fmt: skip
    assert ((table.win_rate_low <= table.win_rate) & (table.win_rate <= table.win_rate_high)).all()
    assert (table.wins + table.losses + table.ties == 12).all()
    for opponent in ("baseline", "prayer_switcher"):
        cli = _fight_cli(smoke / "checkpoints" / "iter-000003" / MODEL_NAME, opponent, 12, 5)
        row = table[(table.iteration == 3) & (table.opponent == opponent)].iloc[0]
        assert (row.wins, row.losses, row.ties) == (cli["wins"], cli["losses"], cli["ties"]), opponent
        assert row.win_rate == pytest.approx(cli["win_rate"])
        assert [row.win_rate_low, row.win_rate_high] == pytest.approx(cli["win_rate_ci95"])
        assert row.mean_ticks == pytest.approx(cli["mean_ticks"])
        assert row.mean_damage_dealt == pytest.approx(cli["mean_damage_dealt"])
    assert (smoke / tables.CACHE_FILE).is_file()

    def no_fights(*args: object, **kwargs: object) -> None:
        raise AssertionError("a cached row was fought again")

    monkeypatch.setattr(tables, "play", no_fights)
    assert_frame_equal(table, analysis.checkpoint_table(smoke, ["baseline", "prayer_switcher"], fights=12, seed=5))
    with pytest.raises(AssertionError, match="fought again"):  # another seed is another set of fights
        analysis.checkpoint_table(smoke, ["baseline"], fights=12, seed=6)
    ratings = analysis.table_ratings(table)
    assert set(ratings["name"]) == {"iter-000002", "iter-000003", "baseline", "prayer_switcher"}
    assert (ratings["games"] > 0).all()


def test_action_distribution_compares_policies_on_the_same_states(
    smoke: Path, recorded: tuple[pd.DataFrame, pd.DataFrame]
) -> None:
    _, ticks = recorded
    states = ticks[ticks.player == "a"]
    early = analysis.action_distribution(smoke / "checkpoints" / "iter-000002", states)
    late = analysis.action_distribution(smoke / "checkpoints" / "iter-000003", states)
    rung = analysis.action_distribution("tribrid", states)
    for dist in (early, late, rung):
        assert list(dist.columns) == ["policy", "head", "value", "index", "probability"]
        assert dist.groupby("head")["probability"].sum().to_numpy() == pytest.approx(1.0)
        assert dist["head"].nunique() == 12
    assert not np.allclose(early["probability"], late["probability"])  # one more PPO iteration moved it
    # The late checkpoint played these fights greedily: its own path is the recorded one.
    own = analysis.action_distribution(smoke / "checkpoints" / "iter-000003", states, along="own")
    assert own["probability"].to_numpy() == pytest.approx(late["probability"].to_numpy(), abs=1e-6)
    # A rung's row is the share of states in which it chose each value.
    assert rung["probability"].mul(len(states)).round(6).mod(1).eq(0).all()
    with pytest.raises(AnalysisError, match="no recorded observations"):
        analysis.action_distribution("tribrid", ticks[ticks.player == "b"])
    with pytest.raises(AnalysisError, match="baseline"):
        analysis.action_distribution("baseline", states)
