"""`osrs-rllib train` the way a user runs it: a real subprocess, real Ray, real files on disk."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from osrs_rllib.config.schema import load_config
from osrs_rllib.experiments.layout import AVERAGE_MODEL_NAME, MODEL_NAME, STATE_FILE, Experiment
from osrs_rllib.training.milestones import list_milestones
from osrs_rllib.training.report import training_rules
from policies.model_file import load_model_file

REPO = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-m", "osrs_rllib.cli"]


def run_cli(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], cwd=REPO, capture_output=True, text=True, timeout=timeout, check=False)


def scalar_steps(event_dir: Path, tag: str) -> list[int]:
    from tensorboard.backend.event_processing.event_multiplexer import EventMultiplexer

    mux = EventMultiplexer({"run": str(event_dir)}, size_guidance={"scalars": 0})
    mux.Reload()
    try:
        return [e.step for e in mux.Scalars("run", tag)]
    except KeyError:
        return []


def scalar_values(event_dir: Path, tag: str) -> list[int]:
    """A scalar's values in step order, as integers (``charts/env_steps`` per iteration)."""
    from tensorboard.backend.event_processing.event_multiplexer import EventMultiplexer

    mux = EventMultiplexer({"run": str(event_dir)}, size_guidance={"scalars": 0})
    mux.Reload()
    return [int(e.value) for e in sorted(mux.Scalars("run", tag), key=lambda e: e.step)]


def tensorboard_tags(event_dir: Path) -> set[str]:
    from tensorboard.backend.event_processing.event_multiplexer import EventMultiplexer

    mux = EventMultiplexer({"run": str(event_dir)}, size_guidance={"scalars": 0})
    mux.Reload()
    return set(mux.Runs()["run"]["scalars"])


def mixture_written_by_rule(exp: Experiment) -> Any:
    """The run's ``models/mixture.nhmodel``, checked against the rule applied to the models on disk now: the
    latest, the best and the milestones newest first, at most 3, no two of one checkpoint."""
    from osrs_rllib.training.mixture import MIXTURE_NAME, candidates

    mixed = load_model_file(exp.models_dir / MIXTURE_NAME)
    wanted, seen = [], set()
    for c in candidates(exp.models_dir):
        if c.env_steps not in seen and len(wanted) < 3:
            wanted.append(c.env_steps)
            seen.add(c.env_steps)
    assert mixed.member_count == len(wanted) >= 2
    assert [mixed.member(i).metadata["env_steps"] for i in range(mixed.member_count)] == wanted
    assert mixed.metadata["mixture_rule"]["members"] == 3
    return mixed


