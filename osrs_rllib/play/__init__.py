"""`osrs-rllib play`: fight an agent yourself, in the browser, at game speed (docs/play.md).

* `controls`: the page's buttons and keys as the 12 action heads (spec §14), and how a tick's action is made.
* `opponents`: who the person can play (model files, experiments, the shipped models, the ladder, a server).
* `deadline`: the opponent's decisions off the event loop, and what a late one means.
* `session`: one game on the server's clock, recorded as a replay.
* `scores`: the person's results per opponent, kept across games.
* `server`: the FastAPI app (page, WebSocket, replays) on uvicorn; `cli` the command.
"""

from osrs_rllib.play.controls import CONTROLS, Choices, InputError, enabled_controls
from osrs_rllib.play.opponents import Opponent, OpponentError, resolve_opponents
from osrs_rllib.play.server import PlayConfig, PlayServer, create_app
from osrs_rllib.play.session import GameSession, GameSummary

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
