"""An experiment on disk: the one place that knows the layout of ``experiments/<name>/``.

::

    experiments/<name>/
      config.yml                 the resolved config the run uses (resume reads it back)
      run.json                   process facts: pid, state (running/stopping/stopped/finished/failed), times
      status.json                the latest figures (iteration, env steps, steps/s, win rates, ETA)
      checkpoints/
        iter-000010/             an RLlib checkpoint + osrs_state.json + main.nhmodel
        index.json               the checkpoints kept, their evaluation win rates, and the best one
      models/latest.nhmodel      the policy of the newest checkpoint (a model file, see policies/)
      models/best.nhmodel        the policy with the best evaluation win rate so far
      tensorboard/               TensorBoard event files
      train.log                  the log of a detached run

Everything is written atomically (a temporary sibling, then `os.replace`), so a crash or a SIGKILL at any
moment leaves either the old file or the new one, never half of one. A checkpoint directory is written
under a hidden temporary name and renamed into place once complete; a directory that is not in
``index.json`` or lacks ``osrs_state.json`` is never loaded.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from common.atomic_files import atomic_directory, write_json_atomic
from common.processes import pid_alive

CHECKPOINT_PREFIX = "iter-"
STATE_FILE = "osrs_state.json"
"""Written last inside a checkpoint directory: our counters (iteration, env steps, best win rate, time)."""
MODEL_NAME = "main.nhmodel"
RUN_STATES = ("starting", "running", "stopping", "stopped", "finished", "failed")


class ExperimentError(Exception):
    """The experiment directory is in a state the request cannot proceed from (exists, missing, locked)."""



def read_json(path: Path, default: Any = None) -> Any:
    try:
        return json.loads(path.read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return default


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
    """Paths and bookkeeping of ``<experiments_dir>/<name>``."""

    def __init__(self, root: str | os.PathLike[str], name: str) -> None:
        self.root = Path(root)
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
    def prepare_new(self, force: bool, keep: tuple[str, ...] = ()) -> None:
        """Create a fresh experiment directory; an existing one needs `force` (and must not be running) once it
        holds a complete checkpoint. A run that never got that far (it failed in its first seconds) has nothing
        to lose, so its name is free again without `force`.

        `keep` names top-level files to spare (a detached run's ``train.log`` is opened before this runs).
        """
        if self.exists():
            if not force and self.latest_checkpoint() is not None:
                raise ExperimentError(
                    f"experiment {self.name!r} already exists at {self.dir}; use --resume to continue it or "
                    "--force to start over (its checkpoints will be deleted)"
                )
            self.ensure_not_running()
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
                f"(osrs-rllib stop {self.name})"
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

    def writing_checkpoint(self, iteration: int) -> contextlib.AbstractContextManager[Path]:
        """Yield a temporary directory to fill; on success it is renamed to ``iter-NNNNNN`` atomically."""
        return atomic_directory(self.checkpoint_dir_for(iteration))

    def read_index(self) -> dict[str, Any]:
        index = read_json(self.index_path, None)
        if not isinstance(index, dict):
            index = {"checkpoints": [], "best": None}
        return index

    def checkpoints(self) -> list[CheckpointInfo]:
        """Kept, complete checkpoints, oldest first."""
        out = []
        for row in self.read_index().get("checkpoints", []):
            path = self.checkpoints_dir / row["dir"]
            if (path / STATE_FILE).exists():
                out.append(CheckpointInfo(int(row["iteration"]), path, int(row["env_steps"]), row.get("eval_win_rate")))
        return sorted(out, key=lambda c: c.iteration)

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
    # run.json too: a detached run writes it before its process has written a config (issue 16: it was invisible)
    found = (Experiment(base, d.name) for d in sorted(base.iterdir()) if d.is_dir())
    return [e for e in found if e.config_path.exists() or e.run_path.exists()]
