"""The web app of `osrs-rllib play`: the page, its WebSocket, the replays and the score table (FastAPI on uvicorn).

Routes (all on one address, 127.0.0.1 unless told otherwise):

* ``GET /``: the play page (`static/play.html`; its script and styles, and the replay viewer's fight view, come
  from this server: nothing is fetched from anywhere else, so it works offline).
* ``WS /ws``: one connection per tab; each game runs on it (protocol below).
* ``GET /replays/<game>``: the replay viewer's page of a finished game; ``/replays/<game>.nhreplay`` the file.
* ``GET /api/scores``, ``GET /api/state``: the score table, the opponents and the server's settings (JSON).

The WebSocket protocol (JSON text messages; the page is the client)::

    → {"type": "start", "opponent": "expert", "build": "MED" | null, "fight_type": "LMS" | null,
       "pace": 600 | "step" | null}
    → {"type": "control", "id": "protect_magic"}     a button or key (ids: `controls.CONTROLS`)
    → {"type": "action", "action": [12 ints]}        a whole action for the next tick (tools, tests)
    → {"type": "clear"} | {"type": "pace", "pace": 1200 | "step"} | {"type": "step"} | {"type": "scores"}
    ← {"type": "hello", "opponents": [...], "controls": [...], "scores": [...], ...}   on connecting
    ← {"type": "start" | "tick", "tick": {replay tick}, "mask": "0110…", "pending": [...], "next": [12 ints],
       "late_ticks": 0, ...}
    ← {"type": "choices", "pending": [...], "next": [...]}                              after each choice
    ← {"type": "end", "summary": {...}, "replay_url": "/replays/<game>", "scores": [...]}
    ← {"type": "error", "code": "illegal", "message": "..."}                            and nothing else changes

Bad input is answered with an ``error`` message on the socket and changes nothing: an unknown message or
control, an action that is not 12 legal head values, a message that is not JSON or too large, a flood (more than
`MESSAGES_PER_S` a second on average: the excess is dropped, with one error a second saying so), a choice after
the game ended. Closing the tab mid-game ends that game (no replay; the score table counts it as abandoned) and
nothing else: the server keeps serving.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import secrets
import signal
import socket
import threading
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from fastapi import FastAPI, HTTPException, WebSocket
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, Response

from envs.nh.contract import HEAD_OFFSETS, HEADS
from envs.nh.loadouts import Build
from envs.nh.params import ParamError
from envs.nh.state import FightMode
from osrs_rllib.play.controls import CONTROL_LIST, InputError, describe_action
from osrs_rllib.play.limits import DEFAULT_PORT
from osrs_rllib.play.opponents import Opponent, OpponentHost
from osrs_rllib.play.scores import ScoreTable
from osrs_rllib.play.session import GameSession, GameSummary, check_pace

logger = logging.getLogger(__name__)

MESSAGES_PER_S = 30.0
"""Sustained rate of messages a page may send (far above what hands on a keyboard produce)."""
MESSAGE_BURST = 60
"""Messages a page may send at once before the rate applies."""
MAX_MESSAGE_BYTES = 4096
"""Largest message accepted (an action is ~60 bytes); uvicorn closes the socket on frames over `WS_MAX_BYTES`."""
WS_MAX_BYTES = 1 << 16
RECENT_GAMES = 32
"""Finished games kept in memory (their summaries in ``/api/state``; their clocks' timings for the benchmark)."""
OUTBOX_LIMIT = 512
"""Messages queued for a page that does not read them (a frozen tab) before the connection is closed."""
EXTRA_PACES_MS = (900, 1200, 1800, 3000)
"""Slower paces the page offers besides the server's own (``--tick-ms``) and step mode."""
_GAME_ID = re.compile(r"[A-Za-z0-9_-]{1,80}\Z")
_STATIC = "osrs_rllib.play"
_REPLAY_TEMPLATES = "osrs_rllib.replay"
ASSETS: dict[str, tuple[str, str, str]] = {
    "play.js": (_STATIC, "static/play.js", "text/javascript"),
    "play.css": (_STATIC, "static/play.css", "text/css"),
    "fightview.js": (_REPLAY_TEMPLATES, "templates/fightview.js", "text/javascript"),
    "viewer.css": (_REPLAY_TEMPLATES, "templates/viewer.css", "text/css"),
}
"""The page's files: its own, and the replay viewer's fight view (drawn by the same code as replays)."""
PAGE_CSP = (
    "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self'; connect-src 'self'"
)
"""The play page may load nothing but this server's files."""


@dataclass
class PlayConfig:
    """Everything `create_app` needs.

    Attributes:
        opponents: The opponents the page offers (the first is the default).
        data_dir: ``replays/`` and ``scores.json`` live here.
        build: The default build (None: drawn per game from the preset's builds, §12.7).
        fight_type: The default fight type (None: the build's own).
        tick_ms: The default pace (600 ms: the game's).
        options: Extra reset options for every game (``--set``).
        seed: Game k gets simulator seed ``seed + k``; None: a random seed per game.
        engine: `make_engine`'s choice.
        model_sampling: Model opponents sample (True) or play greedy (False); None: each its default mode of play
            (`Opponent.sampling`, from its file's ``play_mode``).
    """

    opponents: Sequence[Opponent]
    data_dir: Path
    build: str | None = None
    fight_type: str | None = None
    tick_ms: int = 600
    options: dict[str, Any] = field(default_factory=dict)
    seed: int | None = None
    engine: str = "auto"
    model_sampling: bool | None = None


def _asset(name: str) -> str:
    package, path, _ = ASSETS[name] if name in ASSETS else (_STATIC, f"static/{name}", "")
    return resources.files(package).joinpath(path).read_text(encoding="utf-8")


class PlayState:
    """What every connection shares: the opponents (models loaded once), the score table, the game counter."""

    def __init__(self, config: PlayConfig) -> None:
        if not config.opponents:
            raise ValueError("no opponent to play: name one")
        self.config = config
        self.hosts = {o.name: OpponentHost(o, config.model_sampling) for o in config.opponents}
        self.replay_dir = Path(config.data_dir) / "replays"
        self.scores = ScoreTable(Path(config.data_dir) / "scores.json")
        self.games = 0
        self.sessions: set[GameSession] = set()
        """Games on open pages (running, or finished and still shown)."""
        self.recent: deque[GameSession] = deque(maxlen=RECENT_GAMES)
        """The last games that ended, finished or left mid-fight, newest last."""

    def load(self) -> None:
        """Load every model opponent now, before the first page connects (a load blocks for a moment)."""
        for host in self.hosts.values():
            host.load()

    def next_game(self) -> tuple[str, int]:
        """A new game's id (time-ordered, unique in this directory) and its simulator seed."""
        k = self.games
        self.games += 1
        seed = self.config.seed + k if self.config.seed is not None else secrets.randbelow(2**31)
        stamp = time.strftime("%Y%m%d-%H%M%S")
        return f"game-{stamp}-{k:04d}-{secrets.token_hex(2)}", seed

    def paces(self) -> list[int | str]:
        return [*sorted({self.config.tick_ms, *EXTRA_PACES_MS}), "step"]

    def hello(self) -> dict[str, Any]:
        cfg = self.config
        return {
            "type": "hello",
            "opponents": [o.to_json() for o in cfg.opponents],
            "builds": [b.value for b in Build],
            "fight_types": [m.value for m in FightMode],
            "defaults": {
                "opponent": cfg.opponents[0].name,
                "build": cfg.build,
                "fight_type": cfg.fight_type,
                "pace": cfg.tick_ms,
            },
            "paces": self.paces(),
            "controls": [c.to_json() for c in CONTROL_LIST],
            "heads": [{"id": h.id, "values": list(h.value_names)} for h in HEADS],
            "head_offsets": list(HEAD_OFFSETS),
            "scores": self.scores.to_json(),
        }


class TokenBucket:
    """`rate` messages a second on average, `burst` at once: what a page may send before messages are dropped."""

    def __init__(self, rate: float, burst: int) -> None:
        self.rate, self.burst = float(rate), float(burst)
        self.tokens = self.burst
        self.at = time.monotonic()

    def take(self) -> bool:
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self.at) * self.rate)
        self.at = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return True
        return False


