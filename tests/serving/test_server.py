"""The real stack on loopback: Ray Serve (HTTP proxy off) behind the TCP proxy actor, real model files.

Every request field and combination, each kind of bad request answered while the connection stays usable,
50 concurrent clients × 200 requests, a model replaced under the running server, and the proxy actor killed
and restarted by Ray.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import socket
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from envs.nh.contract import HEAD_SIZES, NUM_HEADS, NUM_LOGITS, OBS_SIZE
from policies.model_file import load_model_file
from serving.client import AsyncServeClient, ServeClient, ServeReplyError, build_request
from serving.protocol import REPLY_FIELDS
from tests.serving.conftest import Stack, write_model

pytestmark = pytest.mark.timeout(600)


def inputs(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    obs = rng.normal(0, 2, (n, OBS_SIZE)).astype(np.float32)
    masks = rng.random((n, NUM_LOGITS)) < 0.6
    masks[:, 0] = True
    return obs, masks


def line(obj: Any) -> bytes:
    return json.dumps(obj).encode()


@pytest.fixture
def client(stack: Stack) -> Any:
    with ServeClient(stack.host, stack.port, timeout_s=60) as c:
        yield c


def test_models_command_shows_steps_and_checksums(client: ServeClient, stack: Stack) -> None:
    rows = {m["name"]: m for m in client.models()}
    assert {"latest", "stacked", "obsvalue", "noop", "random", "stay_alive", "prayer_switcher", "tribrid"} <= set(rows)
    latest = rows["latest"]
    meta = load_model_file(stack.models_dir / "latest.nhmodel").meta
    assert latest["kind"] == "model" and latest["envSteps"] == 1000 and latest["iteration"] == 1
    assert latest["sha256"] == meta["tensor_sha256"] and latest["experiment"] == "test"
    assert rows["stacked"]["frameStack"] == [0, 2] and rows["tribrid"]["kind"] == "scripted"


def test_served_actions_equal_the_model_files_own(client: ServeClient, stack: Stack) -> None:
    model = load_model_file(stack.models_dir / "latest.nhmodel")
    obs, masks = inputs(40, 1)
    expected = model.act(obs, masks.astype(np.float32), deterministic=True).tolist()
    assert [client.act("latest", obs[i], masks[i]).action for i in range(40)] == expected


def test_every_field_combination(client: ServeClient) -> None:
    obs, masks = inputs(1, 2)
    per_head = [h % 2 == 0 for h in range(NUM_HEADS)]
    for det, lp, ent, val, probs in itertools.product([True, False, per_head], *[[False, True]] * 4):
        reply = client.request(build_request("obsvalue", obs[0], masks[0], deterministic=det, return_log_prob=lp,
                                             return_entropy=ent, return_value=val, return_probs=probs))
        assert list(reply) == list(REPLY_FIELDS), reply
        assert len(reply["action"]) == NUM_HEADS and all(isinstance(a, int) for a in reply["action"])
        assert (reply["logProb"] is not None) == lp and (reply["entropy"] is not None) == ent
        assert (reply["values"] is not None) == val and (reply["probs"] is not None) == probs
        if val:
            assert len(reply["values"]) == 1 and isinstance(reply["values"][0], float)
        if probs:
            assert [len(p) for p in reply["probs"]] == list(HEAD_SIZES)
        if lp:
            assert reply["logProb"] <= 0.0
        assert reply["extensionResults"] == []
        if ent:
            assert len(reply["entropy"]) == NUM_HEADS
    # Frames: the stacked model takes its offsets' frames or the whole recent history.
    history = np.stack([obs[0], obs[0] * 0.5, obs[0] * 0.25])
    a = client.act("stacked", history[[0, 2]], masks[0]).action
    assert client.act("stacked", history, masks[0]).action == a
    # Masks as per-head lists, as the existing clients send them; a scripted opponent answers the action only.
    heads = [masks[0][s : s + n].tolist() for s, n in zip(np.cumsum([0, *HEAD_SIZES[:-1]]), HEAD_SIZES, strict=True)]
    assert client.act("latest", obs[0], heads).action == client.act("latest", obs[0], masks[0]).action
    scripted = client.request(build_request("tribrid", obs[0], masks[0]))
    assert list(scripted) == list(REPLY_FIELDS) and scripted["logProb"] is None


GOOD = build_request("latest", np.zeros(OBS_SIZE), np.ones(NUM_LOGITS, dtype=bool))


def bad(**changes: Any) -> bytes:
    return line({**GOOD, **changes})


BAD_REQUESTS: list[tuple[str, bytes, str]] = [
    ("malformed json", b'{"model": "latest", "obs": [[', "malformed JSON"),
    ("not an object", b"42", "must be a JSON object"),
    ("unknown field", bad(returnLogProbs=True), "did you mean 'returnLogProb'"),
    ("missing field", line({k: v for k, v in GOOD.items() if k != "actionMasks"}), "missing field 'actionMasks'"),
    ("wrong type", bad(obs="zeros"), "list of frames"),
    ("wrong head count", bad(actionMasks=GOOD["actionMasks"][:5]), "12 lists"),
    ("wrong head size", bad(actionMasks=[[True] * (n + 1) for n in HEAD_SIZES]), "must have 4 booleans"),
    ("wrong observation length", bad(obs=[[0.0] * 100]), "has 100 entries, expected 176"),
    ("wrong frame count", bad(model="stacked", obs=[[0.0] * OBS_SIZE] * 5), "send 2 or 3 frames"),
    ("non-finite", line(GOOD).replace(b"[[0.0,", b"[[Infinity,", 1), "must be finite"),
    ("no legal value", bad(actionMasks=[[False] * n for n in HEAD_SIZES]), "no legal value"),
    ("unknown model", bad(model="nope"), "unknown model 'nope'"),
    ("leaves the directory", bad(model="../models/latest"), "tries to leave the models directory"),
    ("value needs full state", bad(returnValue=True), "full game state"),
    ("missing extension", bad(extensions=["winrate"]), "no extension 'winrate'; the extensions it carries: none"),
    ("scripted statistics", bad(model="tribrid", returnProbs=True), "scripted ladder opponent"),
]


@pytest.mark.parametrize(("kind", "raw", "expected"), BAD_REQUESTS, ids=[b[0] for b in BAD_REQUESTS])
def test_bad_request_gets_an_error_and_the_connection_stays_usable(
    client: ServeClient, kind: str, raw: bytes, expected: str
) -> None:
    reply = client.send_line(raw)
    assert list(reply) == ["error"] and expected in reply["error"], reply
    assert list(client.request(GOOD)) == list(REPLY_FIELDS)


def _read_all(sock: socket.socket) -> bytes:
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data


def test_a_line_over_the_limit_is_answered_then_closed(stack: Stack) -> None:
    with socket.create_connection((stack.host, stack.port), timeout=30) as sock:
        sock.sendall(b'{"model": "' + b"x" * 300_000 + b'"}\n')
        data = _read_all(sock)
    (reply,) = [json.loads(x) for x in data.splitlines()]
    assert "longer than 200000 bytes" in reply["error"]


def test_an_idle_client_is_answered_then_closed(stack: Stack) -> None:
    with socket.create_connection((stack.host, stack.port), timeout=30) as sock:
        data = _read_all(sock)  # nothing sent: the proxy's idle limit (3 s here) closes it, saying why
    assert "idle for 3 s" in json.loads(data)["error"]


def test_connections_beyond_the_limit_are_answered_then_closed(stack: Stack) -> None:
    """A second proxy on the same application, in this process, with room for two connections."""
    from ray import serve

    from serving.app import APP_NAME, DEPLOYMENT_NAME
    from serving.proxy import ProxyLimits, ProxyServer

    async def run() -> None:
        handle = serve.get_deployment_handle(DEPLOYMENT_NAME, APP_NAME)

        async def answer(reqs: list[Any]) -> list[dict[str, Any]]:
            return await handle.answer.remote(reqs)

        async def models() -> list[dict[str, Any]]:
            return await handle.models.remote()

        # The stack's deadline (conftest): a fresh handle's first call may take longer than 300 ms on a busy machine,
        # and this test is about the connection limit (tests/serving/test_deadline.py times the deadline).
        server = ProxyServer(answer, models, "127.0.0.1", 0, ProxyLimits(max_connections=2, deadline_s=60.0))
        host, port = await server.start()
        try:
            clients = [await AsyncServeClient(host, port).connect() for _ in range(2)]
            for c in clients:
                assert list(await c.request(GOOD)) == list(REPLY_FIELDS)
            reader, writer = await asyncio.open_connection(host, port)
            refused = json.loads(await reader.readline())
            assert "too many connections (limit 2)" in refused["error"]
            assert await reader.read() == b""
            writer.close()
            for c in clients:  # the two admitted connections still work
                assert list(await c.request(GOOD)) == list(REPLY_FIELDS)
                await c.close()
        finally:
            await server.close()

    asyncio.run(run())


def test_fifty_clients_two_hundred_requests_each(stack: Stack) -> None:
    """No reply lost, crossed or reordered: each reply is checked against the model file's own action."""
    model = load_model_file(stack.models_dir / "latest.nhmodel")
    pool = 500
    obs, masks = inputs(pool, 3)
    expected = model.act(obs, masks.astype(np.float32), deterministic=True).tolist()
    lines = [line(build_request("latest", obs[i], masks[i])) + b"\n" for i in range(pool)]
    n_clients, n_requests = 50, 200

    async def one(c: int) -> list[tuple[int, list[int]]]:
        reader, writer = await asyncio.open_connection(stack.host, stack.port)
        got: list[tuple[int, list[int]]] = []
        order = [(c * 7 + k * 13) % pool for k in range(n_requests)]
        pipelined = c % 5 == 0  # every fifth client sends ten lines before reading ten replies
        step = 10 if pipelined else 1
        for start in range(0, n_requests, step):
            chunk = order[start : start + step]
            writer.write(b"".join(lines[i] for i in chunk))
            await writer.drain()
            for i in chunk:
                reply = json.loads(await reader.readline())
                got.append((i, reply.get("action", reply)))
        writer.close()
        return got

    async def run() -> list[list[tuple[int, list[int]]]]:
        return await asyncio.wait_for(asyncio.gather(*[one(c) for c in range(n_clients)]), timeout=300)

    start = time.monotonic()
    results = asyncio.run(run())
    elapsed = time.monotonic() - start
    assert sum(len(r) for r in results) == n_clients * n_requests
    wrong = [(i, a) for r in results for i, a in r if a != expected[i]]
    assert not wrong, f"{len(wrong)} replies do not match their request, e.g. {wrong[:3]}"
    print(f"50 x 200 requests in {elapsed:.1f} s ({n_clients * n_requests / elapsed:.0f} req/s)")


