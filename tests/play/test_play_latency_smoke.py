"""`benchmarks/play_latency.py` runs for a moment as a user runs it, so that it cannot rot (STYLE 17): the figures
are printed, not checked. The run through `osrs-rllib serve` (Ray starts from scratch) is `slow`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _run(*args: str, timeout: int = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(REPO / "benchmarks" / "play_latency.py"), *args], cwd=REPO,
                          capture_output=True, text=True, timeout=timeout, check=False)  # fmt: skip


def test_the_benchmark_reports_its_figures(tiny_model: Path) -> None:
    done = _run("--ticks", "10", "--tick-ms", "20", "--latency-ticks", "10", "--latency-tick-ms", "20", "--no-serve",
                "--model", str(tiny_model), "--json")  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout.splitlines()[-1])
    assert {"platform", "cpu", "cores", "python"} <= report["machine"].keys()
    timing = report["timing"]
    # at least the 10 ticks the person saw (the clock may run one more before the person's goodbye arrives)
    assert 10 <= timing["ticks"] < 20 and timing["tick_ms"] == 20, timing
    assert timing["tick_lateness"]["n"] == timing["ticks"] and timing["tick_lateness"]["p99_ms"] >= 0
    in_process = report["in_process"]  # the model file played in-process
    assert in_process["kind"] == "model" and in_process["decision_latency"]["n"] > 0
    assert "error" in report["served"]  # --no-serve: not measured


@pytest.mark.slow
def test_the_benchmark_through_osrs_rllib_serve() -> None:
    done = _run("--ticks", "10", "--tick-ms", "50", "--latency-ticks", "30", "--latency-tick-ms", "50", "--json",
                timeout=1200)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["served"]["kind"] == "served" and report["served"]["decision_latency"]["n"] > 0
