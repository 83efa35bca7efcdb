"""The win-rate interval every report prints: Wilson's score interval of a binomial proportion.

Why in `common`: the fight command, the build splits (`osrs_rllib/evaluation/stratified.py`) and the analysis tables all
word their win rates with it, and it needs nothing but `math`.
"""

from __future__ import annotations

import math

CONFIDENCE_Z = 1.96
"""Two-sided 95% normal quantile used for the win-rate interval."""


def wilson_interval(k: int, n: int, z: float = CONFIDENCE_Z) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion k / n.

    Args:
        k: Successes, 0 ≤ k ≤ n.
        n: Trials, n ≥ 0. With n = 0 nothing is known and (0, 1) is returned.
        z: Normal quantile of the confidence level (1.96 for 95%).

    Returns:
        (low, high), clamped to [0, 1].

    Raises:
        ValueError: k or n out of range, or z not positive.
    """
    if n < 0 or not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n, got k={k}, n={n}")
    if z <= 0:
        raise ValueError(f"z must be positive, got {z}")
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    z2 = z * z
    denom = 1.0 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = z / denom * math.sqrt(p * (1.0 - p) / n + z2 / (4 * n * n))
    # min/max with p: at k = 0 or k = n rounding can put a bound a hair inside p (1 - 1e-16 for 100 %)
    return (max(0.0, min(p, centre - half)), min(1.0, max(p, centre + half)))
