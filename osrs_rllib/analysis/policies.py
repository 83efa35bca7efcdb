"""One kind of object for everything that can sit in a fight: a checkpoint, a model file or a scripted rung.

Notebooks compare checkpoints with each other and with the scripted ladder; giving all of them the same
`Policy` interface (`act` on numpy arrays, a name, a frame stack) means `play`, `checkpoint_table` and
`action_distribution` never branch on where a player came from. Loading needs torch and the simulator
only, no Ray: a checkpoint's policy is its ``main.nhmodel`` (written next to RLlib's state by training).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from envs.nh.params import OPPONENT_BASELINE
from envs.opponents import LADDER, ScriptedPolicy, act_rows, make_opponent
from osrs_rllib.experiments import MODEL_NAME, STATE_FILE
from policies.model_file import MODEL_SUFFIX, ModelFile, load_model_file

BASELINE = OPPONENT_BASELINE
"""The in-simulator scripted bot of spec §18: it can only sit in seat B of `play`."""

PolicyKind = Literal["model", "ladder", "baseline"]


class AnalysisError(ValueError):
    """A request the analysis API cannot serve: a missing experiment, an unknown policy, a bad argument."""


@dataclass
class Policy:
    """Something that acts in a fight, whatever it was loaded from (see `load_policy`).

    Attributes:
        name: A short label for tables and plots (``iter-000003``, ``best.nhmodel``, ``tribrid``).
        kind: ``model`` (a trained network), ``ladder`` (a scripted rung) or ``baseline``.
        source: What `load_policy` reloads it from in a worker process: a model file path or a ladder name.
        model: The loaded model file (kind ``model`` only).
        deterministic: Models only: take each head's most probable legal value instead of sampling.
    """

    name: str
    kind: PolicyKind
    source: str
    model: ModelFile | None = None
    deterministic: bool = True
    _bot: ScriptedPolicy | None = field(default=None, repr=False)

    @property
    def frame_stack(self) -> list[int]:
        """Frame offsets of the observations it expects (spec §15.3); scripted players read one frame."""
        return self.model.frame_stack if self.model is not None else [0]

    @property
    def metadata(self) -> dict[str, Any]:
        """Training facts stored in a model file (iteration, env steps, ...); empty for scripted players."""
        return self.model.metadata if self.model is not None else {}

    def act(self, obs: Any, mask: Any, seed: int | None = None) -> np.ndarray:
        """Actions (B, 12) for stacked observations (B, D) and masks (B, 45); 1-D inputs give one action.

        A scripted rung keeps memory between calls (one bot, reseeded when `seed` is given), so feed it
        one fight's observations in order. The baseline cannot act outside the simulator.

        Example:
            >>> p = load_policy("random")
            >>> p.act(np.zeros(176, np.float32), np.ones(45, bool), seed=1).shape
            (12,)
        """
        if self.kind == "baseline":
            raise AnalysisError(
                "the baseline is played by the simulator itself and has no act(); seat it as side B of play()"
            )
        obs_a = np.asarray(obs, dtype=np.float32)
        mask_a = np.asarray(mask, dtype=bool)
        if self.model is not None:
            return self.model.act(obs_a, mask_a.astype(np.float32), self.deterministic, seed=seed)
        if self._bot is None or seed is not None:
            self._bot = make_opponent(self.source, 0 if seed is None else seed)
        if obs_a.ndim == 1:
            return act_rows([self._bot], obs_a[None], mask_a[None])[0]
        return act_rows([self._bot] * len(obs_a), obs_a, mask_a)

    def spec(self) -> tuple[str, str, bool]:
        """A picklable description that `load_policy` turns back into an equal policy (for worker processes)."""
        return (self.source, self.name, self.deterministic)


def load_policy(source: Any, *, deterministic: bool = True, name: str | None = None) -> Policy:
    """Load a checkpoint, a model file or a scripted player as a `Policy`, without Ray.

    Args:
        source: A checkpoint directory (``experiments/nh/checkpoints/iter-000010``), a model file
            (``experiments/nh/models/best.nhmodel``), a ladder name (``noop``, ``random``, ``stay_alive``,
            ``prayer_switcher``, ``tribrid``), ``baseline``, a row of `ExperimentView.checkpoints`, or a
            `Policy` (returned as is).
        deterministic: Models only: greedy actions (True) or samples (seeded per fight by `play`).
        name: Label in tables; defaults to the checkpoint directory, the file name or the ladder name.

    Returns:
        The `Policy`.

    Raises:
        AnalysisError: Nothing at the path, a directory that is not a checkpoint, or an unknown name.
        ModelFileError: A damaged model file or one written for another contract version.

    Example:
        >>> load_policy("tribrid").kind
        'ladder'
        >>> load_policy("experiments/nh/checkpoints/iter-000010").name  # doctest: +SKIP
        'iter-000010'
    """
    if isinstance(source, Policy):
        return source
    path_like = getattr(source, "path", None) if not isinstance(source, str | os.PathLike) else None
    if path_like is None and hasattr(source, "get") and not isinstance(source, str):
        path_like = source.get("path")  # a pandas row or a dict from open_experiment
    if path_like is not None:
        source = path_like
    if isinstance(source, str) and source == BASELINE:
        return Policy(name=name or BASELINE, kind="baseline", source=BASELINE)
    if isinstance(source, str) and source in LADDER:
        return Policy(name=name or source, kind="ladder", source=source)
    if not isinstance(source, str | os.PathLike):
        raise AnalysisError(f"cannot load a policy from {type(source).__name__}; {_WHAT}")
    path = Path(source)
    if path.is_dir():
        model_path = path / MODEL_NAME
        if not model_path.is_file():
            hint = ""
            if (path / "checkpoints").is_dir():
                hint = f" (this is an experiment: use {path / 'models' / 'latest.nhmodel'} or a checkpoint in it)"
            raise AnalysisError(
                f"cannot load a policy from directory {path}: expected a checkpoint with {MODEL_NAME} and "
                f"{STATE_FILE}, found no {MODEL_NAME}{hint}"
            )
        label = name or path.name
    elif path.suffix == MODEL_SUFFIX or path.exists():
        model_path = path
        label = name or (path.name if path.name != MODEL_NAME else path.parent.name)
    else:
        raise AnalysisError(f"cannot load a policy from {str(source)!r}: nothing at that path; {_WHAT}")
    model = load_model_file(model_path).single("the analysis API")  # ModelFileError names what is wrong
    return Policy(name=label, kind="model", source=str(model_path), model=model, deterministic=deterministic)


def policy_from_spec(spec: tuple[str, str, bool]) -> Policy:
    """Inverse of `Policy.spec` (used in worker processes)."""
    source, name, deterministic = spec
    return load_policy(source, deterministic=deterministic, name=name)


_WHAT = (
    f"expected a checkpoint directory, a model file (*{MODEL_SUFFIX}), '{BASELINE}' or a ladder name "
    f"({', '.join(LADDER)})"
)
