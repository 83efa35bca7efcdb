"""A recipe in phases: one config, one ``osrs-rllib train``, the phases in order, resumable in the middle of one.

The runs are real (Ray, RLlib, files on disk) at the smoke config's size with evaluation off, in this process
(`osrs_rllib.training.launch.run_train`, what the command calls), so a phase costs seconds. What is asserted is what
the run records: ``phases.json``, each phase's ``run.json``, checkpoints and ``init.json``.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from osrs_rllib.cli import app
from osrs_rllib.config.schema import ConfigError, load_config
from osrs_rllib.experiments.layout import Experiment
from osrs_rllib.training.launch import TrainRunError, run_train
from osrs_rllib.training.phases import PHASES_FILE, RECIPE_FILE, PhasedRun

REPO = Path(__file__).resolve().parents[2]
BATCH = 512
"""Env steps per smoke iteration (ppo.train_batch_size of configs/smoke.yml)."""
FAST = ["evaluation.interval=0", "checkpoint.keep_best=false"]


def recipe(tmp_path: Path, phases: list[dict], name: str = "recipe") -> Path:
    """A phased config over the smoke config, its experiments in `tmp_path`."""
    path = tmp_path / f"{name}.yml"
    data = {"extends": str(REPO / "configs" / "smoke.yml"), "experiments_dir": str(tmp_path / "exp"), "phases": phases}
    path.write_text(yaml.safe_dump(data))
    return path


def test_a_bad_key_inside_a_phase_names_the_phase_the_key_and_the_file(tmp_path: Path) -> None:
    bad = recipe(tmp_path, [{"name": "a", "stop": {"iterations": 1}}, {"name": "b", "stop": {"iterations": 1},
                                                                         "ppo": {"lrr": 1e-4}}])  # fmt: skip
    with pytest.raises(ConfigError) as err:
        load_config(bad)
    assert (err.value.file, err.value.key) == (str(bad), "phases.b.ppo.lrr")
    value = recipe(tmp_path, [{"name": "a", "stop": {"iterations": 1}, "opponents": {"mix": {"expert": -1}}}], "v")
    with pytest.raises(ConfigError) as err:
        load_config(value)
    assert (err.value.file, err.value.key) == (str(value), "phases.a.opponents.mix.expert")
    for phases, key in (
        ([{"name": "a"}], "phases.a.stop"),  # no budget
        ([{"name": "a", "stop": {"iterations": 1}, "name_": 1}], "phases.a.name_"),
        ([{"name": "a", "stop": {"iterations": 1}, "experiments_dir": "x"}], "phases.a.experiments_dir"),
        ([{"name": "A b", "stop": {"iterations": 1}}], "phases.1.name"),
        ([{"name": "a", "stop": {"iterations": 1}, "init_from": "first"}], "phases.a.init_from"),
        ([{"name": "a", "stop": {"iterations": 1}}, {"name": "a", "stop": {"iterations": 1}}], "phases.a"),
    ):
        path = recipe(tmp_path, phases, "bad")
        with pytest.raises(ConfigError) as err:
            load_config(path)
        assert (err.value.file, err.value.key) == (str(path), key), phases
    assert load_config(REPO / "configs" / "nh.yml").phases == []  # a config without phases: one run, as before


def test_a_ship_mixture_needs_the_last_phase_to_write_one(tmp_path: Path) -> None:
    """``ship.mixture`` ships the last phase's mixture: a last phase whose rule writes none is refused at load,
    naming the key and the file, and a rule stated in that phase is enough."""
    phases = [{"name": "a", "stop": {"iterations": 1}}, {"name": "b", "stop": {"iterations": 1},
                                                         "mixture": {"members": 0}}]  # fmt: skip
    path = recipe(tmp_path, phases, "nomix")
    data = yaml.safe_load(path.read_text())
    path.write_text(yaml.safe_dump({**data, "ship": {"candidates": 2, "mixture": True}}))
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert (err.value.file, err.value.key) == (str(path), "ship.mixture") and "phase (b)" in err.value.message
    phases[1]["mixture"] = {"members": 2}
    path.write_text(yaml.safe_dump({**data, "phases": phases, "ship": {"candidates": 2, "mixture": True}}))
    assert load_config(path).ship.mixture


def test_config_show_lists_the_phases_and_prints_one_resolved(tmp_path: Path) -> None:
    second = {"name": "b", "init_from": "best", "stop": {"iterations": 2}, "ppo": {"lr": 1e-5}}
    path = recipe(tmp_path, [{"name": "a", "stop": {"env_steps": 1000}}, second])
    shown = CliRunner().invoke(app, ["config", "show", str(path)])
    assert shown.exit_code == 0, shown.output
    assert [line for line in shown.output.splitlines() if line.startswith("# phase ")] == [
        "# phase 1 a: env_steps 1,000; from scratch; changes nothing else",
        "# phase 2 b: iterations 2; from phase 1's best.nhmodel; changes ppo",
    ]
    one = CliRunner().invoke(app, ["config", "show", str(path), "--phase", "b"])
    assert one.exit_code == 0, one.output
    phase = yaml.safe_load(one.output)
    assert phase["name"] == "2-b" and phase["ppo"]["lr"] == 1e-5 and phase["phases"] == []
    assert phase["stop"] == {"iterations": 2, "env_steps": None, "minutes": None}  # the phase's budget replaces stop
    assert CliRunner().invoke(app, ["config", "show", str(path), "--phase", "c"]).exit_code == 2


def stop_when(path: Path, stop: threading.Event) -> threading.Thread:
    """SIGTERM this process (a user's ``osrs-rllib stop``) once `path` exists: the trainer's handler finishes
    the iteration in flight, checkpoints and ends the phase as stopped."""

    def watch() -> None:
        while not stop.is_set():
            if path.exists():
                os.kill(os.getpid(), signal.SIGTERM)
                return
            time.sleep(0.05)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


def test_phases_run_in_order_each_from_the_previous_output(
    tmp_path: Path, ray_session: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "argv", ["osrs-rllib", "train", "recipe.yml"])  # as typed, whatever runs the tests
    second = {"name": "second", "stop": {"iterations": 2}, "ppo": {"entropy_coeff": 0.02}}
    path = recipe(tmp_path, [{"name": "first", "stop": {"iterations": 1}}, second])
    exp = Experiment(tmp_path / "exp", "recipe")
    run = PhasedRun(load_config(path, FAST), exp)
    one, two = run.phase_exp(0), run.phase_exp(1)
    assert run_train(str(path), FAST, echo=lambda _: None) == 0
    record = json.loads((exp.dir / PHASES_FILE).read_text())
    assert record["state"] == "finished" and record["current"] is None
    assert [(r["index"], r["name"], r["state"]) for r in record["phases"]] == [(1, "first", "finished"),
                                                                             (2, "second", "finished")]  # fmt: skip
    assert [(r["iterations"], r["env_steps"]) for r in record["phases"]] == [(1, BATCH), (2, 2 * BATCH)]
    assert one.read_run()["state"] == two.read_run()["state"] == "finished"
    assert one.read_run()["ended_unix"] <= two.read_run()["started_unix"]  # in order
    assert one.read_run()["resumed"] is False and two.read_run()["resumed"] is False
    assert not (one.dir / "init.json").exists()  # the first phase from scratch, as the config says
    init = json.loads((two.dir / "init.json").read_text())  # the second from the first's output (init_from: latest)
    assert Path(init["model"]) == one.models_dir / "latest.nhmodel"
    assert record["phases"][1]["init"]["sha256"] == init["sha256"]
    assert load_config(two.config_path).ppo.entropy_coeff.initial == 0.02  # each phase its own settings
    assert load_config(one.config_path).ppo.entropy_coeff.initial == 0.01
    assert load_config(exp.config_path).phases == load_config(path).phases  # the recipe, for --resume
    facts = json.loads((exp.dir / RECIPE_FILE).read_text())
    assert facts["config"] == str(path) and facts["command"] == "osrs-rllib train recipe.yml"
    assert facts["commit"] is None or len(facts["commit"]) == 40
    assert exp.read_run()["state"] == "finished" and exp.read_run()["phases"] == ["first", "second"]
    with pytest.raises(TrainRunError):  # finished work is not replaced without --force
        run_train(str(path), FAST, echo=lambda _: None)
    assert one.read_run()["state"] == "finished"  # refused, untouched
    # nothing left to do: a resume of a finished recipe trains nothing
    assert run_train(str(path), FAST, resume=True, echo=lambda _: None) == 0
    assert two.read_run()["resumed"] is False and two.latest_checkpoint().iteration == 2


@pytest.mark.slow
def test_phases_run_in_order_and_a_resume_continues_the_current_phase(tmp_path: Path, ray_session: None) -> None:
    second = {"name": "second", "stop": {"iterations": 5}, "ppo": {"entropy_coeff": 0.02}}
    path = recipe(tmp_path, [{"name": "first", "stop": {"iterations": 2}}, second])
    exp = Experiment(tmp_path / "exp", "recipe")
    run = PhasedRun(load_config(path, FAST), exp)
    one, two = run.phase_exp(0), run.phase_exp(1)
    done = threading.Event()
    stop_when(two.checkpoint_dir_for(1), done)
    try:
        assert run_train(str(path), FAST, echo=lambda _: None) == 0
    finally:
        done.set()
    record = json.loads((exp.dir / PHASES_FILE).read_text())
    assert record["state"] == "stopped" and record["current"] == "second"
    assert [(r["name"], r["state"]) for r in record["phases"]] == [("first", "finished"), ("second", "stopped")]
    assert record["phases"][0]["env_steps"] == 2 * BATCH and record["phases"][0]["iterations"] == 2
    stopped_at = two.latest_checkpoint().iteration
    assert 1 <= stopped_at < 5 and two.read_run()["state"] == "stopped"
    first_run = one.read_run()
    assert first_run["state"] == "finished"
    # phase 2 started from phase 1's output (init_from: latest), and its config is the phase's
    init = json.loads((two.dir / "init.json").read_text())
    assert Path(init["model"]) == one.models_dir / "latest.nhmodel"
    assert load_config(two.config_path).ppo.entropy_coeff.initial == 0.02
    assert load_config(one.config_path).ppo.entropy_coeff.initial == 0.01
    recipe_facts = json.loads((exp.dir / RECIPE_FILE).read_text())
    assert recipe_facts["config"] == str(path) and len(recipe_facts["commit"] or "x" * 40) == 40

    with pytest.raises(TrainRunError):  # finished work is not replaced without --force
        run_train(str(path), FAST, echo=lambda _: None)

    assert run_train(str(path), FAST, resume=True, echo=lambda _: None) == 0
    record = json.loads((exp.dir / PHASES_FILE).read_text())
    assert record["state"] == "finished"
    assert [(r["name"], r["state"]) for r in record["phases"]] == [("first", "finished"), ("second", "finished")]
    assert one.read_run()["started_unix"] == first_run["started_unix"]  # the finished phase was not rerun
    assert two.read_run()["resumed"] is True  # continued from its checkpoint, not from scratch
    assert two.latest_checkpoint().iteration == 5 and record["phases"][1]["env_steps"] == 5 * BATCH
    from tests.osrs_rllib.test_train import scalar_steps

    assert scalar_steps(two.tensorboard_dir, "charts/env_steps") == [1, 2, 3, 4, 5]
    assert len(json.loads((exp.dir / RECIPE_FILE).read_text())["resumed_with"]) == 1

    assert run_train(str(path), FAST, force=True, echo=lambda _: None) == 0  # --force starts over
    assert two.read_run()["resumed"] is False and json.loads((exp.dir / PHASES_FILE).read_text())["state"] == "finished"


def _ray_is_starting(pid: int, said: str) -> bool:
    """Ray's GCS runs below the command and the command has not yet said the engine line (`ray.init` returned)."""
    from common.processes import descendants

    if "simulator:" in said:
        return False
    for child in descendants(pid):
        try:
            if b"gcs_server" in Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0")[0]:
                return True
        except OSError:
            continue
    return False


@pytest.mark.integration
def test_a_stop_while_a_phase_starts_ray_is_a_stop_and_resume_starts_the_phase(tmp_path: Path) -> None:
    """`osrs-rllib stop` (SIGTERM) while a phase's own Ray starts: the phase and the run are recorded as stopped
    (exit 0), not failed, nothing Ray started is left running, and ``--resume`` runs the phase."""
    from common.processes import descendants
    from tests.command_process import CommandProcess

    path = recipe(tmp_path, [{"name": "first", "stop": {"iterations": 1}}])
    command = CommandProcess(["train", str(path), *[a for f in FAST for a in ("--set", f)]])
    try:
        until = time.monotonic() + 300
        while not _ray_is_starting(command.proc.pid, command.output):
            assert command.proc.poll() is None, command.output[-3000:]
            assert "simulator:" not in command.output, f"Ray started before the test saw it start:\n{command.output}"
            assert time.monotonic() < until, command.output[-3000:]
            time.sleep(0.02)
        command.proc.send_signal(signal.SIGTERM)
        code = command.proc.wait(timeout=120)
        command.join_reader()
    finally:
        if command.proc.poll() is None:
            os.killpg(command.proc.pid, signal.SIGKILL)
    assert code == 0, command.output[-3000:]
    assert "error" not in command.output.lower(), command.output[-3000:]
    record = json.loads((tmp_path / "exp" / "recipe" / PHASES_FILE).read_text())
    assert record["state"] == "stopped"
    assert [(r["name"], r["state"], r["env_steps"]) for r in record["phases"]] == [("first", "stopped", 0)]
    assert not descendants(command.proc.pid)

    again = CommandProcess(["train", str(path), "--resume", *[a for f in FAST for a in ("--set", f)]])
    try:
        assert again.proc.wait(timeout=600) == 0, again.output[-3000:]
    finally:
        if again.proc.poll() is None:
            os.killpg(again.proc.pid, signal.SIGKILL)
    record = json.loads((tmp_path / "exp" / "recipe" / PHASES_FILE).read_text())
    assert [(r["name"], r["state"], r["env_steps"]) for r in record["phases"]] == [("first", "finished", BATCH)]


NH_MAIN = REPO / "configs" / "nh-main.yml"
ENV_STEP_BUDGET = 40_000_000
"""The recipe must fit 3 hours of a 2-core machine (~3,500-6,000 env steps/s, evaluation included)."""


def test_the_nh_main_recipe_resolves_within_its_budget() -> None:
    cfg = load_config(NH_MAIN)
    assert [p.name for p in cfg.phases] == ["scratch", "expert", "hunted"]
    run = PhasedRun(cfg, Experiment(cfg.experiments_dir, cfg.name))
    phases = [run.config_of(k) for k in range(len(cfg.phases))]
    steps = [p.stop.env_steps for p in phases]
    assert all(s is not None for s in steps) and sum(steps) <= ENV_STEP_BUDGET
    assert all(p.stop.minutes is None and p.stop.iterations is None for p in phases)  # budgets in env steps only
    assert phases[0].init.model is None  # from scratch
    assert Path(phases[2].init.model).name == "best.nhmodel" and "2-expert" in phases[2].init.model
    hunted = phases[2]
    assert hunted.opponents.mix["exploiters"] > 0 and hunted.opponents.targets == []  # league snapshots, no copies
    assert hunted.league.main_exploiters == 1 and hunted.ppo.head_entropy_weights == {"attack": 5, "prayer": 5}
    assert phases[1].opponents.normalized()["expert"] == pytest.approx(0.35)
    assert cfg.ship is not None and cfg.ship.candidates <= hunted.checkpoint.keep_last
    # the hunted phase keeps the models its per-fight mixture is made of, and that mixture competes at ship
    assert hunted.checkpoint.milestone_env_steps == 1_000_000 and hunted.mixture.members == 3 and cfg.ship.mixture
    # a candidate under the shipped-model bar against the expert (92 % mean, 87 % every build) does not ship
    floor = cfg.ship.rung.floor
    assert floor is not None and (floor.mean, floor.every_build) == (0.92, 0.87)


@pytest.mark.slow
def test_the_nh_main_recipe_runs_every_phase_at_smoke_size_and_ships(tmp_path: Path, ray_session: None) -> None:
    """nh-main.yml's own phases (mixes, league, entropy weights, init_from), each one iteration at the smoke
    config's sizes, then shipped by its rule at a few fights: the whole chain runs with one command each."""
    from osrs_rllib.shipping.ship import SHIP_FILE, ship_run
    from policies.model_file import load_model_file

    smoke = yaml.safe_load((REPO / "configs" / "smoke.yml").read_text())
    smoke.pop("extends")
    phases = [{**p, "stop": {"iterations": 1}} for p in yaml.safe_load(NH_MAIN.read_text())["phases"]]
    path = tmp_path / "nh-main.yml"
    # no 4M exploit runs, no mixture (one iteration of the hunted phase leaves one model; test_ship.py ships one) and
    # no floor (a one-iteration model does not beat the expert; test_ship.py checks the refusal)
    ship = {"candidates": 1, "rung": {"opponent": "expert", "fights": 1, "floor": None}, "exploit": None,
            "mixture": False}  # fmt: skip
    path.write_text(yaml.safe_dump({**smoke, "extends": str(NH_MAIN), "experiments_dir": str(tmp_path / "exp"),
        "evaluation": {"interval": 1, "fights": 1, "unseen_builds": []}, "checkpoint": {"interval": 1, "keep_last": 3},
        "phases": phases, "ship": ship}))  # fmt: skip
    assert run_train(str(path), [], echo=lambda _: None) == 0
    exp = Experiment(tmp_path / "exp", "nh-main")
    record = json.loads((exp.dir / PHASES_FILE).read_text())
    assert [(r["name"], r["state"], r["iterations"]) for r in record["phases"]] == [
        ("scratch", "finished", 1), ("expert", "finished", 1), ("hunted", "finished", 1)]  # fmt: skip
    assert Path(record["phases"][2]["init"]["model"]).name == "best.nhmodel"
    assert ship_run(str(exp.dir), "nh-main", tmp_path / "models", echo=lambda _: None) == 0
    shipped = load_model_file(tmp_path / "models" / "nh-main.nhmodel").metadata
    assert shipped["experiment"] == "3-hunted" and shipped["recipe"]["config"] == str(path)
    assert [p["name"] for p in shipped["recipe"]["phases"]] == ["scratch", "expert", "hunted"]
    assert json.loads((exp.dir / "ship" / SHIP_FILE).read_text())["picked"] == shipped["ship"]["picked"]
