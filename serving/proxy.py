"""The raw TCP front of `osrs-rllib serve`: asyncio streams, one JSON object per line (`serving.protocol`).

Game-client plugins keep one connection open and send one request per game tick; each line is parsed and
checked here (a bad one is answered with ``{"error": ...}`` and the connection stays usable), then handed to
the Serve application through a deployment handle. Replies go back in request order, so a client may also
pipeline several lines.

Requests that arrive while earlier calls to the application are still in flight are grouped into one call
(at most `ProxyLimits.max_in_flight` calls at a time): a lone client pays for one call per request, many
clients share calls, and the replica batches what it receives once more (`serving.app`).

Every request is answered within `ProxyLimits.deadline_s` of its arrival: when no replica answers in time
(one is starting, or being replaced after a crash) the request gets ``{"error": "... retry"}`` instead of
waiting for the replacement, so a game client at one request per 600 ms tick always hears back within the tick.

Closed with an error line: a line longer than `max_line_bytes`, a client idle for `idle_timeout_s`, a
connection beyond `max_connections`. Nothing a client sends is unpickled: it is JSON, checked field by field.

`ProxyServer` knows nothing of Ray (tests and the benchmark can front any async answering function with
it); `ProxyActor` runs one inside a Ray actor that Ray restarts if it dies.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from serving.protocol import (
    MAX_LINE_BYTES,
    Command,
    ProtocolError,
    Request,
    encode_reply,
    error_reply,
    parse_line,
)

logger = logging.getLogger(__name__)

Answer = Callable[[list[Request]], Awaitable[list[dict[str, Any]]]]
"""(checked requests) → one reply per request, in order."""
ListModels = Callable[[], Awaitable[list[dict[str, Any]]]]


@dataclass(frozen=True)
class ProxyLimits:
    """Limits that protect the proxy from any one client."""

    max_connections: int = 1024
    idle_timeout_s: float = 300.0
    """A connection with no request for this long is closed (a game client sends one every 600 ms)."""
    max_line_bytes: int = MAX_LINE_BYTES
    pipeline_depth: int = 64
    """Requests of one connection awaiting their replies before the proxy stops reading from it."""
    max_in_flight: int = 2
    """Calls to the application in flight at once; later requests wait and are sent together."""
    max_group: int = 256
    """Most requests in one call to the application."""
    deadline_s: float = 0.3
    """Longest a request waits for its answer before it is answered with a "retry" error (0: no deadline).
    Half a game tick (600 ms): a client hears back within the tick it asked in, even while a crashed replica
    is replaced (which takes seconds), and a normal answer (a few ms, tens under load) never comes near it."""
    shutdown_grace_s: float = 2.0
    """On shutdown, how long requests already received may take to be answered before they are refused."""


class ProxyServer:
    """The asyncio TCP server; see the module docstring.

    Args:
        answer: Answers a list of checked requests (the Serve handle in production).
        list_models: Lists the served models for ``{"command": "models"}``.
        host, port: Where to listen; port 0 picks a free port (see `address` after `start`).
        limits: Connection and size limits.
    """

    def __init__(self, answer: Answer, list_models: ListModels, host: str = "127.0.0.1", port: int = 0,
                 limits: ProxyLimits | None = None) -> None:
        self.answer = answer
        self.list_models = list_models
        self.host = host
        self.port = port
        self.limits = limits or ProxyLimits()
        self.connections = 0
        self.requests = 0
        self.errors = 0
        self._server: asyncio.Server | None = None
        self._closing = False
        self._pending: list[tuple[Request, asyncio.Future[dict[str, Any]], float]] = []
        self._kick: asyncio.Event | None = None
        self._slots: asyncio.Semaphore | None = None
        self._dispatcher: asyncio.Task[None] | None = None
        self._handlers: set[asyncio.Task[Any]] = set()
        self._calls: set[asyncio.Task[None]] = set()

    @property
    def address(self) -> tuple[str, int]:
        assert self._server is not None, "start() first"
        host, port = self._server.sockets[0].getsockname()[:2]
        return str(host), int(port)

    async def start(self) -> tuple[str, int]:
        self._kick = asyncio.Event()
        self._slots = asyncio.Semaphore(self.limits.max_in_flight)
        self._dispatcher = asyncio.create_task(self._dispatch_loop())
        self._server = await asyncio.start_server(
            self._handle, self.host, self.port, limit=self.limits.max_line_bytes, reuse_address=True
        )
        logger.info("serving JSON lines on %s:%d", *self.address)
        return self.address

    async def close(self) -> None:
        """Stop accepting connections, let requests already received be answered (for up to
        `ProxyLimits.shutdown_grace_s`; later ones are refused with an error), then close every connection."""
        self._closing = True
        if self._server is not None:
            self._server.close()
        loop = asyncio.get_running_loop()
        until = loop.time() + self.limits.shutdown_grace_s
        while (self._pending or self._calls) and loop.time() < until:
            await asyncio.sleep(0.01)
        for _, fut, _ in self._pending:
            if not fut.done():
                fut.set_result(error_reply(SHUTTING_DOWN))
        for task in list(self._handlers):
            task.cancel()
        if self._handlers:
            await asyncio.gather(*self._handlers, return_exceptions=True)
        if self._dispatcher is not None:
            self._dispatcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._dispatcher
        if self._server is not None:
            await self._server.wait_closed()

    def stats(self) -> dict[str, int]:
        return {"connections": self.connections, "requests": self.requests, "errors": self.errors}

    # -- grouping requests into calls ----------------------------------------------------------------
    def _submit(self, req: Request) -> asyncio.Future[dict[str, Any]]:
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[dict[str, Any]] = loop.create_future()
        if self._closing:
            fut.set_result(error_reply(SHUTTING_DOWN))
            return fut
        deadline = self.limits.deadline_s
        expires = loop.time() + deadline if deadline > 0 else float("inf")
        if deadline > 0:
            loop.call_at(expires, _expire, fut, deadline)
        self._pending.append((req, fut, expires))
        assert self._kick is not None
        self._kick.set()
        return fut

    async def _dispatch_loop(self) -> None:
        assert self._kick is not None and self._slots is not None
        while True:
            await self._kick.wait()
            self._kick.clear()
            while self._pending:
                await self._slots.acquire()
                # Requests that expired while waiting for a slot already have their error reply.
                live = [p for p in self._pending[: self.limits.max_group] if not p[1].done()]
                del self._pending[: self.limits.max_group]
                if not live:
                    self._slots.release()
                    continue
                task = asyncio.create_task(self._call(live))
                self._calls.add(task)
                task.add_done_callback(self._calls.discard)

    async def _call(self, group: list[tuple[Request, asyncio.Future[dict[str, Any]], float]]) -> None:
        assert self._slots is not None
        try:
            # The call may take until the group's earliest deadline: after that its first request is already
            # answered with an error, and a call stuck on a dead replica must not hold its slot for the seconds
            # a replacement takes.
            first_expiry = min(expires for _, _, expires in group)
            async with asyncio.timeout_at(first_expiry if first_expiry != float("inf") else None):
                replies = await self.answer([req for req, _, _ in group])
            if len(replies) != len(group):
                raise RuntimeError(f"{len(replies)} replies for {len(group)} requests")
        except TimeoutError:
            logger.warning("no model server answered a call of %d requests within the deadline", len(group))
            replies = [error_reply(_late_message(self.limits.deadline_s))] * len(group)
        except Exception as exc:  # a failed or restarting replica: every request of the call gets an error
            logger.warning("the model server failed a call of %d requests: %s", len(group), exc)
            replies = [error_reply(f"the model server failed: {type(exc).__name__}: {exc}; retry")] * len(group)
        finally:
            self._slots.release()
        for (_, fut, _), reply in zip(group, replies, strict=True):
            if not fut.done():
                fut.set_result(reply)

    async def _models_reply(self) -> dict[str, Any]:
        deadline = self.limits.deadline_s
        try:
            async with asyncio.timeout(deadline if deadline > 0 else None):
                return {"models": await self.list_models()}
        except TimeoutError:
            return error_reply(_late_message(deadline))
        except Exception as exc:
            return error_reply(f"cannot list models: {type(exc).__name__}: {exc}; retry")

    # -- connections ---------------------------------------------------------------------------------
    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._handlers.add(task)
        peer = writer.get_extra_info("peername")
        sock = writer.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            if self.connections >= self.limits.max_connections:
                logger.warning("refused %s: already %d connections", peer, self.connections)
                writer.write(encode_reply(error_reply(
                    f"too many connections (limit {self.limits.max_connections}); retry later")))
                await _close(writer)
                return
            self.connections += 1
            try:
                await self._serve_connection(reader, writer, peer)
            finally:
                self.connections -= 1
        except asyncio.CancelledError:
            # Only `close` cancels a connection, after its replies are written. Ending normally rather than
            # "cancelled" keeps asyncio's stream callback (Python 3.11) from logging a traceback per connection.
            pass
        finally:
            self._handlers.discard(task)

    async def _serve_connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, peer: Any) -> None:
        logger.debug("connection from %s", peer)
        replies: asyncio.Queue[bytes | asyncio.Future[dict[str, Any]] | None] = asyncio.Queue(
            self.limits.pipeline_depth
        )
        write_task = asyncio.create_task(self._write_replies(writer, replies))
        discard_input = False
        try:
            while not write_task.done():
                try:
                    line = await asyncio.wait_for(reader.readline(), self.limits.idle_timeout_s)
                except TimeoutError:
                    logger.warning("closing %s: idle for %.0f s", peer, self.limits.idle_timeout_s)
                    await replies.put(encode_reply(error_reply(
                        f"idle for {self.limits.idle_timeout_s:g} s: connection closed; reconnect to continue")))
                    break
                except (ValueError, asyncio.LimitOverrunError):
                    logger.warning("closing %s: a line over %d bytes", peer, self.limits.max_line_bytes)
                    self.errors += 1
                    await replies.put(encode_reply(error_reply(
                        f"request line longer than {self.limits.max_line_bytes} bytes: connection closed "
                        "(one JSON object per line, newline-terminated)")))
                    discard_input = True
                    break
                except (ConnectionError, OSError):
                    break
                if not line:
                    break  # EOF
                if not line.strip():
                    continue  # blank lines are keep-alives
                self.requests += 1
                try:
                    parsed = parse_line(line)
                except ProtocolError as exc:
                    self.errors += 1
                    logger.warning("bad request from %s: %s", peer, exc)
                    await replies.put(encode_reply(error_reply(str(exc))))
                    continue
                except Exception as exc:  # a parser bug must cost one error line, never the connection
                    self.errors += 1
                    logger.exception("cannot parse a request from %s", peer)
                    await replies.put(encode_reply(error_reply(
                        f"cannot read this request ({type(exc).__name__}); check it against docs/serving.md")))
                    continue
                if isinstance(parsed, Command):
                    await replies.put(asyncio.ensure_future(self._models_reply()))
                else:
                    await replies.put(self._submit(parsed))
        finally:
            try:
                if not write_task.done():
                    await replies.put(None)  # the writer sends every reply still owed, then stops
                await write_task
            except (ConnectionError, OSError):
                pass
            finally:
                write_task.cancel()
                if discard_input:
                    # The client is still sending the rest of its long line: closing now would reset the
                    # connection and could destroy the error line before the client reads it. Send FIN
                    # after the error, then read and drop what is still coming, for a bounded time.
                    await _discard_input(reader, writer)
                await _close(writer)
                logger.debug("closed %s", peer)

    async def _write_replies(self, writer: asyncio.StreamWriter, replies: asyncio.Queue[Any]) -> None:
        while True:
            item = await replies.get()
            if item is None:
                return
            if isinstance(item, bytes):
                data = item
            else:
                reply = await item
                if "error" in reply:
                    self.errors += 1
                data = encode_reply(reply)
            writer.write(data)
            if replies.empty():
                await writer.drain()


SHUTTING_DOWN = "the server is shutting down; retry on a running server"


def _late_message(deadline_s: float) -> str:
    return (f"no model server answered within {deadline_s * 1000:.0f} ms (a replica is starting or being "
            "replaced); retry")


def _expire(fut: asyncio.Future[dict[str, Any]], deadline_s: float) -> None:
    """The request's deadline: if it has no reply yet, it gets the "retry" error now (a reply that comes later
    is dropped)."""
    if not fut.done():
        fut.set_result(error_reply(_late_message(deadline_s)))


async def _discard_input(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, limit_s: float = 2.0,
                         limit_bytes: int = 1 << 26) -> None:
    with contextlib.suppress(ConnectionError, OSError, RuntimeError):
        await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()

    async def drop() -> None:
        dropped = 0
        while dropped < limit_bytes:
            chunk = await reader.read(1 << 16)
            if not chunk:
                return
            dropped += len(chunk)

    with contextlib.suppress(TimeoutError, ConnectionError, OSError, ValueError):
        await asyncio.wait_for(drop(), limit_s)


async def _close(writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(ConnectionError, OSError):
        await writer.drain()
    writer.close()
    with contextlib.suppress(ConnectionError, OSError):
        await writer.wait_closed()


# ---------------------------------------------------------------------------------------------------------
# The proxy as a Ray actor
# ---------------------------------------------------------------------------------------------------------


class ProxyActor:
    """`ProxyServer` in front of the Serve application, run by Ray (create it with `proxy_actor_class`).

    The server runs on its own event loop thread, started in the constructor, so that when Ray restarts a
    dead proxy (``max_restarts=-1``) the restarted actor listens again on the same address without anyone
    calling it.
    """

    def __init__(self, app_name: str, deployment_name: str, host: str, port: int, limits: ProxyLimits) -> None:
        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="tcp-proxy", daemon=True)
        self._thread.start()
        self._answer_handle, self._models_handle = asyncio.run_coroutine_threadsafe(
            _handles_on_this_loop(deployment_name, app_name), self._loop).result(timeout=60)
        # Listening means ready: the port accepts connections only once a model server answers, so a client
        # that connects as soon as it can (as game-client harnesses do) gets an action, not a "retry" error.
        asyncio.run_coroutine_threadsafe(_until_answering(self._models_handle), self._loop).result()
        self.server = ProxyServer(self._answer, self._models, host, port, limits)
        self._address = asyncio.run_coroutine_threadsafe(self.server.start(), self._loop).result(timeout=60)

    async def _answer(self, requests: list[Request]) -> list[dict[str, Any]]:
        return await self._answer_handle.remote(requests)

    async def _models(self) -> list[dict[str, Any]]:
        return await self._models_handle.remote()

    def address(self) -> tuple[str, int]:
        return self._address

    def stats(self) -> dict[str, int]:
        return self.server.stats()

    def pid(self) -> int:
        import os

        return os.getpid()

    def shutdown(self) -> None:
        """Stop listening, answer (or refuse) what was received, close every connection."""
        asyncio.run_coroutine_threadsafe(self.server.close(), self._loop).result(timeout=30)


async def _handles_on_this_loop(deployment_name: str, app_name: str) -> tuple[Any, Any]:
    """The ``answer`` and ``models`` handles, made on the proxy's own loop so that their router can run there."""
    from ray import serve

    handle = serve.get_deployment_handle(deployment_name, app_name)
    return handle.answer, handle.models


