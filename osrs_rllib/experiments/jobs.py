"""Background training runs: start detached, list with their latest figures, stop cleanly.

A detached run is the same ``osrs-rllib train`` command in a new session (so closing the terminal does
not kill it), with its output in ``experiments/<name>/train.log``. Its state lives in the experiment
directory (``run.json``, ``status.json``), so `list_jobs` needs no daemon: a process that died without
saying so (SIGKILL, OOM) shows as ``dead``, and ``--resume`` continues it from its last checkpoint.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from osrs_rllib.experiments.layout import Experiment, list_experiments

ACTIVE_STATES = ("starting", "running", "stopping")
"""Run states of a process that is still going (a stop reaches it)."""


class JobsError(ValueError):
    """A stop aimed at an experiment that is not there (the message names it and where it was looked for)."""


@dataclass(frozen=True)
class Job:
    """One experiment's run, as `osrs-rllib jobs` shows it."""

    name: str
    state: str
    pid: int | None
    iteration: int | None
    env_steps: int | None
    steps_per_s: float | None
    eval_win_rate: float | None
    """The latest evaluation's headline: the mean over the trained builds."""
    eval_weakest_build: str | None
    """The trained build with the lowest win rate in that evaluation, as ``"ZERKER 94%"``."""
    best_eval_win_rate: float | None
    train_minutes: float | None
    updated_unix: float | None
    path: Path

    def to_dict(self) -> dict[str, Any]:
        d = self.__dict__.copy()
        d["path"] = str(self.path)
        return d


def _weakest(entry: Any) -> str | None:
    if not isinstance(entry, dict) or "build" not in entry or "win_rate" not in entry:
        return None
    return f"{entry['build']} {entry['win_rate']:.0%}"


def job_of(exp: Experiment) -> Job:
    run, status = exp.read_run(), exp.read_status()
    return Job(
        name=exp.name,
        state=exp.effective_state(),
        pid=run.get("pid"),
        iteration=status.get("iteration"),
        env_steps=status.get("env_steps"),
        steps_per_s=status.get("steps_per_s"),
        eval_win_rate=status.get("eval_win_rate"),
        eval_weakest_build=_weakest(status.get("eval_weakest_build")),
        best_eval_win_rate=status.get("best_eval_win_rate"),
        train_minutes=status.get("train_minutes"),
        updated_unix=status.get("updated_unix") or run.get("updated_unix"),
        path=exp.dir,
    )


def list_jobs(root: str | os.PathLike[str]) -> list[Job]:
    return [job_of(e) for e in list_experiments(root)]


def stop_job(exp: Experiment, wait_s: float = 0.0) -> str:
    """Ask a run to checkpoint and exit; with `wait_s`, wait up to that long for it to finish."""
    if not exp.request_stop():
        return exp.effective_state()
    deadline = time.time() + wait_s
    while time.time() < deadline and exp.effective_state() in ("running", "stopping"):
        time.sleep(0.5)
    if exp.effective_state() == "dead" and exp.read_run().get("state") == "stopping":
        # The signal reached the process before its trainer could catch it (the first second of a detached
        # start): nothing was lost, so say "stopped" and write why into the run's log.
        exp.write_run(state="stopped", ended_unix=time.time())
        with open(exp.log_path, "a", encoding="utf-8") as log:
            log.write("stopped by `osrs-rllib stop` while starting, before the trainer was up; no checkpoint written\n")
    return exp.effective_state()


def stop_jobs(root: str | os.PathLike[str], names: Sequence[str] | None = None, wait_s: float = 0.0) -> dict[str, str]:
    """Stop the named runs, or every run still going when `names` is None (`stop_job`, each waiting up to
    `wait_s`): each run's state afterwards, in order; empty when none was going.

    Raises:
        JobsError: A named experiment has no run in `root`; checked for every name before any run is stopped.
    """
    if names is None:
        names = [j.name for j in list_jobs(root) if j.state in ACTIVE_STATES]
    experiments = [Experiment(root, name) for name in names]
    for exp in experiments:
        if not exp.run_path.exists():
            raise JobsError(f"no experiment {exp.name!r} in {root}/")
    return {exp.name: stop_job(exp, wait_s=wait_s) for exp in experiments}


RAY_TOKEN_FILE = Path.home() / ".ray" / "auth_token"
"""Where Ray keeps the token of its token authentication when neither RAY_AUTH_TOKEN nor RAY_AUTH_TOKEN_PATH
is set (Ray generates it on the first start)."""


def ray_auth_token() -> tuple[str | None, str]:
    """The token the Ray dashboard asks for, and where it comes from (for the message that says how to log in).

    Why: Ray keeps token authentication on, so the dashboard answers 401 until the browser has the token;
    training and serving print where it is, and ``osrs-rllib dashboard-token`` prints it.
    """
    if os.environ.get("RAY_AUTH_TOKEN"):
        return os.environ["RAY_AUTH_TOKEN"].strip(), "the RAY_AUTH_TOKEN environment variable"
    path = Path(os.environ.get("RAY_AUTH_TOKEN_PATH") or RAY_TOKEN_FILE)
    try:
        token = path.read_text(encoding="utf-8").strip()
    except OSError:
        return None, str(path)
    return (token or None), str(path)


def dashboard_login_hint() -> str:
    """One line for the terminal: how to get past the dashboard's "Authentication Token Required" dialog."""
    token, where = ray_auth_token()
    if token is None:
        return "Ray dashboard token: none found (token authentication is off, or Ray has not written it yet)"
    return f"Ray dashboard token: in {where}; `osrs-rllib dashboard-token` prints it, paste it into the login dialog"
