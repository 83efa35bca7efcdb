"""A second Ctrl-C ends `train` and `exploit` promptly during their last evaluation, keeping what is measured.

Each test runs the real command on the smoke config in a subprocess, waits for the evaluation to start (the
command says so), presses Ctrl-C once (a stop: finish this iteration) and again (end now). The command must
exit within 5 s of the second Ctrl-C with status 130 (or 0), its last checkpoint must load, and its report
must be readable JSON saying what was not measured. Slow: each trains for real. `bc` stopped mid-training writes
its best epoch so far and says which epochs it did not train.
"""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest

from osrs_rllib.experiments.layout import Experiment
from policies.model_file import load_model_file
from tests.command_process import CommandProcess
from tests.serving.conftest import write_model

REPO = Path(__file__).resolve().parents[2]
HARD_STOP_LIMIT_S = 5.0

SLOW = [pytest.mark.slow, pytest.mark.timeout(1200)]


class Command(CommandProcess):
    """An `osrs-rllib` command in its own session, its output collected line by line."""

    def __init__(self, *args: str) -> None:
        super().__init__(list(args))

    def wait_for_text(self, text: str, limit_s: float = 900.0) -> None:
        until = time.monotonic() + limit_s
        while text not in self.output:
            assert self.proc.poll() is None, f"exited {self.proc.returncode} before {text!r}:\n{self.output[-4000:]}"
            assert time.monotonic() < until, self.output[-4000:]
            time.sleep(0.05)

    def ctrl_c_twice(self, first_acknowledged: str) -> tuple[int, float]:
        """Ctrl-C, wait until the command says it will stop, Ctrl-C again; the exit status and the seconds
        from the second Ctrl-C to the exit."""
        self.proc.send_signal(signal.SIGINT)
        self.wait_for_text(first_acknowledged, limit_s=120)
        self.proc.send_signal(signal.SIGINT)
        t0 = time.monotonic()
        code = self.proc.wait(timeout=120)
        took = time.monotonic() - t0
        self.join_reader()
        return code, took

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=30)


def _checkpoint_loads(exp: Experiment) -> int:
    latest = exp.latest_checkpoint()
    assert latest is not None, "no complete checkpoint"
    load_model_file(latest.path / "main.nhmodel")
    return latest.iteration


@SLOW[0]
@SLOW[1]
def test_train_second_ctrl_c_during_its_last_evaluation(tmp_path: Path) -> None:
    cmd = Command("train", "configs/smoke.yml", "--set", f"experiments_dir={tmp_path}", "--set", "name=stops",
                  "--set", "stop.iterations=2", "--set", "evaluation.interval=2", "--set", "evaluation.fights=200")
    try:
        cmd.wait_for_text("iteration 2: evaluating")
        code, took = cmd.ctrl_c_twice("stop requested")
    finally:
        cmd.kill()
    print(f"train: exit {code} {took:.1f} s after the second Ctrl-C")
    assert code in (0, 130), cmd.output[-4000:]
    assert took <= HARD_STOP_LIMIT_S, cmd.output[-4000:]
    exp = Experiment(tmp_path, "stops")
    assert _checkpoint_loads(exp) == 1  # iteration 2 was not checkpointed: its evaluation was not finished
    run = json.loads(exp.run_path.read_text())
    assert run["state"] == "stopped"
    json.loads(exp.status_path.read_text())


@SLOW[0]
@SLOW[1]
def test_exploit_second_ctrl_c_during_its_final_evaluation(tmp_path: Path) -> None:
    model = write_model(tmp_path / "tiny.nhmodel", 3)
    cmd = Command("exploit", str(model), "--config", "configs/smoke.yml", "--env-steps", "512", "--final-fights",
                  "300", "--set", f"experiments_dir={tmp_path / 'exps'}", "--set", "evaluation.interval=1",
                  "--set", "evaluation.fights=1")
    try:
        cmd.wait_for_text("final evaluation against")
        code, took = cmd.ctrl_c_twice("stop requested")
    finally:
        cmd.kill()
    print(f"exploit: exit {code} {took:.1f} s after the second Ctrl-C")
    assert code in (0, 130), cmd.output[-4000:]
    assert took <= HARD_STOP_LIMIT_S, cmd.output[-4000:]
    exp = Experiment(tmp_path / "exps", "exploit-tiny")
    assert _checkpoint_loads(exp) >= 1
    report = json.loads((exp.dir / "exploit.json").read_text())
    assert report["state"] == "interrupted" and report["final"] is None and report["exploitability"] is None
    assert report["not_measured"] == ["final evaluation (stopped by a second signal)"]
    assert report["series"], "the evaluations made during training are kept"


@pytest.mark.timeout(600)
def test_bc_stopped_mid_training_writes_its_best_epoch_and_says_what_it_did_not_train(tmp_path: Path) -> None:
    from osrs_rllib.config.schema import load_config
    from osrs_rllib.evaluation.fight import run_fights
    from policies.fight_rules import fight_rules_of

    rules = fight_rules_of(load_config(REPO / "configs" / "nh.yml").to_dict()).rules  # what bc trains under
    options = {**rules, "randomize_gear": True, "randomize_fight_type": True, "training": True,
               "max_episode_ticks": 60}
    run_fights("expert", "veteran", n=4, seed=0, options=options, record=tmp_path / "demos")
    out = tmp_path / "clone.nhmodel"
    cmd = Command("bc", str(tmp_path / "demos"), "-o", str(out), "--epochs", "100000", "--config", "configs/nh.yml",
                  "--set", "model.actor_hidden=[32]", "--set", "model.critic_hidden=[16]", "--set",
                  "model.head_hidden=8")
    try:
        cmd.wait_for_text("epoch 2/100000")
        code, _ = cmd.ctrl_c_twice("stop requested")
    finally:
        cmd.kill()
    assert code in (0, 130), cmd.output[-4000:]  # 0 when the epoch ended before the second Ctrl-C arrived
    assert out.exists(), cmd.output[-4000:]
    info = load_model_file(out).metadata["bc"]
    assert info["stopped"] == "SIGINT" and 2 <= info["epochs_run"] < 100000
    assert info["not_trained"] == [f"epochs {info['epochs_run'] + 1}-100000"]
    assert 1 <= info["best_epoch"] <= info["epochs_run"]
