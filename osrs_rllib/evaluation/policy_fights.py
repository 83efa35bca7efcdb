"""Evaluation fights of a policy against the baseline and the ladder (`evaluate`) or a frozen model
(`evaluate_vs_model`), batched across parallel fights and played by `osrs_rllib.evaluation.match.play_match`.

Used by training (every `evaluation.interval` iterations, outside RLlib's sampling loop so that
evaluation games never enter a training batch) and by tools that rate model files. A policy here is any
`ActFn`: observations (B, D) and masks (B, 45) in, actions (B, 12) out. Running `parallel` fights in
lockstep (`osrs_rllib/evaluation/batched.py`) lets one forward pass serve all of them, which matters because a
batch-1 forward pass costs about as much as a batch-64 one.

Fights are spread evenly over the builds the policy trains on (and any unseen builds asked for) and over
fight types (`osrs_rllib/evaluation/stratified.py`), and every result is split by build and fight type: a pooled win
rate can hide a build the agent never learned. The headline is the mean over the trained builds.

The fights follow the rules in `params` (for training, its config's: the rules its model files record,
`policies.fight_rules`), and every result states them (`EvalResult.rules`), so a figure quoted from evaluation
says which masks it was measured under.

Fight k against an opponent uses seed ``seed + k`` for the simulator (and the same scripted-opponent seed
as `osrs-rllib fight`), so two policies evaluated with the same seed meet the same builds, gear and
spawns.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from functools import partial
from typing import Any

import numpy as np

from envs.nh.contract import frame_offsets
from envs.nh.loadouts import Build
from envs.nh.params import OPPONENT_BASELINE, FightParams
from envs.opponents import LADDER
from osrs_rllib.evaluation.batched import LadderSeat, seat_seed
from osrs_rllib.evaluation.match import (
    ActFn,
    FightRecord,
    PolicySide,
    SideFactory,
    alternating_seats,
    play_match,
    result_row,
)
from osrs_rllib.evaluation.stratified import spread, trained_builds
from policies.fight_rules import FightRules
from policies.torch_threads import torch_threads

logger = logging.getLogger(__name__)

DEFAULT_PARALLEL_FIGHTS = 32

Shards = Callable[[Callable[[int, int], Any]], list[Any]]
"""Runs ``job(i, n)`` for every shard ``i`` of ``n`` where it may (e.g. one shard on each of a training run's idle env
runners, `osrs_rllib.training.parts.runner_shards`) and returns their results in shard order. Evaluation deals fight
``k`` to shard ``k % n``; every fight has its own seeds, so the results are those of playing them all in one place."""


def _records_by_side(
    play: Callable[[str, Sequence[int]], list[FightRecord]], sides: Sequence[str], fights: int, shards: Shards | None
) -> dict[str, list[FightRecord]]:
    """Every side's records of fights ``0 … fights − 1``, played here or dealt over `shards`, in fight order."""
    if shards is None:
        with torch_threads(1):
            return {side: play(side, range(fights)) for side in sides}

    def job(i: int, n: int) -> dict[str, list[FightRecord]]:
        with torch_threads(1):
            return {side: play(side, range(i, fights, n)) for side in sides}

    parts = shards(job)
    return {side: sorted((r for part in parts for r in part[side]), key=lambda r: r.fight) for side in sides}


def _subset(play: Callable[..., list[FightRecord]], ks: Sequence[int]) -> list[FightRecord]:
    """`play(indices)` on fights `ks` of a plan, its records renumbered to their index in the whole plan."""
    ks = list(ks)
    return [replace(r, fight=ks[r.fight]) for r in play(ks)]


