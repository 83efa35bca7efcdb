"""`osrs-rllib serve --address` on a real two-node Ray cluster on this machine: two replicas that can only fit
one per node (each node has one CPU, each replica asks for one), the proxy on the node where `serve` runs, and
every reply equal to the model file's own action. Slow (about a minute): run with ``pytest -m slow``.

The cluster comes from `ray.cluster_utils.Cluster` in a child process, so that shutting it down stops only
its own processes (``ray stop`` would stop every Ray on the machine).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from policies.model_file import load_model_file
from serving.client import ServeClient
from serving.runtime import free_port
from tests.serving.conftest import write_model
from tests.serving.test_server import inputs

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

REPO = Path(__file__).resolve().parents[2]

CLUSTER = textwrap.dedent("""
    import sys
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes()
    print(cluster.address, flush=True)
    sys.stdin.read()  # until the test closes it
    cluster.shutdown()
""")

STATUS = textwrap.dedent("""
    import sys
    import ray
    from ray import serve

    ray.init(address=sys.argv[1], log_to_driver=False)
    print(len(ray.nodes()), serve.status().applications["osrs_rllib"].deployments["policies"].replica_states)
""")


def _read_line_until(proc: subprocess.Popen[str], needle: str, timeout_s: float) -> list[str]:
    lines: list[str] = []
    deadline = time.monotonic() + timeout_s
    assert proc.stdout is not None
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line)
        if needle in line:
            return lines
    raise AssertionError(f"no {needle!r} within {timeout_s:g} s; output:\n{''.join(lines)[-3000:]}")


def test_serve_on_a_two_node_cluster(tmp_path: Path) -> None:
    env = {**os.environ, "RAY_AUTH_MODE": "token", "PYTHONUNBUFFERED": "1"}
    env.pop("RAY_ADDRESS", None)
    models = tmp_path / "models"
    write_model(models / "latest.nhmodel", 5)
    cluster = subprocess.Popen([sys.executable, "-c", CLUSTER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True, env=env, cwd=REPO)
    server: subprocess.Popen[str] | None = None
    try:
        assert cluster.stdout is not None
        address = cluster.stdout.readline().strip()
        assert ":" in address, "the cluster did not start"
        port = free_port()
        server = subprocess.Popen(
            [sys.executable, "-m", "osrs_rllib.cli", "serve", str(models), "--address", address, "--replicas", "2",
             "--cpus-per-replica", "1", "--port", str(port), "--reload-s", "0"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, cwd=REPO,
        )
        _read_line_until(server, f"127.0.0.1:{port}", 300)

        status = subprocess.run([sys.executable, "-c", STATUS, address], capture_output=True, text=True, env=env,
                                cwd=REPO, timeout=120, check=False)
        nodes, states = status.stdout.strip().splitlines()[-1].split(" ", 1)
        assert nodes == "2" and "'RUNNING': 2" in states, status.stdout + status.stderr[-2000:]

        model = load_model_file(models / "latest.nhmodel")
        obs, masks = inputs(64, 9)
        expected = model.act(obs, masks.astype(np.float32), deterministic=True).tolist()
        with ServeClient("127.0.0.1", port, timeout_s=60) as client:
            got = [client.act("latest", obs[i], masks[i]).action for i in range(len(obs))]
        assert got == expected

        server.send_signal(signal.SIGINT)
        assert server.wait(timeout=120) == 0
    finally:
        if server is not None and server.poll() is None:
            server.kill()
        if cluster.stdin is not None:
            cluster.stdin.close()
        try:
            cluster.wait(timeout=120)
        except subprocess.TimeoutExpired:
            cluster.kill()
