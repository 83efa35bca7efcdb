"""A small client for `osrs-rllib serve` (sync and asyncio), and a fight played entirely through a server.

Example (a server started with ``osrs-rllib serve experiments/nh``)::

    from serving.client import ServeClient, play_fight

    with ServeClient("127.0.0.1", 9999) as client:
        print(client.models())                           # names, training steps, checksums, frame stacking
        reply = client.act("latest", obs, mask, deterministic=True, return_log_prob=True)
        reply.action, reply.logProb                      # 12 head values, joint log-probability
        print(play_fight(client, "latest", seed=7))      # a whole fight against the baseline

`obs` is one 176-entry observation or a list of frames (newest first; see docs/serving.md for frame
stacking) and `mask` the flat 45-entry environment mask or one list per head. Errors the server reports
raise `ServeReplyError`; the connection stays usable.

Run the worked example: ``python -m serving.client --port 9999 --model latest --seed 7``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from envs.nh.contract import HEAD_SIZES, NUM_LOGITS, OBS_SIZE, FrameStack
from serving.protocol import REPLY_FIELDS, mask_to_heads


class ServeReplyError(RuntimeError):
    """The server answered ``{"error": ...}`` (the message is the server's)."""


@dataclass
class Response:
    """A reply, field for field (camelCase, as existing clients build it with ``Response(**json)``)."""

    action: list[int]
    logProb: float | None = None
    entropy: list[float] | None = None
    """One entropy per head (along the chosen path), when asked."""
    values: list[float] | None = None
    probs: list[list[float]] | None = None
    extensionResults: list[Any] = field(default_factory=list)
    """One result per extension asked, in order; ``[]`` when none was (never null: the old protocol's type)."""


def build_request(
    model: str,
    obs: npt.ArrayLike,
    mask: npt.ArrayLike | list[list[bool]],
    *,
    deterministic: bool | list[bool] = True,
    return_log_prob: bool = False,
    return_entropy: bool = False,
    return_value: bool = False,
    return_probs: bool = False,
    extensions: list[str] | tuple[str, ...] = (),
) -> dict[str, Any]:
    """The request object for one observation (frames newest first) and its environment mask."""
    frames = np.asarray(obs, dtype=np.float32)
    if frames.ndim == 1:
        frames = frames.reshape(-1, OBS_SIZE)
    if isinstance(mask, list) and mask and isinstance(mask[0], list):
        heads = mask
    else:
        flat = np.asarray(mask, dtype=bool).reshape(-1)
        if flat.shape != (NUM_LOGITS,):
            raise ValueError(f"mask must have {NUM_LOGITS} entries or one list per head {list(HEAD_SIZES)}")
        heads = mask_to_heads(flat)
    return {
        "model": model,
        "obs": frames.tolist(),
        "actionMasks": heads,
        "deterministic": deterministic,
        "returnLogProb": return_log_prob,
        "returnEntropy": return_entropy,
        "returnValue": return_value,
        "returnProbs": return_probs,
        "extensions": list(extensions),
    }


def _transient(reply: dict[str, Any]) -> bool:
    """An error the server marks as worth retrying (its message ends in "retry"), e.g. the proxy's deadline."""
    error = reply.get("error")
    return isinstance(error, str) and error.rstrip().endswith("retry")


def _response(reply: dict[str, Any]) -> Response:
    if "error" in reply:
        raise ServeReplyError(reply["error"])
    return Response(**{k: reply[k] for k in REPLY_FIELDS})


class ServeClient:
    """A blocking client on one persistent connection.

    Args:
        host, port: The server's address.
        timeout_s: Socket timeout for connecting and for each reply.
        reconnect_s: On a dropped connection (e.g. a restarted proxy), keep retrying for this long before
            giving up; the request in flight is sent again on the new connection.
        retries: `act` and `models` send a request again, up to this many times, when the server answers
            with a transient error (one that ends in "retry": no replica answered within the server's deadline,
            a replica failed); `request` and `send_line` return every reply as it comes.
    """

    def __init__(self, host: str = "127.0.0.1", port: int = 9999, timeout_s: float = 30.0,
                 reconnect_s: float = 0.0, retries: int = 2) -> None:
        self.host, self.port, self.timeout_s, self.reconnect_s = host, port, timeout_s, reconnect_s
        self.retries = retries
        self._sock: socket.socket | None = None
        self._file: Any = None
        self.connect()

    def connect(self) -> None:
        self.close()
        sock = socket.create_connection((self.host, self.port), timeout=self.timeout_s)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._sock = sock
        self._file = sock.makefile("rb")

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
        if self._sock is not None:
            self._sock.close()
        self._sock = self._file = None

    def __enter__(self) -> ServeClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def send_line(self, line: bytes) -> dict[str, Any]:
        """Send one raw line (newline added if missing) and return the decoded reply object."""
        deadline = time.monotonic() + self.reconnect_s
        while True:
            try:
                if self._sock is None:
                    self.connect()
                assert self._sock is not None
                self._sock.sendall(line if line.endswith(b"\n") else line + b"\n")
                raw = self._file.readline()
                if not raw:
                    raise ConnectionResetError("the server closed the connection")
                return json.loads(raw)
            except (ConnectionError, OSError):
                self.close()
                if time.monotonic() >= deadline:
                    raise
                time.sleep(0.2)

    def request(self, payload: dict[str, Any]) -> dict[str, Any]:
        return self.send_line(json.dumps(payload, separators=(",", ":")).encode())

    def _with_retries(self, payload: dict[str, Any]) -> dict[str, Any]:
        line = json.dumps(payload, separators=(",", ":")).encode()
        reply = self.send_line(line)
        for _ in range(self.retries):
            if not _transient(reply):
                break
            reply = self.send_line(line)
        return reply

    def act(self, model: str, obs: npt.ArrayLike, mask: Any, **options: Any) -> Response:
        """Ask `model` for an action; options as `build_request` (deterministic by default)."""
        return _response(self._with_retries(build_request(model, obs, mask, **options)))

    def models(self) -> list[dict[str, Any]]:
        reply = self._with_retries({"command": "models"})
        if "error" in reply:
            raise ServeReplyError(reply["error"])
        return list(reply["models"])


class AsyncServeClient:
    """The asyncio version of `ServeClient` (one connection; requests are answered in order)."""

    def __init__(self, host: str = "127.0.0.1", port: int = 9999) -> None:
        self.host, self.port = host, port
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._lock = asyncio.Lock()

    async def connect(self) -> AsyncServeClient:
        self._reader, self._writer = await asyncio.open_connection(self.host, self.port, limit=1 << 22)
        sock = self._writer.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return self

    async def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            try:
                await self._writer.wait_closed()
            except (ConnectionError, OSError):
                pass
        self._reader = self._writer = None

    async def __aenter__(self) -> AsyncServeClient:
        return await self.connect()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def send_line(self, line: bytes) -> dict[str, Any]:
        async with self._lock:
            assert self._writer is not None and self._reader is not None, "connect() first"
            self._writer.write(line if line.endswith(b"\n") else line + b"\n")
            await self._writer.drain()
            raw = await self._reader.readline()
            if not raw:
                raise ConnectionResetError("the server closed the connection")
            return json.loads(raw)

    async def request(self, payload: dict[str, Any]) -> dict[str, Any]:
        return await self.send_line(json.dumps(payload, separators=(",", ":")).encode())

    async def act(self, model: str, obs: npt.ArrayLike, mask: Any, **options: Any) -> Response:
        return _response(await self.request(build_request(model, obs, mask, **options)))

    async def models(self) -> list[dict[str, Any]]:
        reply = await self.request({"command": "models"})
        if "error" in reply:
            raise ServeReplyError(reply["error"])
        return list(reply["models"])


# ---------------------------------------------------------------------------------------------------------
# A whole fight through the server
# ---------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FightResult:
    """A fight played through the server, from the served model's point of view."""

    model: str
    seed: int
    outcome: str
    """``won``, ``lost`` or ``tied`` (spec §16.3)."""
    ticks: int
    hp: int
    opponent_hp: int
    requests: int
    mean_latency_ms: float


def member_for_fight(listed: dict[str, Any], fight_seed: int) -> str:
    """The served name that plays a fight of this seed for the listing row `listed` (``{"command": "models"}``):
    the row's own name, or for a per-fight mixture the member its seed draws (`policies.mixture_draw.fight_member`, as
    ``fight`` and ``play`` draw it in-process), so a served mixture plays the fight the file would."""
    from policies.mixture_draw import fight_member

    members = listed.get("members") if listed.get("kind") == "mixture" else None
    if not members:
        return str(listed["name"])
    return str(members[fight_member(fight_seed, len(members))])


def play_fight(client: ServeClient, model: str, seed: int = 0, options: dict[str, Any] | None = None,
               deterministic: bool = True, engine: str = "auto") -> FightResult:
    """Play one simulated fight of `model` (player 0) against the in-simulator baseline, one request per tick.

    Every action comes from the server (client → proxy → Serve → model → action → simulator); the
    simulator here only steps the fight. With `deterministic` the result equals the same fight played
    in-process with the model file (`ModelFile.act`) and the same seed. `engine` picks the simulator
    (`envs.nh.core_engine.make_engine`: ``auto`` = the compiled core when built, ``core``, ``python``); the
    fight is the same on both.
    """
    from envs.nh.core_engine import make_engine
    from envs.nh.params import FightParams

    served = {m["name"]: m for m in client.models()}
    if model not in served:
        raise ServeReplyError(f"the server does not serve {model!r}; it serves {', '.join(served)}")
    name = member_for_fight(served[model], seed)  # a mixture's member for this fight; else the model itself
    stack = FrameStack(served[name].get("frameStack", [0]), OBS_SIZE)
    rules = served[name].get("fightRules") or {}  # the model's training rules (policies/fight_rules.py); options win
    fight = make_engine(engine, FightParams.from_options({**rules, **(options or {})}))
    fight.reset(seed=seed)
    requests, spent = 0, 0.0
    while True:
        frames = stack.push(fight.obs[0]).reshape(-1, OBS_SIZE)
        start = time.perf_counter()
        reply = client.act(name, frames, fight.masks[0], deterministic=deterministic)
        spent += time.perf_counter() - start
        requests += 1
        step = fight.step([reply.action, None])
        if step.terminated or step.truncated:
            outcome = step.outcomes[0]
            info = fight.info(0)
            return FightResult(
                model=model,
                seed=seed,
                outcome=outcome.value if outcome is not None else "tied",
                ticks=info["tick"],
                hp=info["hp"],
                opponent_hp=info["opponent_hp"],
                requests=requests,
                mean_latency_ms=1000.0 * spent / requests,
            )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Play fights through an osrs-rllib server against the baseline.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=9999)
    parser.add_argument("--model", default="latest")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--fights", type=int, default=1)
    parser.add_argument("--engine", choices=("auto", "core", "python"), default="auto",
                        help="simulator of the fights (auto: the compiled core when built)")
    args = parser.parse_args(argv)
    with ServeClient(args.host, args.port) as client:
        for k in range(args.fights):
            r = play_fight(client, args.model, seed=args.seed + k, engine=args.engine)
            print(f"{r.model} vs baseline, seed {r.seed}: {r.outcome} after {r.ticks} ticks "
                  f"(hp {r.hp} vs {r.opponent_hp}; {r.requests} requests, {r.mean_latency_ms:.2f} ms each)")


if __name__ == "__main__":
    main()