class Connection:
    """One page: its game (one at a time), its messages in, and a writer task for its messages out (a tick only
    queues a message, so a page that reads slowly never holds up a game's clock)."""

    def __init__(self, ws: WebSocket, state: PlayState) -> None:
        self.ws = ws
        self.state = state
        self.peer = f"{ws.client.host}:{ws.client.port}" if ws.client else "?"
        self.outbox: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self.session: GameSession | None = None
        self.bucket = TokenBucket(MESSAGES_PER_S, MESSAGE_BURST)
        self.dropped = 0
        self._last_flood_error = 0.0
        self._closing = False

    def send(self, message: dict[str, Any]) -> None:
        if self._closing:
            return
        if self.outbox.qsize() >= OUTBOX_LIMIT:
            logger.warning("%s reads nothing: %d messages queued; closing the connection", self.peer, OUTBOX_LIMIT)
            self._closing = True
            self.outbox.put_nowait(None)
            return
        self.outbox.put_nowait(message)

    def error(self, code: str, message: str) -> None:
        self.send({"type": "error", "code": code, "message": message})

    async def _writer(self) -> None:
        while True:
            message = await self.outbox.get()
            if message is None:
                await self.ws.close(code=1008)
                return
            await self.ws.send_text(json.dumps(message, separators=(",", ":")))

    async def run(self) -> None:
        await self.ws.accept()
        writer = asyncio.create_task(self._writer())
        self.send(self.state.hello())
        try:
            while not writer.done():
                event = await self.ws.receive()
                if event["type"] == "websocket.disconnect":
                    break
                self.handle(event.get("text"), event.get("bytes"))
        except Exception:  # a broken socket ends this page only
            logger.warning("connection %s failed", self.peer, exc_info=True)
        finally:
            self._closing = True
            self._end_session()
            writer.cancel()
            try:
                await writer
            except (asyncio.CancelledError, Exception):
                pass

    def _end_session(self) -> None:
        session = self.session
        if session is not None and not session.finished:
            session.abandon()
            self.state.recent.append(session)
            self.state.scores.record_abandoned(session.opponent.name)
            logger.info("%s left game %s at tick %d", self.peer, session.game, session.engine.tick)
        if session is not None:
            self.state.sessions.discard(session)

    # ---- input ------------------------------------------------------------------------------------------------
    def handle(self, text: str | None, data: bytes | None = None) -> None:
        """One message from the page: act on it or answer with an error (see the module docstring)."""
        if not self.bucket.take():
            self.dropped += 1
            now = time.monotonic()
            if now - self._last_flood_error >= 1.0:
                self._last_flood_error = now
                self.error("flood", f"too many messages: at most {MESSAGES_PER_S:.0f} a second; "
                           f"{self.dropped} dropped so far (they changed nothing)")  # fmt: skip
            return
        if text is None:
            self.error("bad_message", f"send JSON text, not {len(data or b'')} bytes of binary")
            return
        if len(text) > MAX_MESSAGE_BYTES:
            self.error("too_large", f"message of {len(text)} characters; at most {MAX_MESSAGE_BYTES}")
            return
        try:
            msg = json.loads(text)
        except json.JSONDecodeError as exc:
            self.error("bad_json", f"not JSON ({exc.msg} at character {exc.pos})")
            return
        kind = msg.get("type") if isinstance(msg, dict) else None
        handler = _HANDLERS.get(kind) if isinstance(kind, str) else None
        if handler is None:
            self.error("unknown_type", f"unknown message type {kind!r}; expected one of {', '.join(_HANDLERS)}")
            return
        try:
            handler(self, msg)
        except InputError as exc:
            self.error(exc.code, str(exc))

    def _game(self) -> GameSession:
        if self.session is None:
            raise InputError("no_game", "no game yet: send start first")
        return self.session

    def _choices(self, taken: list[str] | None = None) -> None:
        session = self._game()
        nxt = session.next_action()
        self.send({"type": "choices", "taken": taken or [], "pending": session.choices.pending(), "next": nxt,
                   "next_text": describe_action(nxt)})  # fmt: skip

    def on_start(self, msg: dict[str, Any]) -> None:
        if self.session is not None and not self.session.finished:
            raise InputError("game_running", "a game is running on this page; finish it first")
        state, cfg = self.state, self.state.config
        name = msg.get("opponent") or cfg.opponents[0].name
        host = state.hosts.get(name) if isinstance(name, str) else None
        if host is None:
            raise InputError("unknown_opponent", f"unknown opponent {name!r}; this server offers "
                             f"{', '.join(state.hosts)}")  # fmt: skip
        build = msg.get("build", cfg.build) or None
        fight_type = msg.get("fight_type", cfg.fight_type) or None
        pace = check_pace(msg.get("pace", cfg.tick_ms))
        try:
            params = host.opponent.params(build, fight_type, cfg.options)
        except (ParamError, ValueError, TypeError) as exc:
            raise InputError("bad_option", str(exc)) from None
        if self.session is not None:
            state.sessions.discard(self.session)
        game, seed = state.next_game()
        session = GameSession(game, host, params, seed, pace, state.replay_dir, self.send, self._ended, cfg.engine)
        self.session = session
        state.sessions.add(session)
        logger.info("%s started %s against %s (seed %d)", self.peer, game, host.opponent.name, seed)
        session.start()

    def _ended(self, summary: GameSummary) -> list[dict[str, Any]]:
        logger.info("game %s: %s after %d ticks", summary.game, summary.outcome, summary.ticks)
        if self.session is not None:
            self.state.recent.append(self.session)
        return self.state.scores.record(summary)

    def on_control(self, msg: dict[str, Any]) -> None:
        self._choices(self._game().choose(msg.get("id")))

    def on_action(self, msg: dict[str, Any]) -> None:
        self._game().set_action(msg.get("action"))
        self._choices()

    def on_clear(self, msg: dict[str, Any]) -> None:
        self._game().clear()
        self._choices()

    def on_pace(self, msg: dict[str, Any]) -> None:
        session = self._game()
        session.set_pace(msg.get("pace"))
        self.send({"type": "pace", "pace": session.pace_ms if session.pace_ms is not None else "step"})

    def on_step(self, msg: dict[str, Any]) -> None:
        self._game().step()

    def on_scores(self, msg: dict[str, Any]) -> None:
        self.send({"type": "scores", "scores": self.state.scores.to_json()})


