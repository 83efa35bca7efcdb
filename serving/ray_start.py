"""Starting a private local Ray that comes up on a busy machine, and stops when asked while it starts.

One path for every command that starts Ray (`serve` through `serving.runtime`, `train` and `exploit` through
`osrs_rllib.training.ray_cluster`, the test suite's Ray): it lives in `serving/` because that is the lowest layer
allowed to import Ray that the application may use (`common/` is standard library only).

What a plain ``ray.init`` cannot survive on a 2-core laptop that is doing other work (Ray 2.60's own limits,
found in its source):

* **The raylet's wait for its agents' port files**: the raylet reads the ports its dashboard agent and runtime-env
  agent bound from files they write once their imports are done, and aborts (SIGABRT, "Timed out waiting for
  file .../metrics_agent_port_...") when a file is later than a fixed 15 s (``WaitForPersistedPort``;
  ray-project/ray #65983). The agents start even without the dashboard (the raylet refuses an empty agent
  command), so turning the dashboard off does not help. The raylet waits only for ports it was not given:
  `init_ray` picks the four agent ports itself (metrics agent, metrics export, dashboard agent HTTP,
  runtime-env agent), so that wait never happens and the agents' imports leave the critical path. It picks them
  below the kernel's ephemeral range (`free_ports`), where nothing else takes them before the agents bind.
* **The driver's 30 s wait for the node to register** (``ray._private.node``, a constant in the code, no
  setting): `_node_registration_waits_for` lets that wait run to our budget instead, saying so every
  `PROGRESS_EVERY_S`.
* **The GCS port file** (``RAY_gcs_server_port_wait_time_s``, 30 s), **the dashboard head's start-up**
  (``RAY_DASHBOARD_STARTUP_TIMEOUT_S``, 60 s), **the raylet's wait for the runtime-env agent and for workers to
  register** (`_system_config` ``agent_register_timeout_ms``, ``worker_register_timeout_seconds``): each gets
  the budget.

A private one-node Ray also goes without the autoscaler's monitor and (with ``log_to_driver=False``) the log
monitor: two Python processes, seconds of CPU each on the start's critical path, that it has no use for.

The budget is one number, `RAY_START_TIMEOUT_S` by default (``ray.start_timeout_s`` in a training config,
``--ray-start-timeout`` for ``serve``). While Ray starts, a line every `PROGRESS_EVERY_S` says so; a stop
request (`should_stop`) ends the start and everything it had started.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from common.stops import StartAborted, abort_on_signal, aborts_deferred

RAY_START_TIMEOUT_S = 180.0
"""Default start-up budget of a local Ray: what a 2-core machine busy with a training run and a build needs
(measured starts took up to ~80 s there), with room to spare. A quiet machine takes 5-10 s."""
PROGRESS_EVERY_S = 10.0
"""While Ray starts, a line this often: a start-up never waits silently."""
AGENT_PORTS = ("metrics_agent_port", "dashboard_agent_listen_port", "runtime_env_agent_port")
"""`ray._private.parameter.RayParams` fields that `ray.init` has no argument for (the metrics export port has
one, ``_metrics_export_port``)."""


class RayStartStopped(Exception):
    """A stop was requested while Ray was starting; what it had started is gone."""


class RayStartTimedOut(Exception):
    """Ray did not come up within the start-up budget."""


EPHEMERAL_RANGE_FILE = Path("/proc/sys/net/ipv4/ip_local_port_range")
"""Linux's ephemeral port range: where the kernel finds a port for ``bind(port 0)`` and for every outgoing
connection."""
EPHEMERAL_LOW_DEFAULT = 32768
"""The range's start where the file is missing (Linux's default; macOS and Windows start higher, at 49152)."""
CHOSEN_PORT_LOW = 20000
"""The lowest port `free_ports` chooses: above Ray's fixed ports (6379, 8076, 8265, 10001-10002) and the
ports users commonly give servers (8000-9999)."""
MIN_CHOSEN_RANGE = 1000
"""Below this many ports between `CHOSEN_PORT_LOW` and the ephemeral range, `free_ports` takes the kernel's
choice instead (a machine configured with a wide ephemeral range)."""


def ephemeral_low() -> int:
    """The first port of the kernel's ephemeral range."""
    try:
        return int(EPHEMERAL_RANGE_FILE.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return EPHEMERAL_LOW_DEFAULT


def free_ports(count: int, host: str = "127.0.0.1", *, low: int = CHOSEN_PORT_LOW,
               high: int | None = None) -> list[int]:
    """`count` distinct ports free right now, chosen at random below the ephemeral range.

    Why not the kernel's choice (``bind`` to port 0): such a port is closed again before the process it is
    meant for binds it, seconds later on a busy machine, and in the meantime the kernel hands the same range to
    every outgoing connection and to each Ray worker's server (Ray's workers bind port 0). A dashboard agent
    that then finds its port taken exits, and the raylet, which shares its fate, takes the whole local Ray
    down ("Failed to bind ... Address already in use", then missed heartbeats). Below the ephemeral range only
    a process that names a port takes it, and choosing at random (`random.SystemRandom`: each process draws
    its own) keeps two Rays starting side by side (the parallel test run) apart.

    Args:
        count: How many ports.
        host: The address they must be free on.
        low: The lowest port considered.
        high: One past the highest port considered; the ephemeral range's start by default. Fewer than
            `MIN_CHOSEN_RANGE` ports between the two fall back to the kernel's choice.
    """
    import random

    if high is None:
        high = ephemeral_low()
        if high - low < MIN_CHOSEN_RANGE:
            return _kernel_ports(count, host)
    socks: list[socket.socket] = []
    rng = random.SystemRandom()
    try:
        for candidate in rng.sample(range(low, high), min(high - low, 64 * count)):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                s.bind((host, candidate))
            except OSError:
                s.close()
                continue
            socks.append(s)
            if len(socks) == count:
                return [int(s.getsockname()[1]) for s in socks]
    finally:
        for s in socks:
            s.close()
    return _kernel_ports(count, host)


def _kernel_ports(count: int, host: str) -> list[int]:
    """`count` distinct ports the kernel chooses (held together while chosen, so they differ)."""
    socks = []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind((host, 0))
            socks.append(s)
        return [int(s.getsockname()[1]) for s in socks]
    finally:
        for s in socks:
            s.close()


def local_start_kwargs(budget_s: float) -> dict[str, Any]:
    """`ray.init` arguments, beyond the command's own, that give a local Ray's waits `budget_s`."""
    budget_ms = int(budget_s * 1000)
    return {
        "_system_config": {
            # The raylet's wait for the runtime-env agent to answer, and for a worker process to register.
            "agent_register_timeout_ms": budget_ms,
            "worker_register_timeout_seconds": int(budget_s),
            # The GCS's health check of the raylet: by default three seconds apart, ten seconds to answer, five
            # misses and the node is dead, and a local Ray with it. On a machine oversubscribed by other work a
            # raylet can miss that (seen once in the parallel test run); on one machine a raylet that stops
            # answering for good ends the driver's connection anyway, so its checks may wait as long as start-up.
            "health_check_timeout_ms": budget_ms,
        },
    }


@contextlib.contextmanager
def _agent_ports_given(ports: dict[str, Any]) -> Iterator[None]:
    """Give the raylet its agents' ports, so that it never waits (15 s, fixed) for their port files (and set
    the other node parameters in `ports`, e.g. ``no_monitor``).

    `ray.init` builds its parameters with ``ray._private.parameter.RayParams`` and has no argument for these
    ports; the ports are supplied as that class's defaults while `ray.init` runs. Without that private class
    (another Ray version) it does nothing: the raylet then waits for the files as before.
    `tests/serving/test_ray_start.py` pins the class and its fields.
    """
    try:
        import ray._private.parameter as parameter

        original = parameter.RayParams
    except (ImportError, AttributeError):
        yield
        return

    class _Params(original):  # type: ignore[misc, valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            for name, value in ports.items():
                if not kwargs.get(name):
                    kwargs[name] = value
            super().__init__(*args, **kwargs)

    parameter.RayParams = _Params
    try:
        yield
    finally:
        parameter.RayParams = original


@contextlib.contextmanager
def _without_api_server() -> Iterator[None]:
    """Start a local Ray without its dashboard head process when no dashboard was asked for.

    With ``include_dashboard=False`` Ray still starts the dashboard head (``dashboard.py``, only its usage-stats
    module) and waits for it to publish its address before it starts the raylet: on 2 cores about 2.5 s of the
    start's critical path and as many CPU seconds, for a process nothing of ours uses (Serve's controller, the
    replicas, our proxy and the trainer talk to the GCS and the raylet; the dashboard *agent*, which the raylet
    needs, still starts). Ray's state and job APIs, which live in that head, are then unavailable, as the
    dashboard is. Without the private method (another Ray version) it does nothing: the head starts as before.
    `tests/serving/test_ray_start.py` pins the method and checks a Ray started so runs tasks and Serve.
    """
    try:
        from ray._private.node import Node

        original = Node.start_api_server
    except (ImportError, AttributeError):
        yield
        return

    def skip(self: Any, *, include_dashboard: bool | None, raise_on_failure: bool) -> None:
        self._webui_url = None

    Node.start_api_server = skip
    try:
        yield
    finally:
        Node.start_api_server = original


@contextlib.contextmanager
def _raylet_told_listen_port() -> Iterator[None]:
    """Give the raylet the dashboard agent's HTTP port on its own command line.

    Ray gives that port to the agent (``--listen-port``) but not to the raylet, whose
    ``--dashboard_agent_listen_port`` flag then stays 0, so it waits for the agent's port file all the same
    (15 s, then SIGABRT) even when the port was chosen in advance. The raylet's command is completed from the
    agent command it carries, as ``ray._private.services.start_raylet`` hands it to ``start_ray_process``.
    `tests/serving/test_ray_start.py` checks the raylet's command line.
    """
    import ray._private.services as services

    original = services.start_ray_process

    def start_ray_process(command: list[str], *args: Any, **kwargs: Any) -> Any:
        if command and command[0] == services.RAYLET_EXECUTABLE:
            command = _with_listen_port(command)
        return original(command, *args, **kwargs)

    services.start_ray_process = start_ray_process
    try:
        yield
    finally:
        services.start_ray_process = original


def _with_listen_port(command: list[str]) -> list[str]:
    if any(arg.startswith("--dashboard_agent_listen_port=") for arg in command):
        return command
    agent = next((arg for arg in command if arg.startswith("--dashboard_agent_command=")), "")
    port = next((word.split("=", 1)[1] for word in agent.split() if word.startswith("--listen-port=")), "")
    if not port.isdigit() or int(port) == 0:
        return command
    return [*command, f"--dashboard_agent_listen_port={port}"]


@contextlib.contextmanager
def _node_registration_waits_for(budget_s: float, t0: float, should_stop: Callable[[], bool]) -> Iterator[None]:
    """Let the driver's wait for its node to register (30 s, fixed in ``ray._private.node``) last `budget_s`.

    The driver polls ``ray._private.services.get_node`` and gives up 30 s after its first try; the replacement
    polls on until the node answers, the budget runs out (`RayStartTimedOut`) or a stop is requested
    (`RayStartStopped`), so the fixed limit is never reached first.
    """
    import ray._private.services as services

    original = services.get_node

    raylets: dict[int, int] = {}

    def get_node(gcs_address: Any, node_id: Any) -> Any:
        while True:
            try:
                return original(gcs_address, node_id)
            except RuntimeError:
                if should_stop():
                    raise RayStartStopped("stop requested while Ray's node was registering") from None
                if time.monotonic() - t0 >= budget_s:
                    raise RayStartTimedOut(f"Ray's node did not register within {budget_s:g} s") from None
                if _raylet_exited(raylets):
                    raise RayStartTimedOut("Ray's node process (raylet) exited while starting; its log is "
                                           "raylet.out in Ray's session directory") from None
                time.sleep(0.2)

    services.get_node = get_node
    try:
        yield
    finally:
        services.get_node = original


def _raylet_exited(seen: dict[int, int]) -> bool:
    """Whether a raylet this process started (remembered in `seen` across calls) has exited: then its node
    will never register, and waiting out the budget would only hide that."""
    from common.processes import still_running

    for pid, started in _descendants().items():
        try:
            argv0 = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0]
        except OSError:
            continue
        if argv0.endswith(b"/raylet"):
            seen[pid] = started
    return bool(seen) and not still_running(seen)


