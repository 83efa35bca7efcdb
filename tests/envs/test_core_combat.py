"""The compiled core's attack resolution and hit creation against envs/nh/combat.py.

Players come from real resets (every build, randomised gear) and are then pushed around the way a fight
pushes them: gear-set switches through the real equip routine, any special weapon armed, enchanted bolts,
full Dharok's, every fight style, any set of active prayers, boosted and drained levels, a selected spell,
queued granite-maul specs. For each such pair the core must give the same attack and defence rolls,
damage range, range and speed for every combat method, and the same `create_hits` outcome with the same
draws (generator state compared after each attack).
"""

from __future__ import annotations

import numpy as np
import pytest

from envs.nh.combat import (
    SPECIALS,
    Method,
    attack_range,
    attack_roll,
    attack_speed,
    combat_method,
    create_hits,
    damage_range,
    defence_roll,
)
from envs.nh.equipment import equip_set, on_weapon_changed, recompute_bonuses
from envs.nh.items import ITEMS, SLOT_AMMO, SLOT_WEAPON, Ids, Slot
from envs.nh.loadouts import BASE_SETS, Build
from envs.nh.params import OPPONENT_AGENT, FightParams
from envs.nh.prayers import Prayer
from envs.nh.sim import FightSim
from envs.nh.spells import Spell
from envs.nh.state import PlayerState, Skill
from tests.envs import core_snapshots as snapshots
from tests.envs.core_snapshots import compiled_core

core = compiled_core()

METHODS = list(Method)
BOLTS = sorted(Ids.OPAL_BOLTS | Ids.DIAMOND_BOLTS | Ids.DRAGONSTONE_BOLTS)


def _wear(p: PlayerState, item_id: int) -> None:
    """Put an item straight into its slot, as a test fixture may (the equip routine is exercised apart)."""
    item = ITEMS[item_id]
    p.equipment[item.slot] = item_id
    if item.two_handed:
        p.equipment[Slot.SHIELD] = -1
    if item.slot is Slot.WEAPON:
        on_weapon_changed(p)
    recompute_bonuses(p)


SPECIAL_WEAPONS = sorted(SPECIALS)


def _push_around(p: PlayerState, rng: np.random.Generator, special_weapon: int | None) -> None:
    """Random but reachable-looking combat state (see the module docstring); `special_weapon` is worn."""
    gs = BASE_SETS[int(rng.integers(0, len(BASE_SETS)))]
    if p.loadout.sets[gs] and rng.random() < 0.7:
        equip_set(p, p.loadout.sets[gs])
    if special_weapon is not None:
        _wear(p, special_weapon)
    if rng.random() < 0.2:
        _wear(p, BOLTS[int(rng.integers(0, len(BOLTS)))])
    if rng.random() < 0.1:
        for iid in sorted(Ids.DHAROKS_SET):
            _wear(p, iid)
    weapon = p.weapon
    styles = weapon.weapon_class.styles if weapon is not None and weapon.weapon_class else None
    if styles is not None:
        p.style = styles[int(rng.integers(0, len(styles)))]
    p.prayers = {pr for pr in Prayer if rng.random() < 0.15}
    for skill in Skill:
        p.level[skill] = max(1, p.base[skill] + int(rng.integers(-20, 25)))
    p.selected_spell = Spell(int(rng.integers(0, len(Spell)))) if rng.random() < 0.3 else None
    p.special_armed = bool(rng.random() < 0.4)
    p.gmaul_queued = int(rng.integers(0, 3)) if rng.random() < 0.3 else 0
    p.special_energy = int(rng.integers(0, 101))


