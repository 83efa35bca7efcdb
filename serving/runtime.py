"""Starting and stopping a server: Ray, the Serve application (HTTP proxy off) and the TCP proxy actor.

`Service` is what `osrs-rllib serve` runs in the foreground; a detached server is the same command in a
new session, recorded in ``<state dir>/serve-<port>.json`` so that ``serve status`` and ``serve stop`` find
it without a daemon (the same scheme as detached training runs, `osrs_rllib/jobs.py`).
"""

from __future__ import annotations

import json
import logging
import os
import signal
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from common.atomic_files import write_json_atomic
from common.processes import pid_alive, start_cli_detached
from serving.app import APP_NAME, DEPLOYMENT_NAME, AppOptions, build_app
from serving.proxy import ProxyLimits, proxy_actor_class

logger = logging.getLogger(__name__)

PROXY_NAMESPACE = "osrs_rllib_serve"
DEFAULT_PORT = 9999
STATE_DIR_ENV = "OSRS_RLLIB_SERVE_DIR"


class ServeError(RuntimeError):
    """The server cannot start, or a detached one cannot be found or stopped."""


def default_state_dir() -> Path:
    """Where detached servers are recorded (``$OSRS_RLLIB_SERVE_DIR`` or ``~/.osrs-rllib/serve``)."""
    return Path(os.environ.get(STATE_DIR_ENV) or Path.home() / ".osrs-rllib" / "serve")


def resolve_models_dir(target: str | os.PathLike[str], experiments_dir: str | os.PathLike[str] = "experiments") -> Path:
    """The directory of model files for a ``serve`` argument: a models directory, an experiment directory
    (its ``models/``) or an experiment name under `experiments_dir`.

    Raises:
        ServeError: Nothing of the kind exists; the message says what was looked for.
    """
    path = Path(target)
    candidates = [path / "models", path]
    if not path.is_absolute() and len(path.parts) == 1:
        candidates.append(Path(experiments_dir) / path / "models")
    for c in candidates:
        if c.is_dir() and (c.name == "models" or any(c.glob("*.nhmodel"))):
            return c
    if (path / "config.yml").exists() or (path / "run.json").exists():
        return path / "models"  # an experiment that has not written a model yet: serve it once it does
    raise ServeError(
        f"cannot serve {target!s}: expected a directory of *.nhmodel files, an experiment directory (with "
        f"models/) or an experiment name under {experiments_dir}/; looked at {', '.join(str(c) for c in candidates)}"
    )


def free_port(host: str = "127.0.0.1") -> int:
    """A port free right now (for tests: the proxy must keep one fixed port across restarts)."""
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def deploy(options: AppOptions, app_name: str = APP_NAME) -> Any:
    """Deploy the application on the connected Ray with Serve's HTTP proxy off; returns its handle."""
    from ray import serve
    from ray.serve.config import ProxyLocation

    serve.start(proxy_location=ProxyLocation.Disabled)
    return serve.run(build_app(options), name=app_name, route_prefix=None)


def start_proxy(
    host: str, port: int, limits: ProxyLimits | None = None, app_name: str = APP_NAME
) -> tuple[Any, tuple[str, int]]:
    """Start the TCP proxy actor on this node (so that 127.0.0.1 means this machine); returns it and its
    address. The port must be fixed (not 0) so that a restarted proxy listens where clients reconnect."""
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    if port == 0:
        port = free_port(host if host not in ("0.0.0.0", "") else "127.0.0.1")
    actor = proxy_actor_class().options(
        name=f"tcp_proxy_{app_name}_{port}",
        namespace=PROXY_NAMESPACE,
        scheduling_strategy=NodeAffinitySchedulingStrategy(ray.get_runtime_context().get_node_id(), soft=False),
    ).remote(app_name, DEPLOYMENT_NAME, host, port, limits or ProxyLimits())
    try:
        address = ray.get(actor.address.remote(), timeout=120)
    except Exception as exc:
        ray.kill(actor, no_restart=True)
        raise ServeError(f"the TCP proxy cannot listen on {host}:{port}: {exc}") from None
    return actor, tuple(address)


