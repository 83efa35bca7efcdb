"""Behaviour cloning's input: expert replays checked against the config's rules and re-run into demonstrations
(observations, teacher actions, masks), split by whole fights.

Why apart from `osrs_rllib/training/bc/learn.py`: reading and re-running replays is the data side of cloning, and needs
no optimiser; the network and the training loop stay in `bc.py`.
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from envs.nh.contract import (
    CONTRACT_VERSION,
    CRITIC_SIZE,
    NUM_HEADS,
    OBS_SIZE,
    FrameStack,
)
from envs.nh.core_engine import check_engine, make_engine
from envs.nh.params import OPPONENT_BASELINE
from envs.nh.sim import Outcome
from osrs_rllib.config import TrainConfig
from osrs_rllib.replay.format import REPLAY_FORMAT, REPLAY_SUFFIX, Replay, ReplayError, load_replay
from osrs_rllib.replay.recorder import mask_bits
from policies.fight_rules import RULE_KEYS, fight_rules_of
from policies.network import batch_moments, combine_moments

BASELINE_KIND = OPPONENT_BASELINE
"""`player_info` kind of the in-simulator baseline: it acts inside the simulator and has no actions."""


class BCError(ValueError):
    """Behaviour cloning cannot run on this input; the message names the file and what to do."""


@dataclass
class Demonstrations:
    """Every learnt (observation, mask, action) of a set of replays, one row per tick and chosen seat.

    Attributes:
        obs: (N, frames · 176) float32, the stacked observation the seat acted on.
        masks: (N, 45) bool, the env mask it acted under (§14.3).
        actions: (N, 12) int64, its recorded action.
        fight: (N,) int32, index into `files` of the row's fight.
        seat: (N,) int8, the seat (0 or 1).
        files: The replay files, in the order given.
        critic_moments: (count, mean, population variance) of the critic input (§15.3) over the same rows.
        players: Rows per learnt player name.
    """

    obs: np.ndarray
    masks: np.ndarray
    actions: np.ndarray
    fight: np.ndarray
    seat: np.ndarray
    files: list[str]
    critic_moments: tuple[float, np.ndarray, np.ndarray]
    players: dict[str, int] = field(default_factory=dict)

    def __len__(self) -> int:
        return int(self.actions.shape[0])


def replay_files(paths: Iterable[str | os.PathLike[str]]) -> list[Path]:
    """The replay files named: files as given, directories as their ``*.nhreplay`` files in name order.

    Raises:
        BCError: A path that does not exist, or no replay file at all.
    """
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = sorted(path.glob(f"*{REPLAY_SUFFIX}"))
            if not found:
                raise BCError(f"{path}: no *{REPLAY_SUFFIX} files in this directory (record some with "
                              "`osrs-rllib fight A B --record DIR`)")
            files += found
        elif path.is_file():
            files.append(path)
        else:
            raise BCError(f"{path}: no such replay file or directory")
    if not files:
        raise BCError("no replay files given")
    return files


def _expected_rules(cfg: TrainConfig) -> dict[str, Any]:
    rules = fight_rules_of(cfg.to_dict()).rules
    assert rules is not None, "a TrainConfig always has env.params"
    return dict(rules)


def _read_header(path: Path) -> dict[str, Any]:
    """The header line of a replay file, without reading the ticks (`load_replay` reads and checks the rest)."""
    try:
        with path.open("rb") as raw:
            gzipped = raw.read(2) == b"\x1f\x8b"
        with (gzip.open(path, "rt") if gzipped else path.open()) as f:
            line = json.loads(f.readline())
    except (OSError, EOFError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BCError(f"{path}: not a replay file (cannot read its header line: {exc})") from None
    if not isinstance(line, dict) or line.pop("kind", None) != "header":
        raise BCError(f"{path}: not a replay file (its first line is not a header)")
    if line.get("format") != REPLAY_FORMAT:
        raise BCError(
            f"{path}: replay format {line.get('format')!r}, this version reads {REPLAY_FORMAT!r}; record the fight "
            "again with this version"
        )
    return line


def _check_replay(replay: Replay, path: Path, rules: dict[str, Any]) -> None:
    found = replay.header.get("contract_version")
    if found != CONTRACT_VERSION:
        raise BCError(
            f"{path}: recorded under action/observation contract {found!r}, this version learns {CONTRACT_VERSION!r}; "
            "record the demonstrations again with this version"
        )
    try:
        params = replay.params
    except ReplayError as exc:
        raise BCError(f"{path}: {exc}") from None
    differ = {k: getattr(params, k) for k in RULE_KEYS if getattr(params, k) != rules[k]}
    if differ:
        fix = " ".join(f"--set {k}={str(rules[k]).lower()}" for k in differ)
        detail = ", ".join(f"{k}={str(v).lower()} (config: {str(rules[k]).lower()})" for k, v in differ.items())
        raise BCError(
            f"{path}: played under other fight rules than the config trains under: {detail}; the clone would "
            f"learn masks it never plays by. Record with `osrs-rllib fight ... {fix}`, or set the config's "
            "env.params to the replays' rules"
        )


def selected_seats(replay: Replay, players: Sequence[str] | None) -> list[int]:
    """The seats of `replay` whose actions are learnt: those that acted through the action interface (not the
    in-simulator baseline) and, when `players` is given, whose index (``0``/``1``) or name is in it."""
    seats = []
    for seat, info in enumerate(replay.players):
        if info.get("kind") == BASELINE_KIND:
            continue
        if players and not ({str(seat), str(info.get("name")), str(info.get("source"))} & set(players)):
            continue
        seats.append(seat)
    return seats


def load_demonstrations(
    paths: Iterable[str | os.PathLike[str]],
    cfg: TrainConfig,
    players: Sequence[str] | None = None,
    engine: str = "auto",
    progress: Callable[[int, int], None] | None = None,
) -> Demonstrations:
    """Read replays and regenerate the chosen seats' observations by re-running each fight (module docstring).

    Args:
        paths: Replay files and directories of them (`replay_files`).
        cfg: The training config whose network will learn: its frame stacking, critic input and fight rules.
        players: Seats (``0``, ``1``) or player names to learn; None: every acting seat.
        engine: The simulator that re-runs the fights (`envs.nh.core_engine.make_engine`).
        progress: Called with (replays done, replays) after each replay.

    Raises:
        BCError: Missing files, unreadable or cut-off replays, another contract version, other fight rules
            than the config's, a replay that does not re-run as recorded, or no row selected at all.
    """
    check_engine(engine)
    files = replay_files(paths)
    rules = _expected_rules(cfg)
    frames = cfg.env.frame_stack
    with_critic = cfg.env.to_fight_params().include_opponent_observation
    headers: list[Replay] = []
    for path in files:  # every header first: a wrong contract, rules or filter fails before the slow re-runs
        header = Replay(_read_header(path))
        _check_replay(header, path, rules)
        headers.append(header)
    if not any(selected_seats(r, players) for r in headers):
        acting = {str(p.get("name")) for r in headers for p in r.players if p.get("kind") != BASELINE_KIND}
        who = ", ".join(sorted(acting))
        raise BCError(
            f"no seat of the {len(headers)} replay(s) matches --player {' '.join(players or [])}: acting players "
            f"are {who or 'none (only the in-simulator baseline, which has no actions to learn)'}; "
            "give a seat (0, 1) or one of these names"
        )

    rows: dict[str, list[np.ndarray]] = {"obs": [], "masks": [], "actions": [], "fight": [], "seat": []}
    critic_parts: list[tuple[float, np.ndarray, np.ndarray]] = []
    per_player: dict[str, int] = {}
    sim = None
    for index, (path, header) in enumerate(zip(files, headers, strict=True)):
        seats = selected_seats(header, players)
        if seats:  # one whole replay in memory at a time (~1.5 MB each as Python objects)
            try:
                replay = load_replay(path)
            except ReplayError as exc:
                raise BCError(str(exc)) from None
            params = dataclasses.replace(replay.params, include_opponent_observation=True)
            if sim is None:
                sim = make_engine(engine, params, observe_all=True)
            obs, masks, actions, critic = _rerun(sim, replay, path, seats, frames, with_critic)
            for seat in seats:
                name = str(replay.players[seat].get("name"))
                per_player[name] = per_player.get(name, 0) + len(actions[seat])
                rows["obs"].append(np.asarray(obs[seat], dtype=np.float32))
                rows["masks"].append(np.asarray(masks[seat], dtype=np.bool_))
                rows["actions"].append(np.asarray(actions[seat], dtype=np.int64))
                rows["fight"].append(np.full(len(actions[seat]), index, dtype=np.int32))
                rows["seat"].append(np.full(len(actions[seat]), seat, dtype=np.int8))
                critic_parts.append(batch_moments(np.asarray(critic[seat], dtype=np.float32)))
        if progress is not None:
            progress(index + 1, len(files))
    obs_all = np.concatenate(rows["obs"])
    critic_moments = combine_moments(critic_parts) if with_critic else batch_moments(obs_all)
    return Demonstrations(
        obs=obs_all,
        masks=np.concatenate(rows["masks"]),
        actions=np.concatenate(rows["actions"]),
        fight=np.concatenate(rows["fight"]),
        seat=np.concatenate(rows["seat"]),
        files=[str(f) for f in files],
        critic_moments=critic_moments,
        players=per_player,
    )


Rows = dict[int, list[Any]]
"""Per seat, one entry per tick (an observation, mask, action or critic input)."""


def _rerun(
    sim: Any, replay: Replay, path: Path, seats: Sequence[int], frames: int | Sequence[int], with_critic: bool
) -> tuple[Rows, Rows, Rows, Rows]:
    """Re-run one fight, collecting each seat's (stacked obs, mask, action, stacked critic input) per tick.

    The opponent's observation is switched on for the re-run (the critic input needs it); like the replay
    recorder's switch, it changes only what is observed, never a random draw.
    """
    params = dataclasses.replace(replay.params, include_opponent_observation=True)
    sim.reset(seed=replay.seed, params=params)
    acting = [p.get("kind") != BASELINE_KIND for p in replay.players]
    obs_stacks = {s: FrameStack(frames, OBS_SIZE) for s in seats}
    critic_stacks = {s: FrameStack(frames, CRITIC_SIZE) for s in seats} if with_critic else {}
    obs: Rows = {s: [] for s in seats}
    masks: Rows = {s: [] for s in seats}
    actions: Rows = {s: [] for s in seats}
    critic: Rows = {s: [] for s in seats}
    step = None
    for t, rec in enumerate(replay.ticks[1:], start=1):
        if sim.done:
            raise BCError(f"{path}: the re-run fight ended after tick {t - 1} but the replay goes on; it was recorded "
                          "by another simulator version (check it with `osrs-rllib replay FILE --verify`)")
        recorded = rec.get("actions") or [None, None]
        recorded_masks = rec.get("masks") or [None, None]
        for seat in seats:
            action = recorded[seat]
            if not (isinstance(action, list) and len(action) == NUM_HEADS):
                raise BCError(f"{path}, tick {t}: player {seat} acts but has no 12-head action in the replay")
            mask = np.array(sim.masks[seat], dtype=np.bool_)
            if mask_bits(mask) != recorded_masks[seat]:
                raise BCError(
                    f"{path}, tick {t}: player {seat}'s mask in the re-run differs from the recorded one; the replay "
                    "was recorded by another simulator version (check it with `osrs-rllib replay FILE --verify`)"
                )
            obs[seat].append(obs_stacks[seat].push(sim.obs[seat]))
            if with_critic:
                critic[seat].append(critic_stacks[seat].push(sim.critic_obs(seat)))
            masks[seat].append(mask)
            actions[seat].append(action)
        try:
            step = sim.step([recorded[i] if acting[i] else None for i in (0, 1)])
        except ValueError as exc:
            raise BCError(f"{path}, tick {t}: the recorded actions cannot be applied ({exc})") from None
    outcome = None if step is None or step.outcomes[0] is None else step.outcomes[0]
    winner = {Outcome.WON: 0, Outcome.LOST: 1}.get(outcome) if outcome is not None else None
    if step is None or not (step.terminated or step.truncated) or winner != replay.end.get("winner"):
        raise BCError(
            f"{path}: the re-run fight does not end as recorded (winner {replay.end.get('winner')!r}); the replay was "
            "recorded by another simulator version (check it with `osrs-rllib replay FILE --verify`)"
        )
    return obs, masks, actions, critic


def split_by_fight(fight: np.ndarray, holdout: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Row indices of (training, held-out): a seeded shuffle of the fights holds out ``round(holdout × fights)``
    of them (at least one when `holdout` > 0), never a fight in both.

    Raises:
        BCError: Too few fights to hold any out and still train on one.
    """
    fights = np.unique(fight)
    if holdout <= 0:
        return np.arange(len(fight)), np.arange(0)
    n_out = max(1, round(holdout * len(fights)))
    if n_out >= len(fights):
        raise BCError(
            f"{len(fights)} fight(s) cannot be split with holdout {holdout}: give more replays or --holdout 0"
        )
    held = np.random.default_rng(seed).permutation(fights)[:n_out]
    out = np.isin(fight, held)
    return np.flatnonzero(~out), np.flatnonzero(out)
