"""How many torch threads the learner uses (``ppo.learner_threads``), chosen from what the run measures.

The learner's SGD runs in the driver while the env runners wait. On an idle two-core machine two torch threads
make an SGD step about 1.7 times faster than one (compute_gradients on a 2,048-sample minibatch: 39 ms against
68 ms). But the network's operations are small (tens of microseconds each) and the two threads meet at the end
of every one: as soon as any other process wants a core (a browser, a test run, the machine's other jobs), the
thread it preempts holds the other at the next meeting point, and a whole SGD iteration took 7-14 s instead of
1.1 s with one thread. Neither number is a safe default, so with ``auto`` the run measures both and keeps the
faster (`ThreadChooser`), trying the other again now and then, less often each time it loses, and switching
only on a fresh measurement.

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
WINDOW = 5
"""Learning times kept per setting; the median of them is compared, so up to two slow outliers among five (a
neighbour's burst, a collection pause) do not move it."""
LEARNING_TIMERS = ("load", "learn")
"""RLlib's timers around the learner's work in an iteration (`osrs_rllib.training.time_account.RLLIB_TIMERS`)."""


class ThreadChooser:
    """Picks the thread count of the next iteration from the learning seconds of the last ones.

    Every candidate is tried once (most threads first) and the fastest becomes the resident setting. The resident
    is only ever replaced by a probe: one iteration of another candidate, freshly measured, that beats the median
    of the resident's last `WINDOW` times. Probes come every `probe interval` iterations, the interval doubling
    after every probe that loses (up to `MAX_PROBE_INTERVAL`) and starting over after one that wins; a probe also
    comes at once when the resident's median grows past another candidate's last measured time (the machine got
    busy). Comparing against fresh measurements only matters: a candidate's old times were taken under other
    conditions (earlier in the run, when iterations were cheaper, or during a burst of load), and choosing by
    them kept a run on the slower setting for hundreds of iterations.
    """

    def __init__(self, candidates: Sequence[int], first_interval: int = FIRST_PROBE_INTERVAL) -> None:
        if not candidates or any(c < 1 for c in candidates):
            raise ValueError(f"candidates must be positive thread counts, got {list(candidates)}")
        self.candidates = sorted(set(candidates), reverse=True)
        self.times: dict[int, deque[float]] = {c: deque(maxlen=WINDOW) for c in self.candidates}
        self.first_interval = first_interval
        self.interval = first_interval
        self.since_probe = 0
        self.resident = self.candidates[0]
        """The setting used between probes."""
        self.current = self.resident
        self.probing: int | None = None
        self.history: list[int] = []
        """The thread count of every recorded iteration, in order."""

    def _median(self, count: int) -> float:
        return statistics.median(self.times[count])

    def record(self, seconds: float) -> int:
        """The learning seconds of an iteration run with `current` threads; returns the next iteration's count."""
        self.history.append(self.current)
        ran = self.current
        if self.probing is not None:
            won = float(seconds) < self._median(self.resident)
            self.times[ran].clear()  # the probe's time is this setting's only current evidence
            self.times[ran].append(float(seconds))
            if won:
                self.resident = ran
            self.interval = self.first_interval if won else min(self.interval * 2, MAX_PROBE_INTERVAL)
            self.probing = None
        else:
            self.times[ran].append(float(seconds))
        untried = [c for c in self.candidates if not self.times[c]]
        if untried:
            self.current = untried[0]
            return self.current
        if len(self.history) == len(self.candidates):  # each tried once: the fastest starts as resident
            self.resident = min(self.candidates, key=lambda c: (self._median(c), -c))
        self.since_probe += 1
        others = [c for c in self.candidates if c != self.resident]
        resident_median = self._median(self.resident)
        overtaken = [c for c in others if min(self.times[c]) < resident_median]
        if others and len(self.times[self.resident]) >= 3 and overtaken:
            self.probing = min(overtaken, key=lambda c: min(self.times[c]))
        elif others and self.since_probe >= self.interval:
            self.probing = max(others, key=lambda c: len(self.history) - _last_index(self.history, c))  # least recent
        if self.probing is not None:
            self.since_probe = 0
            self.current = self.probing
        else:
            self.current = self.resident
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

        from osrs_rllib.training.time_account import rllib_timer_totals

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
    """Called where the learner's algorithm is built (`osrs_rllib.training.algorithm.build_algorithm_config`): sets the
    threads for the first iteration and keeps the controller that `after_iteration` steps."""
    global _run
    _run = LearnerThreads(setting)
    _run.start()
    return _run


def after_iteration(algorithm: Any) -> int | None:
    """Called once per training iteration in the driver
    (`osrs_rllib.training.callbacks.TrainingCallbacks.on_train_result`)."""
    return _run.after_iteration(algorithm) if _run is not None else None