MODEL_SERVER_POLL_S = 0.2
"""How often the proxy asks, before it listens, whether a model server answers yet."""


async def _until_answering(models_handle: Any) -> None:
    """Return once a replica answers a ``models`` call (replicas load their models first); logs every 10 s.

    No overall limit here: the command that starts the server bounds its start-up (``serve --start-timeout``)
    and removes the proxy when that runs out; a proxy that Ray restarts waits the same way."""
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    next_note = 10.0
    while True:
        try:
            async with asyncio.timeout(5.0):
                await models_handle.remote()
            return
        except Exception as exc:  # not deployed yet, no replica yet, a replica starting: ask again shortly
            waited = loop.time() - t0
            if waited >= next_note:
                logger.info("not listening yet: no model server answers after %.0f s (%s)", waited,
                            type(exc).__name__)
                next_note += 10.0
        await asyncio.sleep(MODEL_SERVER_POLL_S)


PROXY_ENV = {
    # The handle's router runs on the proxy's own event loop instead of a loop in another thread, so a request
    # crosses no thread on its way to the replica (the handles are made on that loop: `_handles_on_this_loop`).
    "RAY_SERVE_RUN_ROUTER_IN_SEPARATE_LOOP": "0",
    # Calls go to the replica over Serve's direct gRPC channel rather than as Ray actor tasks: the larger part
    # of what a call through Serve costs here (docs/serving.md has the figures with and without).
    "RAY_SERVE_USE_GRPC_BY_DEFAULT": "1",
}
"""Ray Serve's throughput settings for the proxy's process (environment variables Serve reads at start)."""


def proxy_actor_class(inherit_env: bool = False) -> Any:
    """`ProxyActor` as a Ray actor class that Ray restarts whenever it dies.

    Args:
        inherit_env: `PROXY_ENV` is already in the environment the actor inherits (a Ray that `serve` started
            itself): no runtime environment, so that the actor can take a worker Ray started in advance.
    """
    import ray

    options: dict[str, Any] = {"num_cpus": 0, "max_restarts": -1, "max_task_retries": -1}
    if not inherit_env:
        options["runtime_env"] = {"env_vars": PROXY_ENV}
    return ray.remote(**options)(ProxyActor)
