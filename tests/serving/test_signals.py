"""`osrs-rllib serve` stopped by a signal, as a service manager (SIGTERM) or a terminal (SIGINT) stops it:
it exits 0 after its own stop path has run, frees its port, and leaves none of the processes it started behind (Ray's
agents used to outlive it by a minute; a SIGTERM used to abort it with status -6).

Each case starts a real server in a subprocess with default flags (a private Ray).
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


def _first_reply_on_first_connection(port: int, proc: subprocess.Popen[bytes], lines: list[bytes]) -> bytes:
    """Connect as soon as the port accepts (as game-client harnesses do) and return the reply to the first
    request sent on that first connection."""
    deadline = time.monotonic() + 400
    while True:
        try:
            sock = socket.create_connection(("127.0.0.1", port), timeout=30)
            break
        except OSError:
            assert proc.poll() is None and time.monotonic() < deadline, b"".join(lines).decode()[-3000:]
            time.sleep(0.02)
    with sock:
        sock.sendall(LINE)
        return sock.makefile("rb").readline()


@pytest.mark.timeout(600)
@pytest.mark.parametrize("sig", [signal.SIGTERM, pytest.param(signal.SIGINT, marks=pytest.mark.slow)],
                         ids=["SIGTERM", "SIGINT"])
@pytest.mark.integration
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
        # Listening means ready: the first request on the first connection the port accepts gets an action.
        first = json.loads(_first_reply_on_first_connection(port, proc, lines))
        assert "action" in first and len(first["action"]) == 12, first
        started = descendants(proc.pid)
        assert started, "a server with its own Ray runs child processes"
        signalled = time.monotonic()
        proc.send_signal(sig)
        code = proc.wait(timeout=60)
        took = time.monotonic() - signalled
        reader.join(10)
        output = b"".join(lines).decode(errors="replace")
        assert code == 0, output[-3000:]
        assert sig.name in output, output[-3000:]  # its own stop path ran: it names the signal it got
        with pytest.raises(ConnectionRefusedError):  # and the port is free: nothing serves it any more
            socket.create_connection(("127.0.0.1", port), timeout=5).close()
        left = _wait_until_gone(started, 10.0)
        assert not left, f"left behind: {left}"
        print(f"{sig.name}: exit 0 after {took:.1f} s, {len(started)} processes started, none left")
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
        reap(started, grace_s=0.0)


def _wait_until_gone(processes: dict[int, int], limit_s: float) -> list[int]:
    """Those of `processes` still running after up to `limit_s` (a condition, not a fixed sleep)."""
    until = time.monotonic() + limit_s
    while still_running(processes) and time.monotonic() < until:
        time.sleep(0.05)
    return still_running(processes)
