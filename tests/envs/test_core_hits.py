"""The compiled core's attack rolls against envs/nh/combat.py, draw for draw.

`_ordinary_hit`, `_claws_hitsplats` and `_vesta_hit` take an attack already resolved from both players
and make the draws of §16.6: accuracy, damage, bolt proc, diamond's fresh roll, the claws' cascade,
Vesta's retry. Thousands of attacks covering every combination (bolt kinds, guaranteed procs, doubled
chances, Dharok's, dark-bow clamp, protection prayer, chances from 0 to 1) run through the Python
functions and the C ones from the same generator state; hitsplats, accuracy and the generator's state
after every attack must agree.
"""

from __future__ import annotations

import numpy as np
import pytest

from envs.nh.combat import (
    _BOLT_CHANCE,
    Method,
    _Attack,
    _Bolt,
    _BoltEffect,
    _claws_hitsplats,
    _ordinary_hit,
    _vesta_hit,
    defence_roll,
)
from envs.nh.formulas import ARMADYL_CROSSBOW_PROC_MULTIPLIER, hit_chance
from tests.envs.combat_players import make_player
from tests.envs.core_snapshots import compiled_core

core = compiled_core()

HIT_ORDINARY, HIT_CLAWS, HIT_VESTA = 0, 1, 2  # kinds of Rng.hits (nhcore_module.c)
BOLT_NONE = -1
FIELD = {name: i for i, name in enumerate(core.ATTACK_FIELDS)}

# A real Vesta attacker and defender: `_vesta_hit` computes its retry chance from them.
VESTA_ATTACKER = make_player({"weapon": "Vesta's longsword"}, {"attack": 99, "strength": 99, "hitpoints": 99})
VESTA_DEFENDER = make_player({"body": "Black d'hide body"}, {"defence": 70, "hitpoints": 99}, index=1)


def _random_attack(rng: np.random.Generator) -> _Attack:
    """One resolved attack with every field drawn over (and beyond) what the loadouts produce."""
    a = int(rng.integers(0, 40_000))
    d = int(rng.integers(0, 40_000)) if rng.random() < 0.9 else 0
    low = int(rng.integers(0, 10)) if rng.random() < 0.2 else 0
    high = low + int(rng.integers(0, 80))
    bolt = None
    if rng.random() < 0.5:
        kind = _Bolt(int(rng.integers(0, 3)))
        doubled = rng.random() < 0.3
        bolt = _BoltEffect(
            kind=kind,
            chance=_BOLT_CHANCE[kind] * (ARMADYL_CROSSBOW_PROC_MULTIPLIER if doubled else 1)
            if rng.random() < 0.8
            else float(rng.random()),  # high proc chances exercise the proc branches often
            guaranteed=bool(rng.random() < 0.3),
            bonus=int(rng.integers(0, 25)),
            fresh_max=int(rng.integers(0, 90)),
        )
    dharok = (int(rng.integers(1, 100)), int(rng.integers(1, 120))) if rng.random() < 0.2 else None
    return _Attack(
        method=Method.RANGED,
        attack_roll=a,
        defence_roll=d,
        chance=hit_chance(a, d),
        low=low,
        high=high,
        protected=bool(rng.random() < 0.4),
        bolt=bolt,
        dharok=dharok,
        clamp=bool(rng.random() < 0.15),
    )


def _row(atk: _Attack, retry: float) -> np.ndarray:
    row = np.zeros(len(FIELD), dtype=np.float64)
    values: dict[str, float] = {
        "chance": atk.chance,
        "retry_chance": retry,
        "low": atk.low,
        "high": atk.high,
        "protected": atk.protected,
        "clamp": atk.clamp,
        "has_dharok": atk.dharok is not None,
        "dharok_base_hp": atk.dharok[0] if atk.dharok else 0,
        "dharok_hp": atk.dharok[1] if atk.dharok else 0,
        "bolt_kind": atk.bolt.kind.value if atk.bolt else BOLT_NONE,
        "bolt_chance": atk.bolt.chance if atk.bolt else 0.0,
        "bolt_guaranteed": atk.bolt.guaranteed if atk.bolt else False,
        "bolt_bonus": atk.bolt.bonus if atk.bolt else 0,
        "bolt_fresh_max": atk.bolt.fresh_max if atk.bolt else 0,
    }
    for name, value in values.items():
        row[FIELD[name]] = value
    return row


def _python_hit(kind: int, rng: np.random.Generator, atk: _Attack) -> tuple[list[int], bool]:
    if kind == HIT_CLAWS:
        splats, accurate = _claws_hitsplats(rng, atk)
        return list(splats), accurate
    if kind == HIT_VESTA:
        damage, accurate = _vesta_hit(rng, atk, VESTA_ATTACKER, VESTA_DEFENDER)
    else:
        damage, accurate = _ordinary_hit(rng, atk)
    return [damage, 0, 0, 0], accurate


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_attack_rolls_match_python(seed: int) -> None:
    make = np.random.default_rng(10_000 + seed)
    reference = np.random.default_rng(seed)
    twin = core.Rng(reference.bit_generator.state)
    vesta_defence = defence_roll(VESTA_DEFENDER, Method.MELEE, VESTA_ATTACKER)
    out = np.zeros((1, 5), dtype=np.int64)
    for i in range(2_500):
        kind = (HIT_ORDINARY, HIT_CLAWS, HIT_VESTA)[int(make.integers(0, 3))]
        atk = _random_attack(make)
        if kind == HIT_CLAWS:
            atk.high = max(atk.high, 1)  # a claw max of 0 is impossible (the weapon's strength bonus)
        retry = hit_chance(atk.attack_roll, vesta_defence)
        twin.hits(np.array([kind], dtype=np.int64), _row(atk, retry)[None, :], out)
        splats, accurate = _python_hit(kind, reference, atk)
        assert out[0, :4].tolist() == splats and bool(out[0, 4]) == accurate, (i, kind, atk)
        assert twin.state == reference.bit_generator.state, (i, kind, atk)


def test_batched_attack_rolls_match_python() -> None:
    """Many attacks in one call (the batch shape the core's tick will use) equal the Python sequence."""
    make = np.random.default_rng(77)
    attacks = [_random_attack(make) for _ in range(3_000)]
    reference = np.random.default_rng(123)
    twin = core.Rng(reference.bit_generator.state)
    kinds = np.full(len(attacks), HIT_ORDINARY, dtype=np.int64)
    table = np.stack([_row(atk, 0.0) for atk in attacks])
    out = np.zeros((len(attacks), 5), dtype=np.int64)
    twin.hits(kinds, table, out)
    for i, atk in enumerate(attacks):
        splats, accurate = _python_hit(HIT_ORDINARY, reference, atk)
        assert out[i, :4].tolist() == splats and bool(out[i, 4]) == accurate, (i, atk)
    assert twin.state == reference.bit_generator.state


def test_hits_rejects_bad_rows() -> None:
    twin = core.Rng(np.random.default_rng(0).bit_generator.state)
    row = _row(_random_attack(np.random.default_rng(1)), 0.0)
    out = np.zeros((1, 5), dtype=np.int64)
    with pytest.raises(ValueError, match="kind must be"):
        twin.hits(np.array([7], dtype=np.int64), row[None, :], out)
    with pytest.raises(ValueError, match="hold"):
        twin.hits(np.array([0, 0], dtype=np.int64), row[None, :], out)
