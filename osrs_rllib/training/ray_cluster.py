"""Before Ray starts: is the dashboard's port free, does a cluster answer at ``--address``; then starting it
through the one start-up path every command shares (`serving.ray_start`).

Why apart from the trainer loop: each check turns a minutes-long Ray retry or an error naming Ray's options
into one line naming ours (``ray.dashboard_port``, ``--address``), and none of it needs RLlib.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from common.ray_errors import RAY_DASHBOARD_PORT, dashboard_port_beside_others, port_in_use
from osrs_rllib.config import RayConfig, ray_cpus


class TrainingError(Exception):
    """Training cannot start (bad experiment state, unreachable cluster); the message says why."""


CLUSTER_CONNECT_TIMEOUT_S = 5.0
"""How long joining a cluster may take to open a TCP connection to its head before we give up with a clear
message; `ray.init` itself would retry for minutes with only its own time-out lines."""


def check_port_free(host: str, port: int) -> None:
    """The dashboard's port must be free before Ray starts: Ray's own error names its options, not ours.

    Raises:
        TrainingError: Something listens on ``host:port``; the message names ``ray.dashboard_port``.
    """
    import socket

    with socket.socket() as s:
        try:
            s.bind((host, port))
        except OSError:
            raise TrainingError(
                f"ray.dashboard_port {port} on {host} is in use (another Ray or program): pick another with "
                f"--set ray.dashboard_port={port + 1}, or turn the dashboard off with --set ray.include_dashboard=false"
            ) from None


def check_cluster_reachable(address: str, timeout: float = CLUSTER_CONNECT_TIMEOUT_S) -> None:
    """Fail fast, naming `address`, when no Ray head answers there (``auto``: the one this machine knows of).

    Raises:
        TrainingError: No cluster address is known (``auto``), the address is malformed, or nothing accepts
            a TCP connection on it within `timeout` seconds.
    """
    import socket

    target = address
    if address == "auto":
        target = os.environ.get("RAY_ADDRESS", "")
        if not target:
            current = Path(os.environ.get("RAY_TMPDIR", "/tmp")) / "ray" / "ray_current_cluster"
            target = current.read_text(encoding="utf-8").strip() if current.exists() else ""
        if not target:
            raise TrainingError(
                "--address auto: no running Ray cluster is known on this machine (no RAY_ADDRESS and no "
                "`ray start --head` here); start one, or give HOST:PORT of the head node"
            )
    host, sep, port = target.removeprefix("ray://").rpartition(":")
    if not sep or not host or not port.isdigit():
        raise TrainingError(
            f"--address {address!r}: expected HOST:PORT of a Ray head node (e.g. 10.0.0.5:6379) or auto"
        )
    try:
        with socket.create_connection((host, int(port)), timeout=timeout):
            pass
    except OSError as exc:
        reason = "timed out" if isinstance(exc, TimeoutError) else (exc.strerror or str(exc))
        raise TrainingError(
            f"cannot reach a Ray cluster at {target} ({reason} after at most {timeout:g} s): is `ray start --head` "
            "running there and the port open?"
        ) from None


def dashboard_port(rc: RayConfig, echo: Callable[[str], None]) -> int:
    """`ray.dashboard_port`, or with none set, 8265 or the next free port when another Ray (a second run, an
    exploit run, `serve`) holds it: two runs on one machine must not collide. Ray binds the port even with
    `include_dashboard: false` (its head keeps a minimal dashboard), so the choice is made either way.

    Raises:
        TrainingError: The port set in the config is in use; the message names ``ray.dashboard_port``.
    """
    port = rc.dashboard_port or RAY_DASHBOARD_PORT
    if not port_in_use(rc.dashboard_host, port):
        return port
    if rc.dashboard_port is not None and rc.include_dashboard:
        check_port_free(rc.dashboard_host, port)  # raises, naming our key
    other = dashboard_port_beside_others(rc.dashboard_host, port)
    if rc.include_dashboard:
        echo(f"the dashboard's port {port} is in use (another Ray, e.g. another training run): using {other}")
    return other


def start_ray(rc: RayConfig, echo: Callable[[str], None], record_processes: Callable[[list[int]], None],
              should_stop: Callable[[], bool] = lambda: False) -> str | None:
    """Start an embedded Ray or join ``rc.address`` (`serving.ray_start.init_ray`: the start-up path `serve`
    takes too, with ``ray.start_timeout_s`` as its budget); a Ray of our own has its processes recorded.
    Returns the dashboard's URL, if there is one.

    Raises:
        TrainingError: The port is taken, the cluster does not answer, or Ray did not start in time.
        RayStartStopped: `should_stop` turned true while Ray started; what it had started is gone.
    """
    import psutil

    from serving.ray_start import RayStartStopped, RayStartTimedOut, init_ray

    kwargs: dict[str, Any] = {"log_to_driver": False, "configure_logging": False}
    if rc.address:
        check_cluster_reachable(rc.address)
        kwargs["address"] = rc.address
    else:
        kwargs.update(
            # "local": a Ray of its own even where `ray start` left a cluster (or its address file) on this machine,
            # which a plain `ray.init()` would join instead (as `serve` does, `serving/runtime.py`)
            address="local",
            num_cpus=ray_cpus(rc.num_cpus),
            include_dashboard=rc.include_dashboard,
            dashboard_host=rc.dashboard_host,
            dashboard_port=dashboard_port(rc, echo),
        )
    try:
        context = init_ray(kwargs, local=not rc.address, budget_s=rc.start_timeout_s, echo=echo,
                           should_stop=should_stop, hint="--set ray.start_timeout_s=SECONDS")
    except RayStartStopped:  # a stop, not a failure: the caller records the run as stopped
        raise
    except RayStartTimedOut as exc:
        raise TrainingError(f"Ray did not start within ray.start_timeout_s = {rc.start_timeout_s:g} s ({exc}): "
                            "the machine may be very busy; give it longer with --set ray.start_timeout_s=SECONDS") \
            from None
    except Exception as exc:  # Ray raises plain `Exception` too
        from common.ray_errors import RayFlags, explain_ray_start_error

        flags = RayFlags(address="--set ray.address=HOST:PORT", dashboard_port="--set ray.dashboard_port=PORT",
                         no_dashboard="--set ray.include_dashboard=false", num_cpus="--set ray.num_cpus=N",
                         start_timeout="--set ray.start_timeout_s=SECONDS")
        raise TrainingError(explain_ray_start_error(exc, flags, rc.address)) from None
    if not rc.address:  # a Ray of our own: remember its processes, for the next start after a kill -9
        record_processes([p.pid for p in psutil.Process().children(recursive=True)])
    url = getattr(context, "dashboard_url", None)
    if url:
        url = url if url.startswith("http") else f"http://{url}"
        echo(f"Ray dashboard: {url}")
        from osrs_rllib.experiments import dashboard_login_hint

        echo(dashboard_login_hint())
    return url or None
