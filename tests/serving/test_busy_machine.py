"""Ray-backed commands on a busy laptop: CPU-burning processes (``python -c "while True: pass"``) beside them on the
2-core machine, as a user's build or browser would be.

* ``osrs-rllib serve models/`` gives its first good reply within 60 s beside two burners and within 120 s beside
  four, in each of five tries; so does the same ``serve`` run at once after ``osrs-rllib train configs/smoke.yml --set
  stop.iterations=3`` has finished (whatever train leaves must not slow the next command).
* ``serve`` started while a ``train`` run is still training on the same machine (a user serving the last model of
  the run they watch) answers within 120 s, the run keeps training meanwhile, and both stop cleanly on SIGTERM.

Slow: minutes per try (``pytest -m slow``).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from envs.nh.contract import NUM_LOGITS, OBS_SIZE
from osrs_rllib.experiments.layout import Experiment
from serving.client import build_request
from serving.runtime import free_port

REPO = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-m", "osrs_rllib.cli"]
TRIES = 5
FIRST_REPLY_LIMIT_S = {2: 60.0, 4: 120.0}
"""The first good reply's bar, by the number of CPU burners beside the server."""
BESIDE_TRAINING_LIMIT_S = 120.0

pytestmark = [pytest.mark.slow, pytest.mark.timeout(3600)]


@pytest.fixture
def burners(request: pytest.FixtureRequest) -> Iterator[int]:
    count = int(request.param)
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]
    try:
        yield count
    finally:
        for b in procs:
            b.kill()
            b.wait()


def _request_line() -> bytes:
    name = sorted(p.stem for p in (REPO / "models").glob("*.nhmodel"))[0]
    return json.dumps(build_request(name, np.zeros(OBS_SIZE), np.ones(NUM_LOGITS, dtype=bool))).encode() + b"\n"


def _start_serve(tmp_path: Path, port: int) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [*CLI, "serve", str(REPO / "models"), "--port", str(port), "--state-dir", str(tmp_path / "state")],
        cwd=REPO, stdout=open(tmp_path / "serve.log", "wb"), stderr=subprocess.STDOUT, start_new_session=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip


def _first_reply(proc: subprocess.Popen[bytes], port: int, t0: float, limit_s: float) -> float | None:
    """Seconds from `t0` to the first good reply, or None within `limit_s` (a client tries every 50 ms)."""
    line = _request_line()
    while time.monotonic() - t0 < limit_s and proc.poll() is None:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
                sock.sendall(line)
                if b'"action"' in sock.makefile("rb").readline():
                    return time.monotonic() - t0
        except OSError:
            time.sleep(0.05)
    return None


def _stop(proc: subprocess.Popen[bytes], timeout: float = 120.0) -> int:
    proc.send_signal(signal.SIGTERM)
    try:
        return proc.wait(timeout=timeout)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)


def _serve_within(tmp_path: Path, limit_s: float, label: str) -> None:
    port = free_port()
    t0 = time.monotonic()
    proc = _start_serve(tmp_path, port)
    first = _first_reply(proc, port, t0, limit_s)
    print(f"{label}: first good reply after {first} s (bar {limit_s:g} s)")
    code = _stop(proc)
    assert first is not None, (tmp_path / "serve.log").read_text()[-3000:]
    assert code == 0


@pytest.mark.parametrize("burners", [2, 4], indirect=True)
@pytest.mark.parametrize("attempt", range(1, TRIES + 1))
def test_serve_answers_in_time_beside_cpu_burners(burners: int, tmp_path: Path, attempt: int) -> None:
    _serve_within(tmp_path, FIRST_REPLY_LIMIT_S[burners], f"{burners} burners, try {attempt}")


@pytest.mark.parametrize("burners", [2, 4], indirect=True)
@pytest.mark.parametrize("attempt", range(1, TRIES + 1))
def test_train_then_serve_answers_in_time_beside_cpu_burners(burners: int, tmp_path: Path, attempt: int) -> None:
    t0 = time.monotonic()
    train = subprocess.run(
        [*CLI, "train", "configs/smoke.yml", "--set", "stop.iterations=3", "--set", f"experiments_dir={tmp_path}"],
        cwd=REPO, capture_output=True, text=True, timeout=1700, check=False,
    )  # fmt: skip
    took = time.monotonic() - t0
    print(f"{burners} burners, try {attempt}: train finished with {train.returncode} after {took:.0f} s")
    assert train.returncode == 0, train.stdout[-3000:] + train.stderr[-3000:]
    assert Experiment(tmp_path, "smoke").read_status()["iteration"] == 3
    _serve_within(tmp_path, FIRST_REPLY_LIMIT_S[burners], f"{burners} burners, try {attempt}, after train")


def test_serve_beside_a_run_that_is_still_training(tmp_path: Path) -> None:
    train = subprocess.Popen(
        [*CLI, "train", "configs/smoke.yml", "--set", "stop.iterations=100000", "--set", "stop.minutes=30",
         "--set", "checkpoint.interval=5", "--set", f"experiments_dir={tmp_path}"],
        cwd=REPO, stdout=open(tmp_path / "train.log", "wb"), stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    exp = Experiment(tmp_path, "smoke")
    try:
        deadline = time.monotonic() + 300
        while (exp.read_status() or {}).get("iteration", 0) < 2 and time.monotonic() < deadline:
            time.sleep(1)
        assert (exp.read_status() or {}).get("iteration", 0) >= 2, (tmp_path / "train.log").read_text()[-3000:]
        port = free_port()
        t0 = time.monotonic()
        serve = _start_serve(tmp_path, port)
        first = _first_reply(serve, port, t0, BESIDE_TRAINING_LIMIT_S)
        print(f"beside training: first good reply after {first} s")
        assert first is not None, (tmp_path / "serve.log").read_text()[-3000:]
        before = exp.read_status()["iteration"]
        assert _first_reply(serve, port, time.monotonic(), 30) is not None  # it keeps answering
        time.sleep(15)
        assert exp.read_status()["iteration"] > before, "the run stopped training while the server ran"
        assert _stop(serve) == 0
    finally:
        code = _stop(train, timeout=300)
    assert code == 0, (tmp_path / "train.log").read_text()[-3000:]
    assert exp.read_run()["state"] == "stopped"
