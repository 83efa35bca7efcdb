"""Decisions the league hands to the training side, which applies them by copying or dropping weights.

The league core only decides; it never touches weights. `League.on_iteration` (and `League.add_snapshot`)
return these events in the order they must be applied: a snapshot of an exploiter comes before that
exploiter's reset, so the snapshot freezes the weights that earned it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

from league.players import Snapshot


@dataclass(frozen=True, slots=True)
class SnapshotEvent:
    """Freeze the current weights of `snapshot.source` into a new non-trainable policy `snapshot.player_id`."""

    snapshot: Snapshot
    type: Literal["snapshot"] = "snapshot"

    @property
    def source(self) -> str:
        return self.snapshot.source

    @property
    def snapshot_id(self) -> str:
        return self.snapshot.player_id

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, **self.snapshot.to_dict()}


@dataclass(frozen=True, slots=True)
class ResetEvent:
    """Overwrite the weights (and optimizer state) of the learner `player_id` with a copy of `to`'s weights.

    `to` is always the current main policy (``main``): we have no supervised agent to reset to, as AlphaStar
    had, and main's current weights are the strongest general agent available.
    """

    player_id: str
    to: str
    reason: str
    type: Literal["reset"] = "reset"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class EvictEvent:
    """Remove the frozen policy `snapshot_id` (the pool went over ``max_snapshots``)."""

    snapshot_id: str
    reason: str = "max_snapshots"
    type: Literal["evict"] = "evict"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


LeagueEvent = SnapshotEvent | ResetEvent | EvictEvent
