"""One game of `osrs-rllib play`: the person in seat 0, the opponent in seat 1, on the server's clock.

The tick, in order (`GameSession._tick`):

1. the person's action: their choices on the page made into 12 head values under this tick's mask
   (`controls.Choices.action`: legal by construction, §14.2 and §14.3);
2. the opponent's action: the decision made on the state after the last tick if it is finished
   (`deadline.DeadlineDecider`), else nothing new (it is late: its last action stands); the prescient rung,
   which must see the person's action first, decides here, in line (a scripted bot takes microseconds);
3. one step of the engine, recorded by the replay recorder (`osrs_rllib.replay.FightRecorder`, the one
   `osrs-rllib fight --record` uses), so the finished game verifies with ``osrs-rllib replay --verify``;
4. the new state goes to the opponent's next decision and to the page, in the replay's own tick format (the
   page draws it with the replay viewer's fight view).

The clock (`GameSession.run`) is an asyncio task: ticks fall on a fixed grid (``start + k × pace``), so a late
wake-up does not shift the ticks after it; a tick that falls more than a whole tick behind (the machine stalled)
is not made up. In step mode a tick happens per step request instead.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from envs.nh.contract import OBS_SIZE, FrameStack
from envs.nh.core_engine import AnyEngine, make_engine
from envs.nh.engine import EngineStep
from envs.nh.params import FightParams
from osrs_rllib.play.controls import Choices, InputError, describe_action
from osrs_rllib.play.deadline import IDLE_ACTION, DeadlineDecider
from osrs_rllib.play.limits import MAX_TICK_MS, MIN_TICK_MS
from osrs_rllib.play.opponents import GameSeat, Opponent, OpponentHost
from osrs_rllib.replay import FightRecorder, Replay, player_info, write_replay
from osrs_rllib.replay import players as engine_players
from osrs_rllib.replay.recorder import mask_bits
from osrs_rllib.replay.state import item_names

logger = logging.getLogger(__name__)

PERSON = 0
OPPONENT = 1
PERSON_INFO = player_info("a", "you", "human", "osrs-rllib play (a person at the page)")
"""Seat 0 in the replay header: ``kind`` ``human`` (docs/replays.md)."""

Send = Callable[[dict[str, Any]], None]
"""Queues one message for the page; never blocks (the connection's writer sends it)."""


def check_pace(pace_ms: Any) -> int | None:
    """A pace from the page or the command line: milliseconds per tick, or None / ``"step"`` for step mode.

    Raises:
        InputError: Not a whole number of milliseconds in [`MIN_TICK_MS`, `MAX_TICK_MS`] nor ``step``.
    """
    if pace_ms is None or pace_ms == "step":
        return None
    if isinstance(pace_ms, bool) or not isinstance(pace_ms, int) or not MIN_TICK_MS <= pace_ms <= MAX_TICK_MS:
        raise InputError("bad_pace", f"pace must be milliseconds per tick in {MIN_TICK_MS}..{MAX_TICK_MS} or 'step', "
                         f"got {pace_ms!r}")  # fmt: skip
    return int(pace_ms)


def percentiles_ms(values_s: Sequence[float]) -> dict[str, float | int | None]:
    """p50, p99 and max of durations in seconds, as milliseconds (None without data)."""
    if not values_s:
        return {"n": 0, "p50": None, "p99": None, "max": None}
    arr = np.asarray(values_s, dtype=np.float64) * 1000.0
    return {
        "n": len(arr),
        "p50": round(float(np.percentile(arr, 50)), 3),
        "p99": round(float(np.percentile(arr, 99)), 3),
        "max": round(float(arr.max()), 3),
    }


@dataclass
class GameSummary:
    """A finished game from the person's point of view (what the page shows after the fight)."""

    game: str
    opponent: str
    outcome: str
    """``won``, ``lost`` or ``tied`` (a game cut off at ``max_episode_ticks`` is ``tied``, with `truncated`)."""
    truncated: bool
    ticks: int
    seed: int
    build: str
    fight_type: str
    damage_dealt: int
    """Hitpoints the opponent lost (its hitsplats)."""
    damage_taken: int
    prayer: dict[str, dict[str, int]]
    """Per side (``you``, ``opponent``): ``hits`` taken from the other side's attacks and ``right`` (the
    protection prayer matched the attack's style)."""
    late_ticks: int
    """Ticks at which the opponent's decision was not ready (its last action stood)."""
    opponent_latency_ms: dict[str, float | int | None] = field(default_factory=dict)
    tick_lateness_ms: dict[str, float | int | None] = field(default_factory=dict)
    replay: str = ""
    """File name of the game's replay in the server's replay directory."""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def fight_figures(replay: Replay) -> dict[str, Any]:
    """Damage and prayer accuracy of a replay, seat 0's view: the figures `GameSummary` reports."""
    taken = [0, 0]
    hits = [0, 0]
    right = [0, 0]
    for tick in replay.ticks[1:]:
        for i in (0, 1):
            taken[i] += sum(tick["splats"][i])
            for h in tick["hits"][1 - i]:
                hits[i] += 1
                right[i] += bool(h["prayer_right"])
    return {
        "damage_dealt": taken[1],
        "damage_taken": taken[0],
        "prayer": {"you": {"hits": hits[0], "right": right[0]}, "opponent": {"hits": hits[1], "right": right[1]}},
    }


class GameSession:
    """One game from reset to the end, driven by its own clock (see the module docstring).

    Args:
        game: The game's id (its replay is ``<game>.nhreplay`` in `replay_dir`).
        host: The opponent.
        params: The fight's parameters (`Opponent.params`).
        seed: Simulator seed (spec §16.6); the opponent's bot, if scripted, is seeded from it and its seat.
        pace_ms: Milliseconds per tick, None for step mode.
        replay_dir: Where the replay is written when the game ends.
        send: Queues a message for the page.
        on_end: Called with the summary once the replay is written (scores are kept there).
        engine: `make_engine`'s choice (the compiled core when built).
    """

    def __init__(
        self,
        game: str,
        host: OpponentHost,
        params: FightParams,
        seed: int,
        pace_ms: int | None,
        replay_dir: Path,
        send: Send,
        on_end: Callable[[GameSummary], dict[str, Any]] | None = None,
        engine: str = "auto",
    ) -> None:
        self.game = game
        self.host = host
        self.opponent: Opponent = host.opponent
        self.params = params
        self.seed = int(seed)
        self.pace_ms = pace_ms
        self.replay_dir = Path(replay_dir)
        self.send = send
        self.on_end = on_end
        self.choices = Choices()
        self.engine: AnyEngine = make_engine(engine, params)
        self.engine.reset(seed=self.seed, params=params)
        self.seat: GameSeat | None = host.game_seat(self.seed)
        acting = self.seat is not None
        opp_info = player_info("b", self.opponent.name, self.opponent.kind, self.opponent.source, host.model)
        self.recorder = FightRecorder(self.engine, self.seed, [PERSON_INFO, opp_info], (True, acting), {"game": game})
        self.stack = FrameStack(self.seat.frame_stack, OBS_SIZE) if self.seat is not None else None
        self.decider: DeadlineDecider | None = None
        self.finished = False
        self.abandoned = False
        self.summary: GameSummary | None = None
        self.lateness_s: list[float] = []
        """How late each real-time tick ran after its slot on the grid (step-mode ticks are not counted)."""
        self.last_opponent_ms: float | None = None
        self._items: dict[str, str] = {}
        self._wake = asyncio.Event()
        self._steps = 0
        self._pace_changed = False
        self._task: asyncio.Task[None] | None = None
        self._last_step: EngineStep | None = None
        self._stacked: np.ndarray | None = None

    # ---- what the page sees ---------------------------------------------------------------------------------
    def _me(self) -> dict[str, Any]:
        return self.recorder.ticks[-1]["players"][PERSON]

    def _new_items(self, tick: dict[str, Any]) -> dict[str, str]:
        ids = [[i for i in p["equipment"] if str(i) not in self._items] for p in tick["players"]]
        fresh = item_names(ids)
        self._items.update(fresh)
        return fresh

    def next_action(self) -> list[int]:
        """The action the person's choices make under the current mask (what the next tick sends if nothing
        changes)."""
        return [int(v) for v in self.choices.action(self.engine.masks[PERSON], self._me())]

    def state_message(self, kind: str) -> dict[str, Any]:
        tick = self.recorder.ticks[-1]
        nxt = self.next_action()
        msg: dict[str, Any] = {
            "type": kind,
            "game": self.game,
            "tick": tick,
            "items": self._new_items(tick),
            "mask": mask_bits(self.engine.masks[PERSON]),
            "pending": self.choices.pending(),
            "next": nxt,
            "next_text": describe_action(nxt),
            "late_ticks": self.decider.late_ticks if self.decider is not None else 0,
            "opponent_ms": self.last_opponent_ms,
            "pace": self.pace_ms if self.pace_ms is not None else "step",
        }
        if kind == "start":
            loadout_items = [list(ids) for p in engine_players(self.engine) for ids in p.loadout.sets.values()]
            self._items.update(item_names(loadout_items))
            header = dict(self.recorder.header)
            header["items"] = dict(self._items)
            msg["header"] = header
            msg["opponent"] = self.opponent.to_json()
        return msg

    # ---- the page's input (all on the loop's thread) --------------------------------------------------------
    def _check_open(self) -> None:
        if self.finished:
            s = self.summary
            what = f"{s.outcome} after {s.ticks} ticks" if s is not None else f"tick {self.engine.tick}"
            raise InputError("game_over", f"the game is over ({what}); nothing changes it now; start a new one")

    def choose(self, control_id: Any) -> list[str]:
        self._check_open()
        return self.choices.choose(control_id, self.engine.masks[PERSON])

    def set_action(self, action: Any) -> None:
        self._check_open()
        self.choices.set_raw(action, self.engine.masks[PERSON])

    def clear(self) -> None:
        self._check_open()
        self.choices.clear()

    def set_pace(self, pace_ms: Any) -> None:
        self._check_open()
        self.pace_ms = check_pace(pace_ms)
        self._pace_changed = True
        self._wake.set()

    def step(self) -> None:
        """One tick in step mode (the page's step key)."""
        self._check_open()
        if self.pace_ms is not None:
            raise InputError("not_step_mode", f"ticks run by the clock ({self.pace_ms} ms); choose step mode first")
        self._steps = 1  # presses while a tick is pending are one press: a tick per key press, never a burst
        self._wake.set()

    # ---- the clock --------------------------------------------------------------------------------------------
    def start(self) -> asyncio.Task[None]:
        """Send the first state and start the clock (on the running loop)."""
        loop = asyncio.get_running_loop()
        if self.seat is not None and not self.seat.needs_opponent_action:
            seat = self.seat
            self.decider = DeadlineDecider(lambda obs, mask: seat.act(obs, mask), loop, self.opponent.name)
        self._offer()
        self.send(self.state_message("start"))
        self._task = loop.create_task(self.run(), name=f"play-{self.game}")
        return self._task

    def _offer(self) -> None:
        """Hand the state after the last tick to the opponent (its frame stack sees every tick, §15.3)."""
        if self.stack is None:
            return
        stacked = self.stack.push(self.engine.obs[OPPONENT])
        self._stacked = stacked
        if self.decider is not None:
            self.decider.offer(self.engine.tick, stacked, self.engine.masks[OPPONENT])

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            last_at = loop.time()
            while not self.finished:
                if self._pace_changed:  # a new pace counts from the moment it was chosen
                    self._pace_changed = False
                    last_at = loop.time()
                if self.pace_ms is None:
                    if self._steps == 0:
                        self._wake.clear()
                        await self._wake.wait()
                        continue
                    self._steps = 0
                    due, real_time = loop.time(), False
                else:
                    tick_s = self.pace_ms / 1000.0
                    due, now = last_at + tick_s, loop.time()
                    if now < due:
                        self._wake.clear()
                        try:
                            await asyncio.wait_for(self._wake.wait(), due - now)
                        except TimeoutError:
                            pass
                        continue
                    if now - due > tick_s:  # stalled for over a tick: the missed ticks are not made up
                        due += math.floor((now - due) / tick_s) * tick_s
                    real_time = True
                if real_time:
                    self.lateness_s.append(loop.time() - due)
                self._tick()
                last_at = due
                if self.finished:
                    await self._finish()
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a bug must end this game, not the server
            logger.exception("game %s failed", self.game)
            self.finished = True
            message = f"the game stopped: {type(exc).__name__}: {exc}"
            self.send({"type": "error", "code": "internal", "message": message})
        finally:
            self._close_opponent()

    def _tick(self) -> None:
        state_tick = self.engine.tick
        person = self.choices.action(self.engine.masks[PERSON], self._me())
        opponent: Sequence[int] | None = None
        if self.seat is not None:
            if self.decider is None:  # prescient: shown the person's action of the tick, decides in line
                assert self._stacked is not None
                start = time.perf_counter()
                opponent = self.seat.act(self._stacked, self.engine.masks[OPPONENT], opponent_action=person)
                self.last_opponent_ms = 1000.0 * (time.perf_counter() - start)
            else:
                decided = self.decider.take(state_tick)
                opponent = IDLE_ACTION if decided is None else decided
                if self.decider.latencies_s:
                    self.last_opponent_ms = round(1000.0 * self.decider.latencies_s[-1], 3)
        actions = [person, opponent]
        step = self.engine.step(actions)
        self.recorder.step(self.engine, actions)
        self.choices.after_tick(person)
        self._last_step = step
        if step.terminated or step.truncated:
            self.finished = True
            self._close_opponent()
        else:
            self._offer()
        self.send(self.state_message("tick"))

    async def _finish(self) -> None:
        assert self._last_step is not None
        replay = self.recorder.finish(self._last_step)
        path = self.replay_dir / f"{self.game}.nhreplay"
        await asyncio.to_thread(_write, replay, path)
        figures = fight_figures(replay)
        end = replay.end
        decider = self.decider
        self.summary = GameSummary(
            game=self.game,
            opponent=self.opponent.name,
            outcome=end["outcome"] or "tied",
            truncated=bool(end["truncated"]),
            ticks=int(end["ticks"]),
            seed=self.seed,
            build=str(replay.header["build"]),
            fight_type=str(replay.header["fight_type"]),
            late_ticks=decider.late_ticks if decider is not None else 0,
            opponent_latency_ms=percentiles_ms(decider.latencies_s if decider is not None else []),
            tick_lateness_ms=percentiles_ms(self.lateness_s),
            replay=path.name,
            **figures,
        )
        scores = self.on_end(self.summary) if self.on_end is not None else None
        self.send({"type": "end", "summary": self.summary.to_json(), "replay_url": f"/replays/{self.game}",
                   "scores": scores})  # fmt: skip

    def _close_opponent(self) -> None:
        if self.decider is not None:
            self.decider.close()
        if self.seat is not None:
            self.seat.close()

    def abandon(self) -> None:
        """The page went away mid-game: stop the clock and the opponent; no replay, no result."""
        if self.finished:
            return
        self.finished = True
        self.abandoned = True
        if self._task is not None:
            self._task.cancel()
        self._close_opponent()

    async def wait(self) -> None:
        """Until the clock task has stopped (tests; shutdown)."""
        if self._task is not None:
            try:
                await self._task
            except asyncio.CancelledError:
                pass


def _write(replay: Replay, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    write_replay(replay, path)
