"""`common.stops` with real signals, in a subprocess each: the first stop signal asks, the second ends the
process now (exit 130), and a process that does not end is ended by the watchdog after writing what it can."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

SCRIPT = """
import sys, time
from common.stops import HARD_STOP_EXIT, StopRequest

def before_exit():
    open(sys.argv[1], "w").write("not measured: the rest")

stop = StopRequest(before_exit=before_exit, grace_s=0.5).install()
print("ready", flush=True)
mode = sys.argv[2]
try:
    while True:
        if stop.requested and mode == "first":
            print("finishing", flush=True)
            sys.exit(0)
        if stop.requested and mode != "first" and not getattr(stop, "_told", False):
            stop._told = True
            print("asked", flush=True)
        time.sleep(0.01)
except KeyboardInterrupt as exc:
    print("hard", type(exc).__name__, flush=True)
    if mode == "stubborn":  # ignores it: the watchdog must end the process
        while True:
            try:
                time.sleep(0.01)
            except KeyboardInterrupt:
                pass
    stop.disarm()
    sys.exit(HARD_STOP_EXIT)
"""


def _start(tmp_path: Path, mode: str) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-c", textwrap.dedent(SCRIPT), str(tmp_path / "measured"), mode],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    return proc


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_the_first_signal_asks_the_command_to_finish(tmp_path: Path, sig: signal.Signals) -> None:
    proc = _start(tmp_path, "first")
    proc.send_signal(sig)
    assert proc.wait(timeout=60) == 0
    assert proc.stdout is not None and proc.stdout.read().split() == ["finishing"]


@pytest.mark.parametrize("second", [signal.SIGTERM, signal.SIGINT])
def test_the_second_signal_ends_it_now_with_130(tmp_path: Path, second: signal.Signals) -> None:
    proc = _start(tmp_path, "second")
    assert proc.stdout is not None
    proc.send_signal(signal.SIGTERM)
    assert proc.stdout.readline().strip() == "asked"
    proc.send_signal(second)
    assert proc.wait(timeout=60) == 130
    assert proc.stdout.read().split() == ["hard", "HardStop"]
    assert not (tmp_path / "measured").exists()  # ended on its own: the watchdog had nothing to do


def test_a_process_that_does_not_end_is_ended_by_the_watchdog(tmp_path: Path) -> None:
    proc = _start(tmp_path, "stubborn")
    assert proc.stdout is not None
    proc.send_signal(signal.SIGINT)
    assert proc.stdout.readline().strip() == "asked"
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=60) == 130
    assert (tmp_path / "measured").read_text() == "not measured: the rest"
    # The script caught the hard stop and kept running: only the watchdog could end it with 130.
    assert proc.stdout.read().split() == ["hard", "HardStop"]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_before_a_command_takes_over_a_signal_exits_0(sig: signal.Signals) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", "import time; from common.stops import exit_quietly_on_signals as q; q(); "
         "print('ready', flush=True); time.sleep(120)"],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    proc.send_signal(sig)
    assert proc.wait(timeout=60) == 0
    assert proc.stderr is not None and proc.stderr.read() == ""


def test_a_shielded_write_finishes_before_the_second_signal_acts() -> None:
    import os

    from common.stops import HardStop, StopRequest

    stop = StopRequest(grace_s=60.0).install()
    written = False
    try:
        os.kill(os.getpid(), signal.SIGINT)
        assert stop.requested and not stop.hard
        with pytest.raises(HardStop), stop.shielded():
            os.kill(os.getpid(), signal.SIGINT)
            written = True  # the handler has run by now: it raised nothing inside the block
        assert written and stop.hard
    finally:
        stop.disarm()
        stop.uninstall()


WRAPPED = """
import os, signal, sys, time
from common.stops import StartAborted, abort_on_signal

class Hook:
    def __set_name__(self, owner, name):
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(2)  # the handler runs here, inside type(): Python wraps what it raises in a RuntimeError

try:
    with abort_on_signal("a module loading"):
        type("Loaded", (), {"field": Hook()})
except StartAborted as exc:
    print("aborted:", exc, "| cause:", type(exc.__cause__).__name__)
"""


def test_a_stop_that_python_wraps_in_another_error_is_still_a_stop() -> None:
    """A SIGTERM while Serve imports its controller arrived inside a field's ``__set_name__``, and `serve` exited 1
    with Python's RuntimeError instead of stopping cleanly."""
    done = subprocess.run([sys.executable, "-c", WRAPPED], cwd=REPO, capture_output=True, text=True, timeout=60,
                          check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "aborted: SIGTERM while a module loading | cause: RuntimeError"
