"""The opponent's decisions, made off the game's event loop, and what happens when one misses its tick.

Why a thread and a deadline: the clock is the server's (600 ms a tick, as in the game) and a tick never waits
for the opponent. The decision for tick ``t + 1`` starts as soon as tick ``t`` is simulated, on the state the
opponent sees after it, in a thread of its own (a model's forward pass, or a round trip to ``osrs-rllib serve``).
When tick ``t + 1`` comes and the decision is not finished, the opponent is *late*: its last action stands, which
means it inputs nothing new that tick (`IDLE_ACTION`): its prayer, gear and attack target stay as its last
action left them, so it keeps auto-attacking its target (spec §6.1), exactly as a player who clicks nothing.
The late decision is thrown away when it arrives (it was made on an old state) and a new one starts at once on
the newest state. `late_ticks` counts those ticks; the page shows it.

One decision is in flight at a time, so a slow opponent never piles up work behind itself.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from envs.nh.contract import NUM_HEADS

logger = logging.getLogger(__name__)

IDLE_ACTION: tuple[int, ...] = (0,) * NUM_HEADS
"""A late opponent's action: nothing new this tick (every head 0: no new attack, no prayer change, no item,
no step). The simulator applies it like any action (spec §5: value 0 is a no-op for every step)."""

Decide = Callable[[np.ndarray, np.ndarray], np.ndarray]
"""(stacked observation, 45-entry mask) → 12 head values; runs in the decision thread."""


@dataclass(frozen=True, slots=True)
class Decision:
    """A finished decision: the state tick it was made on, the action, and how long it took (seconds from the
    request to the answer, queueing in the thread included: what the deadline compares with)."""

    state_tick: int
    action: np.ndarray
    latency_s: float


class DeadlineDecider:
    """Runs `decide` in one worker thread for the newest state and hands out finished decisions at tick time.

    Call `offer` with every new state (after the reset and after each tick) and `take` when the tick comes; all
    calls come from the event loop's thread. `take` never blocks.

    Args:
        decide: The opponent's decision function.
        loop: The event loop the game runs on (completions are handed back to it).
        name: For the worker thread's name and the log.
    """

    def __init__(self, decide: Decide, loop: asyncio.AbstractEventLoop, name: str = "opponent") -> None:
        self._decide = decide
        self._loop = loop
        self._name = name
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"play-{name}")
        self._future: Future[Decision] | None = None
        self._future_tick = -1
        self._latest: tuple[int, np.ndarray, np.ndarray] | None = None
        self._closed = False
        self.late_ticks = 0
        """Ticks at which the opponent's decision was not ready (its last action stood)."""
        self.failures = 0
        """Decisions that raised (counted as late too); the first error is logged."""
        self.latencies_s: list[float] = []
        """Latency of every finished decision, used or not."""
        self.last_error: str | None = None

    def offer(self, state_tick: int, obs: np.ndarray, mask: np.ndarray) -> None:
        """A new state to decide on (copies are kept: the caller's buffers change every tick)."""
        self._latest = (int(state_tick), np.array(obs, copy=True), np.array(mask, copy=True))
        if self._future is None or self._future.done():
            self._submit()

    def _submit(self) -> None:
        if self._closed or self._latest is None:
            return
        tick, obs, mask = self._latest
        submitted = time.perf_counter()

        def run() -> Decision:
            action = np.asarray(self._decide(obs, mask), dtype=np.int64)
            latency = time.perf_counter() - submitted
            return Decision(tick, action, latency)

        self._future_tick = tick
        future = self._executor.submit(run)
        self._future = future
        future.add_done_callback(self._finished_in_thread)

    def _finished_in_thread(self, future: Future[Decision]) -> None:
        try:
            self._loop.call_soon_threadsafe(self._finished, future)
        except RuntimeError:  # the loop is closed: the game is gone
            pass

    def _finished(self, future: Future[Decision]) -> None:
        if future.cancelled():
            return
        exc = future.exception()
        if exc is None:
            self.latencies_s.append(future.result().latency_s)
        if self._closed or future is not self._future:
            return
        if self._latest is not None and self._latest[0] != self._future_tick:
            self._submit()  # the decision missed its tick: decide again, on the newest state

    def take(self, state_tick: int) -> np.ndarray | None:
        """The decision made on state `state_tick` if it is finished, else None (late: the caller applies
        `IDLE_ACTION`). Never blocks."""
        future = self._future
        if future is not None and self._future_tick == state_tick and future.done():
            exc = future.exception()
            if exc is None:
                return future.result().action
            self.failures += 1
            if self.last_error is None:
                logger.warning("the %s's decision failed: %s", self._name, exc)
            self.last_error = f"{type(exc).__name__}: {exc}"
        self.late_ticks += 1
        return None

    def close(self) -> None:
        """Stop deciding: a decision still running finishes in its thread and is dropped."""
        self._closed = True
        if self._future is not None:
            self._future.cancel()
        self._executor.shutdown(wait=False, cancel_futures=True)