@dataclass(frozen=True)
class EvalResult:
    """Results against one opponent, from the evaluated policy's point of view.

    The headline (`win_rate`, its interval, the counts and means) covers the *trained* builds only, with an
    equal number of fights per build, so `win_rate` is both the pooled rate and the mean of the per-build
    rates. `by_build` adds every build played (unseen ones included) and `by_fight_type` the fight types.
    """

    opponent: str
    mode: str
    fights: int
    wins: int
    losses: int
    ties: int
    win_rate: float
    win_rate_low: float
    win_rate_high: float
    mean_fight_ticks: float
    mean_damage_dealt: float
    mean_damage_received: float
    builds: list[str] = field(default_factory=list)
    """The trained builds the headline averages over."""
    unseen_builds: list[str] = field(default_factory=list)
    """Builds played as an unseen-build check, outside the headline."""
    by_build: dict[str, dict[str, Any]] = field(default_factory=dict)
    by_fight_type: dict[str, dict[str, Any]] = field(default_factory=dict)
    rules: dict[str, Any] = field(default_factory=dict)
    """The rules the fights were played by (`policies.fight_rules.FightRules.to_dict`)."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def network_act_fn(network: Any) -> ActFn:
    """An `ActFn` for an `NHPolicyNetwork` (or its TorchScript) in evaluation mode."""
    import torch

    def act(obs: np.ndarray, masks: np.ndarray, deterministic: bool) -> np.ndarray:
        with torch.no_grad():
            actions, _ = network(torch.from_numpy(obs), torch.from_numpy(masks.astype(np.float32)), deterministic)
        return actions.numpy()

    return act


def _scripted_seed(fight_seed: int) -> int:
    return seat_seed(fight_seed, 1)


def _scripted_side(opponent: str) -> SideFactory | None:
    """A scripted opponent for seat 1: the in-simulator baseline (None), or a rung with one bot per fight seeded
    as `osrs-rllib fight` seeds seat 1's."""
    if opponent == OPPONENT_BASELINE:
        return None
    return lambda _seat: LadderSeat(opponent, _scripted_seed)


def evaluate(
    act: ActFn,
    opponents: Sequence[str],
    fights: int,
    *,
    params: FightParams | Mapping[str, Any] | None = None,
    deterministic: bool = True,
    seed: int = 0,
    frame_stack: int | Sequence[int] = 1,
    parallel: int = DEFAULT_PARALLEL_FIGHTS,
    builds: Sequence[Build] | None = None,
    unseen_builds: Sequence[Build] = (),
    engine: str = "auto",
    shards: Shards | None = None,
    side: SideFactory | None = None,
) -> list[EvalResult]:
    """Play `fights` fights per build against each opponent (``baseline`` or a ladder name); the policy is
    player 0: `act` in the mode `deterministic` names, or `side` when given, a seated side that needs each fight's
    seed (a per-fight mixture draws its member by it: `osrs_rllib.evaluation.fight.ModelSide`), which then plays
    instead.

    `builds` defaults to the builds `params` trains on (`osrs_rllib.evaluation.stratified.trained_builds`);
    `unseen_builds` are played as well, `fights` each, and reported apart. Fights are spread evenly over builds and,
    when `params` randomises the fight type, over fight types (`osrs_rllib.evaluation.stratified.spread`). `engine`
    picks the simulator (`make_engine`); both give the same fights. `shards` plays them elsewhere in parts (`Shards`),
    e.g. on a training run's idle env runners: same fights, same results, less of the run's wall time.
    """
    if fights < 1:
        raise ValueError(f"fights must be at least 1, got {fights}")
    base = params if isinstance(params, FightParams) else FightParams.from_options(dict(params or {}))
    rules = FightRules.from_params(base, "training config", {"policy": frame_offsets(frame_stack)}).to_dict()
    logger.info("evaluation %s", FightRules.from_dict(rules).describe())
    trained = tuple(builds) if builds else trained_builds(base)
    unseen = tuple(b for b in unseen_builds if b not in trained)
    plan = spread(base, fights * (len(trained) + len(unseen)), (*trained, *unseen))
    for opponent in opponents:
        if opponent != OPPONENT_BASELINE and opponent not in LADDER:
            raise ValueError(f"unknown evaluation opponent {opponent!r}; valid choices: {['baseline', *LADDER]}")
    mode = "deterministic" if deterministic else "stochastic"
    policy = side if side is not None else PolicySide(act, deterministic, frame_stack)
    seeds = [seed + k for k in range(len(plan))]

    def play(opponent: str, ks: Sequence[int]) -> list[FightRecord]:
        return _subset(
            lambda sub: play_match(
                policy, _scripted_side(opponent), [plan[k] for k in sub], [seeds[k] for k in sub], [0] * len(sub),
                parallel=parallel, engine=engine, kind=opponent,
            ),
            ks,
        )  # fmt: skip

    records = _records_by_side(play, list(opponents), len(plan), shards)
    return [
        EvalResult(
            **result_row(records[o], opponent=o, mode=mode, trained=trained, unseen=unseen, extra={"rules": rules})
        )
        for o in opponents
    ]


