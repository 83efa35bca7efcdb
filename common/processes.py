"""Background processes of the CLI: starting an ``osrs-rllib`` command detached, telling whether a pid lives,
and ending the processes a command started (`descendants`, `reap`: Ray's agents outlive ``ray.shutdown``).

Training, exploit and serve all detach the same way (``--detach``), and each later asks whether its process is
still alive; both jobs live here once, below every package that needs them.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

DETACH_FLAG = "--detach"


def start_cli_detached(command: str, argv: Sequence[str], log_path: Path) -> int:
    """Run ``osrs-rllib COMMAND ARGV`` (``--detach`` dropped) in a new session, output appended to `log_path`;
    returns its pid. A new session, so that the terminal's Ctrl-C and hang-up do not reach it."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    log = open(log_path, "ab")
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "osrs_rllib.cli", command, *[a for a in argv if a != DETACH_FLAG]],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
    finally:
        log.close()
    return proc.pid


def run_cli(command: str, argv: Sequence[str], log_path: Path) -> int:
    """Run ``osrs-rllib COMMAND ARGV`` to its end, output appended to `log_path`; returns its exit code. In this
    session, so that Ctrl-C stops the child as it stops its caller (the child checkpoints on the signal)."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "ab") as log:
        return subprocess.run(
            [sys.executable, "-m", "osrs_rllib.cli", command, *argv],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
            check=False,
        ).returncode


def pid_alive(pid: int | None) -> bool:
    """Whether process `pid` runs. A zombie (exited, not yet reaped) still answers signal 0, so on Linux
    ``/proc`` has the last word."""
    if not pid:
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    with contextlib.suppress(OSError, IndexError):
        if Path(f"/proc/{int(pid)}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
            return False
    return True


def _start_time(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


def descendants(pid: int) -> dict[int, int]:
    """Every process below `pid` (children, theirs, ...), as pid → start time (clock ticks since boot), so that
    a pid reused later is not mistaken for one of them. Linux (``/proc``); empty elsewhere."""
    children: dict[int, list[int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return {}
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            ppid = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    out: dict[int, int] = {}
    todo = list(children.get(pid, []))
    while todo:
        child = todo.pop()
        started = _start_time(child)
        if started is not None and child not in out:
            out[child] = started
            todo.extend(children.get(child, []))
    return out


def still_running(processes: dict[int, int]) -> list[int]:
    """Those of `processes` (from `descendants`) that still run: same pid, same start time, not a zombie."""
    alive = []
    for pid, started in processes.items():
        if _start_time(pid) == started and pid_alive(pid):
            alive.append(pid)
    return alive


def reap(processes: dict[int, int], grace_s: float = 3.0) -> list[int]:
    """Wait up to `grace_s` for `processes` to exit, then SIGTERM what remains and, a second later, SIGKILL it.

    Why: ``ray.shutdown`` stops Ray's main processes, but its dashboard and runtime-env agents notice only after
    30-80 s that their raylet is gone. A stopped server must leave nothing of its own behind. Only processes
    recorded as this process's descendants are touched. Returns the pids that had to be signalled.
    """
    deadline = time.monotonic() + grace_s
    while still_running(processes) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = still_running(processes)
    for sig, wait_s in ((signal.SIGTERM, 1.0), (signal.SIGKILL, 1.0)):
        for pid in still_running({p: processes[p] for p in left}):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, sig)
        until = time.monotonic() + wait_s
        while still_running({p: processes[p] for p in left}) and time.monotonic() < until:
            time.sleep(0.05)
    return left
