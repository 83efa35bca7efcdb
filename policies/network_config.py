"""Hyperparameters of the policy network, as one frozen dataclass.

It lives apart from `policies/network.py` so that the application's config schema (`osrs_rllib/config.py`)
and the model file's metadata can describe a network without importing torch. Sizes of the inputs and the
action heads are not here: they come from the contract (`envs/nh/contract.py`) and the frame stacking.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

ACTIVATIONS: tuple[str, ...] = ("relu", "tanh", "gelu", "silu", "elu")
"""Activation functions the trunks and heads may use (names of `torch.nn` modules, lower case)."""


class NetworkConfigError(ValueError):
    """A network hyperparameter is unknown or invalid; `key` names it."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(f"{key}: {message}")
        self.key = key
        self.detail = message


def _check_sizes(key: str, sizes: Sequence[int], allow_empty: bool) -> tuple[int, ...]:
    if isinstance(sizes, int | str) or not isinstance(sizes, Sequence):
        raise NetworkConfigError(key, f"expected a list of positive layer widths, got {sizes!r}")
    out = tuple(sizes)
    if not allow_empty and not out:
        raise NetworkConfigError(key, "expected at least one layer width")
    for width in out:
        if isinstance(width, bool) or not isinstance(width, int) or width <= 0:
            raise NetworkConfigError(key, f"layer widths must be positive integers, got {width!r}")
    return out


@dataclass(frozen=True)
class NetworkConfig:
    """Shape of the actor, the autoregressive heads and the critic (see `policies/network.py`).

    The defaults are sized for CPU training on a laptop: one batch-256 forward pass stays around a
    millisecond on one core (see `benchmarks/policy_forward.py`), which keeps inference a small share of
    an NH training step next to the simulator.
    """

    __pydantic_config__: ClassVar[dict[str, Any]] = {"extra": "forbid"}

    actor_hidden: tuple[int, ...] = (256, 256)
    """Widths of the actor trunk's hidden layers (applied to the, possibly encoded, stacked frames)."""
    critic_hidden: tuple[int, ...] = (256, 256)
    """Widths of the critic trunk's hidden layers (fed the full-state input of spec §15.3)."""
    head_hidden: int = 32
    """Width of the hidden layer of each action head; 0 makes every head a single linear layer."""
    frame_encoder: tuple[int, ...] = ()
    """Optional feature extractor applied to each stacked frame with shared weights before the trunk; empty
    means the frames are concatenated and fed to the trunk directly."""
    activation: str = "relu"
    """Activation of every hidden layer, one of `ACTIVATIONS`."""
    normalize_obs: bool = True
    """Normalise actor and critic inputs with running mean and variance kept in the module's buffers."""
    obs_clip: float = 10.0
    """Normalised inputs (and the one-hot context fed to the heads) are clipped to ±this."""
    norm_epsilon: float = 1e-8
    """Added to the running variance before the square root."""
    share_trunk: bool = field(default=False)
    """Let the critic read the actor trunk's output as well (its own trunk still sees the full state)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "actor_hidden", _check_sizes("actor_hidden", self.actor_hidden, False))
        object.__setattr__(self, "critic_hidden", _check_sizes("critic_hidden", self.critic_hidden, False))
        object.__setattr__(self, "frame_encoder", _check_sizes("frame_encoder", self.frame_encoder, True))
        if isinstance(self.head_hidden, bool) or not isinstance(self.head_hidden, int) or self.head_hidden < 0:
            raise NetworkConfigError("head_hidden", f"expected a non-negative integer, got {self.head_hidden!r}")
        if self.activation not in ACTIVATIONS:
            raise NetworkConfigError("activation", f"expected one of {list(ACTIVATIONS)}, got {self.activation!r}")
        if not isinstance(self.obs_clip, int | float) or isinstance(self.obs_clip, bool) or self.obs_clip <= 0:
            raise NetworkConfigError("obs_clip", f"expected a positive number, got {self.obs_clip!r}")
        if not isinstance(self.norm_epsilon, int | float) or self.norm_epsilon <= 0:
            raise NetworkConfigError("norm_epsilon", f"expected a positive number, got {self.norm_epsilon!r}")
        for flag in ("normalize_obs", "share_trunk"):
            if not isinstance(getattr(self, flag), bool):
                raise NetworkConfigError(flag, f"expected true or false, got {getattr(self, flag)!r}")

    @classmethod
    def from_dict(cls, values: Mapping[str, Any] | None) -> NetworkConfig:
        """Build from a plain mapping (YAML, model-file metadata); unknown keys name the closest valid one."""
        values = dict(values or {})
        names = [f.name for f in dataclasses.fields(cls)]
        for key in values:
            if key not in names:
                close = difflib.get_close_matches(str(key), names, n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                raise NetworkConfigError(str(key), f"unknown network option{hint}; valid options: {names}")
        return cls(**values)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready mapping (tuples become lists); `from_dict(to_dict())` round-trips."""
        return {k: list(v) if isinstance(v, tuple) else v for k, v in dataclasses.asdict(self).items()}
