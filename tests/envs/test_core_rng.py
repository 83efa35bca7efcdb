"""The compiled core's PCG64 against numpy's Generator, bit for bit (docs/compiled-core.md).

Both engines must draw the same numbers from the same seed, so the C generator is compared with numpy's
on long interleaved sequences of `random()` and `integers(low, high)`: the engine's own ranges (spec
§16.6 draws), every branch of numpy's bounded-integer method (range 0, 32-bit Lemire, the raw 32-bit
draw, 64-bit Lemire, the raw 64-bit draw) and random ranges, from many seeds, then the full state
(including the buffered half word) after the draws. The slow variant draws tens of millions.
"""

from __future__ import annotations

import numpy as np
import pytest

from envs.nh.baseline import IDLE_WALK_N, IDLE_WALK_RADIUS, OVERHEAD_SWITCH_ROLL_MAX, STEP_AWAY_DIRECTIONS
from envs.nh.sim import (
    BLOOD_FURY_ROLL_MAX,
    PID_COUNTDOWN_TICKS,
    POISON_CHANCE_MAX,
    TRAINING_SPAWN_X,
    TRAINING_SPAWN_Y,
)
from tests.envs.core_snapshots import compiled_core

core = compiled_core()

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
DRAW_RANDOM = 0  # op kinds of Rng.draws (nhcore_module.c)
DRAW_UNIFORM = 1

ENGINE_RANGES: list[tuple[int, int]] = [
    # Inclusive (low, high) of the engine's U[a, b] draws (spec §16.6): each becomes integers(a, b + 1).
    (0, 2),  # fight mode
    (0, 5),  # uniform build over six options
    (TRAINING_SPAWN_X[0], TRAINING_SPAWN_X[1]),
    (TRAINING_SPAWN_Y[0], TRAINING_SPAWN_Y[1]),
    (PID_COUNTDOWN_TICKS[0], PID_COUNTDOWN_TICKS[1]),
    (0, POISON_CHANCE_MAX),
    (0, BLOOD_FURY_ROLL_MAX),
    (0, OVERHEAD_SWITCH_ROLL_MAX),
    (min(STEP_AWAY_DIRECTIONS), max(STEP_AWAY_DIRECTIONS)),
    (IDLE_WALK_RADIUS[0], IDLE_WALK_RADIUS[1]),
    (IDLE_WALK_N[0], IDLE_WALK_N[1]),
    (0, IDLE_WALK_N[1]),
    (-IDLE_WALK_RADIUS[1], IDLE_WALK_RADIUS[1]),
    (0, 48),  # a damage roll U[0, max]
]
EDGE_RANGES: list[tuple[int, int]] = [
    (0, 0),  # range 0: no draw at all
    (5, 5),
    (-3, -3),
    (0, 1),
    (0, 2**31),
    (0, 2**32 - 2),  # largest 32-bit Lemire range
    (0, 2**32 - 1),  # one raw 32-bit draw
    (-(2**31), 2**31 - 1),
    (0, 2**32),  # smallest 64-bit Lemire range
    (0, 2**53),
    (0, 2**62 + 12345),  # Lemire 64 with frequent rejection thresholds
    (0, 2**63 - 1),
    (INT64_MIN, -1),
    (INT64_MIN, INT64_MAX),  # full range: one raw 64-bit draw
    (-(2**62), 2**62),
]
SEEDS = [0, 1, 7, 42, 12345, 2**32 + 5, 2**63 + 11, 987654321987654321]


def _random_ranges(rng: np.random.Generator, n: int) -> list[tuple[int, int]]:
    """Ranges of random width at every scale, so every branch of the bounded method gets many draws."""
    out = []
    for _ in range(n):
        bits = int(rng.integers(0, 64))
        width = int(rng.integers(0, 2**bits))
        low = int(rng.integers(INT64_MIN, INT64_MAX - width + 1))
        out.append((low, low + width))
    return out


ALL_RANGES = ENGINE_RANGES + EDGE_RANGES + _random_ranges(np.random.default_rng(2024), 200)


def _core_rng(seed: int) -> tuple[np.random.Generator, object]:
    """A numpy Generator seeded as the engine seeds (`default_rng(seed)`, envs/nh/sim.py) and its C twin."""
    reference = np.random.default_rng(seed)
    return reference, core.Rng(reference.bit_generator.state)


def _script(seed: int, n: int) -> np.ndarray:
    """`n` draw ops (kind, low, high_inclusive): random() one time in three, else a range from ALL_RANGES,
    with the engine's ranges weighted up."""
    pick = np.random.default_rng(seed + 1)
    ops = np.zeros((n, 3), dtype=np.int64)
    kinds = pick.integers(0, 3, size=n)
    engine_share = pick.random(n) < 0.5
    which = np.where(engine_share, pick.integers(0, len(ENGINE_RANGES), n), pick.integers(0, len(ALL_RANGES), n))
    for i in range(n):
        if kinds[i] == 0:
            ops[i] = (DRAW_RANDOM, 0, 0)
        else:
            ops[i] = (DRAW_UNIFORM, *ALL_RANGES[int(which[i])])
    return ops


