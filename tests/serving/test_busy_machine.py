"""Ray-backed commands on a busy laptop: two CPU-burning processes beside them on the 2-core machine.

`osrs-rllib train configs/smoke.yml --set stop.iterations=3` must finish, and `osrs-rllib serve models/` must
give its first good reply within 120 s of the command, in each of five tries (Ray's fixed start-up limits used
to abort such starts: `serving/ray_start.py`). Slow: minutes per try.
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
TRIES = 5
FIRST_REPLY_LIMIT_S = 120.0

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]


@pytest.fixture
def two_cpu_burners() -> Iterator[None]:
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        yield
    finally:
        for b in burners:
            b.kill()
            b.wait()


@pytest.mark.parametrize("attempt", range(1, TRIES + 1))
def test_train_smoke_finishes_beside_two_cpu_burners(two_cpu_burners: None, tmp_path: Path, attempt: int) -> None:
    t0 = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "osrs_rllib.cli", "train", "configs/smoke.yml", "--set", "stop.iterations=3",
         "--set", f"experiments_dir={tmp_path}"],
        cwd=REPO, capture_output=True, text=True, timeout=1700, check=False,
        env={**os.environ, "PYTHONUNBUFFERED": "1"})
    print(f"try {attempt}: train finished with {proc.returncode} after {time.monotonic() - t0:.0f} s")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    exp = Experiment(tmp_path, "smoke")
    assert exp.read_run()["state"] == "finished"  # its limit ended it, not a stop or a failure
    assert exp.read_status()["iteration"] == 3


@pytest.mark.parametrize("attempt", range(1, TRIES + 1))
def test_serve_answers_within_two_minutes_beside_two_cpu_burners(two_cpu_burners: None, tmp_path: Path,
                                                                   attempt: int) -> None:
    models = REPO / "models"
    name = sorted(p.stem for p in models.glob("*.nhmodel"))[0]
    line = json.dumps(build_request(name, np.zeros(OBS_SIZE), np.ones(NUM_LOGITS, dtype=bool))).encode() + b"\n"
    port = free_port()
    t0 = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "osrs_rllib.cli", "serve", str(models), "--port", str(port), "--state-dir",
         str(tmp_path / "state")],
        cwd=REPO, stdout=open(tmp_path / "serve.log", "wb"), stderr=subprocess.STDOUT, start_new_session=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"})
    first: float | None = None
    try:
        while time.monotonic() - t0 < FIRST_REPLY_LIMIT_S and proc.poll() is None:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
                    sock.sendall(line)
                    if b'"action"' in sock.makefile("rb").readline():
                        first = time.monotonic() - t0
                        break
            except OSError:
                time.sleep(0.05)
        print(f"try {attempt}: first good reply after {first} s")
        assert first is not None, (tmp_path / "serve.log").read_text()[-3000:]
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=120) == 0
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
