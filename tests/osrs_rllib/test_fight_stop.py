"""A stop ends `fight` promptly and keeps the fights that ended: its summary covers them and says how many were
not played, so a long measurement cut short still reports what it measured."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import pytest

from tests.command_process import CommandProcess

REQUESTED = 100_000


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_stop_reports_the_fights_that_ended(tmp_path: Path, sig: signal.Signals) -> None:
    replays = tmp_path / "replays"
    cmd = CommandProcess(["fight", "noop", "random", "--n", str(REQUESTED), "--engine", "python", "--json",
                          "--record", str(replays)])  # fmt: skip
    until = time.monotonic() + 300
    while len(list(replays.glob("*.nhreplay"))) < 3:  # a replay is written as each fight ends
        assert cmd.proc.poll() is None, cmd.output[-3000:]
        assert time.monotonic() < until, cmd.output[-3000:]
        time.sleep(0.05)
    cmd.proc.send_signal(sig)
    code = cmd.proc.wait(timeout=120)
    cmd.join_reader()
    assert code == 0, cmd.output[-3000:]
    summary = json.loads(next(line for line in cmd.lines if line.startswith("{")))
    ended = summary["n"]
    assert ended >= 3 and summary["wins"] + summary["losses"] + summary["ties"] == ended
    assert summary["not_played"] == REQUESTED - ended
    assert sum(row["fights"] for row in summary["by_build"].values()) == ended
    assert len(list(replays.glob("*.nhreplay"))) >= ended  # every fight summarised has its replay
