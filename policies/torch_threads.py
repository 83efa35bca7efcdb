"""Fights that run forward passes in the driver use one torch thread, whatever the process had.

The network's operations are tens of microseconds each, and two intra-op threads meet at the end of every one:
on a two-core machine where anything else wants a core (a training run, a test suite, a browser), the preempted
thread holds the other at the next meeting point. The same 3,000-fight evaluation that takes 93-111 s on a quiet
machine took 1,134-2,894 s beside a test run with torch's default of two threads. With one, a fight batch's
forward pass and the simulator simply take turns, which is as fast when the machine is quiet (the batch is
small) and does not collapse when it is not. The learner, whose matrix products are large enough to gain from
two threads, chooses for itself (`osrs_rllib.learner_threads`).
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
