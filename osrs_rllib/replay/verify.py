"""Exact replay: re-run a recorded fight from its seed and parameters with the recorded actions and check
that every tick comes out as recorded.

The simulator draws every random number from one generator seeded by the fight's seed (spec §16.6), and the
in-simulator baseline draws from the same generator, so the seed plus the acting seats' actions determine
the whole fight. Each tick is compared key by key: both players' state, the masks the seats acted on, the
hits created and landed, the hitsplats and a fingerprint of the generator; then the outcome.

The fight is re-run on either engine (``engine``: ``auto`` by default): both play the same fights and the
recorder reads the same ticks from both, so a replay recorded on one verifies on the other.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from envs.nh.contract import HEAD_SIZES, NUM_HEADS
from envs.nh.core_engine import make_engine
from osrs_rllib.replay.format import Replay, ReplayError, load_replay
from osrs_rllib.replay.recorder import FightRecorder

COMPARED = ("players", "masks", "hits", "landed", "splats", "rng")
"""Keys of a tick line that the replay must reproduce (``actions`` are fed in; ``value`` and ``win_prob``
are the model's, not the simulator's)."""
MAX_PROBLEMS = 20
"""Mismatches listed before giving up (the first one is what matters: everything after follows from it)."""


@dataclass
class ReplayCheck:
    """The result of `verify`: ``ok`` when every tick and the outcome matched."""

    path: str
    ticks: int
    """Ticks replayed."""
    problems: list[str] = field(default_factory=list)
    """One line per mismatch, first mismatch first: tick, player, key, recorded and replayed values."""

    @property
    def ok(self) -> bool:
        return not self.problems

    def summary(self) -> str:
        if self.ok:
            return f"{self.path}: replay verified, {self.ticks} ticks identical"
        return f"{self.path}: replay differs from the recording after {self.ticks} tick(s):\n  " + "\n  ".join(
            self.problems
        )


def _diff(prefix: str, recorded: Any, replayed: Any, out: list[str]) -> None:
    """Append a line per differing leaf (dicts by key, lists by index)."""
    if len(out) >= MAX_PROBLEMS:
        return
    if isinstance(recorded, dict) and isinstance(replayed, dict):
        for key in sorted(set(recorded) | set(replayed)):
            _diff(f"{prefix}.{key}", recorded.get(key), replayed.get(key), out)
    elif isinstance(recorded, list) and isinstance(replayed, list) and len(recorded) == len(replayed):
        for i, (a, b) in enumerate(zip(recorded, replayed, strict=True)):
            _diff(f"{prefix}[{i}]", a, b, out)
    elif recorded != replayed:
        out.append(f"{prefix}: recorded {recorded!r}, replayed {replayed!r}")


def verify(replay: Replay | str | os.PathLike[str], engine: str = "auto") -> ReplayCheck:
    """Re-run the fight of a replay and compare it tick by tick with the recording.

    Args:
        replay: A `Replay` or the path of a replay file.
        engine: The simulator that re-runs it (`envs.nh.core_engine.make_engine`: ``auto``, ``core``,
            ``python``); either verifies a replay recorded on either.

    Returns:
        A `ReplayCheck`; ``check.ok`` is True when every tick and the outcome match, else ``check.problems``
        lists the first mismatches.

    Raises:
        ReplayError: The file cannot be read, or its parameters or actions are unusable.
        ParamError: An unknown `engine`.
        ImportError: ``engine="core"`` where the compiled core is not built.
    """
    path = str(replay) if not isinstance(replay, Replay) else "<replay>"
    rep = replay if isinstance(replay, Replay) else load_replay(replay)
    params = rep.params
    acting = [p.get("kind") != "baseline" for p in rep.players]
    fight = make_engine(engine, params)
    fight.reset(seed=rep.seed, params=params)
    problems: list[str] = []
    header_now = {"build": fight.build.value, "fight_type": fight.fight_mode.value}
    _diff("header", {k: rep.header.get(k) for k in header_now}, header_now, problems)
    recorder = FightRecorder(fight, rep.seed, rep.players, acting)
    _compare(0, rep.ticks[0], recorder.ticks[0], problems)
    step = None
    for t, rec in enumerate(rep.ticks[1:], start=1):
        if problems:
            return ReplayCheck(path, t - 1, problems)
        if fight.done:
            problems.append(f"tick {t}: the replayed fight ended after tick {t - 1}, the recording goes on")
            return ReplayCheck(path, t - 1, problems)
        actions = rec.get("actions") or [None, None]
        for i in (0, 1):
            if acting[i] and actions[i] is None:
                raise ReplayError(f"{path}, tick {t}: player {i} acts but the replay has no action for it")
        for i in (0, 1):
            if acting[i] and not _valid_action(actions[i]):
                raise ReplayError(
                    f"{path}, tick {t}: the recorded actions {actions} cannot be applied: player {i}'s is not "
                    f"{NUM_HEADS} head values within {list(HEAD_SIZES)}"
                )
        step = fight.step([actions[i] if acting[i] else None for i in (0, 1)])
        recorder.step(fight, actions)
        _compare(t, rec, recorder.ticks[-1], problems)
    if not problems:
        if step is None or not (step.terminated or step.truncated):
            problems.append(f"end: the recording ends after tick {len(rep.ticks) - 1}, the replayed fight goes on")
        else:
            _diff("end", rep.end, recorder.finish(step).end, problems)
    return ReplayCheck(path, len(rep.ticks) - 1, problems)


def _valid_action(action: Any) -> bool:
    """12 integer head values, each within its head's size (spec §14.1)."""
    return (
        isinstance(action, list)
        and len(action) == NUM_HEADS
        and all(
            isinstance(v, int) and not isinstance(v, bool) and 0 <= v < n
            for v, n in zip(action, HEAD_SIZES, strict=True)
        )
    )


def _compare(t: int, recorded: dict[str, Any], replayed: dict[str, Any], problems: list[str]) -> None:
    for key in COMPARED:
        _diff(f"tick {t}: {key}", recorded.get(key), replayed.get(key), problems)
