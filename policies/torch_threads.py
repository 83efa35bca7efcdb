"""Fights that run forward passes in the driver use one torch thread, whatever the process had.

The network's operations are tens of microseconds each, and two intra-op threads meet at the end of every one:
on a two-core machine where anything else wants a core (a training run, a test suite, a browser), the preempted
thread holds the other at the next meeting point. A 3,000-fight evaluation against the expert (a `ship` rung row)
took 93-111 s on a quiet machine with torch's default of two threads and 1,134-2,894 s beside a test run; with
one, such rows took 81-89 s (another model's, with a test run beside some of them), and 3,000 `fight`s against the
baseline 69 s beside a training run where two threads had taken 988 s beside an exploit run. A fight batch's
forward pass and the simulator simply take turns. The learner, whose matrix products are large enough to gain
from two threads, chooses for itself (`osrs_rllib.training.learner.threads`).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator


@contextlib.contextmanager
def torch_threads(threads: int = 1) -> Iterator[None]:
    """Run the block with `threads` torch intra-op threads, then restore the process's count (also on error).

    A process that has not imported torch has no network to run (its players are scripted): the block runs as it
    is, without paying torch's import."""
    torch = sys.modules.get("torch")
    if torch is None:
        yield
        return
    previous = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(previous)
