"""Which member of a per-fight mixture (`policies.mixture`) plays a fight: numpy only, so that the tools that seat
fights (``fight``, ``rate``, the serving client) decide it without loading torch."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

MEMBER_STREAM = 0x6D6978
"""Mixed into a fight's seed before a member is drawn, so the draw is independent of the simulator's and the
seats' own uses of that seed (`osrs_rllib.evaluation.batched.seat_seed`)."""
DRAW = "per fight, uniform: policies.mixture_draw.fight_member(fight seed, members)"
"""How a mixture's members are drawn, as its metadata records it."""


def fight_member(fight_seed: int, count: int) -> int:
    """The member (0 … count-1) that plays the fight of `fight_seed`: uniform over fights, fixed by the seed."""
    if count < 1:
        raise ValueError(f"a mixture has at least one member, got {count}")
    state = np.random.SeedSequence([int(fight_seed) % (1 << 63), MEMBER_STREAM]).generate_state(1, np.uint64)[0]
    return int(state % np.uint64(count))


def fight_members(fight_seeds: Sequence[int], count: int) -> np.ndarray:
    """`fight_member` of every seed, as the (B,) int64 array `ModelFile.act` takes."""
    return np.array([fight_member(s, count) for s in fight_seeds], dtype=np.int64)
