"""The compiled core's game operations against envs/nh/operations.py.

Random sequences of prayer switches, heals, eating (every food, karambwan combos), drinking (every potion
family, fewest- and most-doses-first), Vengeance and the food queries, on players from randomised resets
whose levels, timers, prayers, spellbook and dying flag are pushed around; after every operation the
return value and both players must equal the Python engine's, field by field.
"""

from __future__ import annotations

import numpy as np
import pytest

from envs.nh import operations
from envs.nh.items import Ids, PotionType
from envs.nh.loadouts import Build
from envs.nh.params import OPPONENT_AGENT, FightParams
from envs.nh.prayers import Prayer
from envs.nh.sim import FightSim
from envs.nh.state import TIMER_NEVER_SET, PlayerState, Skill, Spellbook
from tests.envs import core_snapshots as snapshots
from tests.envs.core_snapshots import compiled_core

core = compiled_core()

FOODS = (Ids.SHARK, Ids.ANGLERFISH, Ids.KARAMBWAN)
OPS = (
    "activate_prayer",
    "can_activate",
    "deactivate_all_prayers",
    "heal",
    "effect_heal",
    "eat_food",
    "eat_karambwan",
    "drink_potion",
    "find_potion",
    "cast_vengeance",
    "primary_food",
    "has_any_food",
    "nominal_heal",
)


def _push_around(p: PlayerState, make: np.random.Generator) -> None:
    for skill in Skill:
        p.level[skill] = max(0, p.base[skill] + int(make.integers(-30, 20)))
    for t in range(len(p.timer_ticks)):
        ticks = int(make.integers(0, 5)) if make.random() < 0.5 else 0
        p.timer_ticks[t] = ticks
        p.timer_uncapped[t] = TIMER_NEVER_SET if make.random() < 0.2 else ticks - int(make.integers(0, 6))
    p.prayers = {pr for pr in Prayer if make.random() < 0.1}
    if make.random() < 0.3:
        p.spellbook = Spellbook.LUNAR
    p.dying = bool(make.random() < 0.1)
    p.vengeance = bool(make.random() < 0.2)


def _python(op: str, p: PlayerState, a: int, b: int) -> object:
    if op == "activate_prayer":
        return operations.activate_prayer(p, Prayer(a))
    if op == "can_activate":
        return operations.can_activate(p, Prayer(a))
    if op == "deactivate_all_prayers":
        return operations.deactivate_all_prayers(p)
    if op == "heal":
        return operations.heal(p, a, b)
    if op == "effect_heal":
        return operations.effect_heal(p, a)
    if op == "eat_food":
        return operations.eat_food(p, a)
    if op == "eat_karambwan":
        return operations.eat_karambwan(p)
    if op == "drink_potion":
        return operations.drink_potion(p, PotionType(a), bool(b))
    if op == "find_potion":
        return operations.find_potion(p, PotionType(a), bool(b))
    if op == "cast_vengeance":
        return operations.cast_vengeance(p)
    if op == "primary_food":
        return operations.primary_food(p)
    if op == "has_any_food":
        return operations.has_any_food(p)
    return operations.nominal_heal(a, p.base_hp)


def _arguments(op: str, make: np.random.Generator) -> tuple[int, int]:
    if op in ("activate_prayer", "can_activate"):
        return int(make.integers(0, len(Prayer))), 0
    if op in ("heal", "effect_heal"):
        return int(make.integers(-5, 35)), int(make.integers(0, 130))
    if op in ("eat_food", "nominal_heal"):
        return int(FOODS[int(make.integers(0, len(FOODS)))]), 0
    if op in ("drink_potion", "find_potion"):
        return int(make.integers(1, 5)), int(make.integers(0, 2))
    return 0, 0


@pytest.mark.parametrize("seed", range(4))
def test_operations_match_python(seed: int) -> None:
    make = np.random.default_rng(seed)
    batch = core.FightBatch(1)
    succeeded: set[str] = set()
    for fight in range(60):
        params = FightParams(
            account_build=list(Build)[int(make.integers(0, len(Build)))], randomize_gear=True, opponent=OPPONENT_AGENT
        )
        sim = FightSim(params)
        sim.reset(seed=fight)
        batch.reset(0, np.random.default_rng(fight).bit_generator.state, snapshots.core_params(params))
        for p in sim.players:
            _push_around(p, make)
            batch.set_player(0, p.index, snapshots.player(p))
        for step in range(50):
            op = OPS[int(make.integers(0, len(OPS)))]
            which = int(make.integers(0, 2))
            a, b = _arguments(op, make)
            if make.random() < 0.2:  # time passes: timers run down between operations
                for p in sim.players:
                    p.decrement_timers()
                    batch.set_player(0, p.index, snapshots.player(p))
            want = _python(op, sim.players[which], a, b)
            got = batch.operation(0, which, op, a, b)
            assert got == want, (seed, fight, step, op, a, b)
            if want is True:
                succeeded.add(op)
            for q in sim.players:
                assert batch.player(0, q.index) == snapshots.player(q), (seed, fight, step, op, a, b, q.index)
    acting = {"activate_prayer", "eat_food", "eat_karambwan", "drink_potion", "cast_vengeance"}
    assert acting <= succeeded, f"never succeeded: {acting - succeeded} (the test would prove less than it says)"


def test_operation_rejects_bad_arguments() -> None:
    batch = core.FightBatch(1)
    batch.reset(0, np.random.default_rng(0).bit_generator.state, snapshots.core_params(FightParams()))
    with pytest.raises(ValueError, match="no operation 'juggle'"):
        batch.operation(0, 0, "juggle")
    with pytest.raises(ValueError, match="out of range"):
        batch.operation(0, 0, "activate_prayer", len(Prayer))
    with pytest.raises(ValueError, match="out of range"):
        batch.operation(0, 0, "drink_potion", 9)
