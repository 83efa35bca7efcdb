"""The replay file: one fight, tick by tick, as gzip-compressed JSON lines (``*.nhreplay``; docs/replays.md).

Why JSON lines under gzip rather than a binary format: a replay is read by people and by other tools
(``zcat fight.nhreplay | head -1 | jq``) as much as by this package, its size is dominated by repeated keys
that gzip removes (a 300-tick fight is ~30 KB), and nothing in it is ever unpickled.

Layout (every line one JSON object, in this order):

1. ``{"kind": "header", "format": "osrs-rllib-replay/1", ...}``: the fight's parameters (`FightParams` as
   reset options), seed, build, fight type, the two players, the head names and the item names.
2. ``{"kind": "tick", "t": 0, ...}``: the state after reset (no actions), then one ``tick`` line per
   simulated tick ``t = 1, 2, ...`` with both players' state after the tick, their actions and masks.
3. ``{"kind": "end", ...}``: the outcome from player 0's view, the winner, truncation and the length.
"""

from __future__ import annotations

import dataclasses
import enum
import gzip
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from common.atomic_files import atomic_path
from envs.nh.params import FightParams, ParamError

REPLAY_FORMAT = "osrs-rllib-replay/1"
"""Version of the file layout; bump it when a key changes meaning (readers refuse other versions)."""
REPLAY_SUFFIX = ".nhreplay"
"""Conventional extension of replay files (gzip-compressed JSON lines)."""
_NOT_OPTIONS = frozenset({"extra"})
"""FightParams fields that are not reset options of spec §13.1 (wrapper data, never read by the simulator)."""


class ReplayError(ValueError):
    """A replay file cannot be read: not a replay, damaged, or written in another format version."""


@dataclass
class Replay:
    """One recorded fight: `header`, one entry of `ticks` per tick from 0 (after reset), and `end`.

    Attributes:
        header: Format, seed, params (reset options), build, fight type, players, heads, item names.
        ticks: ``ticks[t]`` is the state after tick ``t`` (``ticks[0]``: after reset, no actions).
        end: Outcome (player 0's view), winner (0, 1 or None), truncated, ticks.
    """

    header: dict[str, Any]
    ticks: list[dict[str, Any]] = field(default_factory=list)
    end: dict[str, Any] = field(default_factory=dict)

    @property
    def seed(self) -> int:
        return int(self.header["seed"])

    @property
    def params(self) -> FightParams:
        """The fight's parameters, rebuilt from the reset options the header stores."""
        return params_from_options(self.header["params"])

    @property
    def players(self) -> list[dict[str, Any]]:
        return list(self.header["players"])

    def to_json(self) -> str:
        """The whole replay as one JSON document (what the HTML viewer embeds)."""
        return json.dumps({"header": self.header, "ticks": self.ticks, "end": self.end}, separators=(",", ":"))


def params_to_options(params: FightParams) -> dict[str, Any]:
    """`FightParams` as JSON-friendly reset options that `params_from_options` turns back into equal params."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(params):
        if f.name in _NOT_OPTIONS:
            continue
        out[f.name] = _jsonable(getattr(params, f.name))
    return out


def params_from_options(options: Mapping[str, Any]) -> FightParams:
    """The inverse of `params_to_options` (validated like any reset options, spec §13.1).

    Raises:
        ReplayError: An option the simulator does not know or rejects (names the option).
    """
    try:
        return FightParams.from_options(dict(options))
    except ParamError as exc:
        raise ReplayError(f"the replay's fight parameters are invalid: {exc}") from None


def _jsonable(value: Any) -> Any:
    if isinstance(value, enum.Enum):
        return value.name
    if isinstance(value, tuple | list):
        return [_jsonable(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return value


def write_replay(replay: Replay, path: str | os.PathLike[str]) -> Path:
    """Write `replay` atomically (temporary file + rename): a reader never sees half a replay."""
    with atomic_path(path) as tmp, open(tmp, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as gz:
        for line in _lines(replay):
            gz.write(json.dumps(line, separators=(",", ":")).encode())
            gz.write(b"\n")
    return Path(path)


def _lines(replay: Replay) -> Iterable[dict[str, Any]]:
    yield {"kind": "header", **replay.header}
    for tick in replay.ticks:
        yield {"kind": "tick", **tick}
    yield {"kind": "end", **replay.end}


def load_replay(path: str | os.PathLike[str]) -> Replay:
    """Read a replay file written by `write_replay` (or a plain, uncompressed JSON-lines copy of one).

    Raises:
        ReplayError: Missing file, not gzip/JSON lines, another format version, ticks out of order or a
            missing header or end line; the message names the file and the line.
    """
    path = Path(path)
    if not path.is_file():
        raise ReplayError(f"no replay file at {path}")
    raw = path.read_bytes()
    try:
        text = gzip.decompress(raw).decode() if raw[:2] == b"\x1f\x8b" else raw.decode()
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise ReplayError(f"{path}: not a replay file (cannot decompress: {exc})") from None
    header: dict[str, Any] | None = None
    ticks: list[dict[str, Any]] = []
    end: dict[str, Any] | None = None
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ReplayError(f"{path}, line {n}: invalid JSON ({exc.msg}); the file is damaged") from None
        kind = obj.pop("kind", None) if isinstance(obj, dict) else None
        if header is None:
            if kind != "header":
                raise ReplayError(f"{path}, line {n}: expected the header line first, found {kind!r}")
            if obj.get("format") != REPLAY_FORMAT:
                raise ReplayError(
                    f"{path}: replay format {obj.get('format')!r}, this version reads {REPLAY_FORMAT!r}; "
                    "record the fight again with this version"
                )
            header = obj
        elif kind == "tick":
            if end is not None:
                raise ReplayError(f"{path}, line {n}: a tick after the end line")
            if obj.get("t") != len(ticks):
                raise ReplayError(f"{path}, line {n}: tick {obj.get('t')!r} where tick {len(ticks)} was expected")
            ticks.append(obj)
        elif kind == "end":
            end = obj
        else:
            raise ReplayError(f"{path}, line {n}: unknown line kind {kind!r} (expected tick or end)")
    if header is None:
        raise ReplayError(f"{path}: empty file, not a replay")
    if end is None or not ticks:
        raise ReplayError(f"{path}: the replay is cut off (no {'ticks' if not ticks else 'end line'})")
    return Replay(header, ticks, end)
