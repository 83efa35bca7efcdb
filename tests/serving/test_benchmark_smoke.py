"""`benchmarks/serve_latency.py` runs briefly, as a user runs it, so that it cannot rot (figures unchecked)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_serve_latency_json() -> None:
    proc = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "serve_latency.py"), "--seconds", "0.5", "--json"],
        cwd=REPO, capture_output=True, text=True, timeout=500, check=False,
        env={**os.environ, "RAY_agent_register_timeout_ms": "300000"},
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert {r["clients"] for r in report["served"]} == {1, 16}
    assert all(r["requests"] > 0 and r["errors"] == 0 for r in report["served"])
    assert report["in_process"]["model_act_p50_ms"] > 0


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_serve_startup_json() -> None:
    """One start and SIGTERM of the real CLI: an answer, exit status 0, nothing left behind (figures unchecked)."""
    proc = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "serve_startup.py"), "--runs", "1", "--json",
         "--serve-args=--no-dashboard"],
        cwd=REPO, capture_output=True, text=True, timeout=500, check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    (run,) = json.loads(proc.stdout.strip().splitlines()[-1])["runs"]
    assert run["first_answer_s"] is not None and run["exit_code"] == 0 and run["left_behind"] == [], run
