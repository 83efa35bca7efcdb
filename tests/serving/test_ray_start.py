"""`serving.ray_start` relies on Ray's internals (Ray 2.60): these tests pin each one, so that a Ray upgrade that
moves them fails here, by name, instead of bringing back start-ups that abort on a busy machine.

And the test session's own Ray (started through `init_ray`, `tests/conftest.py`) shows the result: its raylet
was given every agent port, so it never waits for a port file.
"""

from __future__ import annotations

import inspect
import os
import socket
from pathlib import Path

from common.processes import descendants
from serving.ray_start import AGENT_PORTS, CHOSEN_PORT_LOW, ephemeral_low, free_ports, local_start_kwargs


def test_ray_params_take_the_agent_ports() -> None:
    from ray._private.parameter import RayParams

    parameters = inspect.signature(RayParams.__init__).parameters
    assert set(AGENT_PORTS) <= set(parameters)


def test_the_driver_waits_for_its_node_through_services_get_node() -> None:
    """The fixed 30 s wait polls ``ray._private.services.get_node`` (looked up at each call, so replaceable)."""
    import ray._private.node as node

    source = inspect.getsource(node.Node.__init__)
    assert "raylet_start_wait_time_s = 30" in source
    assert "ray._private.services.get_node(" in source


def test_the_raylet_is_started_through_services_start_ray_process() -> None:
    """Where the raylet's command gets the agent's listen port (`_raylet_told_listen_port`)."""
    import ray._private.services as services

    assert "process_info = start_ray_process(" in inspect.getsource(services.start_raylet)
    assert "--dashboard_agent_command=" in inspect.getsource(services.start_raylet)


def test_the_python_side_waits_read_what_init_ray_sets() -> None:
    import ray._private.node as node
    import ray._private.services as services

    assert "RAY_gcs_server_port_wait_time_s" in inspect.getsource(node)
    assert "ray_constants.RAY_DASHBOARD_STARTUP_TIMEOUT_S" in inspect.getsource(services.start_api_server)


def test_the_budget_goes_to_rays_system_config() -> None:
    config = local_start_kwargs(180.0)["_system_config"]
    assert config == {"agent_register_timeout_ms": 180_000, "worker_register_timeout_seconds": 180,
                      "health_check_timeout_ms": 180_000}  # fmt: skip


def _cmdline(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
    except OSError:
        return []


def test_the_raylet_is_given_every_agent_port(ray_session: None) -> None:
    """A port of 0 makes the raylet wait (15 s, fixed) for the agent's port file; none is 0."""
    raylets = [c for c in map(_cmdline, descendants(os.getpid())) if c and c[0].endswith("raylet")]
    assert len(raylets) == 1, "the test session's Ray runs one raylet below this process"
    flags = dict(arg.lstrip("-").split("=", 1) for arg in raylets[0] if arg.startswith("--") and "=" in arg)
    for flag in ("metrics-agent-port", "metrics_export_port", "runtime_env_agent_port",
                 "dashboard_agent_listen_port"):
        assert 0 < int(flags[flag]) < ephemeral_low(), flag  # below what the kernel hands out meanwhile
    agent = flags["dashboard_agent_command"]
    listen = next(a for a in agent.split() if a.startswith("--listen-port="))
    grpc = next(a for a in agent.split() if a.startswith("--grpc-port="))
    assert listen.split("=")[1] == flags["dashboard_agent_listen_port"]  # the raylet waits for no file
    assert grpc.split("=")[1] == flags["metrics-agent-port"]


def test_the_drivers_failure_signal_handler_has_a_switch_read_at_connect() -> None:
    """`_driver_without_failure_signal_handler` sets this module constant, which the compiled core worker reads
    when the driver connects (through ``ray._private.worker.connect``, looked up at call time by `ray.init`)."""
    import ray._private.ray_constants as ray_constants
    import ray._private.worker as worker
    import ray._raylet

    assert isinstance(ray_constants.RAY_DISABLE_FAILURE_SIGNAL_HANDLER, bool)
    assert b"RAY_DISABLE_FAILURE_SIGNAL_HANDLER" in Path(ray._raylet.__file__).read_bytes()
    assert "    connect(\n" in inspect.getsource(worker.init)


def test_the_dashboard_head_is_started_by_node_start_api_server() -> None:
    """`_without_api_server` replaces this method while a Ray without a dashboard starts."""
    from ray._private.node import Node

    assert "self.start_api_server(" in inspect.getsource(Node.start_head_processes)
    assert list(inspect.signature(Node.start_api_server).parameters) == ["self", "include_dashboard",
                                                                          "raise_on_failure"]  # fmt: skip


def test_a_ray_without_a_dashboard_runs_no_dashboard_head_and_still_works(ray_session: None) -> None:
    """The test session's Ray (no dashboard, as `serve` by default) has no ``dashboard.py`` process; its tasks
    and actors run (the Serve tests deploy on it), and its dashboard agent, which the raylet needs, runs."""
    import ray

    commands = [" ".join(c) for c in map(_cmdline, descendants(os.getpid()))]
    assert not [c for c in commands if "dashboard/dashboard.py" in c]
    assert [c for c in commands if "dashboard/agent.py" in c or "DashboardAgent" in c]
    assert ray.get(ray.remote(lambda: 41 + 1).remote(), timeout=60) == 42


def test_free_ports_are_distinct_bindable_and_below_the_ephemeral_range() -> None:
    ports = free_ports(5)
    assert len(set(ports)) == 5
    assert all(CHOSEN_PORT_LOW <= port < ephemeral_low() for port in ports)
    for port in ports:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind(("127.0.0.1", port))


def _two_free_ports_in_a_row() -> int:
    """A port that is free, with the next one free too."""
    for _ in range(50):
        base = free_ports(1)[0]
        try:
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
                s.bind(("127.0.0.1", base + 1))
            return base
        except OSError:
            continue
    raise AssertionError("no two free ports in a row below the ephemeral range")


def test_free_ports_skip_a_port_in_use() -> None:
    """Of a two-port range whose first port a listener holds, the second is the one chosen, every time."""
    base = _two_free_ports_in_a_row()
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as held:
        held.bind(("127.0.0.1", base))
        held.listen()
        for _ in range(20):
            assert free_ports(1, low=base, high=base + 2) == [base + 1]


def test_free_ports_take_the_kernels_choice_when_the_range_holds_too_few() -> None:
    """Every port of the range held: the ports come from the kernel instead, still distinct and free."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        taken = held.getsockname()[1]
        ports = free_ports(2, low=taken, high=taken + 1)
    assert len(set(ports)) == 2 and taken not in ports
