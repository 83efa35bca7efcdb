"""A model file's default mode of play: greedy (each head's most probable legal value) or sampling.

Why a model states it: a model can hold better in one mode than in the other (the shipped ``nh-main``: an exploiter
beat its greedy play 64.3 % and its sampling play 54.5 %, docs/models.md), so where it is seated (``fight``,
``play``, ``serve``) should play it the way it was measured to hold, with the other mode a flag away. The mode is
one key of the file's metadata, ``play_mode``, written by the command that ships the model; a file without it plays
as every model did before the key existed (greedy in ``fight`` and ``play``; ``serve`` samples a request that leaves
out ``deterministic``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

PLAY_MODE_KEY = "play_mode"
"""The metadata key (top level of the model file's ``metadata``)."""
GREEDY = "greedy"
SAMPLING = "sampling"
PLAY_MODES: tuple[str, ...] = (GREEDY, SAMPLING)


def play_mode_of(metadata: Mapping[str, Any]) -> str | None:
    """The mode `metadata` (a model file's ``metadata``) names, or None when it names none.

    Raises:
        ValueError: The key holds something other than ``greedy`` or ``sampling``.
    """
    mode = metadata.get(PLAY_MODE_KEY)
    if mode is None:
        return None
    if mode not in PLAY_MODES:
        raise ValueError(f"metadata {PLAY_MODE_KEY!r} is {mode!r}; expected {GREEDY!r} or {SAMPLING!r}")
    return str(mode)


def samples_by_default(metadata: Mapping[str, Any], unstated: bool = False) -> bool:
    """Whether a model with this metadata samples its actions unless told otherwise; `unstated` when it names no
    mode (False: greedy, as ``fight`` and ``play`` seat such a model)."""
    mode = play_mode_of(metadata)
    return unstated if mode is None else mode == SAMPLING