_HANDLERS = {
    "start": Connection.on_start,
    "control": Connection.on_control,
    "action": Connection.on_action,
    "clear": Connection.on_clear,
    "pace": Connection.on_pace,
    "step": Connection.on_step,
    "scores": Connection.on_scores,
}


def create_app(config: PlayConfig, state: PlayState | None = None) -> FastAPI:
    """The play app (see the module docstring); `state` is made from `config` unless given."""
    state = state or PlayState(config)
    app = FastAPI(title="osrs-rllib play", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.play = state

    @app.get("/", response_class=HTMLResponse)
    def page() -> Response:
        return HTMLResponse(_asset("play.html"), headers={"Content-Security-Policy": PAGE_CSP})

    @app.get("/assets/{name}")
    def asset(name: str) -> Response:
        if name not in ASSETS:
            raise HTTPException(404, f"no asset {name!r}")
        return Response(_asset(name), media_type=ASSETS[name][2], headers={"Cache-Control": "no-cache"})

    @app.get("/api/scores")
    def scores() -> JSONResponse:
        return JSONResponse(state.scores.to_json())

    @app.get("/api/state")
    def server_state() -> JSONResponse:
        hello = state.hello()
        hello.pop("type")
        hello["games_started"] = state.games
        hello["games_running"] = sum(not s.finished for s in state.sessions)
        hello["recent"] = [s.summary.to_json() for s in state.recent if s.summary is not None]
        return JSONResponse(hello)

    @app.get("/replays/{name}")
    def replay(name: str) -> Response:
        from osrs_rllib.replay import ReplayError, render_html

        stem, is_file = (name[: -len(".nhreplay")], True) if name.endswith(".nhreplay") else (name, False)
        path = state.replay_dir / f"{stem}.nhreplay"
        if not _GAME_ID.match(stem) or not path.is_file():
            raise HTTPException(404, f"no replay {name!r}")
        if is_file:
            return FileResponse(path, media_type="application/gzip", filename=path.name)
        try:
            return HTMLResponse(render_html(path))
        except ReplayError as exc:
            raise HTTPException(500, str(exc)) from None

    @app.websocket("/ws")
    async def ws(websocket: WebSocket) -> None:
        await Connection(websocket, state).run()

    return app


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
"""What stops `play` cleanly: Ctrl-C in a terminal, SIGTERM from a service manager or `kill`."""


def _server_class() -> type[Any]:
    """uvicorn's server, except that a stop signal ends `run` normally.

    Why: uvicorn shuts down gracefully on SIGINT/SIGTERM and then raises the same signal again, so that a program
    embedding it dies of it; for this command the stop *is* the normal end (exit 0, as `serve` and `train` do),
    and SIGTERM would otherwise end the process with status 143 after its clean shutdown.
    """
    import contextlib
    from collections.abc import Iterator

    import uvicorn

    class _Server(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            if threading.current_thread() is not threading.main_thread():
                yield  # signals reach the main thread only: tests and benchmarks stop a threaded server by `stop`
                return
            previous = {sig: signal.signal(sig, self.handle_exit) for sig in STOP_SIGNALS}
            try:
                yield
            finally:
                for sig, handler in previous.items():
                    signal.signal(sig, handler)

    return _Server


class PlayServer:
    """The app on uvicorn, on a socket bound before serving (so that the URL, with the real port when port 0
    was asked for, is known before the first request).

    `run` serves in the foreground (the command; Ctrl-C stops it); `start` / `stop` in a background thread
    (tests, benchmarks).
    """

    def __init__(self, config: PlayConfig, host: str = "127.0.0.1", port: int = DEFAULT_PORT) -> None:
        import uvicorn

        self.state = PlayState(config)
        self.app = create_app(config, self.state)
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.sock = socket.socket(family, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self.sock.bind((host, port))
            self.sock.listen(128)  # from here a browser may connect: it waits in the backlog until uvicorn runs
        except OSError as exc:
            self.sock.close()
            raise OSError(f"cannot listen on {host}:{port}: {exc.strerror or exc} (pick another --port)") from None
        self.host, self.port = self.sock.getsockname()[:2]
        self.server = _server_class()(
            uvicorn.Config(self.app, log_level="warning", ws_max_size=WS_MAX_BYTES, lifespan="off", ws="auto")
        )
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/"

    def run(self) -> None:
        self.server.run(sockets=[self.sock])

    def catch_stop_signals(self) -> None:
        """From now on (before the URL is printed), SIGINT and SIGTERM stop the server cleanly; uvicorn installs
        the same handler only once `run` has started, and a signal in between would kill the process."""
        for sig in STOP_SIGNALS:
            signal.signal(sig, self.server.handle_exit)

    def start(self) -> str:
        """Serve in a background thread; returns the URL once the server accepts connections."""
        self._thread = threading.Thread(target=self.run, name="play-server", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 30.0
        while not self.server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the play server did not start")
            time.sleep(0.02)
        return self.url

    def stop(self) -> None:
        self.server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=30.0)
        self.sock.close()
