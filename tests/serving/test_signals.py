"""`osrs-rllib serve` stopped by a signal, as a service manager (SIGTERM) or a terminal (SIGINT) stops it:
it exits 0 after its "shutting down" path has run, and leaves none of the processes it started behind (Ray's
agents used to outlive it by a minute; a SIGTERM used to abort it with status -6).

Each case starts a real server in a subprocess with default flags (a private Ray with its dashboard).
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

import numpy as np
import pytest

from common.processes import descendants, reap, still_running
from envs.nh.contract import NUM_LOGITS, OBS_SIZE
from serving.client import build_request
from serving.runtime import free_port
from tests.serving.conftest import write_model

REPO = Path(__file__).resolve().parents[2]
LINE = json.dumps(build_request("latest", np.zeros(OBS_SIZE), np.ones(NUM_LOGITS, dtype=bool))).encode() + b"\n"


def _answered(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(LINE)
            return b'"action"' in sock.makefile("rb").readline()
    except OSError:
        return False


@pytest.mark.timeout(600)
@pytest.mark.parametrize("sig", [signal.SIGTERM, pytest.param(signal.SIGINT, marks=pytest.mark.slow)],
                         ids=["SIGTERM", "SIGINT"])
def test_a_signal_stops_serve_cleanly(tmp_path: Path, sig: signal.Signals) -> None:
    write_model(tmp_path / "models" / "latest.nhmodel", 3)
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "osrs_rllib.cli", "serve", str(tmp_path / "models"), "--port", str(port),
         "--state-dir", str(tmp_path / "state")],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    lines: list[bytes] = []
    reader = threading.Thread(target=lambda: lines.extend(iter(proc.stdout.readline, b"")), daemon=True)  # type: ignore[union-attr]
    reader.start()
    started: dict[int, int] = {}
    try:
        deadline = time.monotonic() + 400
        while not _answered(port):
            assert proc.poll() is None and time.monotonic() < deadline, b"".join(lines).decode()[-3000:]
            time.sleep(0.2)
        time.sleep(1.0)
        started = descendants(proc.pid)
        assert started, "a server with its own Ray runs child processes"
        signalled = time.monotonic()
        proc.send_signal(sig)
        code = proc.wait(timeout=60)
        took = time.monotonic() - signalled
        reader.join(10)
        output = b"".join(lines).decode(errors="replace")
        assert code == 0, output[-3000:]
        assert f"shutting down ({sig.name})" in output, output[-3000:]
        time.sleep(0.5)
        left = still_running(started)
        assert not left, f"left behind: {left}"
        print(f"{sig.name}: exit 0 after {took:.1f} s, {len(started)} processes started, none left")
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
        reap(started, grace_s=0.0)
