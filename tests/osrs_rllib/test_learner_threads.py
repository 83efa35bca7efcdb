"""``ppo.learner_threads: auto``: the chooser keeps the faster thread count, probes the other less often each time
it loses, and switches when the machine changes; a fixed count stays fixed."""

from __future__ import annotations

import itertools
from collections import Counter

import pytest
import torch

from osrs_rllib.config.schema import ConfigError, load_config
from osrs_rllib.training.learner import threads as learner_threads
from osrs_rllib.training.learner.threads import MAX_PROBE_INTERVAL, LearnerThreads, ThreadChooser


def run(chooser: ThreadChooser, seconds: dict[int, float], iterations: int) -> list[int]:
    """Feed `iterations` learning times (per thread count) and return the counts the chooser used."""
    used = []
    for _ in range(iterations):
        used.append(chooser.current)
        chooser.record(seconds[chooser.current])
    return used


def test_idle_machine_keeps_two_threads_and_probes_one_ever_less_often() -> None:
    chooser = ThreadChooser([1, 2], first_interval=4)
    used = run(chooser, {2: 0.6, 1: 1.1}, 400)
    assert used[:2] == [2, 1]  # every candidate measured once, most threads first
    counts = Counter(used)
    probes = [i for i, t in enumerate(used) if t == 1][1:]
    gaps = [b - a for a, b in itertools.pairwise(probes)]
    assert gaps == sorted(gaps) and gaps[-1] > gaps[0]  # each lost probe doubles the interval
    assert counts[1] <= 9 and counts[2] >= 390
    assert chooser.interval <= MAX_PROBE_INTERVAL


def test_busy_machine_falls_back_to_one_thread_and_returns_when_it_is_idle_again() -> None:
    chooser = ThreadChooser([1, 2], first_interval=4)
    busy = run(chooser, {2: 8.0, 1: 1.1}, 200)
    assert Counter(busy[50:])[1] >= 140  # two threads collapsed: one thread from the first comparison on
    idle = run(chooser, {2: 0.6, 1: 1.1}, 700)
    assert Counter(idle[-200:])[2] >= 195  # a probe found two threads faster again, and they stayed


def test_bursts_of_load_do_not_keep_a_run_on_the_slower_count() -> None:
    """A real 20-minute run's learning times (two threads 0.5-0.55 s, one thread 0.7-0.8 s an iteration): two slow
    iterations of two threads in a row, then the next try of two threads slow again, kept the run on one thread for
    260 of its 540 iterations, because the choice read those stale times. Bursts still cost a probe or two, but
    the run is back on two threads within a few probe intervals and stays there."""
    chooser = ThreadChooser([1, 2], first_interval=16)
    slow = {(2, 233): 1.82, (2, 234): 1.04}  # a neighbour's burst while on two threads
    used = []
    tries_of_two = 0
    for i in range(1, 541):
        threads = chooser.current
        used.append(threads)
        seconds = {2: 0.54, 1: 0.78}[threads]
        if threads == 2 and i > 234 and used[-2] == 1:
            tries_of_two += 1
            if tries_of_two == 1:
                seconds = 1.99  # the first try of two threads after the burst hits another one
        chooser.record(slow.get((threads, i), seconds))
    assert Counter(used[300:])[2] >= 230  # at least 96 % of the last 240 iterations on two threads
    assert Counter(used)[2] >= 500


def test_the_count_is_set_in_torch_and_a_fixed_count_stays() -> None:
    before = torch.get_num_threads()
    try:
        fixed = LearnerThreads(1)
        assert fixed.start() == 1 and torch.get_num_threads() == 1
        assert fixed.after_iteration(object()) is None
        auto = learner_threads.configure("auto")
        assert torch.get_num_threads() == auto.chooser.current  # type: ignore[union-attr]
    finally:
        torch.set_num_threads(before)


def test_each_iteration_reports_the_threads_it_learned_with() -> None:
    """The result of an iteration (TensorBoard ``rllib/info/learner_threads``) names the count that iteration ran
    with, not the one chosen for the next."""

    class Timer:
        def __init__(self) -> None:
            self._total_time = 0.0

    class Algo:
        def __init__(self) -> None:
            self._timers = {"learn": Timer()}

    before = torch.get_num_threads()
    try:
        auto = learner_threads.configure("auto")
        assert auto.chooser is not None
        algo = Algo()
        reported, used = [], []
        for seconds in [1.0] * 3 + [0.5] * 40:  # whatever runs first, the other turns out faster: a switch
            used.append(torch.get_num_threads())
            algo._timers["learn"]._total_time += seconds if torch.get_num_threads() == 1 else 2 * seconds
            reported.append(auto.after_iteration(algo))
        assert reported == used and len(set(used)) == 2
    finally:
        torch.set_num_threads(before)


def test_config_accepts_auto_or_a_positive_count(tmp_path: object) -> None:
    assert load_config("configs/smoke.yml", ["ppo.learner_threads=2"]).ppo.learner_threads == 2
    assert load_config("configs/nh.yml").ppo.learner_threads == "auto"
    with pytest.raises(ConfigError, match="learner_threads"):
        load_config("configs/smoke.yml", ["ppo.learner_threads=0"])
    with pytest.raises(ValueError, match="positive"):
        ThreadChooser([0, 2])
