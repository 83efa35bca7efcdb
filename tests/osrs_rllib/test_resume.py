"""Kill it, resume it: the CLI run the way a user runs it, killed at awkward moments, then resumed.

The CLI tests start ``osrs-rllib`` in a subprocess from a temporary working directory holding a copy of
``configs/``, with the README's commands and the config's relative ``experiments_dir``. They kill by pid with a
real SIGKILL: either from the test, or from the process itself at a named moment (`OSRS_RLLIB_TEST_KILL_AT`,
see `osrs_rllib.experiments.layout.kill_point`), so the awkward moments are hit every time rather than raced with a
timer. Every subprocess runs in its own session and its process group is killed in a ``finally``.

The first block needs no Ray: checkpoint completeness, the marker, the league's weights on disk, the random
generators. One CLI test is in the default suite (kill -9, then ``--resume``); the others are ``slow``.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import psutil
import pytest
import torch

from league.callback import LeagueRunner
from osrs_rllib.experiments.layout import (
    KILL_AT_ENV,
    MODEL_NAME,
    STATE_FILE,
    CheckpointInfo,
    Experiment,
    ExperimentError,
    checkpoint_problem,
)
from osrs_rllib.training import driver_rng_state, set_driver_rng_state, stream_seed
from policies.model_file import load_model_file

REPO = Path(__file__).resolve().parents[2]
CLI_SCRIPT = Path(sys.executable).parent / "osrs-rllib"
OSRS_RLLIB = [str(CLI_SCRIPT)] if CLI_SCRIPT.exists() else [sys.executable, "-m", "osrs_rllib.cli"]
"""The installed console script, as the README runs it (the module where it is not installed)."""
EXP = Path("experiments") / "smoke"
"""The smoke run's experiment, relative to the user's working directory (the config's own experiments_dir)."""
FAST = ("--set", "evaluation.interval=0", "--set", "checkpoint.keep_best=false")
"""Evaluation costs a smoke iteration several times over; tests that are not about it turn it off."""
BATCH = 512
"""Env steps per smoke iteration (ppo.train_batch_size of configs/smoke.yml)."""
CLI_TIMEOUT_S = 600


# ---------------------------------------------------------------------------------------------------------
# Without Ray: what counts as a complete checkpoint
# ---------------------------------------------------------------------------------------------------------
def write_checkpoint(exp: Experiment, iteration: int, *, win_rate: float | None = None) -> Path:
    """A checkpoint written the way the trainer writes one (files, then the marker with its manifest)."""
    with exp.writing_checkpoint(iteration, marker={"env_steps": iteration * 100, "eval_win_rate": win_rate}) as tmp:
        (tmp / "policies").mkdir()
        (tmp / "policies" / "weights.bin").write_bytes(b"w" * 64)
        (tmp / MODEL_NAME).write_bytes(b"m" * 32)
    return exp.checkpoint_dir_for(iteration)


def test_open_decides_create_resume_and_force_in_one_place(tmp_path: Path) -> None:
    """`Experiment.open` is what `train` and `exploit` both ask before writing anything: each refusal is an
    ExperimentError, and what it lets through is the experiment the run may write."""
    def refusal(**kwargs: Any) -> ExperimentError:
        with pytest.raises(ExperimentError) as raised:
            Experiment.open(tmp_path, "x", **kwargs)
        return raised.value

    assert refusal(resume=True, force=True).reason == "contradiction"
    missing = refusal(resume=True)
    assert missing.reason == "missing" and str(tmp_path / "x") in str(missing)  # names where it looked
    assert Experiment.open(tmp_path, "x").dir == tmp_path / "x"  # a new name: free
    exp = Experiment(tmp_path, "x")
    exp.dir.mkdir()
    exp.config_path.write_text("name: x\n")
    assert Experiment.open(tmp_path, "x").dir == exp.dir  # no checkpoint yet: nothing to lose, no --force
    assert refusal(resume=True).reason == "no_checkpoint"
    seen: list[Path] = []
    write_checkpoint(exp, 3)
    assert Experiment.open(tmp_path, "x", resume=True, check_saved=lambda e: seen.append(e.config_path)).name == "x"
    assert seen == [exp.config_path]
    exists = refusal()
    assert exists.reason == "exists" and "--resume" in str(exists) and "--force" in str(exists)  # both ways on
    assert Experiment.open(tmp_path, "x", force=True).dir == exp.dir
    exp.mark_started(["test"])  # a live run of it (this process's pid counts as ours, so take the parent's)
    exp.write_run(pid=os.getppid())
    for kwargs in ({"resume": True}, {"force": True}):
        running = refusal(**kwargs)
        assert running.reason == "running" and str(os.getppid()) in str(running)  # names the process


def test_experiment_paths_are_absolute_from_a_relative_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Why a resume once failed: RLlib takes a relative checkpoint path for a URI. Experiment anchors it once."""
    monkeypatch.chdir(tmp_path)
    exp = Experiment("experiments", "kr2")
    assert exp.dir == tmp_path / "experiments" / "kr2" and exp.dir.is_absolute()
    assert exp.checkpoint_dir_for(21).is_absolute() and exp.tensorboard_dir.is_absolute()
    write_checkpoint(exp, 21)
    monkeypatch.chdir("/")  # the paths it handed out keep pointing at the same place
    latest = exp.latest_checkpoint()
    assert latest is not None and latest.path == tmp_path / "experiments" / "kr2" / "checkpoints" / "iter-000021"


def test_a_partial_checkpoint_is_never_picked(tmp_path: Path) -> None:
    exp = Experiment(tmp_path, "run")
    for it in (1, 2):
        exp.record_checkpoint(CheckpointInfo(it, write_checkpoint(exp, it), it * 100, None), 5, False)
    # A write in progress or killed: the hidden temporary directory, files in it, no marker.
    hidden = exp.checkpoints_dir / ".iter-000003.abc123"
    (hidden / "policies").mkdir(parents=True)
    (hidden / "policies" / "weights.bin").write_bytes(b"w" * 10)
    # A directory under the final name without its marker (copied by hand, or an older tool).
    (exp.checkpoint_dir_for(4)).mkdir()
    (exp.checkpoint_dir_for(4) / MODEL_NAME).write_bytes(b"m")
    # A complete-looking checkpoint whose file lost bytes after the marker recorded its size.
    truncated = write_checkpoint(exp, 5)
    (truncated / "policies" / "weights.bin").write_bytes(b"w" * 10)
    # A marker naming another iteration.
    renamed = write_checkpoint(exp, 6)
    renamed.rename(exp.checkpoint_dir_for(7))

    assert [c.iteration for c in exp.checkpoints()] == [1, 2]
    assert exp.latest_checkpoint() is not None and exp.latest_checkpoint().iteration == 2
    assert checkpoint_problem(exp.checkpoint_dir_for(4)) == f"it has no {STATE_FILE}: its write never finished"
    assert checkpoint_problem(truncated) == "policies/weights.bin has 10 bytes, 64 were written"
    assert checkpoint_problem(exp.checkpoint_dir_for(7)) == f"its {STATE_FILE} names iteration 6, not 7"
    assert checkpoint_problem(exp.checkpoint_dir_for(2)) is None


def test_a_complete_checkpoint_the_index_never_heard_of_is_found(tmp_path: Path) -> None:
    """Killed between the rename and the index write: the checkpoint describes itself through its marker."""
    exp = Experiment(tmp_path, "run")
    exp.record_checkpoint(CheckpointInfo(1, write_checkpoint(exp, 1, win_rate=0.25), 100, 0.25), 3, True)
    write_checkpoint(exp, 2, win_rate=0.5)  # never recorded
    latest = exp.latest_checkpoint()
    assert latest is not None and (latest.iteration, latest.env_steps, latest.eval_win_rate) == (2, 200, 0.5)
    exp.record_checkpoint(latest, 3, True)
    assert exp.best_checkpoint() is not None and exp.best_checkpoint().iteration == 2


def test_a_kill_between_the_write_and_the_commit_leaves_the_previous_checkpoint(tmp_path: Path) -> None:
    """A real SIGKILL at the hook between filling the directory and its marker and rename: no Ray needed."""
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from osrs_rllib.experiments.layout import CheckpointInfo, Experiment\n"
        "exp = Experiment(Path(sys.argv[1]), 'run')\n"
        "for it in (1, 2):\n"
        "    with exp.writing_checkpoint(it, marker={'env_steps': it * 100}) as tmp:\n"
        "        (tmp / 'policies').mkdir()\n"
        "        (tmp / 'policies' / 'weights.bin').write_bytes(b'w' * 64)\n"
        "    exp.record_checkpoint(CheckpointInfo(it, exp.checkpoint_dir_for(it), it * 100, None), 3, False)\n"
    )
    env = {**os.environ, KILL_AT_ENV: "checkpoint-write@2"}
    proc = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)], cwd=REPO, env=env, timeout=120, capture_output=True, check=False
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()[-2000:]
    exp = Experiment(tmp_path, "run")
    (partial,) = exp.checkpoints_dir.glob(".iter-000002.*")
    assert (partial / "policies" / "weights.bin").exists() and not (partial / STATE_FILE).exists()
    assert not exp.checkpoint_dir_for(2).exists()
    assert [c.iteration for c in exp.checkpoints()] == [1]
    # The next successful save clears the leftover.
    exp.record_checkpoint(CheckpointInfo(2, write_checkpoint(exp, 2), 200, None), 3, False)
    assert not partial.exists() and [c.iteration for c in exp.checkpoints()] == [1, 2]


def test_evicted_snapshot_weights_stay_while_a_checkpoint_names_them(tmp_path: Path) -> None:
    """An eviction after the last checkpoint must not delete weights that a resume from it loads."""
    from league.config import LeagueConfig
    from league.events import EvictEvent
    from league.league import League

    league = League(LeagueConfig(max_snapshots=1, snapshot_interval=None))
    runner = LeagueRunner(league, tmp_path / "league", slots=1, fixed_policies={}, seed=3)
    weights = {"w": np.ones(3, dtype=np.float32)}
    (first,) = [e for e in league.add_snapshot("main", iteration=1, training_steps=0)]
    runner.save_weights(first.snapshot_id, weights)
    saved = runner.state_dict()  # what the checkpoint holds: one snapshot
    events = league.add_snapshot("main", iteration=2, training_steps=10)
    assert any(isinstance(e, EvictEvent) for e in events)
    runner.save_weights(events[0].snapshot_id, weights)
    runner.apply(None, [e for e in events if isinstance(e, EvictEvent)])
    assert runner.snapshot_path(first.snapshot_id).exists(), "the checkpoint's league still names it"
    assert LeagueRunner.snapshot_ids_in(saved) == {first.snapshot_id}
    (tmp_path / "league" / ".main@v3.npz.x.tmp").write_bytes(b"partial")
    removed = runner.prune_store(keep=set())  # no kept checkpoint names it any more
    assert {p.name for p in removed} == {f"{first.snapshot_id}.npz", ".main@v3.npz.x.tmp"}
    assert sorted(p.name for p in (tmp_path / "league").iterdir()) == [f"{events[0].snapshot_id}.npz"]


def test_the_league_runner_continues_its_slot_draws_after_a_restore(tmp_path: Path) -> None:
    from league.config import LeagueConfig
    from league.league import League

    runner = LeagueRunner(League(LeagueConfig()), tmp_path, slots=1, fixed_policies={}, seed=5)
    runner._rng.random(7)
    restored = LeagueRunner.from_state(json.loads(json.dumps(runner.state_dict())), tmp_path, 1, {}, seed=5)
    assert restored._rng.random(4).tolist() == runner._rng.random(4).tolist()


def test_driver_generators_round_trip_through_json() -> None:
    state = json.loads(json.dumps(driver_rng_state()))
    expected = (np.random.random(3).tolist(), random.random(), torch.rand(3).tolist())
    set_driver_rng_state(state)
    assert (np.random.random(3).tolist(), random.random(), torch.rand(3).tolist()) == expected


def test_a_resume_draws_new_env_streams_deterministically() -> None:
    assert stream_seed(7, 0) == 7
    assert stream_seed(7, 21) == stream_seed(7, 21) != stream_seed(7, 22)
    assert stream_seed(7, 21) not in (7, 0)


@pytest.mark.slow
def test_a_restore_puts_back_what_the_checkpoint_holds(tmp_path: Path, ray_session: None) -> None:
    """In-process: the resumed trainer holds the weights (normalisation statistics included), the optimiser's
    moments, the schedules' timestep, the counters, the league and the driver's generators of the checkpoint."""
    from osrs_rllib.config.schema import load_config
    from osrs_rllib.training import Trainer, make_view
    from osrs_rllib.training.sampling import LEARNER_POLICY

    cfg = load_config(
        REPO / "configs" / "smoke.yml",
        [f"experiments_dir={tmp_path}", "stop.iterations=2", "league.snapshot_interval=1", "logging.tensorboard=false"],
    )
    exp = Experiment(cfg.experiments_dir, cfg.name)
    first = Trainer(cfg, exp, echo=lambda _line: None)
    second = Trainer(cfg, exp, resume=True, echo=lambda _line: None)
    try:
        exp.prepare_new(force=True)
        first._build()
        first.league_runner.plan(first.algo)
        first._view = make_view(cfg, first.echo)
        first._loop()  # two iterations, evaluation at the second, the final checkpoint
        saved = first.algo.get_policy(LEARNER_POLICY).get_state()
        saved_rng = driver_rng_state()
        saved_league = first.league_runner.state_dict()

        second._check_resumable()
        second._build()
        second._restore()
        restored = second.algo.get_policy(LEARNER_POLICY).get_state()
        assert set(restored["weights"]) == set(saved["weights"])
        counts = [float(np.asarray(v)) for k, v in saved["weights"].items() if k.endswith("obs_norm.count")]
        assert counts and counts[0] > 0, "the normalisation statistics travel with the weights"
        for key, value in saved["weights"].items():
            assert np.array_equal(np.asarray(restored["weights"][key]), np.asarray(value)), key
        moments = [np.asarray(x) for x in _leaves(saved["_optimizer_variables"])]
        assert moments and len(moments) == len(list(_leaves(restored["_optimizer_variables"])))
        for a, b in zip(moments, _leaves(restored["_optimizer_variables"]), strict=True):
            assert np.array_equal(a, np.asarray(b))
        assert restored["global_timestep"] == saved["global_timestep"] == 2 * BATCH
        assert second.state.to_json() == first.state.to_json()
        assert second.league_runner.state_dict() == json.loads(json.dumps(saved_league))
        assert driver_rng_state() == json.loads(json.dumps(saved_rng))
        progress = second.algo.env_runner_group.foreach_env(lambda env: env.engine.progress)
        assert progress == [[2.0] * cfg.runners.num_envs_per_env_runner]
    finally:
        for trainer in (first, second):
            if trainer.algo is not None:
                trainer.algo.stop()


def _leaves(tree: Any) -> Iterator[Any]:
    if isinstance(tree, dict):
        for key in sorted(tree, key=str):
            yield from _leaves(tree[key])
    elif isinstance(tree, list | tuple):
        for item in tree:
            yield from _leaves(item)
    else:
        yield tree


# ---------------------------------------------------------------------------------------------------------
# The CLI, as a user runs it
# ---------------------------------------------------------------------------------------------------------
def user_dir(tmp_path: Path) -> Path:
    """A user's working directory: a copy of the shipped configs, nothing else."""
    work = tmp_path / "work"
    shutil.copytree(REPO / "configs", work / "configs")
    return work


def cli_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != KILL_AT_ENV}
    return {**env, "PYTHONUNBUFFERED": "1", **extra}


