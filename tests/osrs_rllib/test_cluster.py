"""A real two-node Ray cluster on this machine (`ray start --head` plus a second `ray start --address`, one CPU each)
and the main job's config trained on it for three iterations with ``--address``: its env runners land on both
nodes (``run.json``'s ``machine.runner_nodes``), and when the cluster is stopped nothing of it is left running.

The cluster is stopped by its own processes (those naming its GCS port), not ``ray stop``, which ends every Ray on
the machine. Slow (a minute or two): run with ``pytest -m slow``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from serving.runtime import free_port

REPO = Path(__file__).resolve().parents[2]
RAY = str(Path(sys.executable).with_name("ray"))

pytestmark = pytest.mark.slow


def cluster_processes(port: int) -> list[psutil.Process]:
    """Every process of the cluster whose GCS listens on `port`: its command line names the port (GCS, raylets,
    agents, dashboards, workers)."""
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        cmdline = " ".join(proc.info.get("cmdline") or [])
        if f":{port}" in cmdline or f"--gcs_server_port={port}" in cmdline or f"--gcs-server-port={port}" in cmdline:
            found.append(proc)
    return found


def stop_cluster(port: int) -> None:
    """End the cluster's processes, and its address file if it is still the current one (as `ray stop` does for
    every Ray on the machine; a `ray.init()` would otherwise try to join the dead cluster)."""
    from ray._common.utils import get_ray_address_file

    address_file = Path(get_ray_address_file(None))
    if address_file.is_file() and address_file.read_text().strip().endswith(f":{port}"):
        address_file.unlink()
    procs = cluster_processes(port)
    for proc in procs:
        try:
            proc.terminate()
        except psutil.NoSuchProcess:
            pass
    _, alive = psutil.wait_procs(procs, timeout=10)
    for proc in alive:
        try:
            proc.kill()
        except psutil.NoSuchProcess:
            pass
    psutil.wait_procs(alive, timeout=10)


def test_the_main_job_on_a_two_node_cluster(tmp_path: Path) -> None:
    env = {**os.environ, "RAY_AUTH_MODE": "token"}  # token authentication: every process of the cluster alike
    env.pop("RAY_ADDRESS", None)
    port = free_port()
    address = f"127.0.0.1:{port}"

    def ray(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([RAY, *args], env=env, capture_output=True, text=True, timeout=180, check=False)

    head = ray("start", "--head", f"--port={port}", "--num-cpus=1", "--include-dashboard=false")
    try:
        assert head.returncode == 0, head.stderr[-2000:]
        worker = ray("start", f"--address={address}", "--num-cpus=1")
        assert worker.returncode == 0, worker.stderr[-2000:]
        train = subprocess.run(
            [sys.executable, "-m", "osrs_rllib.cli", "train", "configs/nh.yml", "--address", address,
             "--set", f"experiments_dir={tmp_path}", "--set", "stop.iterations=3", "--set", "stop.minutes=null",
             "--set", "evaluation.interval=0", "--set", "checkpoint.keep_best=false", "--set", "checkpoint.interval=0",
             "--set", "logging.live=false"],
            cwd=REPO, env=env, capture_output=True, text=True, timeout=900, check=False,
        )  # fmt: skip
        assert train.returncode == 0, train.stdout[-3000:] + train.stderr[-3000:]
        run = json.loads((tmp_path / "nh" / "run.json").read_text())
        machine = run["machine"]
        assert machine["cpus"] == 2 and machine["on_cluster"] and machine["num_env_runners"] == 2  # auto: 2 CPUs
        assert sorted(machine["runner_nodes"].values()) == [1, 1], machine  # one runner on each node
        assert "machine: 2 CPUs (the cluster's): 2 env runners, the learner on cpu" in train.stdout
        assert (tmp_path / "nh" / "models" / "latest.nhmodel").exists()
    finally:
        stop_cluster(port)
    time.sleep(2)
    left = [f"{p.pid} {' '.join(p.cmdline())[:120]}" for p in cluster_processes(port) if p.is_running()]
    assert not left, left
