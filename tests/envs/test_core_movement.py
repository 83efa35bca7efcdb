"""The compiled core's movement against envs/nh/movement.py.

Random sequences of the movement operations (follow, take_steps, the reach test with and without its
step-out side effect, path appends both ways, resets) on two players placed near each other, moving or
not, running or not, with partly spent run energy and queued paths, including by the wilderness edge;
after every operation both players must equal the Python engine's, field by field. The §5.8 candidate
lists (cardinal, diagonal, farcast rings) must match tile for tile, in order.
"""

from __future__ import annotations

from collections import deque

import numpy as np
import pytest

from envs.nh import movement
from envs.nh.params import OPPONENT_AGENT, FightParams
from envs.nh.sim import FightSim
from tests.envs import core_snapshots as snapshots
from tests.envs.core_snapshots import compiled_core

core = compiled_core()

OPS = ("follow", "take_steps", "can_reach", "append_path", "reset_walk", "queue_end", "distance", "in_melee_range")
EDGE_X, EDGE_Y = movement.WILDERNESS_X[0], movement.WILDERNESS_Y[0]


def _place(sim: FightSim, make: np.random.Generator) -> None:
    """Both players within a few tiles, sometimes by the wilderness corner, in random walking states."""
    cx, cy = (EDGE_X + 2, EDGE_Y + 2) if make.random() < 0.3 else (3070, 3540)
    for p in sim.players:
        p.x, p.y = cx + int(make.integers(-6, 7)), cy + int(make.integers(-6, 7))
        p.moving = bool(make.random() < 0.5)
        p.running = bool(make.random() < 0.7)
        p.run_energy = int(make.integers(0, 4)) if make.random() < 0.3 else int(make.integers(0, 101))
        p.walk_queue = deque()
        if make.random() < 0.5:
            movement.append_path(p, p.x + int(make.integers(-5, 6)), p.y + int(make.integers(-5, 6)))


def _run_python(op: str, p: object, t: object, a: int, b: int, c: int) -> object:
    if op == "follow":
        return movement.follow(p, t, bool(a), b)
    if op == "take_steps":
        return movement.take_steps(p)
    if op == "can_reach":
        return movement.can_reach(p, t, bool(a), b, bool(c))
    if op == "append_path":
        return movement.append_path(p, a, b, bool(c))
    if op == "reset_walk":
        return movement.reset_walk(p)
    if op == "queue_end":
        return movement.queue_end(p)
    if op == "distance":
        return movement.distance(p, t)
    return movement.in_melee_range(p, t)


@pytest.mark.parametrize("seed", range(4))
def test_movement_operations_match_python(seed: int) -> None:
    make = np.random.default_rng(seed)
    batch = core.FightBatch(1)
    params = FightParams(opponent=OPPONENT_AGENT, training=True)
    for fight in range(60):
        sim = FightSim(params)
        sim.reset(seed=fight)
        batch.reset(0, np.random.default_rng(fight).bit_generator.state, snapshots.core_params(params))
        _place(sim, make)
        for p in sim.players:
            p.target = sim.players[1 - p.index] if make.random() < 0.5 else None
            batch.set_player(0, p.index, snapshots.player(p))
        for step in range(40):
            op = OPS[int(make.integers(0, len(OPS)))]
            which = int(make.integers(0, 2))
            p, t = sim.players[which], sim.players[1 - which]
            if op == "append_path":
                a, b, c = p.x + int(make.integers(-8, 9)), p.y + int(make.integers(-8, 9)), int(make.integers(0, 2))
            else:
                a, b, c = int(make.integers(0, 2)), int(make.integers(1, 11)), int(make.integers(0, 2))
            if op in ("follow", "take_steps") and make.random() < 0.3:
                t.moving = not t.moving  # the other player's moving flag changes between calls in a tick
                batch.set_player(0, t.index, snapshots.player(t))
            want = _run_python(op, p, t, a, b, c)
            got = batch.movement(0, which, op, a, b, c)
            assert got == want, (seed, fight, step, op)
            for q in sim.players:
                assert batch.player(0, q.index) == snapshots.player(q), (seed, fight, step, op, q.index)


@pytest.mark.parametrize("kind", [0, 1, 2])
def test_movement_candidates_match_python(kind: int) -> None:
    make = np.random.default_rng(kind)
    for _ in range(1500):
        extent = int(make.integers(1, 11)) if kind == 2 else 1
        offsets = (movement.CARDINALS, movement.DIAGONALS, movement.ring_offsets(extent))[kind]
        tx = EDGE_X + int(make.integers(-12, 13)) if make.random() < 0.5 else 3070
        ty = EDGE_Y + int(make.integers(-12, 13)) if make.random() < 0.5 else 3540
        px, py = tx + int(make.integers(-15, 16)), ty + int(make.integers(-15, 16))
        want = movement.movement_candidates(px, py, tx, ty, offsets)
        assert core.movement_candidates(px, py, tx, ty, kind, extent) == want, (px, py, tx, ty, extent)


def test_movement_rejects_unknown_operations() -> None:
    batch = core.FightBatch(1)
    batch.reset(0, np.random.default_rng(0).bit_generator.state, snapshots.core_params(FightParams()))
    with pytest.raises(ValueError, match="valid: \\['follow'"):
        batch.movement(0, 0, "teleport")
    with pytest.raises(ValueError, match="kind must be"):
        core.movement_candidates(0, 0, 0, 0, 3, 1)
