"""How well predicted probabilities match outcomes: ECE with its reliability table, Brier score, log-loss, AUC.

Why apart from `osrs_rllib/evaluation/outcome.py`: these are plain numpy functions of (probability, label, weight)
arrays, usable on any predictor; the definitions are in `osrs_rllib/evaluation/outcome.py`'s docstring ("Metrics").
"""

from __future__ import annotations

from typing import Any

import numpy as np

ECE_BINS = 10
"""Equal-width bins of the predicted probability for ECE and the reliability table."""


def _prepare(p: Any, y: Any, w: Any = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    p = np.asarray(p, dtype=np.float64).reshape(-1)
    y = np.asarray(y, dtype=np.float64).reshape(-1)
    w = np.ones_like(p) if w is None else np.asarray(w, dtype=np.float64).reshape(-1)
    if not (len(p) == len(y) == len(w)):
        raise ValueError(f"{len(p)} probabilities, {len(y)} labels and {len(w)} weights: give one of each per sample")
    if len(p) == 0:
        raise ValueError("no samples to score")
    if not np.all(np.isfinite(p)) or p.min() < 0.0 or p.max() > 1.0:
        raise ValueError("probabilities must be finite and in [0, 1]")
    if not np.isin(y, (0.0, 1.0)).all():
        raise ValueError("labels must be 0 or 1")
    if not np.all(np.isfinite(w)) or w.min() < 0.0 or w.sum() <= 0.0:
        raise ValueError("weights must be finite, non-negative and not all zero")
    return p, y, w


def _bin_index(p: np.ndarray, bins: int) -> np.ndarray:
    """Bin of each probability: [k/bins, (k+1)/bins), the last bin closed at 1."""
    return np.minimum((p * bins).astype(np.int64), bins - 1)


def reliability_table(p: Any, y: Any, w: Any = None, bins: int = ECE_BINS) -> list[dict[str, Any]]:
    """Per equal-width bin: its bounds, sample count, weight, mean predicted probability and observed win
    frequency (None for an empty bin)."""
    p, y, w = _prepare(p, y, w)
    idx = _bin_index(p, bins)
    rows = []
    for k in range(bins):
        sel = idx == k
        weight = float(w[sel].sum())
        rows.append(
            {
                "low": k / bins,
                "high": (k + 1) / bins,
                "count": int(sel.sum()),
                "weight": weight,
                "mean_predicted": float((p[sel] * w[sel]).sum() / weight) if weight > 0 else None,
                "observed": float((y[sel] * w[sel]).sum() / weight) if weight > 0 else None,
            }
        )
    return rows


def expected_calibration_error(p: Any, y: Any, w: Any = None, bins: int = ECE_BINS) -> float:
    """ECE = Σ_b (W_b / W) · |observed_b − predicted_b| over `bins` equal-width bins (see module docstring)."""
    p, y, w = _prepare(p, y, w)
    total = w.sum()
    return float(
        sum(
            r["weight"] / total * abs(r["observed"] - r["mean_predicted"])
            for r in reliability_table(p, y, w, bins)
            if r["weight"] > 0
        )
    )


def brier_score(p: Any, y: Any, w: Any = None) -> float:
    """Weighted mean of (p − y)²: 0 is perfect, 0.25 is a constant ½."""
    p, y, w = _prepare(p, y, w)
    return float(((p - y) ** 2 * w).sum() / w.sum())


def log_loss(p: Any, y: Any, w: Any = None, eps: float = 1e-7) -> float:
    """Weighted mean negative log-likelihood, probabilities clipped to [eps, 1 − eps]."""
    p, y, w = _prepare(p, y, w)
    q = np.clip(p, eps, 1 - eps)
    return float(-((y * np.log(q) + (1 - y) * np.log(1 - q)) * w).sum() / w.sum())


def roc_auc(p: Any, y: Any, w: Any = None) -> float | None:
    """P(score of a win > score of a non-win) + ½ P(equal scores), pairs weighted by the product of their
    weights; None when only one class is present (the AUC is undefined there)."""
    p, y, w = _prepare(p, y, w)
    w_pos, w_neg = float((w * y).sum()), float((w * (1 - y)).sum())
    if w_pos <= 0 or w_neg <= 0:
        return None
    order = np.argsort(p, kind="mergesort")
    p, y, w = p[order], y[order], w[order]
    # Groups of equal scores: a positive beats every negative of a lower group and ties those of its own.
    starts = np.flatnonzero(np.r_[True, p[1:] != p[:-1]])
    pos_g = np.add.reduceat(w * y, starts)
    neg_g = np.add.reduceat(w * (1 - y), starts)
    neg_below = np.cumsum(neg_g) - neg_g
    return float((pos_g * (neg_below + 0.5 * neg_g)).sum() / (w_pos * w_neg))


def summarize(p: Any, y: Any, w: Any = None, bins: int = ECE_BINS) -> dict[str, Any]:
    """Every metric of one slice: samples, (weighted) win rate, mean prediction, ECE, Brier, AUC, log-loss."""
    p, y, w = _prepare(p, y, w)
    return {
        "samples": len(p),
        "win_rate": float((y * w).sum() / w.sum()),
        "mean_predicted": float((p * w).sum() / w.sum()),
        "ece": expected_calibration_error(p, y, w, bins),
        "brier": brier_score(p, y, w),
        "auc": roc_auc(p, y, w),
        "log_loss": log_loss(p, y, w),
    }