def _numpy_draws(reference: np.random.Generator, ops: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """numpy's answer to `ops`, in runs: `random(size=k)` and array-bound `integers` both make exactly the
    per-element draws of the scalar calls, in order (the scalar test pins that too)."""
    out_int = np.zeros(len(ops), dtype=np.int64)
    out_float = np.zeros(len(ops), dtype=np.float64)
    kinds = ops[:, 0]
    starts = np.flatnonzero(np.diff(kinds, prepend=-1))
    ends = np.append(starts[1:], len(ops))
    for s, e in zip(starts, ends, strict=True):
        if kinds[s] == DRAW_RANDOM:
            out_float[s:e] = reference.random(e - s)
        else:
            low = ops[s:e, 1]
            high = ops[s:e, 2].astype(object) + 1  # exclusive; may be 2**63 for the full range
            out_int[s:e] = reference.integers(low.astype(object), high, dtype=np.int64)
    return out_int, out_float


def _check_batch(seed: int, n: int) -> None:
    reference, twin = _core_rng(seed)
    ops = _script(seed, n)
    got_int = np.zeros(n, dtype=np.int64)
    got_float = np.zeros(n, dtype=np.float64)
    twin.draws(ops, got_int, got_float)
    want_int, want_float = _numpy_draws(reference, ops)
    np.testing.assert_array_equal(got_int, want_int)
    assert got_float.view(np.uint64).tolist() == want_float.view(np.uint64).tolist()  # bit for bit
    assert twin.state == reference.bit_generator.state


def test_scalar_draws_match_numpy_exactly() -> None:
    """The engine's calls, one at a time, interleaved as the tick interleaves them."""
    for seed in SEEDS:
        reference, twin = _core_rng(seed)
        ops = _script(seed, 4_000)
        for kind, low, high in ops.tolist():
            if kind == DRAW_RANDOM:
                assert twin.random() == reference.random()
            else:
                assert twin.integers(low, high + 1) == int(reference.integers(low, high + 1))
        assert twin.state == reference.bit_generator.state


def test_every_range_alone_matches_numpy() -> None:
    """Each range on its own for a while, so a branch's buffering (the half word) is exercised in a row."""
    reference, twin = _core_rng(99)
    for low, high in ALL_RANGES:
        for _ in range(25):
            assert twin.integers(low, high + 1) == int(reference.integers(low, high + 1)), (low, high)
        assert twin.state == reference.bit_generator.state, (low, high)


@pytest.mark.parametrize("seed", SEEDS)
def test_batched_draws_match_numpy_exactly(seed: int) -> None:
    """150,000 mixed draws per seed (1.2 million in all) through the batch call."""
    _check_batch(seed, 150_000)


@pytest.mark.slow
def test_tens_of_millions_of_draws_match_numpy() -> None:
    for seed in range(40):
        _check_batch(1_000_003 * seed + 17, 500_000)


def test_state_round_trips_through_numpy() -> None:
    """A state taken mid-stream (half word buffered) goes back into numpy and both continue in step."""
    reference, twin = _core_rng(5)
    assert twin.integers(0, 10) == reference.integers(0, 10)  # a 32-bit draw: the high half stays buffered
    state = twin.state
    assert state["has_uint32"] == 1
    assert state == reference.bit_generator.state
    resumed = np.random.default_rng()
    resumed.bit_generator.state = state
    again = core.Rng(state)
    assert [resumed.integers(0, 100) for _ in range(50)] == [again.integers(0, 100) for _ in range(50)]
    twin.state = resumed.bit_generator.state
    assert twin.random() == resumed.random()


def test_bad_input_gets_a_clear_error() -> None:
    with pytest.raises(ValueError, match="PCG64"):
        core.Rng(np.random.Generator(np.random.MT19937(1)).bit_generator.state)
    with pytest.raises(TypeError, match=r"bit_generator\.state"):
        core.Rng(123)
    with pytest.raises(ValueError, match="needs the key"):
        core.Rng({"bit_generator": "PCG64"})
    twin = core.Rng(np.random.default_rng(1).bit_generator.state)
    with pytest.raises(ValueError, match="low >= high"):
        twin.integers(5, 5)
    with pytest.raises(OverflowError):
        twin.integers(0, 2**64)
    with pytest.raises(TypeError, match="int64"):
        twin.draws(np.zeros((1, 3), dtype=np.int32), np.zeros(1, dtype=np.int64), np.zeros(1))
    with pytest.raises(ValueError, match="hold 1 items"):
        twin.draws(np.zeros((1, 3), dtype=np.int64), np.zeros(2, dtype=np.int64), np.zeros(1))
    with pytest.raises(ValueError, match="row 0"):
        twin.draws(np.array([[1, 5, 4]], dtype=np.int64), np.zeros(1, dtype=np.int64), np.zeros(1))
