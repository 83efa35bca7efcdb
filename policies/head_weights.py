"""Per-head weights, named in configs by the action heads' names (spec §14.1), as the vector the loss uses.

Kept apart from `rllib_model.py` so that the config layer can validate head names without importing Ray.
"""

from __future__ import annotations

from collections.abc import Mapping

from envs.nh.contract import Head


def head_names() -> list[str]:
    """The names a config may use for the heads, in sampling order (``attack``, …, ``prayer``)."""
    return [h.name.lower() for h in Head]


def head_weight_vector(weights: Mapping[str, float] | None) -> list[float]:
    """One weight per head in `Head` order; heads not named weigh 1 (so ``{}`` is the plain sum)."""
    weights = dict(weights or {})
    unknown = sorted(set(weights) - set(head_names()))
    if unknown:
        raise ValueError(f"unknown action heads {unknown}; the heads are {head_names()}")
    return [float(weights.get(name, 1.0)) for name in head_names()]
