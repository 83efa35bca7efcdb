"""Who is in the league: the player-id scheme, game outcomes and the metadata of frozen snapshots.

Every player is named by a plain string that is also a valid RLlib policy id, so the RLlib side can use the
id as the policy id without translating it (RLlib forbids ``<>:"/\\|?`` and a trailing dot or space, see
`is_valid_policy_id`):

==========================  ======================================================================
id                          player
==========================  ======================================================================
``main``                    the main learner (trained)
``main_exploiter_<i>``      main exploiter ``i`` (trained; plays only ``main``)
``league_exploiter_<i>``    league exploiter ``i`` (trained; plays PFSP over the whole league)
``<learner>@v<k>``          frozen snapshot ``k`` of a learner: ``main@v3``, ``main_exploiter_0@v1``
``scripted_<name>``         a scripted opponent of the ladder, e.g. ``scripted_tribrid``
``baseline``                the in-simulator bot
``target_<slug>``           a fixed model file; the path is kept in `FixedPlayer.path`
==========================  ======================================================================

The league never looks inside a player: it knows ids, metadata and results, nothing of the game or of Ray.
"""

from __future__ import annotations

import enum
import re
from dataclasses import asdict, dataclass
from pathlib import PurePath
from typing import Any, NamedTuple

MAIN = "main"
"""Id of the main learner."""
BASELINE = "baseline"
"""Id of the in-simulator bot."""
MAIN_EXPLOITER_PREFIX = "main_exploiter_"
LEAGUE_EXPLOITER_PREFIX = "league_exploiter_"
SCRIPTED_PREFIX = "scripted_"
TARGET_PREFIX = "target_"
SNAPSHOT_SEPARATOR = "@v"

_INVALID_POLICY_ID_CHARS = re.compile(r'[<>:"/\\|?]')
"""Characters RLlib rejects in policy ids (`ray.rllib.core.rl_module.validate_module_id`, Ray 2.x)."""
_SNAPSHOT_ID = re.compile(r"^(?P<source>.+)@v(?P<version>[0-9]+)$")
_SLUG_UNSAFE = re.compile(r"[^A-Za-z0-9_\-]+")


class PlayerKind(enum.StrEnum):
    """What an id names (read off the id itself by `player_kind`)."""

    MAIN = "main"
    MAIN_EXPLOITER = "main_exploiter"
    LEAGUE_EXPLOITER = "league_exploiter"
    SNAPSHOT = "snapshot"
    SCRIPTED = "scripted"
    BASELINE = "baseline"
    TARGET = "target"


FIXED_KINDS: tuple[PlayerKind, ...] = (PlayerKind.SCRIPTED, PlayerKind.BASELINE, PlayerKind.TARGET)
"""Kinds of players that never train and are not snapshots: registered by name, never evicted."""


class Outcome(enum.Enum):
    """Result of one game from the first player's point of view; the value is that player's score."""

    WIN = 1.0
    DRAW = 0.5
    LOSS = 0.0

    @property
    def score(self) -> float:
        return float(self.value)

    def flipped(self) -> Outcome:
        """The same game seen from the other player."""
        return Outcome(1.0 - self.value)


class GameResult(NamedTuple):
    """One finished game between two players; `outcome` is `player_a`'s."""

    player_a: str
    player_b: str
    outcome: Outcome


def as_outcome(value: Outcome | float) -> Outcome:
    """Accept an `Outcome` or its score (1, 0.5 or 0); anything else is an error naming the choices."""
    if isinstance(value, Outcome):
        return value
    try:
        return Outcome(float(value))
    except (TypeError, ValueError):
        raise ValueError(f"unknown game outcome {value!r}; expected an Outcome or a score of 1, 0.5 or 0") from None


def is_valid_policy_id(player_id: str) -> bool:
    """True when RLlib would accept `player_id` as a policy id (mirrors its check without importing Ray)."""
    return (
        isinstance(player_id, str)
        and bool(player_id)
        and _INVALID_POLICY_ID_CHARS.search(player_id) is None
        and player_id[-1] not in (" ", ".")
    )


def main_exploiter_id(index: int) -> str:
    return f"{MAIN_EXPLOITER_PREFIX}{index}"


def league_exploiter_id(index: int) -> str:
    return f"{LEAGUE_EXPLOITER_PREFIX}{index}"


def snapshot_id(source: str, version: int) -> str:
    """Id of frozen snapshot `version` of the learner `source`, e.g. ``main@v3``."""
    return f"{source}{SNAPSHOT_SEPARATOR}{version}"