def evaluate_vs_model(
    act: ActFn,
    model: Any | Mapping[str, Any],
    fights_per_build: int,
    *,
    params: Mapping[str, Any],
    deterministic: bool = True,
    seed: int = 0,
    frame_stack: int | Sequence[int] = 1,
    opponent: str = "model",
    parallel: int = DEFAULT_PARALLEL_FIGHTS,
    engine: str = "auto",
    model_deterministic: bool = True,
    shards: Shards | None = None,
) -> dict[str, Any]:
    """`fights_per_build` fights per trained build between the policy `act` and `model` (a `ModelFile`, or a
    per-fight mixture: a mapping of member names to model files), from both seats.

    `model` plays greedy, or with `model_deterministic` false samples its actions as `osrs-rllib fight` does
    (`ModelSide`: noise drawn per fight and seat), so its draws do not depend on which fights share a batch.
    A mixture's every member plays the same fights, which are pooled: the headline is the win rate against a
    uniform per-fight draw of a member, stratified by member (``by_member`` keeps each one's).

    Fights are spread over builds and fight types two at a time (`spread(..., repeat=2)`): fight k seats the
    policy in seat ``k % 2``, so every build and fight type is played equally from both seats, and fight k
    uses simulator seed ``seed + k`` (the same fights at every evaluation). Returns an `EvalResult` row (the
    policy's view, without ``rules``) with ``model_mode`` and ``by_seat``. `engine` picks the simulator
    (`make_engine`: ``auto``, ``core``, ``python``); the fights are the same on both. `shards` as in `evaluate`.

    Raises:
        ValueError: `fights_per_build` below 1.
    """
    from osrs_rllib.evaluation.fight import ModelSide

    if fights_per_build < 1:
        raise ValueError(f"fights_per_build must be at least 1, got {fights_per_build}")
    base = FightParams.from_options({k: v for k, v in params.items() if k != "include_opponent_observation"})
    builds = trained_builds(base)
    plan = spread(base, fights_per_build * len(builds), builds, repeat=2)
    members: Mapping[str, Any] = model if isinstance(model, Mapping) else {opponent: model}
    policy = PolicySide(act, deterministic, frame_stack)
    seeds, seats = [seed + k for k in range(len(plan))], alternating_seats(len(plan))

    def play(name: str, ks: Sequence[int]) -> list[FightRecord]:
        side = partial(ModelSide, members[name], deterministic=model_deterministic)
        return _subset(
            lambda sub: play_match(
                policy, side, [plan[k] for k in sub], [seeds[k] for k in sub], [seats[k] for k in sub],
                parallel=parallel, engine=engine, kind=opponent,
            ),
            ks,
        )  # fmt: skip

    by_member = _records_by_side(play, list(members), len(plan), shards)
    return result_row(
        [r for records in by_member.values() for r in records],
        opponent=opponent,
        mode="deterministic" if deterministic else "stochastic",
        trained=builds,
        extra={"model_mode": "deterministic" if model_deterministic else "stochastic"},
        by_seat=True,
        by_member=by_member if len(members) > 1 else None,
    )
