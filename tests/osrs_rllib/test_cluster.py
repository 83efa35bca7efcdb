"""A real two-node Ray cluster on this machine (`ray start --head` plus a second `ray start`), and the smoke
config trained on it with ``--address``. Slow (about a minute): run with ``pytest -m slow``."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from osrs_rllib.experiments.layout import Experiment

REPO = Path(__file__).resolve().parents[2]
RAY = str(Path(sys.executable).with_name("ray"))

pytestmark = pytest.mark.slow


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_train_smoke_on_a_two_node_cluster(tmp_path: Path) -> None:
    # Token authentication must be on for every process of the cluster and its clients alike.
    env = {**os.environ, "RAY_AUTH_MODE": "token"}
    env.pop("RAY_ADDRESS", None)
    port = free_port()
    address = f"127.0.0.1:{port}"

    def ray(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([RAY, *args], env=env, capture_output=True, text=True, timeout=180, check=False)

    head = ray("start", "--head", f"--port={port}", "--num-cpus=1", "--include-dashboard=false")
    assert head.returncode == 0, head.stderr[-2000:]
    try:
        worker = ray("start", f"--address={address}", "--num-cpus=1")
        assert worker.returncode == 0, worker.stderr[-2000:]
        nodes = subprocess.run(
            [sys.executable, "-c", f"import ray; ray.init(address='{address}'); print(len(ray.nodes()))"],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert nodes.stdout.strip().splitlines()[-1] == "2", nodes.stderr[-2000:]
        train = subprocess.run(
            [
                sys.executable,
                "-m",
                "osrs_rllib.cli",
                "train",
                "configs/smoke.yml",
                "--address",
                address,
                "--set",
                f"experiments_dir={tmp_path}",
                "--set",
                "runners.num_env_runners=2",
                "--set",
                "runners.num_cpus_per_env_runner=1",
            ],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        assert train.returncode == 0, train.stdout[-3000:] + train.stderr[-3000:]
        exp = Experiment(tmp_path, "smoke")
        assert exp.latest_checkpoint() is not None and exp.latest_checkpoint().iteration == 3
        assert (exp.models_dir / "latest.nhmodel").exists()
    finally:
        ray("stop", "--force")