@contextlib.contextmanager
def _python_side_waits(budget_s: float) -> Iterator[None]:
    """The waits Ray's Python code reads from its environment or module constants: the GCS port file and the
    dashboard head's start-up."""
    import ray._private.ray_constants as ray_constants

    key = "RAY_gcs_server_port_wait_time_s"
    saved_env = os.environ.get(key)
    saved_dash = ray_constants.RAY_DASHBOARD_STARTUP_TIMEOUT_S
    os.environ[key] = str(int(budget_s))
    ray_constants.RAY_DASHBOARD_STARTUP_TIMEOUT_S = int(budget_s)
    try:
        yield
    finally:
        ray_constants.RAY_DASHBOARD_STARTUP_TIMEOUT_S = saved_dash
        if saved_env is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = saved_env


@contextlib.contextmanager
def _progress(echo: Callable[[str], None], t0: float, budget_s: float, what: str, hint: str) -> Iterator[None]:
    """A line every `PROGRESS_EVERY_S` while the block runs (from a helper thread: `ray.init` blocks)."""
    done = threading.Event()

    def tell() -> None:
        while not done.wait(PROGRESS_EVERY_S):
            echo(f"{what}: still waiting after {time.monotonic() - t0:.0f} s (gives up after {budget_s:g} s, "
                 f"{hint})")

    thread = threading.Thread(target=tell, name="ray-start-progress", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join(1.0)


@contextlib.contextmanager
def _driver_without_failure_signal_handler() -> Iterator[None]:
    """While `ray.init` runs, have this process's core worker install no failure signal handler.

    Why: that handler (absl's) takes SIGTERM over at the C level when the driver connects, so a stop sent in
    the moments before `ray.init` returns aborted the process (status 134, "SIGTERM received ... __recv")
    after the command's own handler had run. Ray reads ``ray_constants.RAY_DISABLE_FAILURE_SIGNAL_HANDLER``
    (set from the environment at import) when the core worker starts; it is set here for that moment only, so
    the GCS, the raylet and the workers keep their handlers. `tests/serving/test_ray_start.py` pins the name.
    """
    import ray._private.ray_constants as ray_constants
    import ray._private.worker as worker

    saved = ray_constants.RAY_DISABLE_FAILURE_SIGNAL_HANDLER
    original = worker.connect

    def connect(*args: Any, **kwargs: Any) -> Any:
        # The core worker's C++ start must not be unwound halfway by a stop (the process then crashes at
        # exit): the stop is honoured once it has connected, and `ray.shutdown` ends it cleanly.
        with aborts_deferred():
            return original(*args, **kwargs)

    ray_constants.RAY_DISABLE_FAILURE_SIGNAL_HANDLER = True
    worker.connect = connect
    try:
        yield
    finally:
        worker.connect = original
        ray_constants.RAY_DISABLE_FAILURE_SIGNAL_HANDLER = saved


@contextlib.contextmanager
def ray_keeps_our_signal_handlers() -> Iterator[None]:
    """While `ray.init` runs, keep the SIGTERM handler the command installed (its clean stop).

    Why: `ray.init` installs handlers of its own for the time it runs (`sys.exit` in whatever frame the signal
    lands in, through ``ray._private.utils.set_sigterm_handler``); a stop sent in those seconds then either
    aborted the process (status -6, "SIGTERM received" inside a ``recv``) or, landing in a frame that swallows
    exceptions, was lost. With ours kept, the stop is recorded and honoured as soon as `ray.init` returns or
    at its next wait. `tests/osrs_rllib/test_framework_internals.py` pins the function this replaces.
    """
    import ray._private.utils as ray_utils

    original = ray_utils.set_sigterm_handler
    ray_utils.set_sigterm_handler = lambda handler: None
    try:
        yield
    finally:
        ray_utils.set_sigterm_handler = original


def init_ray(kwargs: dict[str, Any], *, local: bool, budget_s: float = RAY_START_TIMEOUT_S,
             echo: Callable[[str], None] = print, should_stop: Callable[[], bool] = lambda: False,
             hint: str = "ray.start_timeout_s") -> Any:
    """``ray.init(**kwargs)`` under the start-up budget; returns Ray's context.

    Args:
        kwargs: The command's own `ray.init` arguments.
        local: This starts a Ray of its own (not joining a cluster, whose settings are its own): the budget
            and the agent ports apply.
        budget_s: The start-up budget (see the module docstring).
        echo: Where the progress lines go.
        should_stop: Polled while the node registers: true ends the start (`RayStartStopped`). A stop signal
            during `ray.init` reaches the command's handler and then ends the start at once
            (`common.stops.abort_on_signal`).
        hint: How the command's user changes the budget, named in the progress line.

    Raises:
        RayStartStopped: A stop was requested; every process the start left was ended.
        RayStartTimedOut: Not up within `budget_s`; every process the start left was ended.
        Exception: Whatever `ray.init` raised (a port taken, a cluster not answering): the caller explains it.
            What the failed start left running is ended first.
    """
    import ray

    t0 = time.monotonic()
    call = dict(kwargs)
    ports: dict[str, Any] = {}
    if local:
        call.update(local_start_kwargs(budget_s))
        metrics_export, *agents = free_ports(1 + len(AGENT_PORTS))
        call.setdefault("_metrics_export_port", metrics_export)
        ports = dict(zip(AGENT_PORTS, agents, strict=True))
        # Two Python processes a private one-node Ray does not need, each seconds of CPU to start: the
        # autoscaler's monitor (nothing to scale) and, when no worker output goes to the driver, the log monitor.
        ports.update(no_monitor=True)
        if call.get("log_to_driver") is False:
            ports.update(include_log_monitor=False)
    if local:
        adopt_orphans()
    before = _descendants()
    try:
        with contextlib.ExitStack() as stack:
            stack.enter_context(ray_keeps_our_signal_handlers())
            stack.enter_context(_driver_without_failure_signal_handler())
            stack.enter_context(_progress(echo, t0, budget_s, "starting Ray", hint))
            if local:
                stack.enter_context(_agent_ports_given(ports))
                stack.enter_context(_raylet_told_listen_port())
                stack.enter_context(_python_side_waits(budget_s))
                stack.enter_context(_node_registration_waits_for(budget_s, t0, should_stop))
                if call.get("include_dashboard") is False:
                    stack.enter_context(_without_api_server())
            stack.enter_context(abort_on_signal("Ray was starting"))
            context = ray.init(**call)
    except BaseException as exc:
        with contextlib.suppress(Exception):
            ray.shutdown()
        if local:
            end_new_processes(before)
        if isinstance(exc, StartAborted):
            raise RayStartStopped(str(exc)) from None
        raise
    if should_stop():
        with contextlib.suppress(Exception):
            ray.shutdown()
        if local:
            end_new_processes(before)
        raise RayStartStopped("stop requested while Ray was starting")
    return context


def _descendants() -> dict[int, int]:
    from common.processes import descendants

    return descendants(os.getpid())


def end_new_processes(before: dict[int, int], grace_s: float = 1.0) -> None:
    """End the processes below this one that were not there in `before` (what a failed or stopped Ray start
    left: the raylet, its agents, the GCS), SIGTERM then SIGKILL; again for any that appeared meanwhile (a
    raylet forks its agents while it starts)."""
    from common.processes import reap

    for _ in range(3):
        new = {p: t for p, t in _descendants().items() if p not in before}
        if not new:
            return
        reap(new, grace_s=grace_s)


def shutdown_own_ray(grace_s: float = 0.5) -> list[int]:
    """End the Ray this process started, and every process of it: ``ray.shutdown`` stops the GCS, the raylet and the
    workers, but the dashboard and runtime-env agents notice their raylet is gone only 30-80 s later; they are this
    process's descendants (`adopt_orphans`), so what still runs after `grace_s` is ended here
    (`common.processes.reap`). A command that exits leaves nothing of its Ray running. Returns the pids that had
    to be signalled."""
    import ray

    from common.processes import descendants, reap

    started = descendants(os.getpid())
    ray.shutdown()
    return reap(started, grace_s=grace_s)


def end_ray_now() -> None:
    """After a second stop signal: SIGKILL every process below this one (Ray's, with the agents it adopted,
    `adopt_orphans`) instead of `ray.shutdown`, which takes seconds on a busy machine; what they held (a
    checkpoint, a report) was written by this process, not by them."""
    import signal as signals

    from common.processes import descendants

    for pid in descendants(os.getpid()):
        with contextlib.suppress(OSError):
            os.kill(pid, signals.SIGKILL)


PR_SET_CHILD_SUBREAPER = 36
"""Linux ``prctl`` option: orphaned descendants are re-parented to this process instead of to init."""


def adopt_orphans() -> None:
    """Make this process the child subreaper of what it starts (Linux; elsewhere nothing).

    Why: Ray's agents are the raylet's children. When a stop ends the raylet first, they are orphaned and
    re-parented to init, out of reach of the clean-up that ends every process below this one, and they run
    on for a minute before they notice. As a subreaper, this process inherits them, so `descendants` finds
    them and nothing of the run outlives it."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
