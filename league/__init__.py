"""The league: frozen snapshots, payoff, opponent sampling, exploiters and ratings, as plain Python.

Nothing here imports Ray or knows the game; the RLlib adapter feeds results in and applies the returned
`league.events` (see `docs/league.md`).
"""

from league.config import LeagueConfig, LeagueConfigError
from league.events import EvictEvent, LeagueEvent, ResetEvent, SnapshotEvent
from league.league import League
from league.players import GameResult, Outcome, Snapshot

__all__ = [
    "EvictEvent",
    "GameResult",
    "League",
    "LeagueConfig",
    "LeagueConfigError",
    "LeagueEvent",
    "Outcome",
    "ResetEvent",
    "Snapshot",
    "SnapshotEvent",
]
