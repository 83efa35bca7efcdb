"""Each benchmark runs for about a second, as a user runs it, so that none of them can rot (STYLE 17).

The figures are not checked: a benchmark prints numbers and asserts nothing.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
BENCHMARKS = REPO / "benchmarks"


def _run(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(BENCHMARKS / script), *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def _row(out: str, first: str) -> list[str]:
    """The cells of the printed table row that starts with `first` (a name, not a sentence)."""
    (row,) = [line.split() for line in out.splitlines() if line.split()[:1] == [first]]
    return row


def test_sim_throughput_table() -> None:
    """The table as a user reads it: a row of figures per scenario (the machine's fields: the JSON test)."""
    proc = _run("sim_throughput.py", "--seconds", "0.5")
    assert proc.returncode == 0, proc.stderr
    for scenario in ("baseline_vs_baseline", "random_vs_random", "tribrid_vs_baseline"):
        full, share, engine, sampler, fights = _row(proc.stdout, scenario)[1:]
        assert float(full.replace(",", "")) > 0 and float(engine.replace(",", "")) > 0 and int(fights) >= 0
        assert 0 <= float(share.rstrip("%")) <= 100 and float(sampler) >= 0


def test_sim_throughput_json() -> None:
    proc = _run("sim_throughput.py", "--seconds", "0.3", "--json", "--scenario", "random_vs_random")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert {"platform", "cpu", "python"} <= report["machine"].keys()
    (result,) = report["results"]
    assert result["scenario"] == "random_vs_random"
    assert result["full_ticks"] > 0 and result["engine_ticks"] > 0


def test_cli_startup_times_every_quick_command() -> None:
    proc = _run("cli_startup.py", "--runs", "1", "--json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["import_osrs_rllib_cli_s"] > 0
    assert [r["command"] for r in report["commands"]][:4] == ["--help", "version", "jobs", "serve status"]
    assert all(len(r["runs"]) == 1 and r["median_s"] > 0 for r in report["commands"])


def test_soak_short_run() -> None:
    proc = _run("soak.py", "--ticks", "2000", "--workers", "1", "--json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(proc.stdout.splitlines()[-1])
    assert report["ticks"] == 2000 and report["ok"] is True and report["failure"] is None
    assert report["episodes"] == sum(report["outcomes"].values())


def test_soak_core_short_run() -> None:
    pytest.importorskip("envs.nh.core._nhcore", reason="compiled core not built (pip install -e .)")
    proc = _run("soak_core.py", "--ticks", "20000", "--batch", "32", "--check-every", "5", "--json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(proc.stdout.splitlines()[-1])
    assert report["ok"] is True and report["failure"] is None
    assert report["ticks"] >= 20000 and report["batch"] == 32
    assert report["fights_ended"] == sum(report["outcomes"].values())
    assert report["rss_end_mb"] - report["rss_early_mb"] <= report["max_growth_mb"]


def test_policy_forward_json() -> None:
    proc = _run("policy_forward.py", "--seconds", "0.05", "--json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    cases = {(r["mode"], r["case"], r["batch"]) for r in report["results"]}
    assert ("torchscript", "act", 1) in cases and ("eager", "evaluate", 256) in cases
    assert all(r["ms"] > 0 for r in report["results"])


@pytest.mark.integration
def test_train_throughput_on_the_smoke_config() -> None:
    proc = _run("train_throughput.py", "--config", "configs/smoke.yml", "--iterations", "1", "--json")
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout)
    assert report["median"]["env_steps_per_s"] > 0
    assert report["iterations"][0]["env_steps"] > 0


@pytest.mark.integration
def test_train_throughput_whole_run_on_the_smoke_config() -> None:
    """``--whole-run``: a real run (one iteration of 256 steps, evaluated) and its time account as the last line.

    The config's own iteration limit ends the run, not the minutes, so the count does not depend on the machine."""
    settings = ["ppo.train_batch_size=256", "evaluation.interval=1", "evaluation.fights=1", "stop.iterations=1"]
    sets = [arg for setting in settings for arg in ("--set", setting)]
    proc = _run("train_throughput.py", "--whole-run", "--minutes", "10", "--config", "configs/smoke.yml", *sets,
                "--json")  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    report = json.loads(proc.stdout.splitlines()[-1])
    assert report["iterations"] == 1 and report["env_steps"] == 256
    assert report["whole_run_env_steps_per_s"] > 0 and report["between_evaluations_env_steps_per_s"] > 0
    parts = report["time_account_s"]
    assert parts["evaluation"] > 0 and parts["checkpoint"] > 0
    assert sum(parts.values()) == pytest.approx(report["wall_s"], rel=0.05)
    rows = [line.split()[:2] for line in proc.stdout.splitlines()]
    for part, seconds in parts.items():  # the printed time account holds the recorded seconds
        assert [part, f"{seconds:.1f}"] in rows, part


@pytest.mark.integration
def test_learning_curve_on_the_smoke_config(tmp_path: Path) -> None:
    proc = _run(
        "learning_curve.py",
        "--config",
        "configs/smoke.yml",
        "--minutes",
        "0.05",
        "--fights",
        "4",
        "--experiments-dir",
        str(tmp_path),
        "--set",
        "ppo.train_batch_size=256",
        "--set",
        "ppo.minibatch_size=128",
        "--set",
        "evaluation.interval=1",
        "--json",
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout)
    trained = ["LMS_PURE", "LMS_ZERKER", "LMS_MED", "PURE", "ZERKER", "MED"]
    assert [f["mode"] for f in report["final"]] == ["deterministic", "stochastic"]
    for final in report["final"]:
        # 4 fights per trained build in the headline; MAXED is played too and reported apart.
        assert final["builds"] == trained and final["unseen_builds"] == ["MAXED"]
        assert final["fights"] == 4 * len(trained)
        assert final["wins"] + final["losses"] + final["ties"] == final["fights"]
        assert {b: r["fights"] for b, r in final["by_build"].items()} == dict.fromkeys([*trained, "MAXED"], 4)
        assert sum(r["fights"] for r in final["by_fight_type"].values()) == 4 * 7
        assert final["model_iteration"] >= 1
    # the run's own evaluations reported every build
    assert report["curve"] and set(report["curve"][0]["split"]) >= {*trained, "MAXED"}


@pytest.mark.integration
def test_league_memory_small() -> None:
    proc = _run("league_memory.py", "--snapshots", "6", "--iterations", "1", "--json")
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout)
    assert report["after_5_mb"] > 0 and report["rows"][-1]["snapshots"] == 6


def tiny_learning_curve(tmp_path: Path, *args: str) -> dict[str, Any]:
    """`benchmarks/learning_curve.py` on the smoke config with batches of 256 env steps, evaluated every iteration."""
    common = ["--config", "configs/smoke.yml", "--minutes", "5", "--fights", "0", "--bar", "0.0", "--experiments-dir",
              str(tmp_path), "--set", "ppo.train_batch_size=256", "--set", "ppo.minibatch_size=128", "--set",
              "evaluation.interval=1", "--set", "evaluation.fights=1", "--json"]  # fmt: skip
    proc = subprocess.run([sys.executable, str(BENCHMARKS / "learning_curve.py"), *common, *args], cwd=REPO,
                          capture_output=True, text=True, timeout=1200, check=False)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


@pytest.mark.integration
def test_learning_curve_from_scratch_and_from_an_init_model(tmp_path: Path) -> None:
    """``--init`` trains twice (scratch, then the model file) with the same config and budget, and
    reports both curves and the env steps each needed to reach the bar."""
    from osrs_rllib.config.schema import load_config
    from tests.osrs_rllib.test_warm_start import write_model

    model = write_model(load_config(REPO / "configs" / "smoke.yml"), tmp_path / "start.nhmodel")
    report = tiny_learning_curve(tmp_path, "--init", str(model), "--env-steps", "256")
    assert set(report["runs"]) == {"scratch", "init"}
    for run in report["runs"].values():
        assert run["curve"] and run["curve"][0]["env_steps"] == 256  # one iteration each: the same budget
        assert run["steps_to_bar"] == 256  # a bar of 0 is reached at the first evaluation
    assert report["init_over_scratch_steps_to_bar"] == 1.0 and report["passed"] is False
    record = json.loads((tmp_path / "learning-curve-init" / "init.json").read_text())
    assert record["model"] == str(model.resolve()) and not (tmp_path / "learning-curve-scratch" / "init.json").exists()


def test_steps_ratio_bounds_a_run_that_never_reached_the_bar() -> None:
    """The warm-start bar where scratch never reaches 95 % within the budget: the ratio is only bounded, and the
    bound decides (as measured: from the clone at 81,920 steps, scratch not within 1,966,080)."""
    sys.path.insert(0, str(BENCHMARKS))
    from learning_curve import steps_ratio

    assert steps_ratio(1_600_000, 400_000, 2_000_000, 0.5) == (0.25, None, True)
    assert steps_ratio(1_000_000, 600_000, 2_000_000, 0.5) == (0.6, None, False)
    ratio, bound, passed = steps_ratio(None, 81_920, 1_966_080, 0.5)
    assert ratio is None and bound == pytest.approx(81_920 / 1_966_080) and passed is True
    assert steps_ratio(None, 1_500_000, 2_000_000, 0.5) == (None, 0.75, False)  # a bound above the bar shows nothing
    assert steps_ratio(None, None, 2_000_000, 0.5) == (None, None, False)
    assert steps_ratio(500, None, 2_000_000, None) == (None, None, None)


def test_prayer_tells_against_the_baseline_on_the_shipped_model() -> None:
    proc = _run("prayer_tells.py", "models/nh-main.nhmodel", "baseline", "--fights", "6", "--json")
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout)
    for side in ("a_attacks", "b_attacks"):
        rows = report[side]
        assert rows["all"]["n"] == sum(rows[s]["n"] for s in ("melee", "ranged", "magic") if s in rows) > 0
        assert all(0.0 <= row[m] <= 1.0 for row in rows.values() for m in ("protected", "shown", "baited"))


def test_prayer_tells_reads_each_attack_against_the_tick_before() -> None:
    """One magic attack by A on tick 2: B showed Protect from Magic on tick 1 and left it on tick 2 (baited), A
    already held a staff on tick 1 (telegraphed); one ranged attack on tick 3 into a prayer B had not shown."""
    import pandas as pd

    sys.path.insert(0, str(BENCHMARKS))
    from prayer_tells import attack_rows

    def row(tick: int, player: str, overhead: str, weapon_style: str, style: str | None, on: int) -> dict[str, Any]:
        hits = {f"hits_{s}": int(s == style) for s in ("melee", "ranged", "magic")}
        return {"fight": 0, "tick": tick, "player": player, "overhead": overhead, "weapon_style": weapon_style,
                "hits": int(style is not None), "hits_on_prayer": on, **hits}  # fmt: skip

    ticks = pd.DataFrame([
        row(1, "a", "", "magic", None, 0), row(1, "b", "protect_from_magic", "ranged", None, 0),
        row(2, "a", "", "magic", "magic", 0), row(2, "b", "protect_from_melee", "ranged", None, 0),
        row(3, "a", "", "ranged", "ranged", 1), row(3, "b", "protect_from_missiles", "ranged", None, 0),
    ])  # fmt: skip
    rows = attack_rows(ticks, "a").reset_index()
    assert rows[["tick", "style"]].values.tolist() == [[2, "magic"], [3, "ranged"]]
    assert rows["protected"].tolist() == [False, True]
    assert rows["shown"].tolist() == [True, False]
    assert rows["baited"].tolist() == [True, False]
    assert rows["telegraphed"].tolist() == [True, False]  # A held a staff before tick 2, a staff before tick 3
    assert attack_rows(ticks, "b").empty


@pytest.mark.integration
def test_exploit_transfer_against_exported_snapshots(tmp_path: Path) -> None:
    import numpy as np
    import torch

    from envs.nh.contract import CRITIC_SIZE, OBS_SIZE
    from osrs_rllib.config.schema import dump_config, load_config
    from policies.model_file import save_model_file
    from policies.network import NHPolicyNetwork

    cfg = load_config(REPO / "configs" / "smoke.yml")
    exp = tmp_path / "smoke"
    (exp / "league").mkdir(parents=True)
    (exp / "config.yml").write_text(dump_config(cfg))
    for version in (1, 2):
        torch.manual_seed(version)
        net = NHPolicyNetwork(OBS_SIZE, CRITIC_SIZE, cfg.model)
        weights = {f"net.{k}": v.numpy() for k, v in net.state_dict().items()}  # as the league stores them
        np.savez(exp / "league" / f"main@v{version}.npz", **weights)
    exploiter = save_model_file(NHPolicyNetwork(OBS_SIZE, CRITIC_SIZE, cfg.model), tmp_path / "exploiter.nhmodel")
    proc = _run("exploit_transfer.py", str(exploiter), str(exp), "--snapshots", "main@v1,main@v2", "--fights", "1",
                "--json")  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = json.loads(proc.stdout)["rows"]
    assert [r["snapshot"] for r in rows] == ["main@v1", "main@v2"]
    assert all(r["fights"] == 6 and 0.0 <= r["win_rate"] <= 1.0 for r in rows)  # one per trained build