def _python_numbers(a: PlayerState, d: PlayerState, method: Method) -> dict[str, object] | type[Exception]:
    try:
        low, high = damage_range(a, method)
    except ValueError:
        return ValueError
    numbers: dict[str, object] = {
        "attack_roll": attack_roll(a, method),
        "defence_roll": defence_roll(d, method, a),
        "damage_range": (low, high),
        "attack_speed": attack_speed(a, method),
        "combat_method": METHODS.index(combat_method(a)),
    }
    try:
        numbers["attack_range"] = attack_range(a, method)
    except KeyError:  # a ranged method without a ranged weapon has no range in Python
        numbers["attack_range"] = None
    return numbers


def _outcome(outcome: object) -> dict[str, object]:
    return {
        "method": METHODS.index(outcome.method),
        "hits": [snapshots._hit(h) for h in outcome.hits],
        "energy_cost": outcome.energy_cost,
        "attack_speed": outcome.attack_speed,
        "freeze_ticks": outcome.freeze_ticks,
        "heal": outcome.heal,
        "spell": None if outcome.spell is None else int(outcome.spell),
    }


def _fight(make: np.random.Generator, seed: int) -> FightSim:
    params = FightParams(
        account_build=list(Build)[int(make.integers(0, len(Build)))],
        randomize_gear=True,
        opponent=OPPONENT_AGENT,
        training=True,
    )
    sim = FightSim(params)
    sim.reset(seed=seed)
    return sim


@pytest.mark.parametrize("chunk", range(4))
def test_combat_matches_python(chunk: int) -> None:
    make = np.random.default_rng(500 + chunk)
    batch = core.FightBatch(1)
    seen: set[Method] = set()
    for k in range(150):
        seed = 1000 * chunk + k
        sim = _fight(make, seed)
        batch.reset(0, np.random.default_rng(seed).bit_generator.state, snapshots.core_params(sim.params))
        for p in sim.players:
            # every fourth attacker wields each special weapon in turn: every method gets its attacks
            special = SPECIAL_WEAPONS[(k // 4) % len(SPECIAL_WEAPONS)] if k % 4 == 0 and p.index == k % 2 else None
            _push_around(p, make, special)
            if special is not None:
                p.special_armed, p.selected_spell = True, None
            batch.set_player(0, p.index, snapshots.player(p))
            assert batch.player(0, p.index) == snapshots.player(p)  # the snapshot round-trips
        a, d = sim.players[k % 2], sim.players[1 - k % 2]
        seen.add(combat_method(a))
        for method in METHODS:
            want = _python_numbers(a, d, method)
            if want is ValueError:
                with pytest.raises(ValueError, match="selected spell"):
                    batch.combat_numbers(0, a.index, METHODS.index(method))
                continue
            got = batch.combat_numbers(0, a.index, METHODS.index(method))
            if want["attack_range"] is None:
                got["attack_range"] = None
            assert got == want, (seed, method)
        for _ in range(3):  # three attacks in a row from the same generator
            distance = int(make.integers(0, 12))
            batch.set_rng_state(0, sim.rng.bit_generator.state)
            got = batch.create_hits(0, a.index, distance)
            assert got == _outcome(create_hits(sim.rng, a, d, distance)), (seed, distance)
            assert batch.rng_state(0) == sim.rng.bit_generator.state, seed
    assert seen == set(METHODS), f"no attack with {set(METHODS) - seen}: the test would prove less than it says"


def test_set_player_rejects_bad_snapshots() -> None:
    batch = core.FightBatch(1)
    batch.reset(0, np.random.default_rng(0).bit_generator.state, snapshots.core_params(FightParams()))
    good = batch.player(0, 0)
    with pytest.raises(ValueError, match="needs the key 'level'"):
        batch.set_player(0, 0, {k: v for k, v in good.items() if k != "level"})
    with pytest.raises(ValueError, match="'base' has 3 items"):
        batch.set_player(0, 0, good | {"base": [1, 2, 3]})
    with pytest.raises(ValueError, match="no style"):
        batch.set_player(0, 0, good | {"style": (0, 9, 0, 0)})
    assert batch.player(0, 0) == good
    assert SLOT_WEAPON != SLOT_AMMO  # the slots _wear relies on are distinct