def _wait_for(predicate: Any, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.1)


def test_model_replaced_under_a_running_server(stack: Stack) -> None:
    path = stack.models_dir / "swap.nhmodel"
    first = load_model_file(write_model(path, 41))
    obs, masks = inputs(20, 4)
    want_first = first.act(obs, masks.astype(np.float32)).tolist()
    errors: list[str] = []
    seen: list[list[list[int]]] = []
    stop = threading.Event()
    with ServeClient(stack.host, stack.port, timeout_s=60) as watcher:
        _wait_for(lambda: any(m["name"] == "swap" for m in watcher.models()))

        def keep_asking() -> None:  # one client asking all along, on one connection
            with ServeClient(stack.host, stack.port, timeout_s=60) as c:
                while not stop.is_set():
                    try:
                        seen.append([c.act("swap", obs[i], masks[i]).action for i in range(20)])
                    except ServeReplyError as exc:
                        errors.append(str(exc))

        thread = threading.Thread(target=keep_asking)
        thread.start()
        try:
            _wait_for(lambda: len(seen) >= 2)
            assert seen[-1] == want_first
            second = load_model_file(write_model(path, 42))  # atomic, as training writes latest.nhmodel
            want_second = second.act(obs, masks.astype(np.float32)).tolist()
            assert want_second != want_first
            _wait_for(lambda: seen[-1] == want_second)
            sha = {m["name"]: m for m in watcher.models()}["swap"]["sha256"]
            assert sha == second.meta["tensor_sha256"]

            # A damaged file written in place (not atomically) never replaces the good model.
            raw = path.read_bytes()
            with open(path, "r+b") as f:
                f.truncate(len(raw) // 3)
            n = len(seen)
            for _ in range(3):  # several rescans, each awaited (not slept through)
                stack.handle.refresh.remote().result(timeout_s=60)
            m = len(seen)
            _wait_for(lambda: len(seen) > m)  # and replies since the last of them
            assert len(seen) > n and all(s == want_second for s in seen[n:])
            assert {m["name"]: m for m in watcher.models()}["swap"]["sha256"] == sha
        finally:
            stop.set()
            thread.join(60)
            path.unlink(missing_ok=True)
    assert not errors, errors[:3]
    # A round of 20 requests may straddle the swap; every single reply comes from one of the two models.
    assert all(a in (want_first[i], want_second[i]) for s in seen for i, a in enumerate(s))


def test_proxy_killed_is_restarted_and_clients_reconnect(stack: Stack) -> None:
    import ray

    obs, masks = inputs(1, 5)
    with ServeClient(stack.host, stack.port, timeout_s=60, reconnect_s=120) as c:
        before = c.act("latest", obs[0], masks[0]).action
        old_pid = ray.get(stack.proxy.pid.remote())
        ray.kill(stack.proxy, no_restart=False)
        # The next request finds the connection gone, reconnects once Ray has restarted the proxy on the
        # same port, and is answered.
        assert c.act("latest", obs[0], masks[0]).action == before
    new_pid = ray.get(stack.proxy.pid.remote(), timeout=60)
    assert new_pid != old_pid
    assert not os.path.exists(f"/proc/{old_pid}") or Path(f"/proc/{old_pid}/stat").read_text().split()[2] == "Z"
