"""Smoke test of the compiled core's part of `benchmarks/sim_throughput.py` (`--core`): it runs, as a user
runs it, and reports both engines for every tick-only scenario. Figures are printed, never asserted."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.envs.core_snapshots import compiled_core

compiled_core(testing=False)

REPO = Path(__file__).resolve().parents[2]


def test_sim_throughput_core_json() -> None:
    proc = subprocess.run(
        [
            sys.executable,
            str(REPO / "benchmarks" / "sim_throughput.py"),
            *("--seconds", "0.3", "--json", "--scenario", "random_vs_random", "--core", "--batch", "8"),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)["core_with_rewards"]
    assert [r["scenario"] for r in rows] == ["baseline_vs_baseline", "random_vs_random", "random_vs_baseline"]
    assert all(r["python_ticks_per_s"] > 0 and r["core_ticks_per_s"] > 0 for r in rows)
