"""`benchmarks/sampler_step.py` runs as a user runs it (a few fragments of the smoke config), so that it cannot rot.

The figures are not checked: the benchmark prints numbers and asserts nothing."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from envs.nh.core_engine import core_available

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.integration
def test_sampler_step_times_both_paths() -> None:
    args = ["--config", "configs/smoke.yml", "--envs", "4", "--fragment", "8", "--fragments", "1", "--json"]
    proc = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "sampler_step.py"), *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout.splitlines()[-1])
    assert report["array_path_applies"] == core_available()
    for path in ("dict_path", "array_path"):
        assert report[path]["env"] > 0 and report[path]["inference"] > 0 and report[path]["total"] > 0, path
