"""`benchmarks/play_latency.py` runs for a moment as a user runs it, so that it cannot rot (STYLE 17): the figures
are printed, not checked. The run through `osrs-rllib serve` (Ray starts from scratch) is `slow`."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _run(*args: str, timeout: int = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(REPO / "benchmarks" / "play_latency.py"), *args], cwd=REPO,
                          capture_output=True, text=True, timeout=timeout, check=False)  # fmt: skip


def test_the_benchmark_prints_its_figures(tiny_model: Path) -> None:
    done = _run("--ticks", "10", "--tick-ms", "20", "--latency-ticks", "10", "--latency-tick-ms", "20", "--no-serve",
                "--model", str(tiny_model))  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "machine:" in done.stdout
    # at least the 10 ticks the person saw (the clock may run one more before the person's goodbye arrives)
    assert re.search(r"tick timing: 1\d ticks at 20 ms", done.stdout) and "p99" in done.stdout, done.stdout
    assert "model file in-process" in done.stdout


@pytest.mark.slow
def test_the_benchmark_through_osrs_rllib_serve() -> None:
    done = _run("--ticks", "10", "--tick-ms", "50", "--latency-ticks", "30", "--latency-tick-ms", "50", "--json",
                timeout=1200)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["served"]["kind"] == "served" and report["served"]["decision_latency"]["n"] > 0
