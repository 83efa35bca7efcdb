"""Starting and stopping a server: Ray, the Serve application (HTTP proxy off) and the TCP proxy actor.

`Service` is what `osrs-rllib serve` runs in the foreground; a detached server is the same command in a
new session, recorded in ``<state dir>/serve-<port>.json`` so that ``serve status`` and ``serve stop`` find
it without a daemon (the same scheme as detached training runs, `osrs_rllib/experiments/jobs.py`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from common.ray_errors import (
    RAY_DASHBOARD_PORT,
    RayFlags,
    dashboard_port_beside_others,
    explain_ray_start_error,
    port_in_use,
)
from common.stops import StartAborted, abort_on_signal
from serving.app import APP_NAME, DEPLOYMENT_NAME, REPLICA_ENV, AppOptions, build_app
from serving.detached import ServeError
from serving.proxy import PROXY_ENV, ProxyLimits, proxy_actor_class
from serving.ray_start import RAY_START_TIMEOUT_S, RayStartStopped, RayStartTimedOut, init_ray, shutdown_own_ray

logger = logging.getLogger(__name__)

PROXY_NAMESPACE = "osrs_rllib_serve"
STATUS_EVERY_S = 1.0
"""How often a starting server asks Serve how its application is doing (the proxy's address is waited on, not
polled)."""
DEFAULT_PORT = 9999


def free_port(host: str = "127.0.0.1") -> int:
    """A port free right now and out of the kernel's ephemeral range, so that nothing takes it before the server
    it is for binds it (`serving.ray_start.free_ports`; for tests: the proxy must keep one fixed port across
    restarts)."""
    from serving.ray_start import free_ports

    return free_ports(1, host)[0]


def deploy(options: AppOptions, app_name: str = APP_NAME, blocking: bool = True) -> Any:
    """Deploy the application on the connected Ray with Serve's HTTP proxy off; returns its handle.

    With `blocking` False it returns once the deployment exists (handles can be made) without waiting for its
    replicas, so that the caller can start the proxy meanwhile and report progress (`Service`)."""
    from ray import serve
    from ray.serve.config import ProxyLocation

    serve.start(proxy_location=ProxyLocation.Disabled)
    return serve._run(build_app(options), _blocking=blocking, name=app_name, route_prefix=None)


def _proxy_actor(host: str, port: int, limits: ProxyLimits | None, app_name: str,
                 inherit_env: bool = False) -> tuple[Any, int]:
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    if port == 0:
        port = free_port(host if host not in ("0.0.0.0", "") else "127.0.0.1")
    actor = proxy_actor_class(inherit_env).options(
        name=f"tcp_proxy_{app_name}_{port}",
        namespace=PROXY_NAMESPACE,
        scheduling_strategy=NodeAffinitySchedulingStrategy(ray.get_runtime_context().get_node_id(), soft=False),
    ).remote(app_name, DEPLOYMENT_NAME, host, port, limits or ProxyLimits())
    return actor, port


def start_proxy(
    host: str, port: int, limits: ProxyLimits | None = None, app_name: str = APP_NAME
) -> tuple[Any, tuple[str, int]]:
    """Start the TCP proxy actor on this node (so that 127.0.0.1 means this machine); returns it and its
    address. The port must be fixed (not 0) so that a restarted proxy listens where clients reconnect."""
    import ray

    actor, port = _proxy_actor(host, port, limits, app_name)
    try:
        address = ray.get(actor.address.remote(), timeout=120)
    except Exception as exc:
        ray.kill(actor, no_restart=True)
        raise ServeError(f"the TCP proxy cannot listen on {host}:{port}: {exc}") from None
    return actor, tuple(address)


SERVE_FLAGS = RayFlags(address="--address", dashboard_port="--dashboard-port", no_dashboard="--no-dashboard",
                       num_cpus="--num-cpus", start_timeout="--ray-start-timeout")
"""How `osrs-rllib serve` spells the fixes of a Ray start-up problem (`common.ray_errors`)."""
DEFAULT_DASHBOARD_PORT = RAY_DASHBOARD_PORT
PROGRESS_EVERY_S = 10.0
"""While the application starts, a line saying what it waits for this often: start-up never waits silently."""


class ServeStopped(Exception):
    """A stop was requested (SIGTERM, Ctrl-C) while the server was still starting."""


@dataclass
class ServeSettings:
    """Everything `osrs-rllib serve` needs (the CLI's options)."""

    models_dir: str | None
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    replicas: int = 1
    cpus_per_replica: float = 1.0
    address: str | None = None
    """None starts a private local Ray (even when another runs on this machine, e.g. a training run's);
    ``auto`` or ``HOST:PORT`` joins a running cluster."""
    num_cpus: int | None = None
    dashboard: bool = False
    """Ray's dashboard only when asked for: its processes cost a quiet 2-core machine ~2 s of the start-up."""
    dashboard_port: int | None = None
    """None: 8265, or the next free port when another Ray (a training run) holds it. A port given here must
    be free."""
    reload_s: float = 2.0
    start_timeout_s: float = 300.0
    """Longest the application may take to start once Ray runs, before `serve` gives up, saying what it waited for."""
    ray_start_timeout_s: float = RAY_START_TIMEOUT_S
    """Longest a private Ray may take to start (`serving.ray_start`); a busy machine needs a minute or more."""
    limits: ProxyLimits = field(default_factory=ProxyLimits)


class Service:
    """A running server (Ray + Serve + proxy), started by `start` and torn down by `stop`.

    Args:
        settings: The CLI's options.
        echo: Where progress lines go (the terminal).
        should_stop: Polled between start-up steps; when it turns true, `start` raises `ServeStopped` so that a
            SIGTERM during start-up stops the server instead of waiting for it to be up.
    """

    def __init__(self, settings: ServeSettings, echo: Callable[[str], None] = print,
                 should_stop: Callable[[], bool] = lambda: False) -> None:
        self.settings = settings
        self.echo = echo
        self.should_stop = should_stop
        self.proxy: Any = None
        self.address: tuple[str, int] | None = None
        self.dashboard_url: str | None = None
        self.timings: dict[str, float] = {}
        """Seconds from the start of `start` to the end of each step (Ray, Serve, the application, the proxy)."""
        self._connected = False
        """This process called `ray.init` (and so calls `ray.shutdown`)."""
        self._own_ray = False
        """The Ray is a private one this process started (not a cluster it joined): it goes with the server."""
        self._deployed = False
        self._t0 = 0.0

    def _mark(self, step: str, serving: bool = False) -> None:
        """Record the step's time; a stop requested by now ends the start-up (`ServeStopped`) unless the
        server already answers (`serving`: the proxy listens), whose stop is the normal shutdown."""
        self.timings[step] = round(time.monotonic() - self._t0, 2)
        logger.info("start-up: %s after %.1f s", step, self.timings[step])
        if self.should_stop() and not serving:
            raise ServeStopped(f"stop requested during start-up (after {step})")

    def start(self, after_ray_init: Callable[[], None] | None = None) -> list[dict[str, Any]]:
        """Start (or join) Ray, deploy, start the proxy; returns the served models' descriptions.

        Args:
            after_ray_init: Called as soon as Ray runs (Ray replaces the process's SIGTERM handling: the CLI
                installs its own again here).

        Raises:
            ServeError: Ray cannot start or be joined, the cluster lacks the CPUs asked for, or the
                application does not start in time; the message says which flag or action fixes it.
            ServeStopped: `should_stop` turned true.
        """
        self._t0 = time.monotonic()
        s = self.settings
        if s.port and port_in_use(s.host or "0.0.0.0", s.port):
            # Found before Ray starts, rather than by the proxy after a start of many seconds.
            raise ServeError(f"port {s.port} on {s.host} is in use (another server?): pick another with --port, "
                             "or stop what listens there (`osrs-rllib serve status` lists detached servers)")
        self._start_ray()
        if after_ray_init is not None:
            after_ray_init()
        self._mark("ray")
        self._check_cpus()
        options = AppOptions(models_dir=s.models_dir, replicas=s.replicas, cpus_per_replica=s.cpus_per_replica,
                             reload_s=s.reload_s, inherit_env=self._own_ray)
        self._deployed = True  # from here on, `stop` removes the application, even one half deployed
        try:
            with abort_on_signal("Serve was starting"):  # Serve's controller takes seconds to start
                handle = deploy(options, blocking=False)
        except StartAborted as exc:
            raise ServeStopped(f"stop requested during start-up ({exc})") from None
        self._mark("serve")
        # The proxy's process starts while the replicas load their models: the two take seconds each.
        self.proxy, port = _proxy_actor(s.host, s.port, s.limits, APP_NAME, inherit_env=self._own_ray)
        self.address = self._wait_until_up(self.proxy.address.remote(), s.host, port)
        self._mark("proxy", serving=True)
        models = handle.models.remote().result(timeout_s=60)
        self._mark("models", serving=True)
        return models

    # -- Ray -------------------------------------------------------------------------------------------
    def _start_ray(self) -> None:
        import ray

        s = self.settings
        if ray.is_initialized():
            return
        kwargs: dict[str, Any] = {"log_to_driver": False, "configure_logging": False, "namespace": PROXY_NAMESPACE}
        if s.address:
            if s.num_cpus is not None:
                raise ServeError(explain_ray_start_error(
                    ValueError("When connecting to an existing cluster, num_cpus must not be provided"),
                    SERVE_FLAGS, s.address))
            problem = unreachable(s.address)
            if problem:
                raise ServeError(problem)
            kwargs["address"] = s.address
        else:
            # "local": a private Ray even when RAY_ADDRESS or `ray start` point at another one on this machine.
            # The port even without a dashboard: Ray's head binds it for its minimal dashboard all the same, and
            # beside a training run (8265 taken) the node would never come up.
            kwargs.update(address="local", num_cpus=s.num_cpus, include_dashboard=s.dashboard,
                          dashboard_host="127.0.0.1", dashboard_port=self._dashboard_port())
        try:
            with _serve_settings_inherited(not s.address):
                context = init_ray(kwargs, local=not s.address, budget_s=s.ray_start_timeout_s, echo=self.echo,
                                   should_stop=self.should_stop, hint="--ray-start-timeout")
        except (RayStartStopped, KeyboardInterrupt):
            raise ServeStopped("stop requested while Ray was starting") from None
        except RayStartTimedOut as exc:
            raise ServeError(f"Ray did not start within {s.ray_start_timeout_s:g} s ({exc}): the machine may be "
                             "very busy; give it longer with --ray-start-timeout") from None
        except Exception as exc:  # Ray raises plain Exception too
            raise ServeError(explain_ray_start_error(exc, SERVE_FLAGS, s.address)) from None
        self._connected = True
        self._own_ray = not s.address
        url = getattr(context, "dashboard_url", None)
        if url and (kwargs.get("include_dashboard") or s.address):
            self.dashboard_url = url if url.startswith("http") else f"http://{url}"

    def _dashboard_port(self) -> int:
        s = self.settings
        port = s.dashboard_port or DEFAULT_DASHBOARD_PORT
        if not port_in_use("127.0.0.1", port):
            return port
        if s.dashboard_port is not None and s.dashboard:
            raise ServeError(
                f"--dashboard-port {port} on 127.0.0.1 is in use (another Ray, e.g. a training run, or another "
                "program): pick another with --dashboard-port, or run without a dashboard (--no-dashboard)")
        other = dashboard_port_beside_others("127.0.0.1", port)
        if s.dashboard:
            self.echo(f"the dashboard's port {port} is in use (another Ray, e.g. a training run): using {other}")
        return other

    def _check_cpus(self) -> None:
        """Refuse at once, in one line, what Serve would otherwise wait for forever: replicas asking for more
        CPUs than the cluster has free (a training run on the same cluster holds them)."""
        import ray

        s = self.settings
        needed = s.replicas * s.cpus_per_replica
        if needed <= 0:
            return
        free = float(ray.available_resources().get("CPU", 0.0))
        total = float(ray.cluster_resources().get("CPU", 0.0))
        if needed <= free + 1e-9:
            return
        where = f"the Ray cluster at {s.address}" if s.address else "this Ray"
        held = "something else holds the rest, e.g. a training run; " if free < total else ""
        fix = ("run with --cpus-per-replica 0 (the replicas then share the CPUs with what holds them), or stop "
               "what holds them" if s.address else "give it more with --num-cpus, or run with --cpus-per-replica 0")
        raise ServeError(
            f"{where} has {free:g} of {total:g} CPUs free; {held}--replicas {s.replicas} x --cpus-per-replica "
            f"{s.cpus_per_replica:g} needs {needed:g}: {fix}")

    # -- the application ---------------------------------------------------------------------------------
    def _wait_until_up(self, address_ref: Any, host: str, port: int) -> tuple[str, int]:
        """Wait for the replicas and the proxy, saying every `PROGRESS_EVERY_S` what is still missing."""
        import ray

        s = self.settings
        address: tuple[str, int] | None = None
        app_running = False
        why = ""
        next_note = time.monotonic() - self._t0 + PROGRESS_EVERY_S
        next_status = 0.0
        while True:
            if address is None:
                # waits on the proxy's answer rather than sleeping: the start's one wake-up per quarter second
                ready, _ = ray.wait([address_ref], timeout=STATUS_EVERY_S / 4)
                if ready:
                    try:
                        address = tuple(ray.get(address_ref))
                    except Exception as exc:
                        raise ServeError(f"the TCP proxy cannot listen on {host}:{port}: {exc}") from None
            if not app_running and time.monotonic() >= next_status:
                # Serve's status is an RPC the controller answers between its own steps: once a second is enough
                # for the progress lines, and leaves the controller's CPU to the start it reports on
                next_status = time.monotonic() + STATUS_EVERY_S
                state, why = _app_state(APP_NAME)
                if state == "DEPLOY_FAILED":
                    raise ServeError(f"the application failed to start: {why}")
                app_running = state == "RUNNING"
                if app_running:
                    why = ""
            if address is not None and (app_running or self.should_stop()):
                # The proxy listens only once a model server answers: from here a stop is the normal shutdown,
                # even before Serve's own status says RUNNING (clients may already have had their answers).
                return address
            if self.should_stop():
                raise ServeStopped("stop requested during start-up")
            waited = time.monotonic() - self._t0
            if waited - self.timings.get("ray", 0.0) >= s.start_timeout_s:  # Ray has a budget of its own
                raise ServeError(
                    f"not up after {s.start_timeout_s:g} s (--start-timeout): {self._missing(address, why)}")
            if waited >= next_note:
                self.echo(f"still starting after {waited:.0f} s: {self._missing(address, why)}")
                next_note = waited + PROGRESS_EVERY_S
            if address is not None:
                time.sleep(STATUS_EVERY_S / 4)

    def _missing(self, address: tuple[str, int] | None, why: str) -> str:
        parts = []
        if why:
            parts.append(why)
        if address is None:
            parts.append("the TCP proxy is not listening yet")
        return "; ".join(parts) or "waiting for the application"

    def stop(self) -> None:
        """Stop the proxy (requests received are answered or refused), remove the application and, if this
        process started Ray, Ray and every process it left (Ray's agents outlive `ray.shutdown` for a minute)."""
        import ray
        from ray import serve

        if not ray.is_initialized():
            return
        if self.proxy is not None:
            with contextlib.suppress(Exception):
                ray.get(self.proxy.shutdown.remote(), timeout=10)
            with contextlib.suppress(Exception):
                ray.kill(self.proxy, no_restart=True)
            self.proxy = None
        try:
            if not self._own_ray and self._deployed:
                serve.delete(APP_NAME)  # a shared cluster may run other Serve applications
            # A Ray of our own goes as a whole: its replicas have nothing in flight once the proxy has stopped,
            # so Serve's graceful shutdown would only add seconds.
        finally:
            if self._own_ray:
                shutdown_own_ray()  # the Ray and every process of it (its agents outlive `ray.shutdown`)
            elif self._connected:
                ray.shutdown()


def _app_state(app_name: str) -> tuple[str, str]:
    """The application's status and, while it is not running, what its deployments wait for (Serve's words)."""
    from ray import serve

    try:
        app = serve.status().applications.get(app_name)
    except Exception as exc:  # the controller may be busy starting
        return "UNKNOWN", f"Serve is not answering yet ({type(exc).__name__})"
    if app is None:
        return "UNKNOWN", "the application is not deployed yet"
    state = str(getattr(app.status, "value", app.status))
    notes = [f"{name}: {d.message}" for name, d in app.deployments.items() if d.message]
    if not notes:
        for name, d in app.deployments.items():
            counts = ", ".join(f"{k.lower()} {v}" for k, v in d.replica_states.items())
            notes.append(f"{name}: replicas {counts or 'not created yet'}")
    return state, "; ".join(notes) or (app.message or "")


def unreachable(address: str, timeout_s: float = 5.0) -> str | None:
    """Why nothing will answer at cluster `address` (a HOST:PORT that refuses connections), or None: Ray itself
    would retry for minutes with only its own time-out lines. ``auto`` is left to Ray, which fails fast."""
    import socket

    if address in ("auto", "local") or address.startswith("ray://"):
        return None
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        return f"--address {address!r} is not HOST:PORT or auto"
    try:
        with socket.create_connection((host, int(port)), timeout=timeout_s):
            return None
    except OSError as exc:
        return (f"no Ray cluster answers at {address} ({exc}): check --address (the head's GCS port, 6379 by "
                "default), or leave it out to start a private Ray")


# ---------------------------------------------------------------------------------------------------------
# Processes
# ---------------------------------------------------------------------------------------------------------

@contextlib.contextmanager
def _serve_settings_inherited(own_ray: bool) -> Iterator[None]:
    """While a Ray of our own starts, put Serve's settings for the replicas and the proxy (`REPLICA_ENV`,
    `PROXY_ENV`) in the environment that its processes inherit, so that those actors need no runtime
    environment (`AppOptions.inherit_env`). This process read Serve's settings when it imported Serve, before
    this, and the environment is put back afterwards."""
    if not own_ray:
        yield
        return
    settings = {**REPLICA_ENV, **PROXY_ENV}
    saved = {k: os.environ.get(k) for k in settings}
    os.environ.update(settings)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
