"""Starting `osrs-rllib serve` where another Ray already runs (a training run): the dashboard's port, the
cluster's free CPUs, and Ray's start-up errors, each reported in one line that names our flag.

Nothing here starts a Ray of its own: the checks run before Ray would start, on the shared test Ray, or in a
`serve --address` subprocess that joins the shared test Ray and must refuse at once.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from common.ray_errors import RayFlags, explain_ray_start_error, free_port_near, port_in_use
from serving.runtime import SERVE_FLAGS, ServeError, ServeSettings, Service, free_port, unreachable

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def held_port() -> Iterator[int]:
    """A port something listens on, as a training run's dashboard holds 8265."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        yield int(s.getsockname()[1])


def test_a_taken_default_dashboard_port_moves_to_a_free_one(held_port: int) -> None:
    said: list[str] = []
    service = Service(ServeSettings(models_dir=None, dashboard=True), echo=said.append)
    import serving.runtime as runtime

    default = runtime.DEFAULT_DASHBOARD_PORT
    runtime.DEFAULT_DASHBOARD_PORT = held_port
    try:
        chosen = service._dashboard_port()
    finally:
        runtime.DEFAULT_DASHBOARD_PORT = default
    assert chosen != held_port and not port_in_use("127.0.0.1", chosen)
    assert said == [f"the dashboard's port {held_port} is in use (another Ray, e.g. a training run): using {chosen}"]


def test_a_taken_dashboard_port_given_by_the_user_names_our_flags(held_port: int) -> None:
    service = Service(ServeSettings(models_dir=None, dashboard=True, dashboard_port=held_port))
    with pytest.raises(ServeError) as info:
        service._dashboard_port()
    message = str(info.value)
    assert f"--dashboard-port {held_port}" in message and "--no-dashboard" in message and "\n" not in message


def test_free_port_near_prefers_the_next_port(held_port: int) -> None:
    nxt = free_port_near("127.0.0.1", held_port)
    assert nxt > held_port and not port_in_use("127.0.0.1", nxt)


RAY_DASHBOARD_TAKEN = ValueError(
    "Failed to bind to 127.0.0.1:8265 because it's already occupied. You can use `ray start --dashboard-port ...` "
    "or `ray.init(dashboard_port=...)` to select a different port.")
TRAIN_FLAGS = RayFlags(address="--address", dashboard_port="--set ray.dashboard_port=PORT",
                       no_dashboard="--set ray.include_dashboard=false", num_cpus="--set ray.num_cpus=N")


@pytest.mark.parametrize(
    ("exc", "address", "flags", "expected"),
    [
        (RAY_DASHBOARD_TAKEN, None, SERVE_FLAGS, ["127.0.0.1:8265 is in use", "--dashboard-port", "--no-dashboard"]),
        (RAY_DASHBOARD_TAKEN, None, TRAIN_FLAGS, ["--set ray.dashboard_port=PORT", "ray.include_dashboard=false"]),
        (ConnectionError("Could not find any running Ray instance. Please specify the one to connect to by setting "
                         "`--address` flag or `RAY_ADDRESS` environment variable."), "auto", SERVE_FLAGS,
         ["no Ray cluster answers on this machine", "ray start --head", "leave --address out"]),
        (ValueError("When connecting to an existing cluster, num_cpus and num_gpus must not be provided."), "auto",
         SERVE_FLAGS, ["--num-cpus sets the CPUs of a Ray this command starts", "leave --num-cpus out"]),
        (Exception("The current node timed out during startup."), None, SERVE_FLAGS,
         ["did not start in time", "--ray-start-timeout"]),
        (RuntimeError("something\nnew"), None, SERVE_FLAGS, ["cannot start a local Ray: something new"]),
    ],
)
def test_ray_start_errors_are_told_in_our_words(exc: BaseException, address: str | None, flags: RayFlags,
                                                expected: list[str]) -> None:
    message = explain_ray_start_error(exc, flags, address)
    assert "\n" not in message and "ray.init(" not in message
    if address is None:  # a Ray of our own: joining a (training run's) cluster is never the advice
        assert flags.address not in message
    for part in expected:
        assert part in message, message


def test_an_address_nobody_answers_is_refused_at_once() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # bound, not listening: connections are refused
        problem = unreachable(f"127.0.0.1:{port}", timeout_s=2)
    assert problem is not None and "--address" in problem and "no Ray cluster answers" in problem
    assert "not HOST:PORT" in (unreachable("nonsense") or "")


def test_too_few_free_cpus_is_one_line_naming_the_fix(ray_session: None) -> None:
    import ray

    total = ray.cluster_resources()["CPU"]
    service = Service(ServeSettings(models_dir=None, address="auto", replicas=int(total) + 1, cpus_per_replica=1))
    with pytest.raises(ServeError) as info:
        service._check_cpus()
    message = str(info.value)
    assert "\n" not in message and "--cpus-per-replica 0" in message and f"needs {int(total) + 1}" in message
    Service(ServeSettings(models_dir=None, address="auto", replicas=64, cpus_per_replica=0))._check_cpus()


@pytest.mark.timeout(300)
def test_serve_joining_a_cluster_whose_cpus_are_held_refuses_at_once(ray_session: None, tmp_path: Path) -> None:
    """What `serve --address auto` beside a training run used to do silently for minutes: the replica's CPU
    is held (here by an actor holding every CPU of the test Ray), so it must refuse in one line instead."""
    import ray

    @ray.remote
    class Holder:
        def ready(self) -> bool:
            return True

    holder = Holder.options(num_cpus=ray.cluster_resources()["CPU"]).remote()  # type: ignore[attr-defined]
    try:
        ray.get(holder.ready.remote(), timeout=120)
        address = ray.get_runtime_context().gcs_address
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        env.pop("RAY_ADDRESS", None)
        start = time.monotonic()
        (tmp_path / "models").mkdir()
        proc = subprocess.run(
            [sys.executable, "-m", "osrs_rllib.cli", "serve", str(tmp_path / "models"), "--address", address,
             "--port", str(free_port())],
            cwd=REPO, env=env, capture_output=True, text=True, timeout=240, check=False)
        took = time.monotonic() - start
    finally:
        ray.kill(holder)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1 and "CPUs free" in errors[0] and "--cpus-per-replica 0" in errors[0], proc.stderr
    print(f"refused after {took:.1f} s: {errors[0]}")
