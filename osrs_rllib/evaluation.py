"""Evaluation fights of a policy against the baseline and the ladder, batched across parallel fights.

Used by training (every `evaluation.interval` iterations, outside RLlib's sampling loop so that
evaluation games never enter a training batch) and by tools that rate model files. A policy here is any
`ActFn`: observations (B, D) and masks (B, 45) in, actions (B, 12) out. Running `parallel` fights in
lockstep (`osrs_rllib/batched_fights.py`) lets one forward pass serve all of them, which matters because a
batch-1 forward pass costs about as much as a batch-64 one.

Fights are spread evenly over the builds the policy trains on (and any unseen builds asked for) and over
fight types (`osrs_rllib/stratified_fights.py`), and every result is split by build and fight type: a pooled win rate
can hide a build the agent never learned. The headline is the mean over the trained builds.

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
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from envs.nh.contract import frame_offsets
from envs.nh.core_engine import AnyEngine
from envs.nh.engine import EngineStep
from envs.nh.loadouts import Build
from envs.nh.params import OPPONENT_AGENT, OPPONENT_BASELINE, FightParams
from envs.opponents import LADDER
from osrs_rllib.batched_fights import LadderSeat, Seat, play_fights, seat_seed
from osrs_rllib.episode_metrics import EpisodeMetrics
from osrs_rllib.stratified_fights import SplitTally, Tally, spread, trained_builds
from policies.fight_rules import FightRules

logger = logging.getLogger(__name__)

ActFn = Callable[[np.ndarray, np.ndarray, bool], np.ndarray]
"""(observations (B, D) float32, masks (B, 45) bool, deterministic) → actions (B, 12) int64."""
DEFAULT_PARALLEL_FIGHTS = 32


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
) -> list[EvalResult]:
    """Play `fights` fights per build against each opponent (``baseline`` or a ladder name); the policy is
    player 0.

    `builds` defaults to the builds `params` trains on (`osrs_rllib.stratified_fights.trained_builds`); `unseen_builds`
    are played as well, `fights` each, and reported apart. Fights are spread evenly over builds and, when
    `params` randomises the fight type, over fight types (`osrs_rllib.stratified_fights.spread`). `engine` picks the
    simulator (`make_engine`); both give the same fights.
    """
    if fights < 1:
        raise ValueError(f"fights must be at least 1, got {fights}")
    base = params if isinstance(params, FightParams) else FightParams.from_options(dict(params or {}))
    rules = FightRules.from_params(base, "training config", {"policy": frame_offsets(frame_stack)}).to_dict()
    logger.info("evaluation %s", FightRules.from_dict(rules).describe())
    trained = tuple(builds) if builds else trained_builds(base)
    unseen = tuple(b for b in unseen_builds if b not in trained)
    plan = spread(base, fights * (len(trained) + len(unseen)), (*trained, *unseen))
    results = []
    for opponent in opponents:
        if opponent != OPPONENT_BASELINE and opponent not in LADDER:
            raise ValueError(f"unknown evaluation opponent {opponent!r}; valid choices: {['baseline', *LADDER]}")
        results.append(
            _evaluate_one(
                act, opponent, plan, trained, unseen, deterministic, seed, frame_stack,
                max(1, min(parallel, len(plan))), engine, rules,
            )
        )
    return results


def _evaluate_one(
    act: ActFn,
    opponent: str,
    plan: Sequence[FightParams],
    trained: Sequence[Build],
    unseen: Sequence[Build],
    deterministic: bool,
    seed: int,
    frame_stack: int | Sequence[int],
    parallel: int,
    engine: str,
    rules: dict[str, Any],
) -> EvalResult:
    scripted = opponent != OPPONENT_BASELINE
    seat_options = {
        "opponent": OPPONENT_AGENT if scripted else OPPONENT_BASELINE,
        "include_opponent_observation": False,
    }
    params = [FightParams.from_options(seat_options, p) for p in plan]
    ladder = LadderSeat(opponent, _scripted_seed) if scripted else None
    metrics: dict[int, EpisodeMetrics] = {}
    split = SplitTally()
    trained_names = {b.value for b in trained}
    ticks = dealt = received = 0.0

    def on_start(fight: int, engine: AnyEngine) -> None:
        metrics[fight] = EpisodeMetrics()
        metrics[fight].reset(engine, opponent)

    def on_step(fight: int, engine: AnyEngine, step: EngineStep) -> None:
        nonlocal ticks, dealt, received
        metrics[fight].record(step)
        if step.terminated or step.truncated:
            summary = metrics.pop(fight).summary()
            info = engine.info(0)
            split.add(info["build"], info["fight_mode"], step.outcomes[0])
            if info["build"] in trained_names:
                ticks += summary["fight_ticks"]
                dealt += summary["damage_dealt"]
                received += summary["damage_received"]
            if ladder is not None:
                ladder.forget(seed + fight)

    play_fights(
        params,
        [seed + k for k in range(len(plan))],
        Seat(lambda obs, masks, seeds: act(obs, masks, deterministic), frame_stack),
        ladder.seat() if ladder is not None else None,
        parallel=parallel,
        on_start=on_start,
        on_step=on_step,
        engine=engine,
    )
    headline: Tally = split.pooled(trained)
    n = max(1, headline.fights)
    low, high = headline.interval
    return EvalResult(
        opponent=opponent,
        mode="deterministic" if deterministic else "stochastic",
        fights=headline.fights,
        wins=headline.wins,
        losses=headline.losses,
        ties=headline.ties,
        win_rate=headline.win_rate,
        win_rate_low=low,
        win_rate_high=high,
        mean_fight_ticks=ticks / n,
        mean_damage_dealt=dealt / n,
        mean_damage_received=received / n,
        builds=[b.value for b in trained],
        unseen_builds=[b.value for b in unseen],
        by_build={k: v.to_dict() for k, v in split.by_build.items()},
        by_fight_type={k: v.to_dict() for k, v in split.by_fight_type.items()},
        rules=rules,
    )
