"""`osrs-rllib serve` on an experiment while `osrs-rllib train` is still training it: both as a user runs them,
each with its own Ray on this machine. The server starts with default flags, answers, and serves the newer
model once training writes one (``models/latest.nhmodel`` after each checkpoint). Slow (minutes: a training
run and a server start): run with ``pytest -m slow``.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from common.processes import descendants, reap
from envs.nh.contract import NUM_LOGITS, OBS_SIZE
from serving.client import build_request
from serving.runtime import free_port

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]

REPO = Path(__file__).resolve().parents[2]
MODELS_LINE = b'{"command": "models"}\n'
ACT_LINE = json.dumps(build_request("latest", np.zeros(OBS_SIZE), np.ones(NUM_LOGITS, dtype=bool))).encode() + b"\n"


def _ask(port: int, line: bytes) -> dict[str, Any] | None:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(line)
            return json.loads(sock.makefile("rb").readline())
    except (OSError, ValueError):
        return None


def _latest(port: int) -> dict[str, Any] | None:
    reply = _ask(port, MODELS_LINE)
    rows = {m["name"]: m for m in (reply or {}).get("models", [])}
    return rows.get("latest")


def _start(args: list[str], log: list[bytes]) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen([sys.executable, "-m", "osrs_rllib.cli", *args], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    threading.Thread(target=lambda: log.extend(iter(proc.stdout.readline, b"")), daemon=True).start()  # type: ignore[union-attr]
    return proc


def _wait(predicate: Any, timeout_s: float, what: str, log: list[bytes], *procs: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        problem = "" if time.monotonic() < deadline else f"not within {timeout_s:g} s"
        problem = problem or next((f"{p.args[3]} exited ({p.returncode})" for p in procs if p.poll() is not None), "")
        assert not problem, f"{what}: {problem}:\n{b''.join(log).decode()[-3000:]}"
        time.sleep(0.2)


def test_serve_follows_a_training_run_of_the_same_experiment(tmp_path: Path) -> None:
    exps = tmp_path / "experiments"
    models = exps / "beside" / "models"
    train_log: list[bytes] = []
    serve_log: list[bytes] = []
    train = _start(["train", "configs/smoke.yml", "--name", "beside", "--set", f"experiments_dir={exps}",
                    "--set", "stop.iterations=200", "--set", "stop.minutes=25"], train_log)
    serve: subprocess.Popen[bytes] | None = None
    started: dict[int, int] = {}
    try:
        _wait(lambda: (models / "latest.nhmodel").exists(), 900, "a first model from training", train_log, train)
        port = free_port()
        launched = time.monotonic()
        serve = _start(["serve", str(exps / "beside"), "--port", str(port), "--state-dir", str(tmp_path / "state")],
                       serve_log)
        _wait(lambda: _latest(port) is not None and "action" in (_ask(port, ACT_LINE) or {}), 600,
              "the server's first answer", serve_log, serve, train)
        first_answer_s = time.monotonic() - launched
        started = descendants(serve.pid)
        first = _latest(port)
        assert first is not None
        # Training writes latest.nhmodel after every iteration: the server picks the newer one up by itself.
        _wait(lambda: (_latest(port) or first)["sha256"] != first["sha256"], 900, "a newer model served",
              train_log + serve_log, serve, train)
        newer = _latest(port)
        assert newer is not None and newer["iteration"] > first["iteration"]
        assert "action" in (_ask(port, ACT_LINE) or {})
        print(f"beside training: first answer {first_answer_s:.1f} s after launch; served iteration "
              f"{first['iteration']} then {newer['iteration']}")
        serve.send_signal(signal.SIGTERM)
        assert serve.wait(timeout=60) == 0, b"".join(serve_log).decode()[-3000:]
    finally:
        for proc in (serve, train):
            if proc is not None and proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in (serve, train):
            if proc is None:
                continue
            try:
                proc.wait(timeout=300)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=30)
        reap(started, grace_s=0.0)
