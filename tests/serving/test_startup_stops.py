"""`osrs-rllib serve` stopped by SIGTERM at any moment of its start-up: while the command loads, while Ray
starts, while Serve starts, while the replicas load. Each time it exits 0, leaves no process of its session
behind (Ray's agents used to be orphaned for a minute) and no record claiming a server that is starting.

The default suite stops it at three points found by condition (the command's handler installed, a raylet
running, Ray up); the slow suite adds seven more, spread in time over a whole start-up measured first.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from common.processes import pid_alive
from envs.nh.contract import NUM_LOGITS, OBS_SIZE
from serving.client import build_request
from serving.detached import ServeRecord, write_record
from serving.runtime import free_port
from tests.command_process import CommandProcess
from tests.serving.conftest import write_model

LINE = json.dumps(build_request("latest", np.zeros(OBS_SIZE), np.ones(NUM_LOGITS, dtype=bool))).encode() + b"\n"
SIGTERM_BIT = 1 << (signal.SIGTERM - 1)


def session_processes(sid: int) -> list[int]:
    """Live (not zombie) processes of session `sid`: the server and everything it started, wherever in the
    tree (Ray's agents are the raylet's children)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[0] != "Z" and int(fields[3]) == sid:
            found.append(int(entry))
    return found


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


class Server(CommandProcess):
    """`osrs-rllib serve` in a session of its own, its output collected, recorded as a detached server would be."""

    def __init__(self, tmp_path: Path) -> None:
        models = tmp_path / "models"
        if not models.exists():
            write_model(models / "latest.nhmodel", 3)
        self.port = free_port()
        self.state = tmp_path / f"state-{self.port}"  # one per server: a stop while loading may leave a record
        self.t0 = time.monotonic()
        super().__init__(["serve", str(models), "--port", str(self.port), "--state-dir", str(self.state),
                          "--no-dashboard"], env={"OSRS_RLLIB_SERVE_DETACHED": "1"})
        # What `serve --detach` writes for its child before it is up.
        write_record(self.state, ServeRecord(pid=self.proc.pid, host="?", port=self.port, models_dir=str(models),
                                             log="-", started_unix=time.time(), state="starting"))

    def wait_for(self, condition: Callable[[], bool], limit_s: float = 400.0) -> None:
        until = time.monotonic() + limit_s
        while not condition():
            assert self.proc.poll() is None, f"exited {self.proc.returncode} early:\n{self.output[-3000:]}"
            assert time.monotonic() < until, self.output[-3000:]
            time.sleep(0.01)

    def handler_installed(self) -> bool:
        try:
            status = Path(f"/proc/{self.proc.pid}/status").read_text()
        except OSError:
            return False
        caught = next(int(ln.split()[1], 16) for ln in status.splitlines() if ln.startswith("SigCgt:"))
        return bool(caught & SIGTERM_BIT)

    def raylet_running(self) -> bool:
        return any("raylet" in _cmdline(p) for p in session_processes(self.proc.pid))

    def ray_up(self) -> bool:
        return "start-up: ray after" in self.output

    def answers(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=30) as sock:
                sock.sendall(LINE)
                return b'"action"' in sock.makefile("rb").readline()
        except OSError:
            return False

    def stop_and_check(self, point: str) -> None:
        """SIGTERM now; exit 0, nothing of the session left within 10 s, no record left."""
        self.proc.send_signal(signal.SIGTERM)
        try:
            code = self.proc.wait(timeout=120)
        finally:
            self.join_reader()
        until = time.monotonic() + 10.0
        while session_processes(self.proc.pid) and time.monotonic() < until:
            time.sleep(0.05)
        left = {p: _cmdline(p)[:80] for p in session_processes(self.proc.pid)}
        for pid in left:
            with_suppressed_kill(pid)
        assert code == 0, f"{point}: exit {code}\n{self.output[-3000:]}"
        assert not left, f"{point}: left behind {left}"
        # The server removes its record once it runs its own stop handling; a stop while the command still
        # loads leaves the record of a dead pid, which `serve status` shows as dead and removes (and which the
        # `--detach` that wrote it removes when its child dies).
        records = [json.loads(p.read_text()) for p in self.state.glob("serve-*.json")]
        assert not [r for r in records if pid_alive(r["pid"])], f"{point}: a record claims a server: {records}"
        if "stopped" in self.output or "shutting down" in self.output:  # past loading: it removed its own
            assert not records, f"{point}: a record is left: {records}"


def with_suppressed_kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass


POINTS = {
    "the command loading": Server.handler_installed,
    "Ray starting": Server.raylet_running,
    "Serve starting": Server.ray_up,
}


@pytest.mark.integration
@pytest.mark.timeout(900)
@pytest.mark.parametrize("point", list(POINTS))
def test_sigterm_during_start_up_exits_0_and_leaves_nothing(tmp_path: Path, point: str) -> None:
    server = Server(tmp_path)
    try:
        server.wait_for(lambda: POINTS[point](server))
        server.stop_and_check(point)
    finally:
        if server.proc.poll() is None:
            os.killpg(server.proc.pid, signal.SIGKILL)


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_sigterm_at_ten_points_spread_over_start_up(tmp_path: Path) -> None:
    """The three points above plus seven spread evenly over a start-up measured first (launch to first good
    reply): exit 0 every time, nothing left 10 s after."""
    reference = Server(tmp_path)
    try:
        reference.wait_for(reference.answers)
        ready_s = time.monotonic() - reference.t0
        reference.stop_and_check("after start-up")
    finally:
        if reference.proc.poll() is None:
            os.killpg(reference.proc.pid, signal.SIGKILL)
    timed: dict[str, Callable[[Server], bool]] = {
        f"{k}/8 of start-up ({k * ready_s / 8:.1f} s)": (lambda s, at=k * ready_s / 8: time.monotonic() - s.t0 >= at)
        for k in range(1, 8)
    }
    for point, condition in {**POINTS, **timed}.items():
        server = Server(tmp_path)
        try:
            server.wait_for(lambda server=server, condition=condition: condition(server))
            server.stop_and_check(point)
        finally:
            if server.proc.poll() is None:
                os.killpg(server.proc.pid, signal.SIGKILL)
        print(f"SIGTERM at {point}: exit 0, nothing left")
