"""The 460 PvP golden cases of spec §6 (`test_golden.py`) on the compiled core: the golden cases
pass on both engines.

Each case's attacker and defender are built exactly as the Python test builds them, put into a core fight
(`FightBatch.set_player`), and the core's own attack resolution must give the case's expected attack and
defence rolls and min/max hit, and its hit-chance formula the expected chance of ordinary attacks to 1e-6.
The expected damage per attack is an analytic figure of the Python engine (`attack_profile`); the core only
draws hits, whose draws the differential tests (`test_core_combat.py`) compare one by one.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from envs.nh.combat import Method, combat_method
from envs.nh.loadouts import Loadout
from envs.nh.params import OPPONENT_AGENT, FightParams
from envs.nh.sim import FightSim
from tests.envs import core_snapshots as snapshots
from tests.envs.core_snapshots import compiled_core
from tests.envs.test_golden import CASES, PLAIN_METHODS, TOLERANCE, _attacker, _defender, _expected_method

core = compiled_core()

METHODS = list(Method)


@pytest.fixture(scope="module")
def batch() -> Any:
    b = core.FightBatch(1)
    params = snapshots.core_params(FightParams(opponent=OPPONENT_AGENT))
    b.reset(0, np.random.default_rng(0).bit_generator.state, params)
    return b


@pytest.fixture(scope="module")
def some_loadout() -> Loadout:
    """A loadout for the snapshot: golden players are built by slot and have none, and the rolls read only
    the worn gear, levels, prayers, style and spell, never the loadout."""
    sim = FightSim(FightParams(opponent=OPPONENT_AGENT))
    sim.reset(seed=0)
    return sim.players[0].loadout


@pytest.mark.parametrize("case", CASES, ids=[c["case_id"] for c in CASES])
def test_golden_case_on_the_core(case: dict[str, Any], batch: Any, some_loadout: Loadout) -> None:
    attacker, defender = _attacker(case), _defender(case)
    attacker.loadout = defender.loadout = some_loadout
    method = combat_method(attacker)
    assert method is _expected_method(case, attacker)
    batch.set_player(0, 0, snapshots.player(attacker))
    batch.set_player(0, 1, snapshots.player(defender))
    got = batch.combat_numbers(0, 0, METHODS.index(method))
    expected = case["expected"]
    assert got["combat_method"] == METHODS.index(method)
    assert got["attack_roll"] == expected["attack_roll"]
    assert got["defence_roll"] == expected["defence_roll"]
    assert got["damage_range"] == (expected["min_hit"], expected["max_hit"])
    if case["attack_style"] in PLAIN_METHODS:
        chance = np.zeros(1, dtype=np.float64)
        core.eval_formula("hit_chance", np.array([[got["attack_roll"], got["defence_roll"]]], dtype=np.int64), chance)
        assert chance[0] == pytest.approx(expected["hit_chance"], abs=TOLERANCE, rel=0)