def test_smoke_config_end_to_end_then_resume(tmp_path: Path) -> None:
    """Issue bar: checkpoints, exported model, TensorBoard with evaluation tags, a resume that continues."""
    every = 768  # a milestone at the first checkpoint past every 1.5 iterations' worth of env steps
    proc = run_cli(
        "train",
        "configs/smoke.yml",
        "--set",
        f"experiments_dir={tmp_path}",
        "--set",
        f"checkpoint.milestone_env_steps={every}",
        *("--set", "mixture.members=3", "--set", "mixture.from_fraction=0", "--set", "mixture.min_gap_env_steps=0"),
        *("--set", "ppo.average.decay=0.9"),
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    exp = Experiment(tmp_path, "smoke")
    mixture_written_by_rule(exp)
    kept = exp.checkpoints()
    assert kept and kept[-1].iteration == 3
    for ckpt in kept:
        assert (ckpt.path / STATE_FILE).exists() and (ckpt.path / "rllib_checkpoint.json").exists()
        model = load_model_file(ckpt.path / MODEL_NAME)
        assert model.metadata["iteration"] == ckpt.iteration
        average = load_model_file(ckpt.path / AVERAGE_MODEL_NAME)  # ppo.average's network, a model of its own
        assert average.metadata["iteration"] == ckpt.iteration and average.metadata["average"]["decay"] == 0.9
        assert average.metadata["average"]["updates"] > 0
    latest = load_model_file(exp.models_dir / "latest.nhmodel")
    assert latest.metadata["iteration"] == 3
    updates_at_3 = load_model_file(exp.models_dir / AVERAGE_MODEL_NAME).metadata["average"]["updates"]
    assert (exp.models_dir / "best.nhmodel").exists()
    tags = tensorboard_tags(exp.tensorboard_dir)
    assert {"eval/baseline/deterministic/win_rate", "eval/baseline/deterministic/win_rate_low"} <= tags
    # Evaluation reports every trained build and MAXED (unseen) on its own, and every fight type.
    for name in ("LMS_PURE", "LMS_ZERKER", "LMS_MED", "PURE", "ZERKER", "MED", "MAXED", "NORMAL", "LMS", "PVP_ARENA"):
        assert f"eval/baseline/{name}/deterministic/win_rate" in tags, name
    assert {"fight/won_mean", "fight/damage_dealt_mean", "fight/win_vs_baseline_mean", "charts/env_steps"} <= tags
    assert any(t.startswith("learner/main/") for t in tags)
    assert exp.read_run()["state"] == "finished"
    assert exp.read_status()["iteration"] == 3

    again = run_cli("train", "configs/smoke.yml", "--set", f"experiments_dir={tmp_path}")
    assert again.returncode == 2 and "Traceback" not in again.stderr
    assert exp.latest_checkpoint().iteration == 3 and exp.read_run()["state"] == "finished"  # refused, untouched

    resumed = run_cli(
        "train", "configs/smoke.yml", "--resume", "--set", f"experiments_dir={tmp_path}", "--set", "stop.iterations=5"
    )
    assert resumed.returncode == 0, resumed.stdout[-3000:] + resumed.stderr[-3000:]
    assert exp.read_run()["resumed"] is True and exp.read_run()["state"] == "finished"
    assert exp.latest_checkpoint() is not None and exp.latest_checkpoint().iteration == 5
    assert scalar_steps(exp.tensorboard_dir, "charts/env_steps") == [1, 2, 3, 4, 5]
    state = json.loads((exp.latest_checkpoint().path / STATE_FILE).read_text())
    assert state["iteration"] == 5 and state["env_steps"] > 0
    # the resumed run's average went on from the saved one: its count of updates goes on past three iterations'
    # (two iterations from a fresh average would count fewer); the resume's command did not repeat --set
    assert load_model_file(exp.models_dir / AVERAGE_MODEL_NAME).metadata["average"]["updates"] > updates_at_3

    mixed = mixture_written_by_rule(exp)  # the resumed run wrote it again, around its new latest model
    assert mixed.member(0).metadata["iteration"] == 5

    # Milestones: every checkpoint was kept as one when it was the first at or past a new multiple of `every`,
    # across the resume too, each file main's model of that checkpoint (its metadata says which).
    steps = scalar_values(exp.tensorboard_dir, "charts/env_steps")
    expected, reached = [], 0
    for env_steps in steps:
        if env_steps // every > reached:
            expected.append(env_steps)
            reached = env_steps // every
    kept_milestones = list_milestones(exp.models_dir)
    assert [m.env_steps for m in kept_milestones] == expected and 2 <= len(expected) < len(steps)
    for milestone in kept_milestones:
        md = load_model_file(milestone.path).metadata
        assert md["env_steps"] == milestone.env_steps and steps[md["iteration"] - 1] == milestone.env_steps
    assert [m.env_steps for m in list_milestones(exp.models_dir, "average")] == expected  # ppo.average's, beside

    # A checkpoint with only RLlib's files (no model file beside it) exports with the run's counters and config,
    # so the file still records the fight rules it trained by.
    last = exp.latest_checkpoint().path
    (last / MODEL_NAME).unlink()
    out = tmp_path / "from-rllib.nhmodel"
    exported = run_cli("export", str(last), "-o", str(out))
    assert exported.returncode == 0, exported.stdout[-3000:] + exported.stderr[-3000:]
    assert "warning" not in exported.stderr
    md = load_model_file(out).metadata
    assert md["iteration"] == 5 and md["env_steps"] == state["env_steps"]
    assert md["experiment"] == "smoke" and md["config"]["env"] == latest.metadata["config"]["env"]
    # ... and so does the average the learner kept in the checkpoint's policy state
    (last / AVERAGE_MODEL_NAME).unlink()
    twin = run_cli("export", str(last), "--twin", "average", "-o", str(tmp_path / "average.nhmodel"))
    assert twin.returncode == 0, twin.stdout[-3000:] + twin.stderr[-3000:]
    assert load_model_file(tmp_path / "average.nhmodel").metadata["average"] == {"decay": 0.9}
    refused = run_cli("export", str(last), "--twin", "magnet", "-o", str(tmp_path / "magnet.nhmodel"))
    assert refused.returncode != 0 and "keeps no magnet network" in refused.stderr + refused.stdout


@pytest.mark.integration
def test_sigkill_mid_iteration_loses_only_the_unsaved_iterations(tmp_path: Path) -> None:
    """Issue bar: SIGKILL mid-iteration, then resume; every checkpoint on disk stays loadable."""
    args = [
        "train",
        "configs/smoke.yml",
        "--set",
        f"experiments_dir={tmp_path}",
        "--set",
        "stop.iterations=200",
        "--set",
        "checkpoint.interval=2",
        "--set",
        "evaluation.interval=0",
        "--set",
        "checkpoint.keep_best=false",
    ]
    proc = subprocess.Popen(
        [*CLI, *args], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True
    )
    exp = Experiment(tmp_path, "smoke")
    try:
        deadline = time.time() + 300
        while time.time() < deadline:
            latest = exp.latest_checkpoint()
            status = exp.read_status()
            # Kill once a checkpoint exists and the run has moved on past it (so an iteration is in flight).
            if latest is not None and latest.iteration >= 2 and status.get("iteration", 0) > latest.iteration:
                break
            assert proc.poll() is None, (proc.stdout.read() if proc.stdout else b"").decode()[-3000:]
            time.sleep(0.2)
        else:
            pytest.fail("training never reached a second checkpoint")
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
        if proc.stdout:
            proc.stdout.close()
    assert exp.effective_state() == "dead"
    before = exp.checkpoints()
    assert before, "the checkpoints written before the kill must survive it"
    for ckpt in before:
        assert (ckpt.path / STATE_FILE).exists()
        load_model_file(ckpt.path / MODEL_NAME)
    last = before[-1].iteration
    resumed = run_cli(
        "train",
        "configs/smoke.yml",
        "--resume",
        "--set",
        f"experiments_dir={tmp_path}",
        "--set",
        f"stop.iterations={last + 1}",
    )
    assert resumed.returncode == 0, resumed.stdout[-3000:] + resumed.stderr[-3000:]
    assert exp.read_run()["resumed"] is True
    assert exp.latest_checkpoint() is not None and exp.latest_checkpoint().iteration == last + 1


def test_config_error_is_one_line_without_traceback(tmp_path: Path) -> None:
    proc = run_cli(
        "train", "configs/smoke.yml", "--set", "ppo.minibatch_sise=64", "--set", f"experiments_dir={tmp_path}"
    )
    assert proc.returncode == 2
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in proc.stderr
    assert "ppo.minibatch_sise" in lines[0] and "minibatch_size" in lines[0]
    missing = run_cli("train", "configs/nope.yml")
    assert missing.returncode == 2 and "configs/nope.yml" in missing.stderr and "Traceback" not in missing.stderr
    nothing = run_cli("train", "configs/smoke.yml", "--resume", "--set", f"experiments_dir={tmp_path}")
    assert nothing.returncode == 2 and str(tmp_path / "smoke") in nothing.stderr  # names the experiment looked for
    assert not (tmp_path / "smoke").exists()  # refused before anything was written


@pytest.mark.integration
def test_detach_jobs_and_clean_stop(tmp_path: Path) -> None:
    started = run_cli(
        "train",
        "configs/smoke.yml",
        "--detach",
        "--set",
        f"experiments_dir={tmp_path}",
        "--set",
        "stop.iterations=500",
        "--set",
        "checkpoint.interval=100",
        "--set",
        "evaluation.interval=0",
        "--set",
        "checkpoint.keep_best=false",
    )
    assert started.returncode == 0, started.stderr
    exp = Experiment(tmp_path, "smoke")
    assert exp.read_run()["pid"] > 0  # recorded before the command returned
    deadline = time.time() + 240
    while time.time() < deadline and exp.read_status().get("iteration", 0) < 1:
        assert exp.effective_state() in ("starting", "running"), exp.log_path.read_text()[-3000:]
        time.sleep(0.2)
    listed = json.loads(run_cli("jobs", "--experiments-dir", str(tmp_path), "--json").stdout)
    assert [j["name"] for j in listed] == ["smoke"] and listed[0]["state"] == "running"
    stopped = run_cli("stop", "smoke", "--experiments-dir", str(tmp_path), "--wait", "240", "--json")
    assert stopped.returncode == 0, stopped.stdout + stopped.stderr
    assert json.loads(stopped.stdout) == {"smoke": "stopped"}
    last = exp.latest_checkpoint()
    assert last is not None and last.iteration == exp.read_status()["iteration"], "stop must end with a checkpoint"
    run = exp.read_run()
    assert run["state"] == "stopped" and run["stop_requested_unix"] <= run["ended_unix"]
    assert exp.read_status()["state"] == "stopped"  # the trainer saw the stop (else "finished")
    nothing = run_cli("stop", "--all", "--experiments-dir", str(tmp_path), "--json")
    assert nothing.returncode == 0 and json.loads(nothing.stdout) == {}


def test_tensorboard_command_serves_on_loopback(tmp_path: Path) -> None:
    import socket
    import urllib.request

    (tmp_path / "run" / "tensorboard").mkdir(parents=True)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [*CLI, "tensorboard", "--experiments-dir", str(tmp_path), "--port", str(port)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline, status = time.time() + 60, None
        while time.time() < deadline and status is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2) as response:
                    status = response.status
            except OSError:
                time.sleep(0.2)
        assert status == 200
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        if proc.stdout:
            proc.stdout.close()
    with socket.socket() as s:  # stopping the command stops the server: nothing is left listening
        assert s.connect_ex(("127.0.0.1", port)) != 0
    missing = run_cli("tensorboard", "--experiments-dir", str(tmp_path / "nope"))
    assert missing.returncode == 2 and str(tmp_path / "nope") in missing.stderr


@pytest.mark.slow
def test_smoke_with_two_builds_evaluates_both(tmp_path: Path) -> None:
    """The slow check: a run on two builds learns on both and its evaluation reports each of them."""
    proc = run_cli(
        "train", "configs/smoke.yml", "--set", f"experiments_dir={tmp_path}",
        "--set", "env.params.random_build_options=[PURE, MED]", "--set", "evaluation.unseen_builds=[]",
        "--set", "evaluation.fights=6", "--set", "stop.iterations=4",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    exp = Experiment(tmp_path, "smoke")
    tags = tensorboard_tags(exp.tensorboard_dir)
    evaluated = {t.split("/")[2] for t in tags if t.startswith("eval/baseline/") and t.count("/") == 4}
    assert evaluated == {"PURE", "MED", "NORMAL", "LMS", "PVP_ARENA"}
    assert scalar_steps(exp.tensorboard_dir, "eval/baseline/PURE/deterministic/win_rate") == [2, 4]
    trained = {t for t in tags if t.startswith("fight/win_build_")}
    assert trained <= {"fight/win_build_PURE_mean", "fight/win_build_MED_mean"} and trained


def _join_unreachable(tmp_path: Path) -> tuple[subprocess.CompletedProcess[str], int, float]:
    """`train --address` at a loopback port nobody listens on: the process, the port and its wall time."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    started = time.monotonic()
    proc = run_cli(
        "train", "configs/smoke.yml", "--address", f"127.0.0.1:{port}", "--set", f"experiments_dir={tmp_path}",
        timeout=120,
    )  # fmt: skip
    return proc, port, time.monotonic() - started


@pytest.mark.integration
def test_unreachable_address_fails_and_leaves_the_name_free(tmp_path: Path) -> None:
    """Joining a cluster that is not there fails with one line, and a failed start does not block the name."""
    proc, port, _ = _join_unreachable(tmp_path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert f"127.0.0.1:{port}" in proc.stderr  # names the address
    exp = Experiment(tmp_path, "smoke")
    first = exp.read_run()
    assert first.get("state") == "failed"
    again = run_cli("train", "configs/smoke.yml", "--address", "127.0.0.1:1", "--set", f"experiments_dir={tmp_path}")
    # no checkpoint was written, so nothing is protected with --force: the second run started (and failed) too
    assert again.returncode == 2 and exp.read_run()["started_unix"] > first["started_unix"]


@pytest.mark.slow
def test_unreachable_address_fails_fast(tmp_path: Path) -> None:
    """The wall-clock bound (slow suite: a busy machine's start-up varies): a 5 s connect time-out plus start-up,
    not Ray's minutes."""
    proc, _, seconds = _join_unreachable(tmp_path)
    assert proc.returncode == 2 and seconds < 90
    failed = Experiment(tmp_path, "smoke").read_run()
    resumed = run_cli("train", "configs/smoke.yml", "--resume", "--set", f"experiments_dir={tmp_path}")
    assert resumed.returncode == 2 and "'smoke'" in resumed.stderr  # no checkpoint to resume from
    assert Experiment(tmp_path, "smoke").read_run() == failed  # refused before anything was written


def test_a_detached_run_is_listed_at_once_and_an_early_stop_says_so(tmp_path: Path) -> None:
    """`jobs` sees a detached run before its config is written, and stopping it in its first seconds
    leaves state "stopped" with a log, not "failed"/"dead" with an empty one."""
    started = run_cli("train", "configs/smoke.yml", "--detach", "--set", f"experiments_dir={tmp_path}")
    assert started.returncode == 0, started.stderr
    listed = json.loads(run_cli("jobs", "--experiments-dir", str(tmp_path), "--json").stdout)
    assert [j["name"] for j in listed] == ["smoke"] and listed[0]["state"] in ("starting", "running")
    stopped = run_cli("stop", "smoke", "--experiments-dir", str(tmp_path), "--wait", "240")
    assert stopped.returncode == 0, stopped.stdout + stopped.stderr
    exp = Experiment(tmp_path, "smoke")
    run = exp.read_run()
    assert run["state"] == "stopped", exp.log_path.read_text()[-3000:]
    # Who wrote "stopped" depends on how far the start got (the trainer, or `stop` when the process had not yet
    # caught signals); either way the run's end is recorded and its log is kept.
    assert run["ended_unix"] >= run["started_unix"]
    assert exp.log_path.stat().st_size > 0


def test_a_dashboard_port_in_use_names_our_own_key(tmp_path: Path) -> None:
    """Ray's message names its own options; ours names the config key to change."""
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        proc = run_cli(
            "train", "configs/smoke.yml", "--set", f"experiments_dir={tmp_path}", "--set", "ray.include_dashboard=true",
            "--set", f"ray.dashboard_port={port}", timeout=120,
        )  # fmt: skip
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "ray.dashboard_port" in proc.stderr and str(port) in proc.stderr  # names our key and the port
    assert f"--set ray.dashboard_port={port + 1}" in proc.stderr  # and how to change it


@pytest.mark.integration
def test_a_second_run_beside_another_ray_takes_the_next_dashboard_port(tmp_path: Path) -> None:
    """Two runs on one machine (a training run and an exploit run, say): with no `ray.dashboard_port` set, the
    second takes the next free port and says so, where Ray would time out binding 8265."""
    import socket

    from common.ray_errors import RAY_DASHBOARD_PORT, port_in_use

    with socket.socket() as busy:
        if not port_in_use("127.0.0.1", RAY_DASHBOARD_PORT):  # else another Ray here already holds it
            busy.bind(("127.0.0.1", RAY_DASHBOARD_PORT))
            busy.listen()
        proc = run_cli(
            "train", "configs/smoke.yml", "--set", f"experiments_dir={tmp_path}", "--set", "ray.include_dashboard=true",
            "--set", "stop.iterations=1", "--set", "evaluation.interval=0", "--set", "checkpoint.keep_best=false",
            timeout=300,
        )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    run = Experiment(tmp_path, "smoke").read_run()
    dashboard = run["dashboard"]
    assert dashboard.startswith("http://") and not dashboard.rstrip("/").endswith(f":{RAY_DASHBOARD_PORT}")
    # the fight rules it trained and evaluated by, every one from the training config
    rules = json.loads(json.dumps(training_rules(load_config(REPO / "configs" / "smoke.yml")).to_dict()))
    assert run["rules"] == rules and set(rules["origin"].values()) == {"training config"}
    # the number format its learner computed in, `auto` resolved on this machine, as the first lines said
    from osrs_rllib.training.learner.precision import describe, resolve

    assert run["learner_precision"] == resolve("auto") and describe("auto") in proc.stdout + proc.stderr
