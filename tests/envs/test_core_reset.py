"""The compiled core's loadouts and reset draws against the Python engine.

`make_loadout` (every build, default and §12.6-randomised from thousands of seeds), `baseline_loadout`
and the draws of `FightSim.reset` (build draw, fight mode, both loadouts, spawn tiles, PIDs) must give
the same loadouts, tiles and PIDs as envs/nh, and leave the generator in the same state, for every
combination of the reset parameters that decide draws (spec §13.1, §16.6).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from envs.nh.loadouts import Build, make_loadout
from envs.nh.params import OPPONENT_AGENT, OPPONENT_BASELINE, FightParams
from envs.nh.sim import FightSim
from envs.nh.state import FightMode
from tests.envs import core_snapshots as snapshots
from tests.envs.core_snapshots import compiled_core

core = compiled_core()

BUILDS = list(Build)
_python_loadout = snapshots.loadout
_core_params = snapshots.core_params


@pytest.mark.parametrize("build", BUILDS, ids=[b.value for b in BUILDS])
def test_default_loadouts_match(build: Build) -> None:
    assert core.make_loadout(BUILDS.index(build)) == _python_loadout(make_loadout(build))


@pytest.mark.parametrize("build", BUILDS, ids=[b.value for b in BUILDS])
def test_randomised_loadouts_match(build: Build) -> None:
    """600 seeds per build: every §12.6 line fires many times (the rarest have p = 0.05)."""
    for seed in range(600):
        reference = np.random.default_rng(seed)
        twin = core.Rng(reference.bit_generator.state)
        want = make_loadout(build, reference)
        got = core.make_loadout(BUILDS.index(build), twin)
        assert got == _python_loadout(want), (build, seed)
        assert twin.state == reference.bit_generator.state, (build, seed)


def _random_params(rng: np.random.Generator) -> FightParams:
    """Reset parameters drawn over every option that decides a draw."""
    n_options = int(rng.integers(1, 9))
    options = tuple(BUILDS[int(i)] for i in rng.integers(0, len(BUILDS), n_options))  # repeats allowed
    weights = None
    if rng.random() < 0.4:
        weights = tuple(float(w) if rng.random() < 0.8 else 0.0 for w in rng.random(n_options) * 5)
        if not any(weights):
            weights = (*weights[:-1], 1.0)
    return FightParams(
        account_build=BUILDS[int(rng.integers(0, len(BUILDS)))],
        randomize_build=bool(rng.random() < 0.5),
        random_build_options=options,
        random_build_weights=weights,
        randomize_gear=bool(rng.random() < 0.6),
        randomize_fight_type=bool(rng.random() < 0.4),
        fight_type=(None, *FightMode)[int(rng.integers(0, 4))],
        opponent=(OPPONENT_BASELINE, OPPONENT_AGENT)[int(rng.integers(0, 2))],
        training=bool(rng.random() < 0.7),
        first_player_baseline=bool(rng.random() < 0.2),
    )


def _check_reset(params: FightParams, seed: int) -> None:
    sim = FightSim(params)
    sim.reset(seed=seed)
    twin = core.Rng(np.random.default_rng(seed).bit_generator.state)
    got = twin.reset_draws(_core_params(params))
    where = (params, seed)
    assert got["build"] == BUILDS.index(sim.build), where
    assert got["fight_mode"] == list(FightMode).index(sim.fight_mode), where
    for i, p in enumerate(sim.players):
        assert got["loadouts"][i] == _python_loadout(p.loadout), (i, *where)
        assert (got["x"][i], got["y"][i]) == (p.x, p.y), (i, *where)
        assert got["pid"][i] == p.pid and got["pid_countdown"][i] == p.pid_countdown, (i, *where)
    assert twin.state == sim.rng.bit_generator.state, where


def test_reset_draws_match_over_a_parameter_grid() -> None:
    """Every combination of the switches that decide draws, every build, two seeds each. Against the
    scripted opponent, player 1's loadout is `baseline_loadout` of player 0's (§18.1)."""
    switches = itertools.product((False, True), repeat=4)  # gear, fight type, self-play, training
    for (gear, fight_type, self_play, training), build in itertools.product(switches, BUILDS):
        params = FightParams(
            account_build=build,
            randomize_gear=gear,
            randomize_fight_type=fight_type,
            opponent=OPPONENT_AGENT if self_play else OPPONENT_BASELINE,
            training=training,
        )
        for seed in (3, 1_000_003):
            _check_reset(params, seed)


def test_reset_draws_match_over_random_parameters() -> None:
    """Random parameter sets: build draws (uniform and weighted, zero weights, repeated options), modes,
    tools-only first_player_baseline."""
    make = np.random.default_rng(2026)
    for i in range(500):
        _check_reset(_random_params(make), seed=i)


def test_identifier_rule_is_a_fixed_build_for_the_core() -> None:
    """With identifiers the Python engine picks the build without a draw; the caller passes it as fixed."""
    params = FightParams(randomize_build=True, agent="E 3", target="", random_build_options=tuple(BUILDS))
    sim = FightSim(params)
    sim.reset(seed=9)
    twin = core.Rng(np.random.default_rng(9).bit_generator.state)
    got = twin.reset_draws(_core_params(params))  # reset_params resolves the identifier rule
    assert got["build"] == BUILDS.index(sim.build) == 3
    assert twin.state == sim.rng.bit_generator.state


def test_bad_reset_params_get_a_clear_error() -> None:
    twin = core.Rng(np.random.default_rng(0).bit_generator.state)
    good = _core_params(FightParams())
    with pytest.raises(ValueError, match=r"need the key .training."):
        twin.reset_draws({k: v for k, v in good.items() if k != "training"})
    with pytest.raises(ValueError, match="bad reset parameters"):
        twin.reset_draws(good | {"build": 99})
    with pytest.raises(ValueError, match="one weight per build"):
        twin.reset_draws(good | {"randomize_build": 1, "build_weights": [1.0]})
    with pytest.raises(TypeError, match="Rng or None"):
        core.make_loadout(0, "not an rng")


# ---- the state layout: every PlayerState field after a reset (FightBatch) ------------------------------


def _check_fight_state(batch: object, slot: int, params: FightParams, seed: int) -> None:
    sim = FightSim(params)
    sim.reset(seed=seed)
    batch.reset(slot, np.random.default_rng(seed).bit_generator.state, _core_params(params))
    fight = batch.fight(slot)
    assert fight == {
        "tick": sim.tick,
        "done": sim.done,
        "fight_mode": list(FightMode).index(sim.fight_mode),
        "build": BUILDS.index(sim.build),
    }, (params, seed)
    for i, p in enumerate(sim.players):
        assert batch.player(slot, i) == snapshots.player(p), (i, params, seed)
    assert batch.rng_state(slot) == sim.rng.bit_generator.state, (params, seed)


def test_fight_batch_reset_matches_every_player_field() -> None:
    """Resets of random parameters into the slots of one batch (reused, as a sampler reuses them)."""
    batch = core.FightBatch(16)
    assert batch.n_fights == 16
    make = np.random.default_rng(7)
    for i in range(300):
        _check_fight_state(batch, i % 16, _random_params(make), seed=10_000 + i)


def test_fight_batch_rejects_bad_input_and_keeps_the_fight() -> None:
    batch = core.FightBatch(2)
    params = _core_params(FightParams())
    batch.reset(0, np.random.default_rng(1).bit_generator.state, params)
    before = batch.player(0, 0), batch.rng_state(0)
    with pytest.raises(IndexError, match="out of range"):
        batch.reset(2, np.random.default_rng(1).bit_generator.state, params)
    with pytest.raises(ValueError, match="PCG64"):
        batch.reset(0, {"bit_generator": "MT19937"}, params)
    with pytest.raises(ValueError, match="need the key"):
        batch.reset(0, np.random.default_rng(2).bit_generator.state, {"build": 0})
    assert (batch.player(0, 0), batch.rng_state(0)) == before
    with pytest.raises(IndexError, match="player must be 0 or 1"):
        batch.player(0, 2)
    with pytest.raises(ValueError, match="at least 1"):
        core.FightBatch(0)