def run_cli(work: Path, *args: str, timeout: float = CLI_TIMEOUT_S) -> subprocess.CompletedProcess[str]:
    """One command to completion, in its own session; its group is killed however it ends."""
    proc = subprocess.Popen(
        [*OSRS_RLLIB, *args],
        cwd=work,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=cli_env(),
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    finally:
        kill_group(proc)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def kill_group(proc: subprocess.Popen[Any]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=60)


@contextlib.contextmanager
def running(work: Path, *args: str, **env: str) -> Iterator[subprocess.Popen[bytes]]:
    """A command left running (output in ``work/out.log``); its process group is SIGKILLed on the way out."""
    with open(work / "out.log", "ab") as log:
        proc = subprocess.Popen(
            [*OSRS_RLLIB, *args], cwd=work, stdout=log, stderr=subprocess.STDOUT, env=cli_env(**env),
            start_new_session=True,
        )  # fmt: skip
    try:
        yield proc
    finally:
        kill_group(proc)


def wait_until(proc: subprocess.Popen[Any], work: Path, done: Callable[[], bool], timeout: float = 400) -> None:
    deadline = time.monotonic() + timeout
    while not done():
        assert proc.poll() is None, f"exited {proc.returncode}:\n" + (work / "out.log").read_text()[-3000:]
        assert time.monotonic() < deadline, "timed out:\n" + (work / "out.log").read_text()[-3000:]
        time.sleep(0.2)


def descendants(pid: int) -> set[tuple[int, float]]:
    """The processes below `pid` (Ray's head, agents and runners), with start times against pid reuse."""
    with contextlib.suppress(psutil.Error):
        return {(p.pid, p.create_time()) for p in psutil.Process(pid).children(recursive=True)}
    return set()


def still_alive(procs: set[tuple[int, float]]) -> set[int]:
    alive = set()
    for pid, created in procs:
        with contextlib.suppress(psutil.Error):
            p = psutil.Process(pid)
            if p.create_time() == created and p.status() != psutil.STATUS_ZOMBIE:
                alive.add(pid)
    return alive


def tensorboard_steps(event_dir: Path, tag: str) -> list[tuple[int, float]]:
    """(step, value) of `tag` as TensorBoard shows it (purged tails of resumed runs dropped)."""
    from tensorboard.backend.event_processing.event_multiplexer import EventMultiplexer

    mux = EventMultiplexer({"run": str(event_dir)}, size_guidance={"scalars": 0})
    mux.Reload()
    return [(e.step, e.value) for e in mux.Scalars("run", tag)]


def raw_steps(event_file: Path, tag: str) -> list[int]:
    """The steps written to one event file, as written (no purge applied)."""
    from tensorboard.backend.event_processing.event_file_loader import EventFileLoader

    steps = []
    for event in EventFileLoader(str(event_file)).Load():
        for value in event.summary.value:
            if value.tag == tag:
                steps.append(event.step)
    return steps


def league_size(checkpoint: Path) -> int:
    return len(LeagueRunner.snapshot_ids_in(json.loads((checkpoint / "league.json").read_text())))


def resumed_from(exp: Experiment, stdout: str) -> dict[str, Any]:
    """The checkpoint the experiment's last run continued from, as the run recorded it (``run.json``), after
    checking that the run also named it to the person who started it."""
    record = exp.read_run()["resumed_from"]
    assert record["checkpoint"] in stdout
    return record


@pytest.mark.integration
def test_kill_9_mid_run_then_resume_continues_where_it_stopped(tmp_path: Path) -> None:
    """Issue bars, from a working directory with relative paths only: ``kill -9`` mid-run, then ``--resume``
    continues from the last checkpoint with the same league, env steps and TensorBoard steps, and finishes."""
    work = user_dir(tmp_path)
    exp = Experiment(work / EXP.parent, EXP.name)
    args = ("train", "configs/smoke.yml", "--set", "stop.iterations=100", "--set", "league.snapshot_interval=1", *FAST)
    with running(work, *args, "--set", "checkpoint.interval=2") as proc:
        # Kill once a checkpoint with snapshots exists and the run has moved on past it: iterations are lost.
        def in_flight() -> bool:
            latest = exp.latest_checkpoint()
            moved_on = latest is not None and exp.read_status().get("iteration", 0) > latest.iteration
            return moved_on and latest is not None and latest.iteration >= 2

        wait_until(proc, work, in_flight)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
        leftovers = {(r["pid"], r["created"]) for r in exp.read_run().get("ray_processes", [])}
        assert exp.effective_state() == "dead"
        last = exp.latest_checkpoint()
        assert last is not None
        snapshots = league_size(last.path)
        assert snapshots >= 1
        (old_events,) = exp.tensorboard_dir.glob("events.out.tfevents.*")

        stop = f"stop.iterations={last.iteration + 1}"
        resumed = run_cli(work, "train", "configs/smoke.yml", "--resume", "--set", stop)
    assert resumed.returncode == 0, resumed.stdout[-3000:] + resumed.stderr[-3000:]
    assert resumed_from(exp, resumed.stdout) == {
        "checkpoint": last.path.name, "iteration": last.iteration, "env_steps": last.env_steps,
        "league_snapshots": snapshots,
    }  # fmt: skip
    assert not still_alive(leftovers), "the Ray helpers the killed run left behind are ended by the resume"

    new = exp.latest_checkpoint()
    assert new is not None and new.iteration == last.iteration + 1
    assert new.env_steps == last.env_steps + BATCH  # counters continue: no restart from 0
    assert league_size(new.path) == snapshots + 1  # the league it had, plus this iteration's snapshot
    assert load_model_file(exp.models_dir / "latest.nhmodel").metadata["iteration"] == new.iteration
    assert exp.read_run()["state"] == "finished"

    # TensorBoard: one point per iteration, steps and env steps strictly increasing, none doubled.
    points = tensorboard_steps(exp.tensorboard_dir, "charts/env_steps")
    assert [s for s, _ in points] == list(range(1, new.iteration + 1))
    assert [v for _, v in points] == [float(BATCH * s) for s in range(1, new.iteration + 1)]
    new_events = [p for p in exp.tensorboard_dir.glob("events.out.tfevents.*") if p != old_events]
    (new_file,) = new_events
    first_new = raw_steps(new_file, "charts/env_steps")[0]
    kept_old = [s for s in raw_steps(old_events, "charts/env_steps") if s <= last.iteration]
    assert first_new == last.iteration + 1 > max(kept_old)


def test_a_failed_resume_is_one_line_naming_the_experiment_the_checkpoint_and_the_cause(tmp_path: Path) -> None:
    """A checkpoint whose league names snapshot weights that are gone: refused before Ray starts, in one line."""
    work = user_dir(tmp_path)
    exp = Experiment(work / EXP.parent, EXP.name)
    exp.dir.mkdir(parents=True)
    exp.config_path.write_text("extends: ../../configs/smoke.yml\n")  # the run's saved config, as far as it matters
    league = {"league": {"snapshots": [{"player_id": "main@v1"}, {"player_id": "main@v2"}]}}
    with exp.writing_checkpoint(4, marker={"env_steps": 2048}) as tmp:
        (tmp / "rllib_checkpoint.json").write_text("{}")
        (tmp / MODEL_NAME).write_bytes(b"m")
        (tmp / "league.json").write_text(json.dumps(league))
    (exp.dir / "league").mkdir()
    (exp.dir / "league" / "main@v1.npz").write_bytes(b"w")
    exp.checkpoint_dir_for(5).mkdir()  # newer, but never completed: skipped, and said so
    proc = run_cli(work, "train", "configs/smoke.yml", "--resume", timeout=180)
    assert proc.returncode == 2, proc.stdout[-2000:] + proc.stderr[-2000:]
    skipped = [line for line in proc.stdout.splitlines() if "iter-000005" in line]
    assert len(skipped) == 1 and STATE_FILE in skipped[0]  # the incomplete one is named, with what it lacks
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in proc.stderr + proc.stdout, proc.stderr
    named = ("'smoke'", "iter-000004", "main@v2", str(exp.dir / "league"), "--force")  # experiment, checkpoint, cause
    assert all(name in lines[0] for name in named) and "main@v1" not in lines[0], lines[0]
    assert exp.read_run()["state"] == "failed" and [c.iteration for c in exp.checkpoints()] == [4]  # nothing trained


@pytest.mark.slow
@pytest.mark.parametrize(
    ("point", "at", "resumes_from"),
    [
        ("checkpoint-write", 3, 2),  # files written, marker and rename not: the partial directory is skipped
        ("checkpoint-index", 3, 3),  # renamed, index and model files not updated: found from its marker
        ("evaluation", 2, 1),  # smoke evaluates every 2 iterations
        ("league-snapshot", 4, 3),  # the snapshot's weights written, an eviction made, no checkpoint names them
    ],
)
def test_a_kill_at_an_awkward_moment_leaves_the_run_resumable(
    tmp_path: Path, point: str, at: int, resumes_from: int
) -> None:
    work = user_dir(tmp_path)
    exp = Experiment(work / EXP.parent, EXP.name)
    args = ["train", "configs/smoke.yml", "--set", "stop.iterations=10"]
    args += ["--set", "league.snapshot_interval=2", "--set", "league.max_snapshots=1"]
    if point != "evaluation":
        args += FAST
    with running(work, *args, **{KILL_AT_ENV: f"{point}@{at}"}) as proc:
        proc.wait(timeout=CLI_TIMEOUT_S)
        assert proc.returncode == -signal.SIGKILL, (work / "out.log").read_text()[-3000:]
        if point == "checkpoint-write":
            (partial,) = exp.checkpoints_dir.glob(f".iter-{at:06d}.*")
            assert (partial / "rllib_checkpoint.json").exists() and not (partial / STATE_FILE).exists()
        last = exp.latest_checkpoint()
        assert last is not None and last.iteration == resumes_from
        snapshots = league_size(last.path)
        resumed = run_cli(work, "train", "configs/smoke.yml", "--resume", "--set", f"stop.iterations={at + 1}")
    assert resumed.returncode == 0, resumed.stdout[-3000:] + resumed.stderr[-3000:]
    record = resumed_from(exp, resumed.stdout)
    assert record["checkpoint"] == f"iter-{resumes_from:06d}" and record["iteration"] == resumes_from
    assert record["league_snapshots"] == snapshots
    final = exp.latest_checkpoint()
    assert final is not None and final.iteration == at + 1 and checkpoint_problem(final.path) is None
    assert final.env_steps == (at + 1) * BATCH
    assert not list(exp.checkpoints_dir.glob(".iter-*")), "leftovers of the killed write are cleared"
    steps = [s for s, _ in tensorboard_steps(exp.tensorboard_dir, "charts/env_steps")]
    assert steps == list(range(1, at + 2))


@pytest.mark.slow
@pytest.mark.parametrize(("sig", "to_group"), [(signal.SIGTERM, False), (signal.SIGINT, True)])
def test_sigterm_and_ctrl_c_stop_cleanly_with_a_checkpoint(tmp_path: Path, sig: signal.Signals, to_group: bool) -> None:
    """SIGTERM to the pid (``kill``, a supervisor) and SIGINT to the process group (Ctrl-C in a terminal):
    the run finishes its iteration, writes a complete checkpoint, exits 0 as "stopped", leaves no Ray process
    behind, and ``--resume`` continues it. A resume whose config no longer fits the checkpoint fails in one line."""
    work = user_dir(tmp_path)
    exp = Experiment(work / EXP.parent, EXP.name)
    args = ("train", "configs/smoke.yml", "--set", "stop.iterations=100", "--set", "runners.num_env_runners=1")
    with running(work, *args, "--set", "checkpoint.interval=5", *FAST) as proc:
        seen: set[tuple[int, float]] = set()

        def started() -> bool:
            seen.update(descendants(proc.pid))
            return exp.read_status().get("iteration", 0) >= 2

        wait_until(proc, work, started)
        if to_group:
            os.killpg(proc.pid, sig)
        else:
            os.kill(proc.pid, sig)
        assert proc.wait(timeout=300) == 0, (work / "out.log").read_text()[-3000:]
        deadline = time.monotonic() + 30
        while still_alive(seen) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not still_alive(seen), "Ray processes the run started outlived it"
    assert seen, "the run started Ray processes (a runner at least)"
    assert exp.read_run()["state"] == "stopped" and exp.read_status()["state"] == "stopped"
    last = exp.latest_checkpoint()
    assert last is not None and last.iteration == exp.read_status()["iteration"] >= 2
    assert checkpoint_problem(last.path) is None

    wrong = run_cli(work, "train", "configs/smoke.yml", "--resume", "--set", "model.actor_hidden=[32]")
    assert wrong.returncode == 2 and "Traceback" not in wrong.stderr + wrong.stdout
    # This mismatch shows only once RLlib loads the checkpoint, after Ray started, so Ray's own start-up notices
    # (token authentication, "Install gputil ...", its C++ core's "[date E pid tid] core_worker.cc:..." line on
    # creating a runner) come first; what we print is one error line, the last, and no traceback
    lines = [line for line in wrong.stderr.splitlines() if line.strip()]
    assert [line for line in lines if line.startswith("error:")] == [lines[-1]], lines
    assert all(name in lines[-1] for name in ("'smoke'", last.path.name, "--set"))  # the run, the checkpoint, the fix

    resumed = run_cli(work, "train", "configs/smoke.yml", "--resume", "--set", f"stop.iterations={last.iteration + 1}")
    assert resumed.returncode == 0, resumed.stdout[-3000:] + resumed.stderr[-3000:]
    assert resumed_from(exp, resumed.stdout)["checkpoint"] == last.path.name
    new = exp.latest_checkpoint()
    assert new is not None and new.iteration == last.iteration + 1 and new.env_steps == last.env_steps + BATCH


@pytest.mark.slow
def test_killing_an_env_runner_leaves_the_run_going_and_resumable(tmp_path: Path) -> None:
    """RLlib restarts a killed runner; until it is back the iterations sample nothing, then training goes on."""
    work = user_dir(tmp_path)
    exp = Experiment(work / EXP.parent, EXP.name)
    args = ("train", "configs/smoke.yml", "--set", "stop.iterations=6", "--set", "runners.num_env_runners=1", *FAST)
    with running(work, *args) as proc:
        wait_until(proc, work, lambda: exp.read_status().get("iteration", 0) >= 2)
        runners = [
            p for p in psutil.Process(proc.pid).children(recursive=True) if "RolloutWorker" in " ".join(p.cmdline())
        ]
        assert runners, "a runner process to kill"
        runners[0].kill()
        assert proc.wait(timeout=CLI_TIMEOUT_S) == 0, (work / "out.log").read_text()[-3000:]
    last = exp.latest_checkpoint()
    assert last is not None and last.iteration == 6 and checkpoint_problem(last.path) is None
    resumed = run_cli(work, "train", "configs/smoke.yml", "--resume", "--set", "stop.iterations=7")
    assert resumed.returncode == 0, resumed.stdout[-3000:] + resumed.stderr[-3000:]
    new = exp.latest_checkpoint()
    assert new is not None and new.iteration == 7 and new.env_steps > last.env_steps


@pytest.mark.slow
def test_exploit_killed_then_resumed_continues_its_curve(tmp_path: Path) -> None:
    """The same bar for ``osrs-rllib exploit``: kill -9 mid-run, ``--resume`` continues and finishes."""
    from envs.nh.contract import CRITIC_SIZE, OBS_SIZE
    from policies.model_file import save_model_file
    from policies.network import NHPolicyNetwork
    from policies.network_config import NetworkConfig

    work = user_dir(tmp_path)
    torch.manual_seed(0)
    net = NHPolicyNetwork(OBS_SIZE, CRITIC_SIZE, NetworkConfig(actor_hidden=(16,), critic_hidden=(16,), head_hidden=8))
    save_model_file(net, work / "tiny.nhmodel", frame_stack=(0,), metadata={"experiment": "tiny"})
    exp = Experiment(work / "experiments", "exploit-tiny")
    args = ("exploit", "tiny.nhmodel", "--config", "configs/smoke.yml", "--final-fights", "1")
    budget = ("--set", "evaluation.interval=2", "--set", "evaluation.fights=1", "--set", "checkpoint.interval=1")
    with running(work, *args, "--env-steps", str(BATCH * 100), *budget) as proc:
        wait_until(proc, work, lambda: (exp.latest_checkpoint() or CheckpointInfo(0, work, 0, None)).iteration >= 2)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
        last = exp.latest_checkpoint()
        assert last is not None
        steps = last.env_steps + BATCH
        resumed = run_cli(work, *args, "--resume", "--env-steps", str(steps), *budget)
    assert resumed.returncode == 0, resumed.stdout[-3000:] + resumed.stderr[-3000:]
    assert resumed_from(exp, resumed.stdout)["checkpoint"] == last.path.name
    report = json.loads((exp.dir / "exploit.json").read_text())
    assert report["state"] == "finished" and report["exploitability"]["env_steps"] == steps
    iterations = [e["iteration"] for e in report["series"]]
    assert iterations == sorted(set(iterations)) and iterations[-1] == last.iteration + 1


@pytest.mark.slow
def test_exploit_stopped_by_sigterm_evaluates_reports_and_exits_0(tmp_path: Path) -> None:
    """SIGTERM to ``osrs-rllib exploit``: the iteration finishes, the final evaluation runs, the
    report says the run was stopped (not finished) and by what, and the process exits 0 leaving no Ray behind."""
    from envs.nh.contract import CRITIC_SIZE, OBS_SIZE
    from policies.model_file import save_model_file
    from policies.network import NHPolicyNetwork
    from policies.network_config import NetworkConfig

    work = user_dir(tmp_path)
    torch.manual_seed(0)
    net = NHPolicyNetwork(OBS_SIZE, CRITIC_SIZE, NetworkConfig(actor_hidden=(16,), critic_hidden=(16,), head_hidden=8))
    save_model_file(net, work / "tiny.nhmodel", frame_stack=(0,), metadata={"experiment": "tiny"})
    exp = Experiment(work / "experiments", "exploit-tiny")
    args = ("exploit", "tiny.nhmodel", "--config", "configs/smoke.yml", "--final-fights", "1", "--env-steps",
            str(BATCH * 100), "--set", "evaluation.interval=0", "--set", "checkpoint.keep_best=false",
            "--set", "runners.num_env_runners=1")
    with running(work, *args) as proc:
        seen: set[tuple[int, float]] = set()

        def started() -> bool:
            seen.update(descendants(proc.pid))
            return exp.read_status().get("iteration", 0) >= 2

        wait_until(proc, work, started)
        os.kill(proc.pid, signal.SIGTERM)
        assert proc.wait(timeout=300) == 0, (work / "out.log").read_text()[-3000:]
        deadline = time.monotonic() + 30
        while still_alive(seen) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not still_alive(seen), "Ray processes the run started outlived it"
    assert exp.read_run()["state"] == "stopped"
    report = json.loads((exp.dir / "exploit.json").read_text())
    assert report["state"] == "stopped" and report["exploitability"]["ended_by"].startswith("was stopped")
    assert report["exploitability"]["env_steps"] < BATCH * 100
