"""What a checkpoint holds besides RLlib's own state: our counters and the driver's random generators.

Why apart from the trainer loop: the terminal view and ``status.json`` read the counters, and a resume
restores both; neither needs the trainer.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np


@dataclass
class RunState:
    """Our counters, stored in every checkpoint (``osrs_state.json``) next to RLlib's own."""

    iteration: int = 0
    env_steps: int = 0
    train_seconds: float = 0.0
    best_eval_win_rate: float | None = None
    last_eval: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "iteration": self.iteration,
            "env_steps": self.env_steps,
            "train_seconds": self.train_seconds,
            "best_eval_win_rate": self.best_eval_win_rate,
            "last_eval": self.last_eval,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RunState:
        return cls(
            iteration=int(data.get("iteration", 0)),
            env_steps=int(data.get("env_steps", 0)),
            train_seconds=float(data.get("train_seconds", 0.0)),
            best_eval_win_rate=data.get("best_eval_win_rate"),
            last_eval=dict(data.get("last_eval") or {}),
        )



def stream_seed(seed: int, iteration: int) -> int:
    """The seed of the env runners' random streams for a run started (or resumed) at `iteration`.

    A fresh run uses `seed` itself. A resumed run cannot continue the runners' streams (the episodes in
    flight at the kill are lost with them), and restarting them from `seed` would replay the episodes the
    run began with (the same builds, opponents and rolls) after every resume; so a resume draws new streams,
    derived from `seed` and the iteration: the same resume gives the same streams.
    """
    if iteration <= 0:
        return int(seed)
    return int(np.random.SeedSequence([int(seed), int(iteration)]).generate_state(1)[0] % 2**31)


def driver_rng_state() -> dict[str, Any]:
    """The driver's generators as JSON: numpy's and Python's global ones, and torch's CPU generator."""
    import torch

    kind, keys, pos, has_gauss, cached = np.random.get_state()
    version, internal, gauss = random.getstate()
    return {
        "numpy": [kind, [int(k) for k in keys], int(pos), int(has_gauss), float(cached)],
        "python": [version, list(internal), gauss],
        "torch": torch.get_rng_state().tolist(),
    }


def set_driver_rng_state(state: Mapping[str, Any]) -> None:
    """Put back what `driver_rng_state` saved (after the algorithm is built: building it seeds them)."""
    import torch

    kind, keys, pos, has_gauss, cached = state["numpy"]
    np.random.set_state((kind, np.asarray(keys, dtype=np.uint32), pos, has_gauss, cached))
    version, internal, gauss = state["python"]
    random.setstate((version, tuple(internal), gauss))
    torch.set_rng_state(torch.tensor(state["torch"], dtype=torch.uint8))


def restore_exact_weights(algo: Any, checkpoint: Path) -> None:
    """Load the trainable policies' weights of an RLlib checkpoint again, dtype for dtype.

    Why: RLlib's ``set_weights`` casts every float64 array to float32 before ``load_state_dict`` copies it into
    the float64 buffer, so the normalisation statistics' accumulators (float64, `policies/network.py`) would come
    back rounded. The checkpoint (our own file, never one from the network) holds them exactly; the inference
    buffers the runners use are float32 anyway, so only the learner needs this.
    """
    import pickle

    import torch

    for pid in algo.config.policies_to_train or ():
        path = checkpoint / "policies" / pid / "policy_state.pkl"
        policy = algo.get_policy(pid)
        if not path.is_file() or policy is None or getattr(policy, "model", None) is None:
            continue
        with open(path, "rb") as f:
            weights = pickle.load(f).get("weights") or {}
        policy.model.load_state_dict({k: torch.as_tensor(np.asarray(v)) for k, v in weights.items()})
