"""The per-tick observation encoder writes every dynamic §15.2 entry by name and nothing else.

`ObservationEncoder.encode` copies the episode's static entries (flag `C`, §15.1) and then lets one small
function per block of the §15.2 table write the rest (so the Python engine reads like the
rules). These tests make that layout claim checkable: a sentinel in every non-constant entry of the static
copy must be overwritten, and the constant entries must come out exactly as `static_block` made them.
The values themselves are pinned elsewhere (the trajectory fingerprints, the differential tests against
the compiled core).
"""

from __future__ import annotations

import numpy as np
import pytest

from envs.nh.contract import CONSTANT_INDICES, OBS_SIZE, Obs
from envs.nh.engine import NHEngine
from envs.nh.masks import loadout_facts, mask_values
from envs.nh.observation import ObservationEncoder, static_block
from envs.nh.params import OPPONENT_AGENT, OPPONENT_BASELINE, FightParams

SENTINEL = np.float32(-12345.0)
"""A value no §15.2 entry takes in these fights."""


def _dynamic_indices() -> list[int]:
    return [i for i in range(OBS_SIZE) if i not in set(CONSTANT_INDICES)]


def _sentinel_static(static: np.ndarray) -> np.ndarray:
    marked = static.copy()
    marked[_dynamic_indices()] = SENTINEL
    return marked


@pytest.mark.parametrize(
    "params",
    [FightParams(opponent=OPPONENT_AGENT), FightParams(opponent=OPPONENT_BASELINE)],
    ids=["self_play", "against_baseline"],
)
def test_every_dynamic_entry_is_written_and_constants_are_kept(params: FightParams) -> None:
    engine = NHEngine(params, seed=7, observe_all=True)
    engine.reset(seed=7)
    rng = np.random.default_rng(7)
    ticks = 0
    while ticks < 120:
        sim = engine.sim
        for p in sim.players:
            static = static_block(p.loadout, sim.fight_mode)
            mask = mask_values(sim, p, loadout_facts(p.loadout), sim.stats[p.index].known_lunar_opponent)
            out = np.full(OBS_SIZE, np.nan, dtype=np.float32)
            ObservationEncoder(sim, p, _sentinel_static(static)).encode(mask, out)
            unwritten = [Obs(i).name for i in _dynamic_indices() if out[i] == SENTINEL]
            assert not unwritten, f"tick {ticks}, player {p.index}: entries never written: {unwritten}"
            assert np.array_equal(out[list(CONSTANT_INDICES)], static[list(CONSTANT_INDICES)])
            assert not np.isnan(out).any()
        actions = rng.integers(0, 2, size=(2, 12))
        engine.step(actions)
        ticks += 1
        if engine.sim.done:
            engine.reset(seed=int(rng.integers(1 << 30)))


def test_the_encoder_output_equals_the_engines_observation() -> None:
    """A fresh encoder (no state carried between ticks) gives the engine's own observation row."""
    engine = NHEngine(FightParams(opponent=OPPONENT_AGENT), seed=3, observe_all=True)
    engine.reset(seed=3)
    rng = np.random.default_rng(3)
    for _ in range(80):
        engine.step(rng.integers(0, 2, size=(2, 12)))
        if engine.sim.done:
            break
        sim = engine.sim
        for p in sim.players:
            static = static_block(p.loadout, sim.fight_mode)
            mask = mask_values(sim, p, loadout_facts(p.loadout), sim.stats[p.index].known_lunar_opponent)
            out = ObservationEncoder(sim, p, static).encode(mask, np.empty(OBS_SIZE, dtype=np.float32))
            assert np.array_equal(out, engine.obs[p.index])
