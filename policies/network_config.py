"""Hyperparameters of the policy network, as one frozen pydantic dataclass.

It lives apart from `policies/network.py` so that the application's config schema (`osrs_rllib/config/schema.py`)
and the model file's metadata can describe a network without importing torch. Sizes of the inputs and the
action heads are not here: they come from the contract (`envs/nh/contract.py`) and the frame stacking.
A pydantic dataclass rather than a `BaseModel`: the config schema embeds it as is, while `dataclasses.fields`
and `dataclasses.replace` keep working for its users.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Annotated, Any

from pydantic import ConfigDict, ValidationInfo, field_validator
from pydantic.dataclasses import dataclass

from common.validation import Count, Flag, Invalid, KeyedError, PositiveNumber, choice, from_mapping

ACTIVATIONS: tuple[str, ...] = ("relu", "tanh", "gelu", "silu", "elu")
"""Activation functions the trunks and heads may use (names of `torch.nn` modules, lower case)."""


class NetworkConfigError(KeyedError):
    """A network hyperparameter is unknown or invalid; `key` names it."""


def _check_sizes(sizes: Any, allow_empty: bool) -> tuple[int, ...]:
    if isinstance(sizes, int | str) or not isinstance(sizes, Sequence):
        raise Invalid(f"got {sizes!r}", "a list of positive layer widths")
    if not allow_empty and not sizes:
        raise Invalid("no layer width", "at least one layer width")
    for width in sizes:
        if isinstance(width, bool) or not isinstance(width, int) or width <= 0:
            raise Invalid(f"layer widths must be positive integers, got {width!r}")
    return tuple(sizes)


@dataclass(frozen=True, config=ConfigDict(extra="forbid", allow_inf_nan=False))
class NetworkConfig:
    """Shape of the actor, the autoregressive heads and the critic (see `policies/network.py`).

    The defaults are sized for CPU training on a laptop: one batch-256 forward pass stays around a
    millisecond on one core (see `benchmarks/policy_forward.py`), which keeps inference a small share of
    an NH training step next to the simulator.
    """

    actor_hidden: tuple[int, ...] = (256, 256)
    """Widths of the actor trunk's hidden layers (applied to the, possibly encoded, stacked frames)."""
    critic_hidden: tuple[int, ...] = (256, 256)
    """Widths of the critic trunk's hidden layers (fed the full-state input of spec §15.3)."""
    head_hidden: Count = 32
    """Width of the hidden layer of each action head; 0 makes every head a single linear layer."""
    frame_encoder: tuple[int, ...] = ()
    """Optional feature extractor applied to each stacked frame with shared weights before the trunk; empty
    means the frames are concatenated and fed to the trunk directly."""
    activation: Annotated[str, choice(ACTIVATIONS)] = "relu"
    """Activation of every hidden layer, one of `ACTIVATIONS`."""
    normalize_obs: Flag = True
    """Normalise actor and critic inputs with running mean and variance kept in the module's buffers."""
    obs_clip: PositiveNumber = 10.0
    """Normalised inputs (and the one-hot context fed to the heads) are clipped to ±this."""
    norm_epsilon: PositiveNumber = 1e-8
    """Added to the running variance before the square root."""
    share_trunk: Flag = False
    """Let the critic read the actor trunk's output as well (its own trunk still sees the full state)."""

    @field_validator("actor_hidden", "critic_hidden", "frame_encoder", mode="before")
    @classmethod
    def _sizes(cls, value: Any, info: ValidationInfo) -> tuple[int, ...]:
        return _check_sizes(value, allow_empty=info.field_name == "frame_encoder")

    @classmethod
    def from_dict(cls, values: Mapping[str, Any] | None) -> NetworkConfig:
        """Build from a plain mapping (YAML, model-file metadata); unknown keys name the closest valid one."""
        return from_mapping(cls, values, NetworkConfigError)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready mapping (tuples become lists); `from_dict(to_dict())` round-trips."""
        return {k: list(v) if isinstance(v, tuple) else v for k, v in dataclasses.asdict(self).items()}
