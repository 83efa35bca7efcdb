"""Property tests over many random seeded fights (issue bars): legality, ranges, termination."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from envs.nh.contract import HEAD_SIZES, apply_dependencies_and_force
from envs.nh.engine import NHEngine
from envs.nh.items import CONSUMABLES, ITEMS
from envs.nh.loadouts import Build
from envs.nh.params import FightParams
from envs.nh.state import EMPTY, INVENTORY_SIZE, Skill

MAX_TICKS = 600


def check_invariants(engine: NHEngine) -> None:
    for p in engine.sim.players:
        assert p.hp >= 0
        assert all(lv >= 0 for lv in p.level)
        assert 0 <= p.special_energy <= 100
        assert p.level[Skill.PRAYER] >= 0
        assert 0 <= p.run_energy <= 100
        assert len(p.inventory) == INVENTORY_SIZE
        assert all(i == EMPTY or i in ITEMS or i in CONSUMABLES for i in p.inventory)
        assert all(i == EMPTY or i in ITEMS for i in p.equipment)
        assert all(t >= 0 for t in p.timer_ticks)
        assert p.gmaul_queued == 0  # the queue never outlives its tick (§6.9)
        if p.dying:
            assert p.hp == 0


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**31 - 1),
    build=st.sampled_from(list(Build)),
    self_play=st.booleans(),
    masked=st.booleans(),
    randomize=st.booleans(),
)
def test_random_fights_keep_every_invariant_and_end(
    seed: int, build: Build, self_play: bool, masked: bool, randomize: bool
) -> None:
    params = FightParams(
        account_build=build,
        opponent="agent" if self_play else "baseline",
        randomize_gear=randomize,
        randomize_fight_type=randomize,
        training=True,
        max_episode_ticks=MAX_TICKS,
    )
    engine = NHEngine(params, observe_all=True)
    engine.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(MAX_TICKS + 1):
        actions = []
        for i in (0, 1):
            mask = engine.masks[i].copy()
            if masked:
                a = apply_dependencies_and_force(mask, lambda h, legal: int(rng.choice(np.flatnonzero(legal))))
            else:  # masks are not enforced (§5): anything must be safe
                a = np.array([rng.integers(0, n) for n in HEAD_SIZES], dtype=np.int64)
            actions.append(a)
        res = engine.step(actions)
        check_invariants(engine)
        assert np.isfinite(engine.obs).all()
        for r in res.rewards:
            assert np.isfinite(r)
        if res.terminated or res.truncated:
            break
    assert engine.sim.done, "every fight ends by termination or truncation"
