"""The one adapter from a scripted bot (one observation at a time) to a batch of rows.

Why: hosts outside the environment hand players batches — `play_fights` (evaluation, `rate`, `fight`, the
analysis API) a row per live fight, RLlib a row per agent step, the analysis API's `Policy.act` a fight's
ticks. Each used to slice the newest frame and loop over rows itself; this is that loop, once. Which bot acts
for a row (one per fight, or one for all) stays the host's choice. docs/architecture.md lists every way a
scripted opponent is hosted and why.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from envs.nh.contract import NUM_HEADS, OBS_SIZE
from envs.opponents.ladder import ScriptedPolicy


def act_rows(
    bots: Sequence[ScriptedPolicy],
    obs: npt.ArrayLike,
    masks: npt.ArrayLike,
    opponent_actions: npt.ArrayLike | None = None,
) -> npt.NDArray[np.int64]:
    """Each row's action by its own bot: row i is played by ``bots[i]``.

    Args:
        bots: One bot per row (the same bot may serve several rows).
        obs: Observations (B, D), D ≥ 176; with frame stacking the newest frame comes first (spec §15.3) and is
            the only one a scripted bot reads.
        masks: Environment masks (B, 45); entries above 0.5 are legal (bool or float masks alike).
        opponent_actions: The other seat's actions of the tick (B, 12), for a bot that `needs_opponent_action`.

    Returns:
        Actions (B, 12) int64.

    Raises:
        ValueError: `bots` and the rows differ in number, or a prescient bot gets no opponent actions.
    """
    obs_a = np.asarray(obs, dtype=np.float32)
    masks_a = np.asarray(masks) > 0.5
    if len(bots) != len(obs_a) or len(masks_a) != len(obs_a):
        raise ValueError(f"{len(bots)} bots for {len(obs_a)} observations and {len(masks_a)} masks; give one each")
    opp = None if opponent_actions is None else np.asarray(opponent_actions)
    out = np.zeros((len(obs_a), NUM_HEADS), dtype=np.int64)
    for i, bot in enumerate(bots):
        if bot.needs_opponent_action:
            if opp is None:
                raise ValueError(f"{bot.name!r} is prescient: it must be shown the other seat's actions of the tick")
            out[i] = bot.act(obs_a[i, :OBS_SIZE], masks_a[i], opponent_action=opp[i])
        else:
            out[i] = bot.act(obs_a[i, :OBS_SIZE], masks_a[i])
    return out
