"""A late opponent: its decision misses the tick, its last action stands, the late tick is counted, and the next
decision is made on the newest state (docs/play.md "Time").

The decision function is held by the test (a `threading.Event`), so lateness is decided by the test, not by the
machine's speed: no wall-clock assertion.
"""

from __future__ import annotations

import asyncio
import threading

import numpy as np

from osrs_rllib.play.deadline import IDLE_ACTION, DeadlineDecider


class HeldDecision:
    """A decision function that answers with the state tick it was asked about, once the test lets it."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.asked: list[int] = []
        self.fail = False

    def __call__(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        self.asked.append(int(obs[0]))
        assert self.release.wait(30), "the test never released the decision"
        if self.fail:
            raise RuntimeError("the server went away")
        return np.full(12, int(obs[0]) % 3, dtype=np.int64)


async def _settle(decider: DeadlineDecider, tick: int) -> None:
    """Yield to the loop until the decision for `tick` is back (the worker hands it over via the loop)."""
    for _ in range(3000):
        future = decider._future
        if future is not None and decider._future_tick == tick and future.done():
            await asyncio.sleep(0)
            return
        await asyncio.sleep(0.001)
    raise AssertionError(f"no decision for tick {tick}")


def test_a_late_decision_is_dropped_and_the_newest_state_decided() -> None:
    async def scenario() -> None:
        held = HeldDecision()
        decider = DeadlineDecider(held, asyncio.get_running_loop(), "test")
        mask = np.ones(45, dtype=bool)
        try:
            decider.offer(0, np.array([0.0]), mask)
            assert decider.take(0) is None  # tick 1 comes before the decision: late
            assert decider.late_ticks == 1
            decider.offer(1, np.array([1.0]), mask)  # busy: not asked yet, remembered
            decider.offer(2, np.array([2.0]), mask)
            assert held.asked == [0]
            held.release.set()
            await _settle(decider, 2)  # the stale answer for state 0 started a decision on state 2
            assert held.asked == [0, 2]
            assert decider.take(1) is None  # nothing was decided on state 1: late again
            action = decider.take(2)
            assert action is not None and action.tolist() == [2 % 3] * 12
            assert decider.late_ticks == 2
            assert len(decider.latencies_s) == 2
        finally:
            decider.close()

    asyncio.run(scenario())


def test_a_failed_decision_counts_as_late() -> None:
    async def scenario() -> None:
        held = HeldDecision()
        held.fail = True
        held.release.set()
        decider = DeadlineDecider(held, asyncio.get_running_loop(), "test")
        try:
            decider.offer(0, np.array([0.0]), np.ones(45, dtype=bool))
            await _settle(decider, 0)
            assert decider.take(0) is None
            assert (decider.late_ticks, decider.failures) == (1, 1)
            assert "server went away" in (decider.last_error or "")
        finally:
            decider.close()

    asyncio.run(scenario())


def test_the_idle_action_inputs_nothing() -> None:
    """A late opponent clicks nothing new: every head 0, which the simulator applies as no-ops (spec §5)."""
    assert IDLE_ACTION == (0,) * 12