@dataclass
class ServeSettings:
    """Everything `osrs-rllib serve` needs (the CLI's options)."""

    models_dir: str | None
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    replicas: int = 1
    cpus_per_replica: float = 1.0
    address: str | None = None
    """None starts a local Ray; ``auto`` or ``HOST:PORT`` joins a running cluster."""
    num_cpus: int | None = None
    dashboard_port: int = 8265
    reload_s: float = 2.0
    limits: ProxyLimits = field(default_factory=ProxyLimits)


class Service:
    """A running server (Ray + Serve + proxy), started by `start` and torn down by `stop`."""

    def __init__(self, settings: ServeSettings, echo: Callable[[str], None] = print) -> None:
        self.settings = settings
        self.echo = echo
        self.proxy: Any = None
        self.address: tuple[str, int] | None = None
        self.dashboard_url: str | None = None
        self._started_ray = False

    def start(self) -> list[dict[str, Any]]:
        """Start (or join) Ray, deploy, start the proxy; returns the served models' descriptions."""
        import ray

        s = self.settings
        if not ray.is_initialized():
            kwargs: dict[str, Any] = {"log_to_driver": False, "configure_logging": False, "namespace": PROXY_NAMESPACE}
            if s.address:
                kwargs["address"] = s.address
            else:
                kwargs.update(num_cpus=s.num_cpus, include_dashboard=True, dashboard_host="127.0.0.1",
                              dashboard_port=s.dashboard_port)
            try:
                context = ray.init(**kwargs)
            except (ConnectionError, RuntimeError, ValueError) as exc:
                raise ServeError(f"cannot start or join Ray at {s.address or 'a local Ray'}: {exc}") from None
            self._started_ray = True
            url = getattr(context, "dashboard_url", None)
            if url:
                self.dashboard_url = url if url.startswith("http") else f"http://{url}"
        options = AppOptions(models_dir=s.models_dir, replicas=s.replicas, cpus_per_replica=s.cpus_per_replica,
                             reload_s=s.reload_s)
        handle = deploy(options)
        self.proxy, self.address = start_proxy(s.host, s.port, s.limits)
        return handle.models.remote().result()

    def stop(self) -> None:
        import ray
        from ray import serve

        if not ray.is_initialized():
            return
        if self.proxy is not None:
            try:
                ray.get(self.proxy.shutdown.remote(), timeout=30)
            except Exception:
                pass
            ray.kill(self.proxy, no_restart=True)
            self.proxy = None
        try:
            if self._started_ray:
                serve.shutdown()
            else:
                serve.delete(APP_NAME)  # a shared cluster may run other Serve applications
        finally:
            if self._started_ray:
                ray.shutdown()


# ---------------------------------------------------------------------------------------------------------
# Detached servers
# ---------------------------------------------------------------------------------------------------------


@dataclass
class ServeRecord:
    """A detached server, as ``serve status`` shows it."""

    pid: int
    host: str
    port: int
    models_dir: str | None
    log: str
    started_unix: float
    dashboard: str | None = None
    state: str = "starting"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def record_path(state_dir: Path, port: int) -> Path:
    return state_dir / f"serve-{port}.json"


def write_record(state_dir: Path, record: ServeRecord) -> Path:
    return write_json_atomic(record_path(state_dir, record.port), record.to_dict())


def read_records(state_dir: Path) -> list[ServeRecord]:
    out = []
    for path in sorted(state_dir.glob("serve-*.json")):
        try:
            out.append(ServeRecord(**json.loads(path.read_text())))
        except (OSError, ValueError, TypeError):
            continue
    return out


def start_detached(argv: Sequence[str], state_dir: Path, port: int) -> tuple[int, Path]:
    """Run ``osrs-rllib serve ARGV`` (without ``--detach``) in a new session; returns its pid and log path."""
    log_path = state_dir / f"serve-{port}.log"
    return start_cli_detached("serve", argv, log_path), log_path


def stop_detached(record: ServeRecord, state_dir: Path, wait_s: float = 60.0) -> str:
    """SIGTERM a detached server (it shuts down like Ctrl-C) and wait for it; returns its final state."""
    path = record_path(state_dir, record.port)
    if not pid_alive(record.pid):
        path.unlink(missing_ok=True)
        return "was not running"
    os.kill(record.pid, signal.SIGTERM)
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        if not pid_alive(record.pid):
            path.unlink(missing_ok=True)
            return "stopped"
        time.sleep(0.2)
    return f"still running after {wait_s:g} s (pid {record.pid})"
