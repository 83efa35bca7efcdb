"""Detached servers (``serve --detach``, ``serve status``, ``serve stop``) and where a server's models are.

A detached server is ``osrs-rllib serve`` in a new session, recorded in ``<state dir>/serve-<port>.json`` so that
``serve status`` and ``serve stop`` find it without a daemon (the scheme of detached training runs,
`osrs_rllib/experiments/jobs.py`). Nothing here imports Ray: ``serve status`` and ``serve stop`` answer in a fraction of
a second, and `serving.runtime` (which does import Ray) uses the same records.
"""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from common.atomic_files import write_json_atomic
from common.processes import pid_alive, start_cli_detached

STATE_DIR_ENV = "OSRS_RLLIB_SERVE_DIR"


class ServeError(RuntimeError):
    """The server cannot start, or a detached one cannot be found or stopped."""


def default_state_dir() -> Path:
    """Where detached servers are recorded (``$OSRS_RLLIB_SERVE_DIR`` or ``~/.osrs-rllib/serve``)."""
    return Path(os.environ.get(STATE_DIR_ENV) or Path.home() / ".osrs-rllib" / "serve")


def resolve_models_dir(target: str | os.PathLike[str], experiments_dir: str | os.PathLike[str] = "experiments") -> Path:
    """The directory of model files for a ``serve`` argument: a models directory, an experiment directory
    (its ``models/``) or an experiment name under `experiments_dir`.

    Raises:
        ServeError: Nothing of the kind exists; the message says what was looked for.
    """
    path = Path(target)
    candidates = [path / "models", path]
    if not path.is_absolute() and len(path.parts) == 1:
        candidates.append(Path(experiments_dir) / path / "models")
    for c in candidates:
        if c.is_dir() and (c.name == "models" or any(c.glob("*.nhmodel"))):
            return c
    if (path / "config.yml").exists() or (path / "run.json").exists():
        return path / "models"  # an experiment that has not written a model yet: serve it once it does
    raise ServeError(
        f"cannot serve {target!s}: expected a directory of *.nhmodel files, an experiment directory (with "
        f"models/) or an experiment name under {experiments_dir}/; looked at {', '.join(str(c) for c in candidates)}"
    )


@dataclass
class ServeRecord:
    """A detached server, as ``serve status`` shows it."""

    pid: int
    host: str
    port: int
    models_dir: str | None
    log: str
    started_unix: float
    dashboard: str | None = None
    state: str = "starting"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def record_path(state_dir: Path, port: int) -> Path:
    return state_dir / f"serve-{port}.json"


def write_record(state_dir: Path, record: ServeRecord) -> Path:
    return write_json_atomic(record_path(state_dir, record.port), record.to_dict())


def read_records(state_dir: Path) -> list[ServeRecord]:
    out = []
    for path in sorted(state_dir.glob("serve-*.json")):
        try:
            out.append(ServeRecord(**json.loads(path.read_text())))
        except (OSError, ValueError, TypeError):
            continue
    return out


def start_detached(argv: Sequence[str], state_dir: Path, port: int) -> tuple[int, Path]:
    """Run ``osrs-rllib serve ARGV`` (without ``--detach``) in a new session; returns its pid and log path."""
    log_path = state_dir / f"serve-{port}.log"
    return start_cli_detached("serve", argv, log_path), log_path


def stop_detached(record: ServeRecord, state_dir: Path, wait_s: float = 60.0) -> str:
    """SIGTERM a detached server (it shuts down like Ctrl-C) and wait for it; returns its final state."""
    path = record_path(state_dir, record.port)
    if not pid_alive(record.pid):
        path.unlink(missing_ok=True)
        return "was not running"
    os.kill(record.pid, signal.SIGTERM)
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        if not pid_alive(record.pid):
            path.unlink(missing_ok=True)
            return "stopped"
        time.sleep(0.2)
    return f"still running after {wait_s:g} s (pid {record.pid})"
