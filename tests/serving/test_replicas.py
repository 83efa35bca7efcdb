"""Several replicas behind one proxy, on the shared real Ray: every reply right while the requests spread over
the replicas, and a replica killed mid-traffic is replaced by Serve while the other one keeps answering.

A second application (`APP`) with its own proxy, so the shared one-replica stack of `conftest.py` is untouched.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from policies.model_file import load_model_file
from serving.client import ServeClient, build_request
from tests.serving.conftest import write_model
from tests.serving.test_server import inputs

pytestmark = pytest.mark.timeout(600)

APP = "osrs_rllib_replicas"
REPLICAS = 2


def _replica_names() -> set[str]:
    """The named replica actors of `APP` (Serve names them ``SERVE_REPLICA::<app>#<deployment>#<id>``; the
    GCS lists named actors without the dashboard, which the test session's Ray does not run)."""
    import ray

    return {a["name"] for a in ray.util.list_named_actors(all_namespaces=True)
            if a["namespace"] == "serve" and a["name"].startswith(f"SERVE_REPLICA::{APP}#")}


def _running_replicas() -> int:
    from ray import serve

    app = serve.status().applications.get(APP)
    if app is None:
        return 0
    return sum(d.replica_states.get("RUNNING", 0) for d in app.deployments.values())


def _wait_for(predicate: Any, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.2)


@pytest.fixture(scope="module")
def two_replicas(ray_session: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int, Path]]:
    import ray
    from ray import serve

    from serving.app import AppOptions
    from serving.runtime import deploy, start_proxy

    models = tmp_path_factory.mktemp("replicas") / "models"
    write_model(models / "latest.nhmodel", 11)
    deploy(AppOptions(models_dir=str(models), replicas=REPLICAS, cpus_per_replica=0, reload_s=0, ladder=False),
           app_name=APP)
    proxy, (host, port) = start_proxy("127.0.0.1", 0, app_name=APP)
    yield host, port, models
    ray.kill(proxy, no_restart=True)
    serve.delete(APP)


@pytest.mark.integration
def test_requests_spread_over_replicas_and_every_reply_is_right(two_replicas: tuple[str, int, Path]) -> None:
    host, port, models = two_replicas
    assert _running_replicas() == REPLICAS
    assert len(_replica_names()) == REPLICAS
    model = load_model_file(models / "latest.nhmodel")
    pool = 200
    obs, masks = inputs(pool, 21)
    expected = model.act(obs, masks.astype(np.float32), deterministic=True).tolist()
    lines = [json.dumps(build_request("latest", obs[i], masks[i])).encode() + b"\n" for i in range(pool)]

    async def one(c: int) -> list[bool]:
        reader, writer = await asyncio.open_connection(host, port)
        ok = []
        for k in range(60):
            i = (c * 17 + k * 7) % pool
            writer.write(lines[i])
            reply = json.loads(await reader.readline())
            ok.append(reply.get("action") == expected[i])
        writer.close()
        return ok

    async def run() -> list[list[bool]]:
        return await asyncio.gather(*[one(c) for c in range(16)])

    results = asyncio.run(run())
    assert all(all(r) for r in results)
    assert sum(len(r) for r in results) == 16 * 60


@pytest.mark.integration
def test_a_killed_replica_is_replaced_while_the_other_keeps_answering(two_replicas: tuple[str, int, Path]) -> None:
    import ray

    host, port, models = two_replicas
    _wait_for(lambda: _running_replicas() == REPLICAS, 120)
    victim = sorted(_replica_names())[0]
    obs, masks = inputs(1, 22)
    expected = load_model_file(models / "latest.nhmodel").act(obs, masks.astype(np.float32),
                                                              deterministic=True).tolist()[0]
    with ServeClient(host, port, timeout_s=60) as c:
        assert c.act("latest", obs[0], masks[0]).action == expected
        ray.kill(ray.get_actor(victim, namespace="serve"), no_restart=True)
        # Requests sent while Serve notices the death may be answered with a "retry" error (never a wrong
        # action, never a dropped connection); the surviving replica answers the rest.
        answered = errors = 0
        deadline = time.monotonic() + 120
        while answered < 50 and time.monotonic() < deadline:
            reply = c.request(build_request("latest", obs[0], masks[0]))
            if "error" in reply:
                assert "retry" in reply["error"], reply
                errors += 1
            else:
                assert reply["action"] == expected
                answered += 1
        assert answered == 50, f"only {answered} answered ({errors} errors) within 120 s"

    def replaced() -> bool:
        names = _replica_names()
        return victim not in names and len(names) == REPLICAS and _running_replicas() == REPLICAS

    _wait_for(replaced, 180)
