"""`ProxyServer` on real loopback sockets in front of a real `ModelRegistry`, without Ray.

The same proxy runs inside the Ray actor (tests/serving/test_server.py covers that path end to end); here its
own behaviour is checked quickly: errors keep the connection usable, limits close it after one error line,
and many concurrent (and pipelining) clients get their own replies in order.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from envs.nh.contract import NUM_LOGITS, OBS_SIZE
from policies.model_file import load_model_file
from serving.client import build_request
from serving.models import ModelRegistry
from serving.protocol import REPLY_FIELDS
from serving.proxy import ProxyLimits, ProxyServer
from tests.serving.conftest import write_model

pytestmark = pytest.mark.timeout(300)

PER_CLIENT = 40
"""Requests per client here; the full 50 × 200 runs through Ray Serve in test_server.py."""


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> ModelRegistry:
    d = tmp_path_factory.mktemp("proxy-models")
    write_model(d / "latest.nhmodel", 51)
    return ModelRegistry(d)


def run_with_proxy(registry: ModelRegistry, limits: ProxyLimits,
                   body: Callable[[str, int], Awaitable[None]]) -> None:
    async def answer(reqs: list[Any]) -> list[dict[str, Any]]:
        await asyncio.sleep(0)  # a call is asynchronous in production too
        return registry.answer(reqs)

    async def models() -> list[dict[str, Any]]:
        return registry.describe()

    async def main() -> None:
        server = ProxyServer(answer, models, "127.0.0.1", 0, limits)
        host, port = await server.start()
        try:
            await asyncio.wait_for(body(host, port), 240)
        finally:
            await server.close()

    asyncio.run(main())


GOOD = json.dumps(build_request("latest", np.zeros(OBS_SIZE), np.ones(NUM_LOGITS, dtype=bool))).encode() + b"\n"


def test_errors_keep_the_connection_and_good_requests_follow(registry: ModelRegistry) -> None:
    bad_lines = [b"{oops\n", b"[]\n", b'{"model": "latest"}\n', GOOD.replace(b'"latest"', b'"../x"'),
                 GOOD.replace(b'"latest"', b'"nope"'), b'{"command": "models"}\n', b"\n"]

    async def body(host: str, port: int) -> None:
        reader, writer = await asyncio.open_connection(host, port)
        for raw in bad_lines:
            writer.write(raw + GOOD)
        await writer.drain()
        replies = []
        for raw in bad_lines:
            if raw == b"\n":  # blank lines are keep-alives: no reply
                continue
            replies.append(json.loads(await reader.readline()))
            replies.append(json.loads(await reader.readline()))
        writer.close()
        errors, goods = replies[0::2], replies[1::2]
        assert "malformed JSON" in errors[0]["error"] and "must be a JSON object" in errors[1]["error"]
        assert "missing field 'obs'" in errors[2]["error"] and "leave the models directory" in errors[3]["error"]
        assert "unknown model 'nope'" in errors[4]["error"] and "latest" in errors[4]["error"]
        assert errors[5]["models"][0]["name"] == "latest"
        assert all(list(g) == list(REPLY_FIELDS) for g in goods)

    run_with_proxy(registry, ProxyLimits(deadline_s=60.0), body)  # errors, not the deadline


def test_malformed_numbers_get_one_error_line_each_and_the_connection_stays(registry: ModelRegistry) -> None:
    """A 5,000-digit integer used to raise Python's integer-string ValueError inside the proxy and drop the
    connection; a 40-digit one was refused with "found null None"."""
    text = GOOD.decode()
    bad_lines = [
        text.replace("[[0.0,", "[[" + "7" * 5000 + ",", 1).encode(),
        text.replace("[[0.0,", "[[" + "9" * 40 + ",", 1).encode(),
        text.replace("[[0.0,", "[[1e39,", 1).encode(),
        text.replace("[[0.0,", "[[NaN,", 1).encode(),
        text.replace('"returnLogProb": false', '"returnLogProb": ' + "1" * 5000, 1).encode(),
    ]
    expected = ["an integer of 5000 digits", "an integer of 40 digits", "within float32 range", "must be finite",
                "field 'returnLogProb'"]

    async def body(host: str, port: int) -> None:
        reader, writer = await asyncio.open_connection(host, port, limit=1 << 20)
        for raw, want in zip(bad_lines, expected, strict=True):
            writer.write(raw + GOOD)
            await writer.drain()
            error = json.loads(await reader.readline())
            assert want in error["error"] and "field '" in error["error"], error
            assert list(json.loads(await reader.readline())) == list(REPLY_FIELDS)
        writer.close()

    run_with_proxy(registry, ProxyLimits(deadline_s=60.0), body)  # errors, not the deadline


def test_limits_answer_then_close(registry: ModelRegistry) -> None:
    async def body(host: str, port: int) -> None:
        # A line over the limit.
        reader, writer = await asyncio.open_connection(host, port)
        writer.write(b'{"model": "' + b"x" * 50_000 + b'"}\n')
        await writer.drain()
        assert "longer than 10000 bytes" in json.loads(await reader.readline())["error"]
        assert await reader.read() == b""
        writer.close()
        # Connections beyond the limit, while two are open.
        held = [await asyncio.open_connection(host, port) for _ in range(2)]
        for r, w in held:
            w.write(GOOD)
            await w.drain()
            assert list(json.loads(await r.readline())) == list(REPLY_FIELDS)
        reader, writer = await asyncio.open_connection(host, port)
        assert "too many connections (limit 2)" in json.loads(await reader.readline())["error"]
        assert await reader.read() == b""
        writer.close()
        # An idle connection (its last request was answered above).
        r, w = held[0]
        assert "idle for 1 s" in json.loads(await r.readline())["error"]
        assert await r.read() == b""
        for _, w in held:
            w.close()

    run_with_proxy(registry, ProxyLimits(max_connections=2, idle_timeout_s=1.0, max_line_bytes=10_000, deadline_s=60.0),
                   body)


def test_fifty_clients_in_order(registry: ModelRegistry, tmp_path: Path) -> None:
    model = load_model_file(registry.models["latest"].model.path)
    rng = np.random.default_rng(0)
    pool = 300
    obs = rng.normal(0, 2, (pool, OBS_SIZE)).astype(np.float32)
    masks = rng.random((pool, NUM_LOGITS)) < 0.6
    masks[:, 0] = True
    expected = model.act(obs, masks.astype(np.float32)).tolist()
    lines = [json.dumps(build_request("latest", obs[i], masks[i])).encode() + b"\n" for i in range(pool)]

    async def one(host: str, port: int, c: int) -> list[tuple[int, Any]]:
        reader, writer = await asyncio.open_connection(host, port)
        order = [(c * 7 + k * 13) % pool for k in range(PER_CLIENT)]
        step = 10 if c % 5 == 0 else 1  # every fifth client pipelines ten requests
        got = []
        for start in range(0, PER_CLIENT, step):
            chunk = order[start : start + step]
            writer.write(b"".join(lines[i] for i in chunk))
            await writer.drain()
            for i in chunk:
                got.append((i, json.loads(await reader.readline()).get("action")))
        writer.close()
        return got

    async def body(host: str, port: int) -> None:
        results = await asyncio.gather(*[one(host, port, c) for c in range(50)])
        assert sum(len(r) for r in results) == 50 * PER_CLIENT
        wrong = [(i, a) for r in results for i, a in r if a != expected[i]]
        assert not wrong, wrong[:3]

    # Ordering is under test here, not the deadline (test_deadline.py): on a loaded test machine one forward
    # pass over a large group can outlast the default.
    run_with_proxy(registry, ProxyLimits(deadline_s=60.0), body)
