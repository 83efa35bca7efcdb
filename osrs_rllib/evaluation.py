"""Evaluation fights of a policy against the baseline and the ladder, batched across parallel fights.

Used by training (every `evaluation.interval` iterations, outside RLlib's sampling loop so that
evaluation games never enter a training batch) and by tools that rate model files. A policy here is any
`ActFn`: observations (B, D) and masks (B, 45) in, actions (B, 12) out. Running `parallel` fights in
lockstep (`osrs_rllib/batched_fights.py`) lets one forward pass serve all of them, which matters because a
batch-1 forward pass costs about as much as a batch-64 one.

Fight k against an opponent uses seed ``seed + k`` for the simulator (and the same scripted-opponent seed
as `osrs-rllib fight`), so two policies evaluated with the same seed meet the same builds, gear and
spawns.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from envs.nh.engine import EngineStep, NHEngine
from envs.nh.params import OPPONENT_AGENT, OPPONENT_BASELINE, FightParams
from envs.nh.sim import Outcome
from envs.opponents import LADDER
from osrs_rllib.batched_fights import LadderSeat, Seat, play_fights
from osrs_rllib.episode_metrics import EpisodeMetrics
from osrs_rllib.fight import wilson_interval

ActFn = Callable[[np.ndarray, np.ndarray, bool], np.ndarray]
"""(observations (B, D) float32, masks (B, 45) bool, deterministic) → actions (B, 12) int64."""
DEFAULT_PARALLEL_FIGHTS = 32


@dataclass(frozen=True)
class EvalResult:
    """Results of `fights` fights against one opponent, from the evaluated policy's point of view."""

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
    return int(np.random.SeedSequence((fight_seed, 1)).generate_state(1)[0])


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
) -> list[EvalResult]:
    """Play `fights` fights against each opponent (``baseline`` or a ladder name); the policy is player 0."""
    if fights < 1:
        raise ValueError(f"fights must be at least 1, got {fights}")
    base = params if isinstance(params, FightParams) else FightParams.from_options(dict(params or {}))
    results = []
    for opponent in opponents:
        if opponent != OPPONENT_BASELINE and opponent not in LADDER:
            raise ValueError(f"unknown evaluation opponent {opponent!r}; valid choices: {['baseline', *LADDER]}")
        results.append(
            _evaluate_one(act, opponent, fights, base, deterministic, seed, frame_stack, max(1, min(parallel, fights)))
        )
    return results


def _evaluate_one(
    act: ActFn,
    opponent: str,
    fights: int,
    base: FightParams,
    deterministic: bool,
    seed: int,
    frame_stack: int | Sequence[int],
    parallel: int,
) -> EvalResult:
    scripted = opponent != OPPONENT_BASELINE
    params = FightParams.from_options(
        {"opponent": OPPONENT_AGENT if scripted else OPPONENT_BASELINE, "include_opponent_observation": False},
        base,
    )
    ladder = LadderSeat(opponent, _scripted_seed) if scripted else None
    metrics: dict[int, EpisodeMetrics] = {}
    counts = {Outcome.WON: 0, Outcome.LOST: 0, Outcome.TIED: 0}
    ticks = dealt = received = 0.0

    def on_start(fight: int, engine: NHEngine) -> None:
        metrics[fight] = EpisodeMetrics()
        metrics[fight].reset(engine.sim, opponent)

    def on_step(fight: int, engine: NHEngine, step: EngineStep) -> None:
        nonlocal ticks, dealt, received
        metrics[fight].record(engine.sim, step)
        if step.terminated or step.truncated:
            summary = metrics.pop(fight).summary(engine.sim)
            counts[step.outcomes[0] or Outcome.TIED] += 1
            ticks += summary["fight_ticks"]
            dealt += summary["damage_dealt"]
            received += summary["damage_received"]
            if ladder is not None:
                ladder.forget(seed + fight)

    play_fights(
        params,
        [seed + k for k in range(fights)],
        Seat(lambda obs, masks, seeds: act(obs, masks, deterministic), frame_stack),
        Seat(ladder) if ladder is not None else None,
        parallel=parallel,
        on_start=on_start,
        on_step=on_step,
    )
    wins = counts[Outcome.WON]
    low, high = wilson_interval(wins, fights)
    return EvalResult(
        opponent=opponent,
        mode="deterministic" if deterministic else "stochastic",
        fights=fights,
        wins=wins,
        losses=counts[Outcome.LOST],
        ties=counts[Outcome.TIED],
        win_rate=wins / fights,
        win_rate_low=low,
        win_rate_high=high,
        mean_fight_ticks=ticks / fights,
        mean_damage_dealt=dealt / fights,
        mean_damage_received=received / fights,
    )
