"""Experiments on disk and the background jobs that run them.

`layout` is the one place that knows the layout of ``experiments/<name>/`` (config, checkpoints written atomically,
models, milestones, status, the run's record, TensorBoard); `jobs` starts a command detached, lists the runs with
their latest figures and stops them cleanly. Every other package reads and writes an experiment through these.
"""

from __future__ import annotations

from common.lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "AVERAGE_MODEL_NAME": "layout",
    "CheckpointInfo": "layout",
    "Experiment": "layout",
    "ExperimentError": "layout",
    "KILL_AT_ENV": "layout",
    "MODEL_NAME": "layout",
    "STATE_FILE": "layout",
    "checkpoint_problem": "layout",
    "kill_point": "layout",
    "read_json": "layout",
    "JobsError": "jobs",
    "RAY_TOKEN_FILE": "jobs",
    "dashboard_login_hint": "jobs",
    "list_jobs": "jobs",
    "ray_auth_token": "jobs",
    "stop_jobs": "jobs",
}
__all__ = sorted(_EXPORTS)
__getattr__ = lazy_exports(__name__, _EXPORTS)
