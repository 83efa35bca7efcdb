"""How many torch threads the learner uses (``ppo.learner_threads``), chosen from what the run measures.

The learner's SGD runs in the driver while the env runners wait. On an idle two-core machine two torch threads
make an SGD step about 1.7 times faster than one (compute_gradients on a 2,048-sample minibatch: 39 ms against
68 ms). But the network's operations are small (tens of microseconds each) and the two threads meet at the end
of every one: as soon as any other process wants a core (a browser, a test run, the machine's other jobs), the
thread it preempts holds the other at the next meeting point, and a whole SGD iteration took 7-14 s instead of
1.1 s with one thread. Neither number is a safe default, so with ``auto`` the run measures both and keeps the
faster (`ThreadChooser`), trying the other again now and then, less often each time it loses.

The choice only changes how fast the update is computed, never what it computes.
"""

from __future__ import annotations

import os
import statistics
from collections import deque
from collections.abc import Sequence
from typing import Any, Literal

AUTO = "auto"
FIRST_PROBE_INTERVAL = 16
"""Iterations between two tries of the slower setting at first; doubled after every try it loses."""
MAX_PROBE_INTERVAL = 512
WINDOW = 3
"""Learning times kept per setting; the median of them is compared."""
LEARNING_TIMERS = ("load", "learn")
"""RLlib's timers around the learner's work in an iteration (`osrs_rllib.time_account.RLLIB_TIMERS`)."""


class ThreadChooser:
    """Picks the thread count of the next iteration from the learning seconds of the last ones.

    Every candidate is tried once (most threads first), then the one with the lowest median of its last `WINDOW`
    times is used; every `probe interval` iterations one other candidate gets one iteration. A probe that loses
    doubles the interval (up to `MAX_PROBE_INTERVAL`), one that wins resets it: on a machine that stays busy,
    the cost of probing fades.
    """

    def __init__(self, candidates: Sequence[int], first_interval: int = FIRST_PROBE_INTERVAL) -> None:
        if not candidates or any(c < 1 for c in candidates):
            raise ValueError(f"candidates must be positive thread counts, got {list(candidates)}")
        self.candidates = sorted(set(candidates), reverse=True)
        self.times: dict[int, deque[float]] = {c: deque(maxlen=WINDOW) for c in self.candidates}
        self.first_interval = first_interval
        self.interval = first_interval
        self.since_probe = 0
        self.current = self.candidates[0]
        self.probing: int | None = None
        self.best_before_probe: float | None = None
        self.history: list[int] = []
        """The thread count of every recorded iteration, in order."""

    def best(self) -> int:
        measured = [c for c in self.candidates if self.times[c]]
        return min(measured, key=lambda c: (statistics.median(self.times[c]), -c))

    def record(self, seconds: float) -> int:
        """The learning seconds of an iteration run with `current` threads; returns the next iteration's count."""
        self.history.append(self.current)
        ran = self.current
        self.times[ran].append(float(seconds))
        untried = [c for c in self.candidates if not self.times[c]]
        if untried:
            self.current = untried[0]
            return self.current
        if self.probing is not None:
            won = self.best_before_probe is not None and seconds < self.best_before_probe
            self.interval = self.first_interval if won else min(self.interval * 2, MAX_PROBE_INTERVAL)
            self.probing = self.best_before_probe = None
        best = self.best()
        self.since_probe += 1
        if self.since_probe >= self.interval and len(self.candidates) > 1:
            others = [c for c in self.candidates if c != best]
            self.probing = max(others, key=lambda c: len(self.history) - _last_index(self.history, c))  # least recent
            self.best_before_probe = statistics.median(self.times[best])
            self.since_probe = 0
            self.current = self.probing
        else:
            self.current = best
        return self.current


def _last_index(history: list[int], value: int) -> int:
    for i in range(len(history) - 1, -1, -1):
        if history[i] == value:
            return i
    return -1


def candidates_for(cores: int | None = None) -> list[int]:
    """1 and the machine's cores, at most 2 (more threads than that have not been measured to help here)."""
    cores = cores or os.cpu_count() or 1
    return sorted({1, min(2, cores)})


class LearnerThreads:
    """The driver's learner threads for a run: fixed, or chosen per iteration (``auto``)."""

    def __init__(self, setting: int | Literal["auto"]) -> None:
        self.setting = setting
        self.chooser = ThreadChooser(candidates_for()) if setting == AUTO else None
        self._learning_total: float | None = None

    def start(self) -> int:
        """Set torch's threads for the first iteration; returns the count."""
        import torch

        threads = self.chooser.current if self.chooser is not None else int(self.setting)
        torch.set_num_threads(threads)
        return threads

    def after_iteration(self, algorithm: Any) -> int | None:
        """Read the iteration's learning seconds from RLlib's timers and set the next iteration's threads. Returns
        the threads the finished iteration learned with, which its result reports (None: fixed, nothing changes)."""
        if self.chooser is None:
            return None
        import torch

        from osrs_rllib.time_account import rllib_timer_totals

        ran = self.chooser.current
        totals = rllib_timer_totals(algorithm)
        total = sum(totals.get(name, 0.0) for name in LEARNING_TIMERS)
        previous, self._learning_total = self._learning_total, total
        if previous is None or total <= previous:
            return ran
        torch.set_num_threads(self.chooser.record(total - previous))
        return ran


_run: LearnerThreads | None = None
"""The learner threads of the algorithm this process built last (`configure`): torch's thread count is
process-wide, so its controller is too."""


def configure(setting: int | Literal["auto"]) -> LearnerThreads:
    """Called where the learner's algorithm is built (`osrs_rllib.rllib_config.build_algorithm_config`): sets the
    threads for the first iteration and keeps the controller that `after_iteration` steps."""
    global _run
    _run = LearnerThreads(setting)
    _run.start()
    return _run


def after_iteration(algorithm: Any) -> int | None:
    """Called once per training iteration in the driver (`osrs_rllib.callbacks.TrainingCallbacks.on_train_result`)."""
    return _run.after_iteration(algorithm) if _run is not None else None
