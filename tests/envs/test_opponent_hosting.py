"""`act_rows`, the one adapter from an observation-at-a-time bot to a batch (docs/architecture.md: hosting)."""

from __future__ import annotations

import numpy as np
import pytest

from envs.nh.contract import NUM_HEADS, OBS_SIZE
from envs.nh.engine import NHEngine
from envs.nh.params import OPPONENT_AGENT, FightParams
from envs.opponents import act_rows, make_opponent


def _rows(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Real observations and masks of `n` fights (two frames stacked, newest first, as RLlib hands them)."""
    obs, masks = [], []
    for seed in range(n):
        engine = NHEngine(FightParams(opponent=OPPONENT_AGENT))
        engine.reset(seed=seed)
        obs.append(np.concatenate([engine.obs[0], np.full(OBS_SIZE, 99.0, np.float32)]))
        masks.append(engine.masks[0].astype(np.float32))
    return np.stack(obs), np.stack(masks)


def test_each_row_is_played_by_its_bot_from_the_newest_frame() -> None:
    obs, masks = _rows(3)
    got = act_rows([make_opponent("tribrid", s) for s in range(3)], obs, masks)
    expected = np.stack([make_opponent("tribrid", i).act(obs[i, :OBS_SIZE], masks[i] > 0.5) for i in range(3)])
    assert got.dtype == np.int64 and got.shape == (3, NUM_HEADS)
    np.testing.assert_array_equal(got, expected)


def test_one_bot_may_serve_every_row() -> None:
    obs, masks = _rows(2)
    bot = make_opponent("random", 7)
    got = act_rows([bot, bot], obs, masks)
    again = make_opponent("random", 7)
    expected = np.stack([again.act(o[:OBS_SIZE], m > 0.5) for o, m in zip(obs, masks, strict=True)])
    np.testing.assert_array_equal(got, expected)


def test_mismatched_rows_and_unfed_prescient_bots_are_errors() -> None:
    obs, masks = _rows(2)
    with pytest.raises(ValueError, match="1 bots for 2 observations"):
        act_rows([make_opponent("noop")], obs, masks)
    with pytest.raises(ValueError, match="prescient"):
        act_rows([make_opponent("prescient", 0)] * 2, obs, masks)
    opp = act_rows([make_opponent("noop")] * 2, obs, masks)
    assert act_rows([make_opponent("prescient", 0)] * 2, obs, masks, opponent_actions=opp).shape == (2, NUM_HEADS)