def parse_snapshot_id(player_id: str) -> tuple[str, int] | None:
    """``(source, version)`` of a snapshot id, or None when `player_id` is not one."""
    match = _SNAPSHOT_ID.match(player_id)
    if match is None:
        return None
    return match["source"], int(match["version"])


def scripted_id(name: str) -> str:
    return f"{SCRIPTED_PREFIX}{name}"


def slugify(text: str) -> str:
    """Letters, digits, ``_`` and ``-`` only (runs of anything else become one ``_``)."""
    return _SLUG_UNSAFE.sub("_", text).strip("_")


def target_id(path: str, name: str | None = None) -> str:
    """Id of a fixed model file: ``target_<slug>`` of `name`, or of the file's stem when no name is given.

    RLlib policy ids may not contain ``:`` or ``/``, so the path itself cannot be the id; it is kept as
    metadata (`FixedPlayer.path`). Two files with the same stem need distinct `name`s.
    """
    slug = slugify(name if name is not None else PurePath(path).stem)
    if not slug:
        raise ValueError(f"cannot derive a target id from path {path!r} and name {name!r}; pass a name with letters")
    return f"{TARGET_PREFIX}{slug}"


def player_kind(player_id: str) -> PlayerKind:
    """What `player_id` names, read from the id scheme; an id outside the scheme is an error."""
    if parse_snapshot_id(player_id) is not None:
        return PlayerKind.SNAPSHOT
    if player_id == MAIN:
        return PlayerKind.MAIN
    if player_id == BASELINE:
        return PlayerKind.BASELINE
    for prefix, kind in (
        (MAIN_EXPLOITER_PREFIX, PlayerKind.MAIN_EXPLOITER),
        (LEAGUE_EXPLOITER_PREFIX, PlayerKind.LEAGUE_EXPLOITER),
    ):
        if player_id.startswith(prefix) and player_id[len(prefix) :].isdigit():
            return kind
    if player_id.startswith(SCRIPTED_PREFIX) and len(player_id) > len(SCRIPTED_PREFIX):
        return PlayerKind.SCRIPTED
    if player_id.startswith(TARGET_PREFIX) and len(player_id) > len(TARGET_PREFIX):
        return PlayerKind.TARGET
    raise ValueError(
        f"{player_id!r} is not a league player id; expected 'main', 'main_exploiter_<i>', 'league_exploiter_<i>', "
        "'<learner>@v<k>', 'scripted_<name>', 'baseline' or 'target_<slug>'"
    )


def is_learner(player_id: str) -> bool:
    """True for the players whose weights train: ``main`` and the exploiters."""
    return player_kind(player_id) in (PlayerKind.MAIN, PlayerKind.MAIN_EXPLOITER, PlayerKind.LEAGUE_EXPLOITER)


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A frozen copy of a learner's weights at one moment; the weights themselves live on the RLlib side."""

    player_id: str
    """``<source>@v<version>``; also its RLlib policy id."""
    source: str
    """The learner it was copied from (``main``, ``main_exploiter_0``, ...)."""
    version: int
    """1 for a learner's first snapshot, then 2, 3, ... (never reused, even after an eviction)."""
    training_steps: int
    """The source's training steps (env steps) when it was copied."""
    iteration: int
    """Training iteration at which it was taken."""
    created_at: float
    """Wall-clock time (Unix seconds) at which it was taken."""
    reason: str = "interval"
    """Why it was taken: ``interval`` (main's cadence), ``win_rate``, ``step_budget`` or ``manual``."""
    env_steps: int | None = None
    """The whole run's env steps when it was taken, the figure a model file exported by training records (with
    exploiters it is more than `training_steps`, which counts the source's own share); None in leagues saved
    before it was recorded."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> Snapshot:
        return cls(**values)


@dataclass(frozen=True, slots=True)
class FixedPlayer:
    """A player that never trains and is never snapshotted: a scripted rung, the baseline or a target file."""

    player_id: str
    kind: PlayerKind
    path: str | None = None
    """Model file of a target (None for scripted opponents and the baseline)."""

    def to_dict(self) -> dict[str, Any]:
        return {"player_id": self.player_id, "kind": str(self.kind), "path": self.path}

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> FixedPlayer:
        return cls(player_id=values["player_id"], kind=PlayerKind(values["kind"]), path=values.get("path"))
