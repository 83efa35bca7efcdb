"""The compiled core's §6 formulas against envs/nh/formulas.py, exactly (docs/compiled-core.md).

Every ported C formula is evaluated over its whole game domain (levels 1..120 with every prayer
percentage, bonuses -100..300, rolls up to the largest the loadouts reach, damages, distances) plus
random inputs well beyond it, negative ones included where Python's floor division and C's truncating
division would part; each result must equal the Python function's, floats bit for bit.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import numpy as np
import pytest

from envs.nh import formulas
from envs.nh.prayers import prayer_multiplied
from tests.envs.core_snapshots import compiled_core

core = compiled_core()

LEVELS = range(0, 121)
PRAYER_PCTS = (100, 105, 110, 115, 120, 123, 125)
STANCES = (0, 1, 3)
BONUSES = range(-100, 301, 7)
DISTANCES = range(0, 16)
BOOLS = (0, 1)
BIG_ROLL = 60_000  # beyond the largest attack roll of the loadouts (~ 40,000)

# Python reference of each ported formula (the C name without `nh_`).
REFERENCE: dict[str, Callable[..., object]] = {
    name: getattr(formulas, name) for name in core.formula_names() if name != "prayer_multiplied"
} | {"prayer_multiplied": prayer_multiplied}


def _grid(*axes: object) -> list[tuple[int, ...]]:
    return list(itertools.product(*axes))


def _random_rows(n_in: int, bound: int, seed: int) -> list[tuple[int, ...]]:
    rng = np.random.default_rng(seed)
    return [tuple(int(v) for v in row) for row in rng.integers(-bound, bound + 1, size=(2_000, n_in))]


GAME_DOMAIN: dict[str, list[tuple[int, ...]]] = {
    "prayer_multiplied": _grid(LEVELS, PRAYER_PCTS),
    "effective_level": _grid(LEVELS, PRAYER_PCTS, STANCES),
    "magic_effective_level": _grid(LEVELS, PRAYER_PCTS),
    "roll": _grid(range(0, 160), BONUSES),
    "magic_defence_level": _grid(range(0, 150, 3), range(0, 150, 3), STANCES),
    "hit_chance": _grid(range(0, BIG_ROLL, 997), range(0, BIG_ROLL, 1009)),
    "vesta_defence_roll": _grid(range(0, BIG_ROLL, 13)),
    "base_max_hit": _grid(range(0, 160), BONUSES),
    "magic_max_hit": _grid(range(0, 60), range(0, 400, 5)),
    "armadyl_godsword_max_hit": _grid(range(0, 120)),
    "ancient_godsword_max_hit": _grid(range(0, 120)),
    "dragon_dagger_max_hit": _grid(range(0, 120)),
    "ballista_special_max_hit": _grid(range(0, 120)),
    "dark_bow_special_max_hit": _grid(range(0, 120)),
    "nightmare_staff_spell_max": _grid(range(0, 130)),
    "vesta_damage_range": _grid(range(0, 120)),
    "statius_damage_range": _grid(range(0, 120)),
    "accurate_zero_to_one": _grid(range(-5, 120)),
    "protected_damage": _grid(range(0, 200)),
    "dharok_damage": _grid(range(0, 80, 3), range(1, 121, 7), range(0, 140, 3)),
    "dark_bow_special_clamp": _grid(range(-5, 100)),
    "opal_bolt_bonus": _grid(range(0, 130), BOOLS),
    "dragonstone_bolt_bonus": _grid(range(0, 130), BOOLS),
    "diamond_bolt_max_hit": _grid(range(0, 120), BOOLS),
    "claw_total_range": _grid(range(1, 5), range(0, 120)),
    "claw_hitsplats": _grid(range(1, 5), range(0, 200)),
    "blood_heal": _grid(range(0, 80), (0, 15, 20, 25), BOOLS),
    "statius_drained_defence": _grid(range(0, 130)),
    "crossbow_hit_delay": _grid(DISTANCES),
    "ballista_hit_delay": _grid(DISTANCES),
    "dark_bow_second_arrow_delay": _grid(DISTANCES),
    "thrown_hit_delay": _grid(DISTANCES),
    "magic_hit_delay": _grid(DISTANCES),
}
BOOL_ARGS = {"opal_bolt_bonus", "dragonstone_bolt_bonus", "diamond_bolt_max_hit", "blood_heal"}
POSITIVE_ONLY = {"hit_chance", "claw_total_range", "claw_hitsplats"}  # first_success is 1..4; rolls >= 0


def _beyond_the_game(name: str, n_in: int) -> list[tuple[int, ...]]:
    """Random rows far outside the game's ranges (negative too), where floor and truncation differ."""
    rows = _random_rows(n_in, 100_000, seed=len(name) * 7919 + n_in)
    if name in BOOL_ARGS:
        rows = [(*row[:-1], abs(row[-1]) % 2) for row in rows]
    if name in POSITIVE_ONLY:
        rows = [tuple(abs(v) for v in row) for row in rows]
    if name.startswith("claw"):
        rows = [(abs(row[0]) % 4 + 1, *row[1:]) for row in rows]
    return rows


def _as_tuple(value: object) -> tuple[object, ...]:
    return value if isinstance(value, tuple) else (value,)


def test_every_ported_formula_has_a_python_reference_and_a_domain() -> None:
    assert set(core.formula_names()) == set(GAME_DOMAIN)
    for name in core.formula_names():
        assert callable(REFERENCE[name]), name


@pytest.mark.parametrize("name", sorted(GAME_DOMAIN))
def test_formula_matches_python(name: str) -> None:
    n_in, n_out, dtype = core.formula_names()[name]
    rows = GAME_DOMAIN[name] + _beyond_the_game(name, n_in)
    args = np.array(rows, dtype=np.int64).reshape(len(rows), n_in)
    out = np.zeros((len(rows), n_out) if dtype == "int64" else len(rows), dtype=dtype)
    core.eval_formula(name, args, out)
    reference = REFERENCE[name]
    got = out.reshape(len(rows), -1)
    for row, values in zip(rows, got, strict=True):
        py_args: list[object] = list(row)
        if name in BOOL_ARGS:
            py_args[-1] = bool(py_args[-1])
        want = _as_tuple(reference(*py_args))
        if dtype == "float64":
            assert np.float64(want[0]).view(np.uint64) == values[0].view(np.uint64), (name, row, want, values)
        else:
            assert tuple(int(v) for v in values) == want, (name, row, want, values)


def test_eval_formula_rejects_bad_input() -> None:
    with pytest.raises(KeyError, match="no ported formula"):
        core.eval_formula("no_such_formula", np.zeros((1, 1), dtype=np.int64), np.zeros(1, dtype=np.int64))
    with pytest.raises(ValueError, match="shape"):
        core.eval_formula("roll", np.zeros(3, dtype=np.int64), np.zeros(1, dtype=np.int64))
    with pytest.raises(TypeError, match="float64"):
        core.eval_formula("hit_chance", np.zeros((1, 2), dtype=np.int64), np.zeros(1, dtype=np.int64))
