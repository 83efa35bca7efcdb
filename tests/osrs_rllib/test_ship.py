"""`osrs-rllib ship`: a finished run's model picked by its config's rule, written with its metadata and card.

A smoke-sized run is trained for real (Ray, RLlib, checkpoints on disk) in this process, then shipped with tiny
budgets: a few fights per build, and in the slow test a one-iteration exploit per finalist. What is asserted is
what the command records: the measurement record (``ship/ship.json``), the file's metadata and the card's numbers.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from osrs_rllib.cli import app
from osrs_rllib.config.schema import load_config
from osrs_rllib.experiments.layout import Experiment
from osrs_rllib.exploit.measure import EXPLOIT_FILE
from osrs_rllib.shipping.card import pct
from osrs_rllib.shipping.run import SHIP_DIR
from osrs_rllib.shipping.ship import (
    SHIP_FILE,
    Candidate,
    ShipError,
    ShipRun,
    exploit_runs,
    exploitability,
    finalists,
    floor_misses,
    pick,
    ship_run,
)
from osrs_rllib.training.launch import TrainRunError, run_train
from policies.model_file import load_model_file

REPO = Path(__file__).resolve().parents[2]
FAST = ["evaluation.interval=0", "checkpoint.keep_best=false"]
RUNG = {"opponent": "baseline", "fights": 2, "modes": ["deterministic", "stochastic"]}


MIXED = {"checkpoint": {"interval": 1, "keep_last": 2, "milestone_env_steps": 512},  # a milestone per iteration
         "mixture": {"members": 2, "from_fraction": 0.0, "min_gap_env_steps": 1}}  # fmt: skip
"""Settings under which a two-iteration smoke run's mixture rule picks two models: the latest and iteration 1's."""


def trained(
    tmp_path: Path, ship: dict[str, Any], name: str = "run", extra: dict[str, Any] | None = None
) -> tuple[Path, Experiment]:
    """A finished smoke run of two iterations, a checkpoint each, whose config states `ship` (and `extra`)."""
    path = tmp_path / f"{name}.yml"
    path.write_text(yaml.safe_dump({"extends": str(REPO / "configs" / "smoke.yml"), "experiments_dir":
                                    str(tmp_path / "exp"), "checkpoint": {"interval": 1, "keep_last": 2},
                                    "stop": {"iterations": 2}, "ship": ship, **(extra or {})}))  # fmt: skip
    assert run_train(str(path), FAST, echo=lambda _: None) == 0
    return path, Experiment(tmp_path / "exp", name)


def candidate_row(label: str, iteration: int, score: float, exploit: float | None) -> dict[str, Any]:
    ex = None if exploit is None else {"win_rate": exploit, "mode": "deterministic", "by_mode": {}}
    return {"label": label, "iteration": iteration, "score": score, "exploitability": ex}


def test_the_rule_picks_the_best_score_or_the_least_exploitable_finalist() -> None:
    rows = [candidate_row("a", 1, 0.90, None), candidate_row("b", 2, 0.95, None), candidate_row("c", 3, 0.93, None)]
    assert pick(rows)[0]["label"] == "b"
    rows = [candidate_row("a", 1, 0.90, None), candidate_row("b", 2, 0.95, 0.70), candidate_row("c", 3, 0.93, 0.55)]
    assert pick(rows)[0]["label"] == "c"  # among the probed finalists, the one exploited least
    assert pick([candidate_row("a", 1, 0.9, None), candidate_row("b", 2, 0.9, None)])[0]["label"] == "b"  # later
    runs = [{"model_mode": "deterministic", "seed": 0, "win_rate": 0.6}, {"model_mode": "deterministic", "seed": 1,
            "win_rate": 0.7}, {"model_mode": "stochastic", "seed": 0, "win_rate": 0.65}]  # fmt: skip
    assert exploitability(runs) == {"by_mode": {"deterministic": 0.7, "stochastic": 0.65}, "win_rate": 0.65,
                                    "mode": "stochastic"}  # fmt: skip


def rung_rows(**by_mode: dict[str, float]) -> dict[str, dict[str, Any]]:
    """Rung rows per mode from each build's win rate (the mean of the builds as the row's)."""
    split = {mode: {b: {"win_rate": w} for b, w in builds.items()} for mode, builds in by_mode.items()}
    return {mode: {"win_rate": sum(builds.values()) / len(builds), "by_build": split[mode]}
            for mode, builds in by_mode.items()}  # fmt: skip


def test_a_candidate_under_the_rung_s_floor_is_neither_a_finalist_nor_shipped() -> None:
    from osrs_rllib.config.recipe import ShipFloorConfig

    floor = ShipFloorConfig(mean=0.92, every_build=0.87)
    strong = rung_rows(deterministic={"PURE": 0.95, "ZERKER": 0.91}, stochastic={"PURE": 0.96, "ZERKER": 0.90})
    one_build = rung_rows(deterministic={"PURE": 0.99, "ZERKER": 0.86}, stochastic={"PURE": 0.99, "ZERKER": 0.95})
    one_mode = rung_rows(deterministic={"PURE": 0.95, "ZERKER": 0.95}, stochastic={"PURE": 0.93, "ZERKER": 0.90})
    assert floor_misses(strong, floor) == [] and floor_misses(strong, None) == []
    assert floor_misses(one_build, floor) == ["greedy ZERKER 86.0% < 87.0%"]
    assert floor_misses(one_mode, floor) == ["sampling 91.5% < 92.0%"]
    assert floor_misses(one_mode, ShipFloorConfig(every_build=0.91)) == ["sampling ZERKER 90.0% < 91.0%"]

    cands = [Candidate(label, k, k * 100, Path(f"{label}.nhmodel"), "0" * 64)
             for k, label in enumerate(["iter-000001", "iter-000002", "iter-000003", "mixture"], 1)]  # fmt: skip
    scores = {"iter-000001": 0.99, "iter-000002": 0.93, "iter-000003": 0.95, "mixture": 0.90}
    misses = {"iter-000001": ["greedy ZERKER 86.0% < 87.0%"], "iter-000002": [], "iter-000003": [], "mixture": []}
    rows = {c.label: {"score": scores[c.label], "floor_misses": misses[c.label]} for c in cands}
    # the best score is under the floor: the best checkpoint left is probed, and the mixture whatever it scores
    assert [c.label for c in finalists(cands, rows, 1)] == ["mixture", "iter-000003"]
    rows["mixture"]["floor_misses"] = ["sampling 90.0% < 92.0%"]
    assert [c.label for c in finalists(cands, rows, 3)] == ["iter-000003", "iter-000002"]

    picked = [{**candidate_row(c.label, c.iteration, scores[c.label], None), "floor_misses": rows[c.label]
               ["floor_misses"]} for c in cands]  # fmt: skip
    assert pick(picked)[0]["label"] == "iter-000003"  # the highest score left, not iter-000001's 99 %
    for r in picked:
        r["floor_misses"] = ["greedy 50.0% < 92.0%"]
    with pytest.raises(ShipError, match=r"no candidate clears ship\.rung\.floor.*iter-000001: greedy 50\.0% < 92\.0%"):
        pick(picked)


def card_rows(card: str) -> list[str]:
    return [line for line in card.splitlines() if line.startswith("| iter-")]


def interval(row: dict[str, Any]) -> str:
    return f"{pct(row['win_rate'])} [{pct(row['win_rate_low'])}, {pct(row['win_rate_high'])}]"


def test_only_a_finished_exploit_run_gives_a_finalist_its_figure(tmp_path: Path) -> None:
    """A run stopped by one signal still writes a figure, at the env steps it reached: ``ship`` must resume it to
    its budget instead (here a stop is pending, so ``exploit_runs`` reports that it has no figures yet)."""
    path = tmp_path / "run.yml"
    probe = {"env_steps": 512, "seeds": [0], "model_modes": ["deterministic"], "final_fights": 1}
    path.write_text(yaml.safe_dump({"extends": str(REPO / "configs" / "smoke.yml"), "experiments_dir":
                                    str(tmp_path / "exp"), "ship": {"candidates": 1, "rung": RUNG,
                                                                    "exploit": probe}}))  # fmt: skip
    cfg = load_config(path)
    exp = Experiment(tmp_path / "exp", "run")
    run = ShipRun(exp=exp, cfg=cfg, output=exp, phases=[], recipe={})
    candidate = Candidate("iter-000002", 2, 256, tmp_path / "m.nhmodel", "0" * 64)
    report_dir = run.ship_dir / "exploit" / "iter-000002-greedy-seed0-512"
    report_dir.mkdir(parents=True)
    figure = {"win_rate": 0.25, "win_rate_low": 0.2, "win_rate_high": 0.3, "fights": 12, "budget_env_steps": 512}
    for state, expected in (("stopped", None), ("running", None), ("finished", 0.25)):
        report = {"state": state, "exploitability": figure, "series": [{"env_steps": 256, "win_rate": 0.25}]}
        (report_dir / EXPLOIT_FILE).write_text(json.dumps(report))
        runs = exploit_runs(run, candidate, echo=lambda _: None, stopped=lambda: True)
        assert (runs if runs is None else runs[0]["win_rate"]) == expected, state


def test_ship_measures_picks_and_writes_the_model_and_its_card(
    tmp_path: Path, ray_session: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The recipe records the command as the user typed it, whatever runner (pytest, xdist) this process is.
    monkeypatch.setattr(sys, "argv", ["osrs-rllib", "train", "the-config.yml"])
    config, exp = trained(tmp_path, {"candidates": 2, "rung": RUNG})
    out = tmp_path / "models"
    runner = CliRunner()
    # bad input writes nothing: an unfinished run, an unknown run, a bad name, a config without a rule
    exp.write_run(state="stopped")
    refused = runner.invoke(app, ["ship", str(exp.dir), "--name", "m", "--out", str(out)])
    assert refused.exit_code == 2
    exp.write_run(state="finished")
    assert runner.invoke(app, ["ship", str(tmp_path / "nothing"), "--name", "m", "--out", str(out)]).exit_code == 2
    assert runner.invoke(app, ["ship", str(exp.dir), "--name", "a/b", "--out", str(out)]).exit_code == 2
    with pytest.raises(ShipError):
        ship_run(str(REPO / "configs"), "m", out)
    assert not out.exists() and not (exp.dir / SHIP_DIR).exists()

    shipped = runner.invoke(app, ["ship", str(exp.dir), "--name", "m", "--out", str(out)])
    assert shipped.exit_code == 0, shipped.output
    record = json.loads((exp.dir / SHIP_DIR / SHIP_FILE).read_text())
    rows = record["candidates"]
    assert [r["label"] for r in rows] == ["iter-000001", "iter-000002"]  # the last two checkpoints
    for r in rows:
        assert set(r["rung"]) == {"deterministic", "stochastic"} and r["rung"]["deterministic"]["fights"] == 12
        assert r["score"] == pytest.approx(
            (r["rung"]["deterministic"]["win_rate"] + r["rung"]["stochastic"]["win_rate"]) / 2
        )
    best = max(rows, key=lambda r: (r["score"], r["iteration"]))
    assert record["picked"] == best["label"] and record["play_mode"] == "greedy"

    model = load_model_file(out / "m.nhmodel")
    md = model.metadata
    assert model.meta["tensor_sha256"] == best["tensor_sha256"]  # the picked candidate's network, unchanged
    assert md["iteration"] == best["iteration"] and md["env_steps"] == best["env_steps"]
    recipe = md["recipe"]
    assert recipe["config"] == str(config) and recipe["command"] == "osrs-rllib train the-config.yml"
    assert recipe["commit"] is None or len(recipe["commit"]) == 40
    assert recipe["env_steps"] == rows[-1]["env_steps"] and recipe["seeds"]["rung"] == record["rule"]["rung"]["seed"]
    assert load_config(recipe["config"]).ship is not None  # the file names a config that loads
    assert md["ship"]["picked"] == record["picked"] and md["ship"]["candidates"] == rows and md["play_mode"] == "greedy"

    card = (out / "m.card.md").read_text()
    assert card.startswith("### `m.nhmodel`") and f"`{model.meta['tensor_sha256']}`" in card
    assert f"{md['env_steps']:,} env steps" in card
    expected = []
    for r in rows:
        mark = " (shipped)" if r["label"] == record["picked"] else ""
        cells = " | ".join(interval(r["rung"][m]) for m in ("deterministic", "stochastic"))
        expected.append(f"| {r['label']}{mark} | {r['env_steps']:,} | {cells} | {pct(r['score'])} | – |")
    assert card_rows(card) == expected  # the card's numbers are the record's

    again = runner.invoke(app, ["ship", str(exp.dir), "--name", "m", "--out", str(out)])
    assert again.exit_code == 2  # the model exists: --force replaces it
    before = sorted(p.stat().st_mtime_ns for p in (exp.dir / SHIP_DIR / "rung").iterdir())
    assert runner.invoke(app, ["ship", str(exp.dir), "--name", "m", "--out", str(out), "--force"]).exit_code == 0
    assert sorted(p.stat().st_mtime_ns for p in (exp.dir / SHIP_DIR / "rung").iterdir()) == before  # cached
    assert load_model_file(out / "m.nhmodel").meta["tensor_sha256"] == model.meta["tensor_sha256"]


def test_a_run_no_candidate_of_which_clears_the_floor_ships_nothing(tmp_path: Path, ray_session: None) -> None:
    """Every fight won with every build is a floor a smoke-sized model does not clear: ``ship`` measures, says
    what each candidate missed (from its own rows) and exits 2 without writing a model, a card or a record."""
    _, exp = trained(tmp_path, {"candidates": 2, "rung": {**RUNG, "floor": {"every_build": 1.0}}})
    out = tmp_path / "models"
    refused = CliRunner().invoke(app, ["ship", str(exp.dir), "--name", "m", "--out", str(out)])
    assert refused.exit_code == 2 and "no candidate clears ship.rung.floor" in refused.output
    assert not out.exists() and not (exp.dir / SHIP_DIR / SHIP_FILE).exists()
    rows = [json.loads(p.read_text()) for p in sorted((exp.dir / SHIP_DIR / "rung").iterdir())]
    assert len(rows) == 4  # two candidates x two modes, kept for the next ship
    for row in rows:
        for build, split in row["by_build"].items():
            if split["win_rate"] < 1.0:
                assert f"{build} {split['win_rate']:.1%} < 100.0%" in " ".join(refused.output.split())


@pytest.mark.slow
def test_ship_probes_the_finalists_with_exploit_runs_and_seats_the_better_mode(
    tmp_path: Path, ray_session: None
) -> None:
    smoke = str(REPO / "configs" / "smoke.yml")
    probe = {"finalists": 2, "env_steps": 512, "seeds": [0], "model_modes": ["deterministic", "stochastic"],
             "final_fights": 1, "config": smoke, "overrides": ["evaluation.fights=1"]}  # fmt: skip
    _, exp = trained(tmp_path, {"candidates": 2, "rung": RUNG, "exploit": probe})
    out = tmp_path / "models"
    assert ship_run(str(exp.dir), "m", out, echo=lambda _: None) == 0
    record = json.loads((exp.dir / SHIP_DIR / SHIP_FILE).read_text())
    finalists = [r for r in record["candidates"] if r["exploitability"] is not None]
    assert len(finalists) == 2
    for r in finalists:
        assert [(x["model_mode"], x["seed"]) for x in r["exploit_runs"]] == [("deterministic", 0), ("stochastic", 0)]
        assert all(x["budget_env_steps"] == 512 for x in r["exploit_runs"])
    least = min(finalists, key=lambda r: (r["exploitability"]["win_rate"], -r["score"], -r["iteration"]))
    assert record["picked"] == least["label"]
    mode = least["exploitability"]["mode"]
    assert record["play_mode"] == {"deterministic": "greedy", "stochastic": "sampling"}[mode]
    assert load_model_file(out / "m.nhmodel").metadata["play_mode"] == record["play_mode"]
    card = (out / "m.card.md").read_text()
    assert f"**{pct(least['exploitability']['win_rate'])}**" in card
    runs = sorted((exp.dir / SHIP_DIR / "exploit").iterdir())
    started = [json.loads((d / "run.json").read_text())["started_unix"] for d in runs]
    assert ship_run(str(exp.dir), "m", out, force=True, echo=lambda _: None) == 0  # every measurement cached
    assert [json.loads((d / "run.json").read_text())["started_unix"] for d in runs] == started


def test_a_stopped_ship_keeps_its_measurements_and_continues(tmp_path: Path, ray_session: None) -> None:
    """SIGTERM (a user's Ctrl-C) while the rung plays: nothing is shipped, the finished rows stay, and the next
    ``ship`` measures only what is missing."""
    import os
    import signal
    import threading
    import time

    _, exp = trained(tmp_path, {"candidates": 2, "rung": {**RUNG, "fights": 10}})
    rung = exp.dir / SHIP_DIR / "rung"

    def stop_at_first_row() -> None:
        while not (rung.is_dir() and any(rung.iterdir())):
            time.sleep(0.05)
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=stop_at_first_row, daemon=True).start()
    out = tmp_path / "models"
    assert ship_run(str(exp.dir), "m", out, echo=lambda _: None) == 0
    assert not (out / "m.nhmodel").exists() and not (exp.dir / SHIP_DIR / SHIP_FILE).exists()
    kept = {p.name: p.stat().st_mtime_ns for p in rung.iterdir()}
    assert 1 <= len(kept) < 4  # two candidates x two modes: stopped before the last
    assert ship_run(str(exp.dir), "m", out, echo=lambda _: None) == 0
    assert (out / "m.nhmodel").exists() and len(list(rung.iterdir())) == 4
    assert all(p.stat().st_mtime_ns == kept[p.name] for p in rung.iterdir() if p.name in kept)  # not replayed


def test_ship_s_mixture_plays_each_rung_fight_with_the_member_its_seed_draws(tmp_path: Path, ray_session: None) -> None:
    """``ship.mixture``: the run's mixture, made by its rule, competes beside the checkpoints. Checked from outside
    the rung's code path: each member plays the rung's fights alone (`play_match`), and the mixture's row is the
    per-fight pick of the member `fight_members` draws for that fight's seed."""
    import numpy as np

    from envs.nh.params import FightParams
    from osrs_rllib.evaluation.match import PolicySide, play_match
    from osrs_rllib.evaluation.policy_fights import network_act_fn
    from osrs_rllib.evaluation.stratified import spread, trained_builds
    from osrs_rllib.shipping.run import MIXTURE_LABEL
    from policies.fight_rules import fight_rules_of
    from policies.mixture_draw import fight_members

    rung = {**RUNG, "modes": ["deterministic"]}
    _, exp = trained(tmp_path, {"candidates": 2, "rung": rung, "mixture": True}, extra=MIXED)
    out = tmp_path / "models"
    assert ship_run(str(exp.dir), "m", out, echo=lambda _: None) == 0
    record = json.loads((exp.dir / SHIP_DIR / SHIP_FILE).read_text())
    assert [r["label"] for r in record["candidates"]] == ["iter-000001", "iter-000002", MIXTURE_LABEL]
    mix_row = record["candidates"][-1]
    assert [(m["label"], m["env_steps"]) for m in mix_row["members"]] == [("latest", 1024), ("milestone", 512)]
    assert not Path(mix_row["file"]).is_absolute()  # the record travels: its files are the experiment's own
    mixture = load_model_file(exp.dir / mix_row["file"])
    assert mixture.member_count == 2
    singles = {r["tensor_sha256"]: r for r in record["candidates"][:2]}
    assert [mixture.member(i).meta["tensor_sha256"] in singles for i in range(2)] == [True, True]

    base = FightParams.from_options(dict(fight_rules_of(mixture).training_options))
    plan = spread(base, rung["fights"] * len(trained_builds(base)), trained_builds(base))
    seed = record["rule"]["rung"]["seed"]
    seeds = [seed + k for k in range(len(plan))]
    alone = []  # each member's record of every fight, by the fight's index in the plan
    for i in range(2):
        side = PolicySide(network_act_fn(mixture.member(i).module), True, mixture.frame_stack)
        records = play_match(side, None, plan, seeds, [0] * len(plan), parallel=64, kind="baseline")
        alone.append({r.fight: r for r in records})
    drawn = fight_members(seeds, 2)
    picked = [alone[int(drawn[k])][k] for k in range(len(plan))]
    assert 0 < int(np.sum(drawn)) < len(plan)  # both members played some of the fights
    row = mix_row["rung"]["deterministic"]
    assert row["fights"] == len(plan)
    assert row["wins"] == sum(r.outcome.name == "WON" for r in picked)
    assert row["mean_damage_dealt"] == pytest.approx(sum(r.damage_dealt for r in picked) / len(plan))
    assert row["mean_fight_ticks"] == pytest.approx(sum(r.ticks for r in picked) / len(plan))
    assert mix_row["score"] == pytest.approx(row["win_rate"])


def test_ship_s_average_competes_beside_the_checkpoints_and_is_always_a_finalist(
    tmp_path: Path, ray_session: None
) -> None:
    """``ship.average``: the running average of main's parameters at the newest checkpoint (``ppo.average``) plays
    the rung as a candidate of its own, byte for byte the checkpoint's ``average.nhmodel``."""
    from osrs_rllib.experiments import AVERAGE_MODEL_NAME
    from osrs_rllib.shipping.run import AVERAGE_LABEL
    from policies.model_file import read_model_meta

    rung = {**RUNG, "modes": ["deterministic"]}
    _, exp = trained(tmp_path, {"candidates": 1, "rung": rung, "average": True}, extra={"ppo": {"average":
                                                                                                {"decay": 0.9}}})
    out = tmp_path / "models"
    assert ship_run(str(exp.dir), "a", out, echo=lambda _: None) == 0
    record = json.loads((exp.dir / SHIP_DIR / SHIP_FILE).read_text())
    assert [r["label"] for r in record["candidates"]] == ["iter-000002", AVERAGE_LABEL]
    newest = exp.latest_checkpoint().path
    average_row = record["candidates"][1]
    assert average_row["tensor_sha256"] == read_model_meta(newest / AVERAGE_MODEL_NAME)["tensor_sha256"]
    assert average_row["tensor_sha256"] != record["candidates"][0]["tensor_sha256"]
    assert average_row["iteration"] == 2 and average_row["rung"]["deterministic"]["fights"] > 0

    cands = [Candidate(label, 2, 200, Path(f"{label}.nhmodel"), "0" * 64) for label in ("iter-000002", "average")]
    rows = {"iter-000002": {"score": 0.99, "floor_misses": []}, "average": {"score": 0.5, "floor_misses": []}}
    assert [c.label for c in finalists(cands, rows, 1)] == ["average", "iter-000002"]  # whatever it scores

    with pytest.raises(TrainRunError, match=r"no-average\.yml: ship\.average: .*ppo\.average\.decay > 0"):
        trained(tmp_path, {"candidates": 1, "rung": rung, "average": True}, name="no-average",
                extra={"ppo": {"average": {"decay": 0}}})


@pytest.mark.integration
def test_the_shipped_mixture_keeps_its_members_and_names_them_on_its_card(tmp_path: Path, ray_session: None) -> None:
    """A mixture the probe picks ships as the mixture file it was measured as (members unchanged, the default play
    mode in its metadata, which `serve` gives each member), and its card names the members."""
    from osrs_rllib.shipping.run import MIXTURE_LABEL
    from serving.models import ModelRegistry

    smoke = str(REPO / "configs" / "smoke.yml")
    probe = {"finalists": 1, "env_steps": 512, "seeds": [0], "model_modes": ["stochastic"], "final_fights": 2,
             "config": smoke, "overrides": ["evaluation.fights=1"]}  # fmt: skip
    _, exp = trained(tmp_path, {"candidates": 2, "rung": {**RUNG, "modes": ["deterministic"]}, "exploit": probe,
                                "mixture": True}, extra=MIXED)  # fmt: skip
    out = tmp_path / "models"
    assert ship_run(str(exp.dir), "m", out, echo=lambda _: None) == 0
    record = json.loads((exp.dir / SHIP_DIR / SHIP_FILE).read_text())
    probed = [r["label"] for r in record["candidates"] if r["exploitability"] is not None]
    assert len(probed) == 2 and MIXTURE_LABEL in probed  # the best checkpoint and, always, the mixture
    mix_row = next(r for r in record["candidates"] if r["label"] == MIXTURE_LABEL)
    (run_dir,) = [Path(r["report"]) for r in mix_row["exploit_runs"]]
    report = json.loads((run_dir / EXPLOIT_FILE).read_text())
    assert report["exploitability"]["fights"] == 2 * 6  # 2 final fights per build shared by the 2 members

    # whichever won the probe, the mixture row ships as its own file when picked: pick it by hand to check that path
    from osrs_rllib.shipping.card import card_markdown
    from osrs_rllib.shipping.ship import write_model

    shipped = write_model(exp.dir / mix_row["file"], out / "mix.nhmodel", {"play_mode": "sampling"})
    model = load_model_file(out / "mix.nhmodel")
    assert model.member_count == 2 and shipped["tensor_sha256"] == mix_row["tensor_sha256"]
    card = card_markdown(out / "mix.nhmodel", {**record, "picked": MIXTURE_LABEL})
    assert "| members | 2, one drawn per fight by its seed: m0 latest" in card and "m1 milestone" in card
    (tmp_path / "served").mkdir()
    (tmp_path / "served" / "mix.nhmodel").write_bytes((out / "mix.nhmodel").read_bytes())
    registry = ModelRegistry(tmp_path / "served", ladder=False)
    assert {n: registry.models[n].play_mode for n in registry.models} == {"mix.m0": "sampling", "mix.m1": "sampling"}
