"""The Ray Serve application: one deployment whose replicas each hold a `ModelRegistry`.

Requests reach a replica in lists (the TCP proxy groups the requests that arrive while its previous calls are
in flight, see `serving.proxy`), and `@serve.batch` groups the lists of concurrent calls once more, so that a
replica runs one forward pass per model for everything waiting. Models load once per replica, in its
constructor, and a background thread rescans the models directory every `reload_s` seconds (live models,
see `serving.models`).
"""

from __future__ import annotations

import logging
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ray import serve

from serving.protocol import Request

if TYPE_CHECKING:
    from serving.models import Reply

logger = logging.getLogger(__name__)

APP_NAME = "osrs_rllib"
DEPLOYMENT_NAME = "policies"

BATCH_WAIT_S = 0.0
"""`@serve.batch` wait for more calls once one has arrived. A lone client never fills a batch, so any wait is
added in full to its latency (Serve's default of 10 ms alone would break a 3 ms budget), while concurrent
clients are already grouped by the proxy and by the calls that queue during a forward pass. Measure other
values with ``benchmarks/serve_latency.py --batch-wait S`` (docs/serving.md)."""
MAX_BATCH_CALLS = 64
"""Calls (each a list of requests) merged into one `answer` batch."""

REPLICA_ENV = {
    # The replica answers on the event loop that receives the call instead of handing every call to a second
    # thread's loop: one thread hop less per request. A forward pass of our network takes about 0.5 ms, short
    # enough not to starve the loop (benchmarks/serve_latency.py, docs/serving.md).
    "RAY_SERVE_RUN_USER_CODE_IN_SEPARATE_THREAD": "0",
}
"""Ray Serve's throughput setting for the replicas' processes (environment variables Serve reads at start).
They go in the replicas' runtime environment, so that they hold on a cluster too and touch no other job."""


@dataclass(frozen=True)
class AppOptions:
    """How the application is deployed (the `osrs-rllib serve` options that concern Serve)."""

    models_dir: str | None
    """Directory of ``*.nhmodel`` files (an experiment's ``models/``), or None for the ladder only."""
    replicas: int = 1
    cpus_per_replica: float = 1.0
    reload_s: float = 2.0
    """Seconds between rescans of the models directory for new or changed model files."""
    torch_threads: int = 1
    """Torch threads per replica: 1 keeps a small MLP fast and leaves the other cores to the proxy."""
    ladder: bool = True
    batch_wait_s: float = BATCH_WAIT_S
    inherit_env: bool = False
    """The replicas find `REPLICA_ENV` in the environment they inherit (a Ray that `serve` started itself, with
    the settings in its environment) instead of in a runtime environment of their own. Why: a replica with a
    runtime environment needs a worker process started for it, while one without takes a worker Ray started in
    advance, which saves a Python start and ``import ray`` from the time to the first answer."""


@serve.deployment(
    name=DEPLOYMENT_NAME,
    max_ongoing_requests=256,
    # One access-log line per call costs more than a forward pass of a small model.
    logging_config={"enable_access_log": False, "log_level": "WARNING"},
)
class PolicyServer:
    """A replica: answers lists of checked requests and lists what it serves."""

    def __init__(self, options: AppOptions) -> None:
        # torch and the models load here, in the replica: the process that deploys the application (the
        # `serve` command) never needs them, and importing torch there would delay the start by seconds.
        import torch

        from serving.models import ModelRegistry

        torch.set_num_threads(max(1, options.torch_threads))
        self.options = options
        self.registry = ModelRegistry(options.models_dir, ladder=options.ladder)
        self.answer.set_batch_wait_timeout_s(options.batch_wait_s)
        self._stop = threading.Event()
        if options.models_dir is not None and options.reload_s > 0:
            threading.Thread(target=self._watch, name="model-reload", daemon=True).start()

    def _watch(self) -> None:
        while not self._stop.wait(self.options.reload_s):
            try:
                self.registry.refresh()
            except Exception:  # the watcher must outlive any surprise in one scan
                logger.exception("rescanning %s failed", self.options.models_dir)

    @serve.batch(max_batch_size=MAX_BATCH_CALLS, batch_wait_timeout_s=BATCH_WAIT_S)
    async def answer(self, calls: list[list[Request]]) -> list[list[Reply]]:
        flat = [req for call in calls for req in call]
        replies = self.registry.answer(flat)
        out, start = [], 0
        for call in calls:
            out.append(replies[start : start + len(call)])
            start += len(call)
        return out

    async def models(self) -> list[dict[str, Any]]:
        return self.registry.describe()

    async def process_id(self) -> int:
        """The replica's pid (tests kill a replica with SIGKILL, as a crash would)."""
        return os.getpid()

    async def refresh(self) -> list[str]:
        """Rescan now (tests and `serve status` use it instead of waiting for the watcher)."""
        return self.registry.refresh()

    def __del__(self) -> None:
        self._stop.set()


def build_app(options: AppOptions) -> Any:
    """The bound Serve application for `options` (deploy it with `serve.run`)."""
    if options.models_dir is not None:
        options = AppOptions(**{**options.__dict__, "models_dir": str(Path(options.models_dir).resolve())})
    actor_options: dict[str, Any] = {"num_cpus": options.cpus_per_replica}
    if not options.inherit_env:
        actor_options["runtime_env"] = {"env_vars": REPLICA_ENV}
    return PolicyServer.options(num_replicas=options.replicas, ray_actor_options=actor_options).bind(options)
