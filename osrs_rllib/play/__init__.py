"""`osrs-rllib play`: fight an agent yourself, in the browser, at game speed (docs/play.md).

* `controls`: the page's buttons and keys as the 12 action heads (spec §14), and how a tick's action is made.
* `opponents`: who the person can play (model files, experiments, the shipped models, the ladder, a server).
* `deadline`: the opponent's decisions off the event loop, and what a late one means.
* `session`: one game on the server's clock, recorded as a replay.
* `scores`: the person's results per opponent, kept across games.
* `server`: the FastAPI app (page, WebSocket, replays) on uvicorn; `limits` the command's defaults.
* `launch`: the command's settings checked and the page served (`run_play`; the command itself, which only parses
  and prints: `osrs_rllib/commands/play.py`).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from osrs_rllib.play.controls import CONTROLS, Choices, InputError, enabled_controls
    from osrs_rllib.play.opponents import Opponent, OpponentError, resolve_opponents
    from osrs_rllib.play.server import PlayConfig, PlayServer, create_app
    from osrs_rllib.play.session import GameSession, GameSummary

_EXPORTS = {
    "CONTROLS": "controls",
    "Choices": "controls",
    "InputError": "controls",
    "enabled_controls": "controls",
    "Opponent": "opponents",
    "OpponentError": "opponents",
    "resolve_opponents": "opponents",
    "PlayConfig": "server",
    "PlayServer": "server",
    "create_app": "server",
    "GameSession": "session",
    "GameSummary": "session",
}
__all__ = [
    "CONTROLS",
    "Choices",
    "GameSession",
    "GameSummary",
    "InputError",
    "Opponent",
    "OpponentError",
    "PlayConfig",
    "PlayServer",
    "create_app",
    "enabled_controls",
    "resolve_opponents",
]


def __getattr__(name: str) -> Any:
    """Load a submodule on first use: importing `osrs_rllib.play.limits` (the `play` command's defaults) must not
    start the web server's and torch's imports."""
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    globals()[name] = value
    return value
