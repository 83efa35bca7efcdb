"""Shared fixtures of the play tests: a real play server (uvicorn on 127.0.0.1, port 0) per test, a tiny model
file made the way the replay tests make theirs, and the replay tests' headless chromium."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import torch

from envs.nh.contract import CRITIC_SIZE, OBS_SIZE
from osrs_rllib.play import PlayConfig, PlayServer, resolve_opponents
from policies.model_file import save_model_file
from policies.network import NHPolicyNetwork
from policies.network_config import NetworkConfig
from tests.osrs_rllib.test_replay_browser import browser  # noqa: F401  (the chromium fixture, shared)

SHORT_TICKS = 30
"""max_episode_ticks of test games: long enough for attacks, prayers and food, short enough for a browser test."""


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small, untrained policy network saved as a model file (as tests/osrs_rllib/test_replay.py does)."""
    torch.manual_seed(3)
    net = NHPolicyNetwork(OBS_SIZE, CRITIC_SIZE, NetworkConfig(actor_hidden=(32,), critic_hidden=(16,)))
    return save_model_file(net, tmp_path_factory.mktemp("play-models") / "tiny.nhmodel")


@pytest.fixture
def play_server(tmp_path: Path) -> Iterator[Callable[..., PlayServer]]:
    """Start a play server with the given opponents and config fields; every one started is stopped after."""
    started: list[PlayServer] = []

    def start(opponents: list[str] | None = None, **fields: Any) -> PlayServer:
        fields.setdefault("tick_ms", 50)
        fields.setdefault("seed", 11)
        fields.setdefault("options", {"max_episode_ticks": SHORT_TICKS})
        config = PlayConfig(opponents=resolve_opponents(opponents or ["expert"]), data_dir=tmp_path / "play", **fields)
        server = PlayServer(config, port=0)
        server.state.load()
        server.start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


def ws_url(server: PlayServer) -> str:
    return f"ws://{server.host}:{server.port}/ws"


class PageSocket:
    """The page's side of the WebSocket, for tests that speak the protocol directly."""

    def __init__(self, server: PlayServer, timeout_s: float = 30.0) -> None:
        import websocket  # websocket-client

        self.ws = websocket.create_connection(ws_url(server), timeout=timeout_s)
        self.hello = self.recv()
        assert self.hello["type"] == "hello"

    def send(self, message: Any) -> None:
        self.ws.send(message if isinstance(message, str) else json.dumps(message))

    def recv(self) -> dict[str, Any]:
        return json.loads(self.ws.recv())

    def until(self, *types: str) -> dict[str, Any]:
        """The next message of one of `types` (others are skipped)."""
        while True:
            msg = self.recv()
            if msg["type"] in types:
                return msg

    def close(self) -> None:
        self.ws.close()
