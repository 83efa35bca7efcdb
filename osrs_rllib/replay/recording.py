"""`osrs-rllib fight A B --record DIR`: the replay side of `osrs_rllib.evaluation.fight.run_fights`.

`run_fights` plays its fights one at a time with one policy object per seat; this class turns its loop's
three moments (fight started, about to step, stepped) into `FightRecorder` calls and writes
``DIR/fight-<k>.nhreplay`` when each fight ends, so that the fight loop itself changes by a few lines.
"""

from __future__ import annotations

import dataclasses
import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from envs.nh.core_engine import AnyEngine
from envs.nh.engine import EngineStep
from envs.nh.params import FightParams
from osrs_rllib.replay.format import write_replay
from osrs_rllib.replay.recorder import FightRecorder, ModelReadout, player_info, replay_name

logger = logging.getLogger(__name__)


class FightsRecording:
    """Records every fight of one `run_fights` call into a directory.

    Args:
        directory: Where the replays go (created if missing).
        names: The side name seated in player 0 and player 1 (``baseline``, a ladder name or a model path).
        sides: Which of the command's sides (``a`` or ``b``) sits in each seat.
        policies: The seat's policy objects (None for the simulator's baseline); a model side's
            ``model`` attribute gives the value and win probability.
    """

    def __init__(
        self,
        directory: str | os.PathLike[str],
        names: Sequence[str],
        sides: Sequence[str],
        policies: Sequence[Any],
    ) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.acting = [p is not None for p in policies]
        self.readouts = [ModelReadout(p.model) if getattr(p, "model", None) is not None else None for p in policies]
        self.players = []
        for name, side, policy, readout in zip(names, sides, policies, self.readouts, strict=True):
            kind = "baseline" if policy is None else "model" if readout is not None else "ladder"
            model = readout.model if readout is not None else None
            label = Path(name).name if model is not None else name
            deterministic = getattr(policy, "deterministic", True)
            self.players.append(player_info(side, label, kind, name, model, deterministic))
        self.recorder: FightRecorder | None = None
        self.fight = -1
        self.written: list[Path] = []

    def params(self, plan: Sequence[FightParams]) -> list[FightParams]:
        """The fights' params with the opponent's observation built when a model's critic reads it (§15.3).

        Only the observations change; the simulator draws the same numbers, so the fights stay the same.
        """
        if not any(r is not None and r.full_critic for r in self.readouts):
            return list(plan)
        return [dataclasses.replace(p, include_opponent_observation=True) for p in plan]

    def start(self, fight: int, seed: int, engine: AnyEngine) -> None:
        self.fight = fight
        for r in self.readouts:
            if r is not None:
                r.reset(seed)
        self.recorder = FightRecorder(engine, seed, self.players, self.acting, {"fight": fight})

    def readings(self, engine: AnyEngine) -> tuple[list[float | None], list[float | None]]:
        """Each model seat's (value, win probability) before the step; call once per tick, before stepping."""
        values: list[float | None] = [None, None]
        wins: list[float | None] = [None, None]
        for seat, r in enumerate(self.readouts):
            if r is not None:
                values[seat], wins[seat] = r.read(engine, seat)
        return values, wins

    def stepped(
        self,
        engine: AnyEngine,
        step: EngineStep,
        actions: Sequence[Any],
        readings: tuple[list[float | None], list[float | None]],
    ) -> None:
        assert self.recorder is not None, "start() the fight first"
        self.recorder.step(engine, actions, readings[0], readings[1])
        if step.terminated or step.truncated:
            path = write_replay(self.recorder.finish(step), self.directory / replay_name(self.fight))
            self.written.append(path)
            logger.debug("replay of fight %d written to %s", self.fight, path)
            self.recorder = None
