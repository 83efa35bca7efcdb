"""`osrs_rllib.experiments.jobs.stop_jobs`, what ``osrs-rllib stop`` calls: which runs it stops and the state each ends
in, on real processes and experiment directories (no Ray: a stand-in process plays the run)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

from osrs_rllib.cli import app
from osrs_rllib.experiments.jobs import JobsError, stop_jobs
from osrs_rllib.experiments.layout import Experiment


def _running(root: Path, name: str) -> subprocess.Popen[bytes]:
    """A process that a SIGTERM ends, recorded as `name`'s running run (reaped by a thread once it ends, so that
    its pid stops answering)."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    threading.Thread(target=proc.wait, daemon=True).start()
    Experiment(root, name).write_run(state="running", pid=proc.pid)
    return proc


def test_nothing_running_stops_nothing(tmp_path: Path) -> None:
    assert stop_jobs(tmp_path) == {}
    Experiment(tmp_path, "done").write_run(state="stopped", pid=os.getpid())
    assert stop_jobs(tmp_path) == {}
    assert Experiment(tmp_path, "done").read_run()["state"] == "stopped"


def test_every_running_run_is_stopped(tmp_path: Path) -> None:
    procs = [_running(tmp_path, name) for name in ("a", "b")]
    Experiment(tmp_path, "old").write_run(state="stopped", pid=os.getpid())
    try:
        states = stop_jobs(tmp_path, wait_s=60)
    finally:
        for proc in procs:
            proc.kill()
    assert states == {"a": "stopped", "b": "stopped"}
    assert [p.wait(timeout=60) for p in procs] == [-15, -15]
    assert {n: Experiment(tmp_path, n).read_run()["state"] for n in ("a", "b", "old")} == dict.fromkeys(
        ("a", "b", "old"), "stopped"
    )


def test_a_missing_experiment_is_named_and_nothing_is_stopped(tmp_path: Path) -> None:
    proc = _running(tmp_path, "a")
    try:
        with pytest.raises(JobsError) as raised:
            stop_jobs(tmp_path, ["a", "nope"], wait_s=60)
        assert "'nope'" in str(raised.value) and str(tmp_path) in str(raised.value)
        assert proc.poll() is None and Experiment(tmp_path, "a").read_run()["state"] == "running"
    finally:
        proc.kill()


def test_the_command_prints_the_states_as_json(tmp_path: Path) -> None:
    runner = CliRunner()
    done = runner.invoke(app, ["stop", "--all", "--json", "--experiments-dir", str(tmp_path)])
    assert done.exit_code == 0 and json.loads(done.output) == {}
    proc = _running(tmp_path, "a")
    try:
        done = runner.invoke(app, ["stop", "a", "--json", "--experiments-dir", str(tmp_path), "--wait", "60"])
    finally:
        proc.kill()
    assert done.exit_code == 0 and json.loads(done.output) == {"a": "stopped"}
    missing = runner.invoke(app, ["stop", "nope", "--experiments-dir", str(tmp_path)])
    assert missing.exit_code == 2 and "'nope'" in missing.output
    neither = runner.invoke(app, ["stop", "--experiments-dir", str(tmp_path)])
    assert neither.exit_code == 2
