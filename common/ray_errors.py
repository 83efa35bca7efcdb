"""Ray start-up problems in the words of the command that started Ray.

Ray's own messages name Ray's options (``ray start --dashboard-port``, ``ray.init(dashboard_port=...)``), which
a user of ``osrs-rllib serve`` or ``train`` cannot type. Each command describes how it spells the settings
that fix a start-up problem (`RayFlags`); `explain_ray_start_error` turns Ray's exception into one line that
names them, and `port_in_use` / `free_port_near` let a command check a port before Ray trips over it.

Standard library only (the bottom layer): it reads Ray's messages, it does not import Ray.
"""

from __future__ import annotations

import re
import socket
from dataclasses import dataclass


@dataclass(frozen=True)
class RayFlags:
    """How one command spells each setting that fixes a Ray start-up problem (a flag, or a config key with
    the way to set it); a message names these instead of Ray's options.

    Example (serve): ``RayFlags(address="--address", dashboard_port="--dashboard-port",
    no_dashboard="--no-dashboard", num_cpus="--num-cpus")``; for train the same fields would read
    ``--set ray.dashboard_port=PORT`` and so on.
    """

    address: str
    """Joins a running cluster instead of starting one."""
    dashboard_port: str
    """Picks the dashboard's port."""
    no_dashboard: str
    """Turns the dashboard off."""
    num_cpus: str
    """Sets the CPUs of a Ray the command starts."""
    start_timeout: str = ""
    """Gives a Ray the command starts longer to come up (empty: the command has no such setting)."""


def port_in_use(host: str, port: int) -> bool:
    """Whether something already listens on (or holds) ``host:port``: what Ray would fail to bind.

    The probe binds with ``SO_REUSEADDR``, as servers (Ray's dashboard, our proxy) do, so that the closed
    connections of a server that just stopped (``TIME_WAIT``) do not count as in use.
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return True
    return False


def free_port_near(host: str, port: int, tries: int = 20) -> int:
    """The first free port after `port` (so that a second dashboard lands next to the first, where a user
    looks), or any free port if those are all taken."""
    for candidate in range(port + 1, min(port + 1 + tries, 65536)):
        if not port_in_use(host, candidate):
            return candidate
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


RAY_DASHBOARD_PORT = 8265
"""Ray's default dashboard port. Ray's head binds it even with ``include_dashboard=False`` (its minimal
dashboard), so every Ray started on a machine where another one runs needs a port of its own."""


def dashboard_port_beside_others(host: str = "127.0.0.1", port: int = RAY_DASHBOARD_PORT) -> int:
    """`port` when free, else the next free one: for a Ray whose dashboard port nobody chose (a second training
    run, `serve` or a test session beside a training run). A port a user chose is checked, not replaced."""
    return port if not port_in_use(host, port) else free_port_near(host, port)


def _first_line(exc: BaseException, limit: int = 300) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= limit else text[: limit - 3] + "..."


_PORT_TAKEN = re.compile(r"Failed to bind to (?P<where>\S+?:\d+) because it's already occupied", re.IGNORECASE)


def explain_ray_start_error(exc: BaseException, flags: RayFlags, address: str | None = None) -> str:
    """One line saying why Ray did not start or could not be joined, and which of our flags fixes it.

    Args:
        exc: What `ray.init` raised.
        flags: How the calling command spells the fixes.
        address: The cluster address the command tried to join (None: it started a local Ray).

    Returns:
        The message, naming `flags` where one of them is the fix, and Ray's own first line otherwise.
    """
    text = " ".join(str(exc).split())
    lower = text.lower()
    if match := _PORT_TAKEN.search(text):
        return (f"the dashboard's port {match['where']} is in use (another Ray or program): pick another with "
                f"{flags.dashboard_port}, or run without a dashboard ({flags.no_dashboard})")
    if "connecting to an existing cluster" in lower and ("num_cpus" in lower or "resources" in lower):
        return (f"{flags.num_cpus} sets the CPUs of a Ray this command starts; a cluster joined with "
                f"{flags.address} keeps its own: leave {flags.num_cpus} out")
    if address is not None and (
        "could not find any running ray instance" in lower
        or "can't find a ray cluster" in lower
        or isinstance(exc, ConnectionError)
    ):
        where = "on this machine" if address == "auto" else f"at {address}"
        return (f"no Ray cluster answers {where} ({_first_line(exc, 160)}): start one with `ray start --head`, "
                f"give its address with {flags.address} HOST:PORT, or leave {flags.address} out to start a "
                "private Ray")
    if "timed out" in lower or "timeout" in lower:
        # Not "join a running cluster": a training run's cluster has no CPUs to spare (docs/serving.md).
        longer = f"give it longer with {flags.start_timeout}, " if flags.start_timeout else ""
        return (f"Ray did not start in time ({_first_line(exc, 160)}): the machine may be busy; {longer}or try "
                "again when it is quieter")
    where = f"join Ray at {address}" if address is not None else "start a local Ray"
    return f"cannot {where}: {_first_line(exc)}"
