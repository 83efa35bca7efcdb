"""An experiment on disk: the one place that knows the layout of ``experiments/<name>/``.

::

    experiments/<name>/
      config.yml                 the resolved config the run uses (resume reads it back)
      run.json                   process facts: pid, state (running/stopping/stopped/finished/failed), times
      status.json                the latest figures (iteration, env steps, steps/s, win rates, ETA)
      checkpoints/
        iter-000010/             an RLlib checkpoint + osrs_state.json + main.nhmodel (+ average.nhmodel)
        index.json               the checkpoints kept, their evaluation win rates, and the best one
      models/latest.nhmodel      the policy of the newest checkpoint (a model file, see policies/)
      models/best.nhmodel        the policy with the best evaluation win rate so far
      models/average.nhmodel     the newest checkpoint's running average of main's parameters (ppo.average)
      tensorboard/               TensorBoard event files
      train.log                  the log of a detached run

Everything is written atomically (a temporary sibling, then `os.replace`), so a crash or a SIGKILL at any
moment leaves either the old file or the new one, never half of one. A checkpoint is written in three steps:

1. the trainer fills a hidden temporary directory ``checkpoints/.iter-NNNNNN.<random>/``;
2. `writing_checkpoint` writes the completeness marker ``osrs_state.json`` last (our counters plus a manifest of
   every file in the checkpoint with its size), flushes the whole tree to disk, and renames the directory to
   ``iter-NNNNNN`` in one `os.replace`;
3. `record_checkpoint` rewrites ``index.json`` and deletes the checkpoints no longer kept.

A kill between any two steps leaves the previous checkpoint usable: a hidden directory is never read, and a
checkpoint counts as complete only when its marker is there, names its own iteration and every file of its
manifest has the size it had when written (`checkpoint_problem`). The index is a cache of what the markers say
(evaluation win rates, the best one); a complete checkpoint the index does not list yet (a kill after step 2)
is still found, so ``--resume`` always takes the newest complete checkpoint.

Paths are absolute from `Experiment` on: the experiments directory is anchored to the working directory once,
when the `Experiment` is made, so that what the trainer hands RLlib and Ray (checkpoint directories, the
league's weights, TensorBoard) is absolute whatever the config says (RLlib reads a relative checkpoint path
as a URI and fails with ``URI has empty scheme``).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from common.atomic_files import atomic_directory, write_json_atomic
from common.processes import pid_alive

CHECKPOINT_PREFIX = "iter-"
CHECKPOINT_NAME = re.compile(rf"^{CHECKPOINT_PREFIX}(\d+)$")
STATE_FILE = "osrs_state.json"
"""The completeness marker, written last inside a checkpoint directory: our counters (iteration, env steps,
best win rate, time, the checkpoint's evaluation win rate) and ``files``, the size of every other file."""
MANIFEST_KEY = "files"
MODEL_NAME = "main.nhmodel"
AVERAGE_MODEL_NAME = "average.nhmodel"
"""A checkpoint's running average of main's parameters (``ppo.average``), beside `MODEL_NAME`; also the name of
its copy in ``models/``."""
RUN_STATES = ("starting", "running", "stopping", "stopped", "finished", "failed")
KILL_AT_ENV = "OSRS_RLLIB_TEST_KILL_AT"
"""Test hook: ``<point>@<iteration>`` makes the process SIGKILL itself at that point of that iteration
(`kill_point`), so tests can kill a run at an awkward moment deterministically instead of racing a timer."""
KILL_POINTS = ("checkpoint-write", "checkpoint-index", "evaluation", "league-snapshot")


class ExperimentError(Exception):
    """The experiment directory is in a state the request cannot proceed from (exists, missing, locked)."""

    def __init__(self, message: str, reason: str = "") -> None:
        super().__init__(message)
        self.reason = reason
        """Which refusal, for callers and tests that must not read the sentence: ``contradiction``, ``missing``,
        ``no_checkpoint``, ``exists`` or ``running`` (`Experiment.open`); empty for any other."""


def read_json(path: Path, default: Any = None) -> Any:
    try:
        return json.loads(path.read_text())
    except (FileNotFoundError, NotADirectoryError, json.JSONDecodeError, UnicodeDecodeError):
        return default


def kill_point(point: str, iteration: int) -> None:
    """SIGKILL this process here when `KILL_AT_ENV` is ``point@iteration`` (tests only; unset, it costs a lookup).

    Why a real SIGKILL and not an exception: nothing after it runs (no ``finally``, no atexit), exactly as
    when a user's ``kill -9`` lands at this moment, so what it leaves on disk is what a user would find.
    """
    if point not in KILL_POINTS:
        raise ValueError(f"unknown kill point {point!r}; the points are {', '.join(KILL_POINTS)}")
    wanted = os.environ.get(KILL_AT_ENV)
    if wanted and wanted == f"{point}@{iteration}":
        os.kill(os.getpid(), signal.SIGKILL)


def _fsync_tree(root: Path) -> None:
    """Flush every file under `root` (and the directories) to disk before the rename that publishes it, so a
    power cut cannot leave a published checkpoint with files the disk never received."""
    for directory, _, files in os.walk(root):
        for name in files:
            with contextlib.suppress(OSError):
                fd = os.open(os.path.join(directory, name), os.O_RDONLY)
                try:
                    os.fsync(fd)
                finally:
                    os.close(fd)
        with contextlib.suppress(OSError):
            fd = os.open(directory, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)


def manifest(root: Path) -> dict[str, int]:
    """Every file under `root` (relative path → size in bytes), the marker excluded."""
    out = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and path.name != STATE_FILE:
            out[path.relative_to(root).as_posix()] = path.stat().st_size
    return out


def checkpoint_problem(path: Path) -> str | None:
    """Why `path` is not a complete checkpoint, in words (None: it is complete).

    Complete means: named ``iter-NNNNNN``, with a readable marker that names the same iteration, and every file
    of the marker's manifest present with the recorded size (markers written before the manifest existed are
    taken on trust).
    """
    match = CHECKPOINT_NAME.match(path.name)
    if match is None:
        return f"{path.name} is not a checkpoint directory name (iter-NNNNNN)"
    if not path.is_dir():
        return f"{path} is not a directory"
    marker = path / STATE_FILE
    if not marker.exists():
        return f"it has no {STATE_FILE}: its write never finished"
    state = read_json(marker, None)
    if not isinstance(state, dict):
        return f"its {STATE_FILE} is damaged (not a JSON object)"
    if int(state.get("iteration", -1)) != int(match.group(1)):
        return f"its {STATE_FILE} names iteration {state.get('iteration')}, not {int(match.group(1))}"
    for name, size in (state.get(MANIFEST_KEY) or {}).items():
        file = path / name
        if not file.is_file():
            return f"{name} is missing"
        if file.stat().st_size != int(size):
            return f"{name} has {file.stat().st_size} bytes, {int(size)} were written"
    return None


@dataclass(frozen=True)
class CheckpointInfo:
    """One kept checkpoint, as listed in ``checkpoints/index.json``."""

    iteration: int
    path: Path
    env_steps: int
    eval_win_rate: float | None

    def to_json(self) -> dict[str, Any]:
        return {
            "iteration": self.iteration,
            "dir": self.path.name,
            "env_steps": self.env_steps,
            "eval_win_rate": self.eval_win_rate,
        }


class Experiment:
    """Paths and bookkeeping of ``<experiments_dir>/<name>``.

    `root` is made absolute here, once, against the working directory of the moment (see the module
    docstring): every path below derives from it, so nothing downstream has to remember to.
    """

    def __init__(self, root: str | os.PathLike[str], name: str) -> None:
        self.root = Path(root).absolute()
        self.name = name
        self.dir = self.root / name

    # -- paths ---------------------------------------------------------------------------------------
    @property
    def config_path(self) -> Path:
        return self.dir / "config.yml"

    @property
    def run_path(self) -> Path:
        return self.dir / "run.json"

    @property
    def status_path(self) -> Path:
        return self.dir / "status.json"

    @property
    def checkpoints_dir(self) -> Path:
        return self.dir / "checkpoints"

    @property
    def index_path(self) -> Path:
        return self.checkpoints_dir / "index.json"

    @property
    def models_dir(self) -> Path:
        return self.dir / "models"

    @property
    def tensorboard_dir(self) -> Path:
        return self.dir / "tensorboard"

    @property
    def log_path(self) -> Path:
        return self.dir / "train.log"

    def exists(self) -> bool:
        return self.config_path.exists() or self.checkpoints_dir.exists()

    # -- lifecycle -----------------------------------------------------------------------------------
    @classmethod
    def open(
        cls,
        root: str | os.PathLike[str],
        name: str,
        *,
        resume: bool = False,
        force: bool = False,
        check_saved: Callable[[Experiment], None] | None = None,
    ) -> Experiment:
        """The experiment a long run (``train``, ``exploit``) is about to start, resume or start over, checked
        before anything is written: the one place that decides what --resume and --force may do, and says why not.

        A new run may take a name whose experiment holds no complete checkpoint (it failed in its first seconds:
        nothing to lose); one with a checkpoint needs `force`. A resume needs the experiment's saved config and a
        complete checkpoint. Neither may touch an experiment another live process is training.

        `check_saved` is called on a resume once the saved config is there, before the other checks: the run
        reads that config back and checks that its own arguments fit it.

        Raises:
            ExperimentError: `resume` with `force`, nothing to resume, an experiment in the way without `force`,
                or a live run of it (the message says what to do); and whatever `check_saved` raises.
        """
        if resume and force:
            raise ExperimentError("--resume and --force contradict each other: pick one", "contradiction")
        exp = cls(root, name)
        if resume:
            if not exp.config_path.exists():
                raise ExperimentError(f"experiment {name!r} not found at {exp.dir}: nothing to resume", "missing")
            if check_saved is not None:
                check_saved(exp)
            exp.ensure_not_running()
            if exp.latest_checkpoint() is None:
                raise ExperimentError(
                    f"experiment {name!r} has no complete checkpoint yet: start it again without --resume "
                    "(nothing is lost: a run without a checkpoint needs no --force)",
                    "no_checkpoint",
                )
        elif exp.exists():
            exp._ensure_replaceable(force)
        return exp

    def _ensure_replaceable(self, force: bool) -> None:
        if not force and self.latest_checkpoint() is not None:
            raise ExperimentError(
                f"experiment {self.name!r} already exists at {self.dir}; use --resume to continue it or --force "
                "to start over (deleting its checkpoints)",
                "exists",
            )
        self.ensure_not_running()

    def detach(
        self, argv: Sequence[str], *, command: str, resume: bool, doing: str, echo: Callable[[str], None]
    ) -> int:
        """Run ``osrs-rllib <command> <argv>`` (without ``--detach``) in the background on this experiment and say
        where to follow it; returns the child's pid. A new run over an existing experiment that `open` let
        through gets ``--force``, so the child does not stop at the check its parent passed."""
        from common.processes import start_cli_detached

        args = list(argv)
        if not resume and "--force" not in args and self.exists():
            args.append("--force")
        pid = start_cli_detached(command, args, self.log_path)
        self.write_run(state="starting", pid=pid, detached=True, started_unix=time.time())
        echo(f"{doing} in the background (pid {pid}); log: {self.log_path}")
        echo(f"follow it with `osrs-rllib jobs`, stop it with `osrs-rllib stop {self.name}`")
        return pid

    def prepare_new(self, force: bool, keep: tuple[str, ...] = ()) -> None:
        """Create a fresh experiment directory; an existing one is cleared under the rules of `open`.

        `keep` names top-level files to spare (a detached run's ``train.log`` is opened before this runs).
        """
        if self.exists():
            self._ensure_replaceable(force)
            for child in self.dir.iterdir():
                if child.name in keep:
                    continue
                if child.is_dir() and not child.is_symlink():
                    shutil.rmtree(child)
                else:
                    child.unlink()
        self.dir.mkdir(parents=True, exist_ok=True)

    def ensure_not_running(self) -> None:
        run = self.read_run()
        if (
            run.get("state") in ("starting", "running", "stopping")
            and pid_alive(run.get("pid"))
            and run.get("pid") != os.getpid()
        ):
            raise ExperimentError(
                f"experiment {self.name!r} is being trained by process {run['pid']}; stop it first "
                f"(osrs-rllib stop {self.name})",
                "running",
            )

    def read_run(self) -> dict[str, Any]:
        return read_json(self.run_path, {}) or {}

    def write_run(self, **fields: Any) -> dict[str, Any]:
        run = {**self.read_run(), **fields, "updated_unix": time.time()}
        write_json_atomic(self.run_path, run)
        return run

    def mark_started(self, command: list[str], **extra: Any) -> None:
        """Record this process as the one training the experiment (replaces a previous run's facts)."""
        write_json_atomic(
            self.run_path,
            {
                "state": "running",
                "pid": os.getpid(),
                "host": socket.gethostname(),
                "started_unix": time.time(),
                "updated_unix": time.time(),
                "command": command,
                **extra,
            },
        )

    def record_ray_processes(self, pids: list[int]) -> None:
        """Remember the Ray processes this run started (with their start times, so a reused pid is never taken
        for one of them): `reap_leftover_ray` ends them if the run dies without shutting Ray down."""
        import psutil

        rows = []
        for pid in pids:
            with contextlib.suppress(psutil.Error):
                rows.append({"pid": pid, "created": psutil.Process(pid).create_time()})
        self.write_run(ray_processes=rows)

    def reap_leftover_ray(self, wait_s: float = 5.0) -> list[int]:
        """End the Ray processes a previous run of this experiment started and left behind when it was killed
        (``kill -9``, OOM): Ray's head and runners die with their driver, but some helpers (its dashboard and
        runtime-env agents) outlive it. Only processes recorded by `record_ray_processes` whose start time still
        matches are touched, and only when the recorded run is no longer alive; returns the pids ended.
        """
        import psutil

        run = self.read_run()
        if run.get("pid") != os.getpid() and pid_alive(run.get("pid")):
            return []
        procs = []
        for row in run.get("ray_processes") or []:
            with contextlib.suppress(psutil.Error, KeyError, TypeError, ValueError):
                proc = psutil.Process(int(row["pid"]))
                if abs(proc.create_time() - float(row["created"])) < 0.01 and proc.status() != psutil.STATUS_ZOMBIE:
                    procs.append(proc)
        for proc in procs:
            with contextlib.suppress(psutil.Error):
                proc.terminate()
        _, alive = psutil.wait_procs(procs, timeout=wait_s)
        for proc in alive:
            with contextlib.suppress(psutil.Error):
                proc.kill()
        if procs:
            self.write_run(ray_processes=[])
        return [p.pid for p in procs]

    def read_status(self) -> dict[str, Any]:
        return read_json(self.status_path, {}) or {}

    def write_status(self, status: dict[str, Any]) -> None:
        write_json_atomic(self.status_path, {**status, "updated_unix": time.time()})

    def effective_state(self) -> str:
        """The run state, corrected for a process that died without saying so (SIGKILL, OOM, power loss)."""
        run = self.read_run()
        state = run.get("state", "unknown")
        if state in ("starting", "running", "stopping") and not pid_alive(run.get("pid")):
            return "dead"
        return str(state)

    def request_stop(self, sig: int = signal.SIGTERM) -> bool:
        """Ask the training process to checkpoint and exit after its current iteration."""
        run = self.read_run()
        pid = run.get("pid")
        if run.get("state") not in ("starting", "running", "stopping") or not pid_alive(pid):
            return False
        self.write_run(state="stopping", stop_requested_unix=time.time())
        os.kill(int(pid), sig)
        return True

    # -- checkpoints ---------------------------------------------------------------------------------
    def checkpoint_dir_for(self, iteration: int) -> Path:
        return self.checkpoints_dir / f"{CHECKPOINT_PREFIX}{iteration:06d}"

    @contextlib.contextmanager
    def writing_checkpoint(self, iteration: int, marker: Mapping[str, Any] | None = None) -> Iterator[Path]:
        """Yield a hidden temporary directory to fill; when the block succeeds, write the completeness marker
        (`marker` plus the iteration and the manifest, last), flush the tree and rename it to ``iter-NNNNNN``
        in one step. A block that raises leaves nothing; a kill leaves a hidden directory nobody reads.

        Without `marker` the caller writes ``osrs_state.json`` itself (tools and tests that fake checkpoints).
        """
        with atomic_directory(self.checkpoint_dir_for(iteration)) as tmp:
            yield tmp
            kill_point("checkpoint-write", iteration)
            if marker is not None:
                write_json_atomic(tmp / STATE_FILE, {**marker, "iteration": iteration, MANIFEST_KEY: manifest(tmp)})
            _fsync_tree(tmp)

    def read_index(self) -> dict[str, Any]:
        index = read_json(self.index_path, None)
        if not isinstance(index, dict):
            index = {"checkpoints": [], "best": None}
        return index

    def checkpoints(self) -> list[CheckpointInfo]:
        """Complete checkpoints on disk, oldest first (see `checkpoint_problem`).

        The directories are the truth and ``index.json`` a cache: a complete checkpoint the index does not list
        yet (killed between the rename and the index write) is listed from its marker, and an index row whose
        directory is gone or incomplete is not. Hidden directories (writes in progress or interrupted) never are.
        """
        if not self.checkpoints_dir.is_dir():
            return []
        rows = {row.get("dir"): row for row in self.read_index().get("checkpoints", []) if isinstance(row, dict)}
        out = []
        for path in self.checkpoints_dir.iterdir():
            if CHECKPOINT_NAME.match(path.name) is None or checkpoint_problem(path) is not None:
                continue
            state = read_json(path / STATE_FILE, {})
            row = rows.get(path.name) or {}
            out.append(
                CheckpointInfo(
                    int(state["iteration"]),
                    path,
                    int(row.get("env_steps", state.get("env_steps", 0))),
                    row.get("eval_win_rate", state.get("eval_win_rate")),
                )
            )
        return sorted(out, key=lambda c: c.iteration)

    def incomplete_checkpoints(self) -> list[tuple[Path, str]]:
        """Directories named like a checkpoint that are not complete, with why (for the message of a resume that
        skips them); hidden temporary directories are writes in progress or killed, not worth a word."""
        if not self.checkpoints_dir.is_dir():
            return []
        found = []
        for path in sorted(self.checkpoints_dir.iterdir()):
            if CHECKPOINT_NAME.match(path.name) is not None:
                problem = checkpoint_problem(path)
                if problem is not None:
                    found.append((path, problem))
        return found

    def latest_checkpoint(self) -> CheckpointInfo | None:
        kept = self.checkpoints()
        return kept[-1] if kept else None

    def best_checkpoint(self) -> CheckpointInfo | None:
        best = self.read_index().get("best")
        if not best:
            return None
        for c in self.checkpoints():
            if c.path.name == best:
                return c
        return None

    def record_checkpoint(self, info: CheckpointInfo, keep_last: int, keep_best: bool) -> list[Path]:
        """Add a completed checkpoint to the index and delete those no longer kept; returns what was removed.

        Kept: the newest `keep_last`, plus (with `keep_best`) the one with the highest evaluation win rate
        (ties go to the newer). The index is rewritten atomically before anything is deleted, so a crash in
        between leaves an orphan directory at worst, never an index entry pointing at nothing.
        """
        rows = [c for c in self.checkpoints() if c.iteration != info.iteration] + [info]
        rows.sort(key=lambda c: c.iteration)
        best = None
        if keep_best:
            rated = [c for c in rows if c.eval_win_rate is not None]
            if rated:
                best = max(rated, key=lambda c: (c.eval_win_rate, c.iteration))
        keep = set(c.path.name for c in rows[-max(keep_last, 1) :])
        if best is not None:
            keep.add(best.path.name)
        kept = [c for c in rows if c.path.name in keep]
        write_json_atomic(
            self.index_path,
            {"checkpoints": [c.to_json() for c in kept], "best": best.path.name if best else None},
        )
        removed = []
        for c in rows:
            if c.path.name not in keep:
                shutil.rmtree(c.path, ignore_errors=True)
                removed.append(c.path)
        # Leftovers of interrupted writes (hidden temporary directories) are garbage once a save succeeded.
        for leftover in self.checkpoints_dir.glob(f".{CHECKPOINT_PREFIX}*"):
            if leftover.is_dir():
                shutil.rmtree(leftover, ignore_errors=True)
        return removed


def list_experiments(root: str | os.PathLike[str]) -> list[Experiment]:
    base = Path(root)
    if not base.is_dir():
        return []
    # run.json too: a detached run writes it before its process has written a config (else `jobs` cannot see it)
    found = (Experiment(base, d.name) for d in sorted(base.iterdir()) if d.is_dir())
    return [e for e in found if e.config_path.exists() or e.run_path.exists()]
