"""Before Ray starts: is the dashboard's port free, does a cluster answer at ``--address``, and cleaning up
after a failed start.

Why apart from the trainer loop: each check turns a minutes-long Ray retry or an error naming Ray's options
into one line naming ours (``ray.dashboard_port``, ``--address``), and none of it needs RLlib.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from common.ray_errors import RAY_DASHBOARD_PORT, dashboard_port_beside_others, port_in_use
from osrs_rllib.config import RayConfig

RAY_START_ATTEMPTS = 2
"""How often a local Ray is started before giving up. Ray's start-up limits are fixed (the raylet waits about 15 s
for its dashboard agent, the driver 30 s for the raylet, `ray._private.node`), and on a 2-core machine busy with
other work the agent's imports alone can take longer: one more try costs little next to a run that never starts."""
RAY_START_TIMEOUT_MESSAGE = "timed out during startup"


def _end_processes(procs: list[Any], grace_s: float = 5.0) -> None:
    """SIGTERM, then SIGKILL what is left after `grace_s`: what a failed `ray.init` started must not linger."""
    import psutil

    for proc in procs:
        try:
            proc.terminate()
        except psutil.Error:
            pass
    _, alive = psutil.wait_procs(procs, timeout=grace_s)
    for proc in alive:
        try:
            proc.kill()
        except psutil.Error:
            pass


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


@contextlib.contextmanager
def _our_sigterm_handler_kept() -> Iterator[None]:
    """While `ray.init` runs, keep the SIGTERM handler the command installed (its clean stop).

    Why: `ray.init` installs handlers of its own for the time it runs (`sys.exit` in whatever frame the signal
    lands in, through ``ray._private.utils.set_sigterm_handler``); a stop sent in those seconds (`osrs-rllib stop`
    right after `--detach`) then either failed the run or, landing in a frame that swallows exceptions (logging's
    lock release), was lost and the run trained on. With ours kept, the stop is recorded and honoured as soon as
    Ray is up. The trainer installs its handler again after `ray.init` in any case.
    `tests/osrs_rllib/test_framework_internals.py` pins the function this replaces for the call.
    """
    import ray._private.utils as ray_utils

    original = ray_utils.set_sigterm_handler
    ray_utils.set_sigterm_handler = lambda handler: None
    try:
        yield
    finally:
        ray_utils.set_sigterm_handler = original


def start_ray(rc: RayConfig, echo: Callable[[str], None], record_processes: Callable[[list[int]], None]) -> str | None:
    """Start an embedded Ray or join ``rc.address``, trying a local start once more after Ray's fixed start-up
    limits run out; a Ray of our own has its processes recorded. Returns the dashboard's URL, if there is one.

    Raises:
        TrainingError: The port is taken, the cluster does not answer, or Ray did not start.
    """
    import ray

    kwargs: dict[str, Any] = {"log_to_driver": False, "configure_logging": False}
    if rc.address:
        check_cluster_reachable(rc.address)
        kwargs["address"] = rc.address
    else:
        kwargs.update(
            num_cpus=rc.num_cpus,
            include_dashboard=rc.include_dashboard,
            dashboard_host=rc.dashboard_host,
            dashboard_port=dashboard_port(rc, echo),
        )
    import psutil

    for attempt in range(1, RAY_START_ATTEMPTS + 1):
        before = {p.pid for p in psutil.Process().children(recursive=True)}
        try:
            with _our_sigterm_handler_kept():
                context = ray.init(**kwargs)
            break
        except Exception as exc:  # Ray raises plain `Exception` too, e.g. when its node misses its start-up limit
            ray.shutdown()
            _end_processes([p for p in psutil.Process().children(recursive=True) if p.pid not in before])
            where = rc.address or "a local Ray"
            if rc.address or RAY_START_TIMEOUT_MESSAGE not in str(exc) or attempt == RAY_START_ATTEMPTS:
                raise TrainingError(f"cannot start or join Ray at {where}: {exc}") from None
            echo(
                f"Ray's node did not come up within Ray's fixed start-up limits (a busy machine?): starting it "
                f"again ({attempt + 1}/{RAY_START_ATTEMPTS})"
            )
    if not rc.address:  # a Ray of our own: remember its processes, for the next start after a kill -9
        record_processes([p.pid for p in psutil.Process().children(recursive=True)])
    url = getattr(context, "dashboard_url", None)
    if url:
        url = url if url.startswith("http") else f"http://{url}"
        echo(f"Ray dashboard: {url}")
        from osrs_rllib.jobs import dashboard_login_hint

        echo(dashboard_login_hint())
    return url or None
