"""The typed training configuration: YAML presets, ``extends:`` inheritance and ``--set`` overrides.

A training job is described by one YAML file (``configs/nh.yml`` and friends) whose sections mirror the
models below: `TrainConfig` holds `RayConfig`, `EnvConfig`, `OpponentsConfig`, the policy network's
`NetworkConfig`, `PPOConfig`, `RunnersConfig`, `EvaluationConfig`, `CheckpointConfig`, `StopConfig` and
`LoggingConfig`. Every field has a default and a one-line docstring (CleanRL's ``Args``), and every model
forbids unknown keys, because RLlib's own defaults differ from what works for NH fights and a silently
ignored typo trains the wrong thing for an hour.

How a file is resolved (`resolve_config_dict`), in this order:

1. The file is read. If it says ``extends: other.yml`` (a path relative to the file), ``other.yml`` is
   resolved first, recursively, and this file is deep-merged over it: mappings merge key by key, while
   lists and scalars replace the parent's value. A child cannot delete an inherited key, so it removes
   an opponent from the mix by giving it weight 0, and turns a limit off with ``null`` where that is valid.
2. Each ``--set key.path=value`` override is applied in order. The value is read as YAML
   (``ppo.lr=1e-4``, ``model.actor_hidden=[64,64]``, ``opponents.mix={baseline: 1}``) and *replaces*
   the value at that path; missing intermediate mappings are created.
3. ``name`` defaults to the stem of the file named on the command line (``smoke`` for ``smoke.yml``).

`load_config` then validates the result against `TrainConfig`. Every problem is a `ConfigError` whose
message is one line naming the file the offending key came from (``extends`` is tracked, and a bad
override says ``--set``), the key path, what was wrong and what was expected, with the closest valid key
for a typo::

    configs/smoke.yml: ppo.minibatch_sise: unknown key; expected one of clip_param, ... (did you mean
    'minibatch_size'?)

Numbers: YAML 1.1, which PyYAML implements, reads ``1e-4`` as a *string*; this loader also reads it as a
float (YAML 1.2), so exponent notation works in files and in ``--set``. An integral float such as
``1e6`` is accepted wherever a count is expected.

Example:
    >>> cfg = load_config("configs/nh.yml", ["ppo.lr=1e-4"])  # doctest: +SKIP
    >>> cfg.ppo.lr.to_rllib()
    (0.0001, None)
"""

from __future__ import annotations

import dataclasses
import enum
import itertools
import math
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    GetCoreSchemaHandler,
    PlainValidator,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_core import core_schema

from common.suggest import closest as _closest
from common.validation import KeyedError, is_number
from common.yaml_loader import FLOAT_12, FLOAT_FIRST_CHARS, StrictLoader
from envs.nh.contract import frame_offsets
from envs.nh.loadouts import Build
from envs.nh.params import FightParams, ParamError
from envs.nh.rewards import WEIGHT_CHECKS, WEIGHT_TYPES, RewardWeightError, RewardWeights
from envs.opponents import LADDER, needs_opponent_action
from league.config import LeagueConfig
from osrs_rllib.shaping import NOISE_ENTRIES, NOVELTY_ENTRIES, OBS_IDS
from policies.network_config import NetworkConfig

__all__ = [
    "EVAL_OPPONENTS",
    "OPPONENT_KINDS",
    "SET_SOURCE",
    "CheckpointConfig",
    "ConfigError",
    "EnvConfig",
    "EvaluationConfig",
    "LoggingConfig",
    "OpponentsConfig",
    "PPOConfig",
    "RayConfig",
    "RunnersConfig",
    "Schedule",
    "StopConfig",
    "TrainConfig",
    "dump_config",
    "load_config",
    "resolve_config_dict",
]

SELF_PLAY = "self_play"
BASELINE = "baseline"
EVAL_OPPONENTS: tuple[str, ...] = (BASELINE, *LADDER)
"""Opponents an evaluation can fight: the in-simulator baseline (spec §18) and every scripted ladder rung."""
TARGET = "target"
"""Mix kind of the frozen model files in `OpponentsConfig.targets` (the league's fixed ``target_<slug>`` players)."""
LEAGUE_KINDS: tuple[str, ...] = ("latest", "prioritized", "pfsp", TARGET)
"""Mix kinds the league draws (`league/`): its frozen snapshots (the newest one, prioritized past-self as in
OpenAI Five, PFSP as in AlphaStar) and the fixed model files of ``opponents.targets``."""
OPPONENT_KINDS: tuple[str, ...] = (SELF_PLAY, *EVAL_OPPONENTS, *LEAGUE_KINDS)
"""Valid keys of `OpponentsConfig.mix`. Extend this tuple (e.g. with league kinds) to admit new kinds."""
SET_SOURCE = "--set"
"""The 'file' a `ConfigError` names when the bad key came from a command-line override."""
LOG_LEVELS: tuple[str, ...] = ("DEBUG", "INFO", "WARNING", "ERROR")
_RESERVED_PARAMS: dict[str, str] = {
    "opponent": "the trainer picks each episode's opponent from opponents.mix",
    "first_player_baseline": "a tools-only switch that would put a scripted bot in the agent's seat",
}
"""§13.1 reset options that a training config may not set, with the reason shown in the error."""


# ---------------------------------------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------------------------------------


class ConfigError(Exception):
    """A config file, ``extends`` chain or ``--set`` override is wrong; ``str()`` is one line.

    The line reads ``"<file>: <key.path>: <what was wrong>; expected <what> (did you mean 'x'?)"``.

    Attributes:
        file: The file the offending key came from (through ``extends``), or ``"--set"``.
        key: The dotted key path (``ppo.lr``), or None for a problem with the file as a whole.
        message: Everything after the key: the problem, what was expected and any suggestion.
    """

    def __init__(self, file: str, key: str | None, message: str) -> None:
        self.file = file
        self.key = key
        self.message = " ".join(message.split())  # one line, whatever the wrapped exception said
        super().__init__(str(self))

    def __str__(self) -> str:
        where = f"{self.file}: {self.key}: " if self.key else f"{self.file}: "
        return where + self.message


class _Invalid(ValueError):
    """A value problem raised by this module's validators, split into the parts of a `ConfigError`.

    `field` names a sub-key below the location pydantic reports (a cross-field check on the ``ppo``
    section blames ``minibatch_size``; a bad reward weight blames its own name). `related` lists the
    other keys of a cross-field check, relative to the same location: the error names the file that
    wrote the last of them, since that write is what made the combination impossible. Pydantic keeps a
    validator's `ValueError` in the error's context, which is how `_config_error` reads these back.
    """

    def __init__(
        self,
        problem: str,
        expected: str | None = None,
        *,
        field: str | None = None,
        suggestion: str | None = None,
        related: tuple[str, ...] = (),
    ) -> None:
        super().__init__(_compose(problem, expected, suggestion))
        self.field, self.related = field, related


def _compose(problem: str, expected: str | None, suggestion: str | None) -> str:
    text = problem
    if expected:
        text += f"; expected {expected}"
    if suggestion:
        text += f" (did you mean {suggestion!r}?)"
    return text


def _one_of(names: Iterable[str]) -> str:
    """'one of a, b, c' for a short list; long lists (reward weights) are summarised instead of dumped."""
    ordered = sorted(names)
    if len(ordered) <= 16:
        return "one of " + ", ".join(ordered)
    return f"one of {len(ordered)} names ({', '.join(ordered[:4])}, ...)"


def _describe(value: object) -> str:
    """`value` as the user wrote it, in YAML terms: ``'high' (a string)``, ``null``, ``[1, 2] (a list)``."""
    if value is None:
        return "null"
    kinds = {
        bool: "true/false",
        int: "an integer",
        float: "a number",
        str: "a string",
        list: "a list",
        dict: "a mapping",
    }
    kind = kinds.get(type(value), type(value).__name__)
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{text} ({kind})"


# ---------------------------------------------------------------------------------------------------------
# Field types
# ---------------------------------------------------------------------------------------------------------


def _integral(value: Any) -> Any:
    """YAML reads ``1e6`` as a float: accept an integral float where a count is expected."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


PositiveInt = Annotated[int, BeforeValidator(_integral), Field(gt=0)]
NonNegativeInt = Annotated[int, BeforeValidator(_integral), Field(ge=0)]


@dataclass(frozen=True, slots=True)
class Schedule:
    """A constant, or a piecewise-linear schedule over the trainer's sampled env steps.

    YAML: a number, or a list of ``[env_step, value]`` pairs with strictly increasing steps starting at
    0, interpolated linearly and holding the last value afterwards. This is the ``lr_schedule`` /
    ``entropy_coeff_schedule`` format of RLlib's old API stack, so `to_rllib` passes it through unchanged.
    """

    points: tuple[tuple[int, float], ...]
    """``(env_step, value)`` pairs; a constant is the single pair ``(0, value)``."""

    @classmethod
    def constant(cls, value: float) -> Schedule:
        """The schedule that is `value` at every step."""
        return cls(((0, float(value)),))

    @classmethod
    def parse(cls, raw: Any) -> Schedule:
        """Read the YAML form (a number or ``[[step, value], ...]``).

        Raises:
            ValueError: Not a number or a list of pairs, steps not integers, not starting at 0 or not
                strictly increasing.
        """
        if isinstance(raw, Schedule):
            return raw
        if is_number(raw):
            return cls.constant(raw)
        shape = "a number or a list of [env_step, value] pairs starting at step 0"
        if not isinstance(raw, list | tuple) or not raw:
            raise _Invalid(f"got {_describe(raw)}", shape)
        points: list[tuple[int, float]] = []
        for pair in raw:
            if not isinstance(pair, list | tuple) or len(pair) != 2 or not all(is_number(x) for x in pair):
                raise _Invalid(f"got {_describe(pair)} in the schedule", f"{shape}, e.g. [[0, 3e-4], [1e6, 1e-4]]")
            step, value = _integral(pair[0]), float(pair[1])
            if not isinstance(step, int) or step < 0:
                raise _Invalid(f"got step {pair[0]!r}", "env steps that are non-negative integers")
            points.append((step, value))
        if points[0][0] != 0:
            raise _Invalid(f"the schedule starts at step {points[0][0]}", "a first pair at step 0, [0, initial]")
        steps = [s for s, _ in points]
        if any(b <= a for a, b in itertools.pairwise(steps)):
            raise _Invalid(f"steps {steps} are not strictly increasing", "strictly increasing env steps")
        return cls(tuple(points))

    @property
    def initial(self) -> float:
        """The value at step 0."""
        return self.points[0][1]

    @property
    def values(self) -> tuple[float, ...]:
        """Every breakpoint's value (the schedule's range, for bounds checks)."""
        return tuple(v for _, v in self.points)

    def value_at(self, step: float) -> float:
        """The value after `step` env steps: linear between breakpoints, the last value held after them."""
        if step <= self.points[0][0]:
            return self.points[0][1]
        for (s0, v0), (s1, v1) in itertools.pairwise(self.points):
            if step < s1:
                return v0 + (v1 - v0) * (step - s0) / (s1 - s0)
        return self.points[-1][1]

    def to_rllib(self) -> tuple[float, list[list[float]] | None]:
        """``(initial value, schedule or None)`` for RLlib's ``lr``/``lr_schedule`` style pairs of settings."""
        if len(self.points) == 1:
            return self.initial, None
        return self.initial, [[s, v] for s, v in self.points]

    def to_plain(self) -> float | list[list[float]]:
        """The YAML form: a number for a constant, else the list of pairs (`parse` reads it back)."""
        if len(self.points) == 1:
            return self.initial
        return [[s, v] for s, v in self.points]

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        return core_schema.no_info_plain_validator_function(
            cls.parse,
            serialization=core_schema.plain_serializer_function_ser_schema(lambda s: s.to_plain()),
        )


def _schedule_bounds(lower: float, inclusive: bool) -> Callable[[Schedule], Schedule]:
    """An after-validator requiring every breakpoint of a schedule to be > (or ≥) `lower`."""
    sign = "≥" if inclusive else ">"

    def check(schedule: Schedule) -> Schedule:
        for value in schedule.values:
            if value < lower or (value == lower and not inclusive):
                raise _Invalid(f"got {value!r}", f"values {sign} {lower:g} at every step")
        return schedule

    return check


PositiveSchedule = Annotated[Schedule, AfterValidator(_schedule_bounds(0.0, inclusive=False))]
NonNegativeSchedule = Annotated[Schedule, AfterValidator(_schedule_bounds(0.0, inclusive=True))]


def _fragment_length(value: Any) -> int | Literal["auto"]:
    """A positive integer or ``"auto"``; written by hand so that a bad value gives one clear error."""
    value = _integral(value)
    if value == "auto" or (isinstance(value, int) and not isinstance(value, bool) and value > 0):
        return value  # type: ignore[no-any-return]
    raise _Invalid(f"got {_describe(value)}", 'a positive integer or "auto" (train batch / number of envs)')


def _frame_stack(value: Any) -> int | list[int]:
    """Frame stacking as `envs.nh.contract.frame_offsets` accepts it (spec §15.3), kept as written."""
    value = _integral(value)
    if not (isinstance(value, int | list) and not isinstance(value, bool)):
        raise _Invalid(f"got {_describe(value)}", "a frame count ≥ 1 or a list of frame offsets such as [0, 1, 3]")
    try:
        frame_offsets(value)
    except (TypeError, ValueError) as exc:
        raise _Invalid(str(exc), "a frame count ≥ 1 or a non-empty list of offsets ≥ 0") from None
    return list(value) if isinstance(value, list) else value


def _log_level(value: str) -> str:
    upper = value.upper()
    if upper not in LOG_LEVELS:
        raise _Invalid(f"got {value!r}", _one_of(LOG_LEVELS), suggestion=_closest(upper, LOG_LEVELS))
    return upper


_NAME_PATTERN = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]*$")


def _experiment_name(value: str) -> str:
    if not _NAME_PATTERN.match(value):
        raise _Invalid(
            f"got {value!r}",
            "letters, digits, '.', '_' or '-', as it names the experiment directory "
            "(set name: when the file's stem does not fit)",
        )
    return value


def _known_once(valid: Sequence[str] | None, what: str, article: str) -> AfterValidator:
    """Each name one of `valid` (any name when None), none repeated (a repeat would double that part's cost)."""

    def check(names: list[str]) -> list[str]:
        for name in names:
            if valid is not None and name not in valid:
                raise _Invalid(f"unknown {what} {name!r}", _one_of(valid), suggestion=_closest(name, valid))
        if len(set(names)) != len(names):
            raise _Invalid(f"{names} names {article} {what} twice", f"each {what} once")
        return names

    return AfterValidator(check)


# ---------------------------------------------------------------------------------------------------------
# Sections
# ---------------------------------------------------------------------------------------------------------


class _Section(BaseModel):
    """Shared settings: unknown keys are errors, types are strict (no ``"3"`` for 3), values are frozen."""

    model_config = ConfigDict(
        extra="forbid", strict=True, frozen=True, use_attribute_docstrings=True, allow_inf_nan=False
    )


class RayConfig(_Section):
    """Where Ray runs: an embedded local instance (the laptop default) or an existing cluster."""

    address: str | None = None
    """None starts an embedded local Ray; ``auto`` or ``HOST:PORT`` joins a running cluster."""
    num_cpus: PositiveInt | None = None
    """CPUs the embedded Ray may use; None lets Ray count the machine's cores (ignored on a cluster)."""
    include_dashboard: bool = True
    """Start Ray's dashboard with an embedded Ray (the live view of actors and resources)."""
    dashboard_host: str = "127.0.0.1"
    """Interface the dashboard binds to; loopback so a laptop run is not exposed to the network."""
    dashboard_port: int = Field(8265, ge=1, le=65535)
    """Dashboard port; 8265 is Ray's usual one."""


# Issue 25: warm starts and the training options that are off by default (one block, `osrs_rllib/shaping.py`,
# `osrs_rllib/warm_start.py`, `osrs_rllib/grad_accumulation.py` hold what they do).
class NoveltyConfig(_Section):
    """A novelty reward for the learner (`osrs_rllib.shaping.NoveltyReward`): off while `scale` is 0."""

    scale: NonNegativeSchedule = Schedule.constant(0.0)
    """Reward per standard deviation of distance from the running mean (RMS over `entries`), a constant or
    ``[[env_step, value], ...]``; 0 = off. The §17 rewards are ±1 for the fight, so 0.001–0.01 explores without
    outweighing a hit."""
    entries: Annotated[list[str], _known_once(OBS_IDS, "observation entry", "an")] = Field(
        default_factory=lambda: list(NOVELTY_ENTRIES)
    )
    """§15.2 entry ids measured; by default those the learner's own heads move (`shaping.NOVELTY_ENTRIES`)."""
    clip: float = Field(5.0, gt=0)
    """The largest distance one entry counts, in standard deviations: one rare value cannot pay a fight's worth."""

    @property
    def enabled(self) -> bool:
        return any(v > 0 for v in self.scale.values)


class ObservationNoiseConfig(_Section):
    """Gaussian noise on entries of the learner's observation (`osrs_rllib.shaping.ObservationNoise`): off while
    `std` is 0."""

    std: NonNegativeSchedule = Schedule.constant(0.0)
    """Standard deviation in the entries' raw units (§15.1), a constant or ``[[env_step, value], ...]``; 0 = off."""
    entries: Annotated[list[str], _known_once(OBS_IDS, "observation entry", "an")] = Field(
        default_factory=lambda: list(NOISE_ENTRIES)
    )
    """§15.2 entry ids that get noise; by default the fractions (health, prayer, levels, hit statistics)."""

    @property
    def enabled(self) -> bool:
        return any(v > 0 for v in self.std.values)


class InitConfig(_Section):
    """A warm start (`osrs_rllib/warm_start.py`): every trainable policy starts from a model file's weights."""

    model: str | None = None
    """A ``*.nhmodel`` of the config's network shape (``train --init``); null = fresh networks. Ignored by
    ``--resume``, which continues from the checkpoint's weights."""
    critic: bool = True
    """Also take the file's critic (value trunk, head and critic-input statistics). On: a PPO-trained file's critic
    already predicts the §17 returns, and a random one would feed the first iterations noisy advantages that undo
    the warm policy; a cloned file's critic is its untrained initialisation, as good as a fresh one. Off when the
    rewards changed (other `env.reward_weights`): the old values would then mislead."""


class EnvConfig(_Section):
    """The NH environment: §13.1 reset parameters, §17 reward weights and §15.3 frame stacking."""

    params: dict[str, Any] = Field(default_factory=dict)
    """§13.1 reset options given to every episode (checked by `FightParams.from_options`); empty keeps the
    simulator defaults, the presets write out the §13.3 core training values."""
    reward_weights: dict[str, Any] = Field(default_factory=dict)
    """§17 reward weights (`RewardWeights` names; a number or ``[a, b, n]`` = linear a→b over n training
    iterations); empty keeps the §17.3 environment defaults, the presets write out §17.4."""
    frame_stack: Annotated[int | list[int], PlainValidator(_frame_stack)] = 1
    """Frames the policy sees: a count n (offsets 0..n-1) or a list of offsets; 1 as in §13.3."""
    engine: Literal["auto", "core", "python"] = "auto"
    """Simulator engine of the training envs: ``core`` the compiled core (`envs/nh/core`, bit-identical to the
    Python engine and ~40× faster; an error where it is not built), ``python`` the Python reference, ``auto``
    the core where it is built, else Python with one log line."""
    novelty: NoveltyConfig = NoveltyConfig()
    """A novelty reward for the learner (off by default; docs/training.md, "Novelty reward")."""
    observation_noise: ObservationNoiseConfig = ObservationNoiseConfig()
    """Noise on the learner's observation (off by default; docs/training.md, "Observation noise")."""

    @field_validator("params")
    @classmethod
    def _check_params(cls, params: dict[str, Any]) -> dict[str, Any]:
        for key in params:
            if key in _RESERVED_PARAMS:
                problem = f"cannot be set in a training config: {_RESERVED_PARAMS[key]}"
                raise _Invalid(problem, "one of the other §13.1 reset options", field=key)
        try:
            FightParams.from_options(params)
        except ParamError as exc:
            allowed = [f.name for f in dataclasses.fields(FightParams) if f.name not in {"extra", *_RESERVED_PARAMS}]
            if exc.key is not None and str(exc).startswith("unknown reset option"):
                expected, suggestion = f"a §13.1 option, {_one_of(allowed)}", _closest(exc.key, allowed)
                problem = _Invalid("unknown reset option", expected, field=exc.key, suggestion=suggestion)
            else:
                problem = _Invalid(str(exc), field=exc.key)
            raise problem from None
        return params

    @field_validator("reward_weights")
    @classmethod
    def _check_reward_weights(cls, weights: dict[str, Any]) -> dict[str, Any]:
        try:
            RewardWeights.from_mapping(weights)
        except RewardWeightError as exc:
            if exc.key not in WEIGHT_TYPES:
                expected, suggestion = f"a §17 weight, {_one_of(WEIGHT_TYPES)}", _closest(exc.key, WEIGHT_TYPES)
                raise _Invalid("unknown reward weight", expected, field=exc.key, suggestion=suggestion) from None
            expected = WEIGHT_CHECKS[WEIGHT_TYPES[exc.key]].expected
            raise _Invalid(f"got {_describe(weights[exc.key])}", expected, field=exc.key) from None
        return weights

    def to_fight_params(self) -> FightParams:
        """`params` as the simulator's validated `FightParams` (defaults filled in)."""
        return FightParams.from_options(self.params)

    def to_reward_weights(self) -> RewardWeights:
        """`reward_weights` as a `RewardWeights` (schedules as tuples, defaults filled in)."""
        return RewardWeights.from_mapping(self.reward_weights)


class OpponentsConfig(_Section):
    """Who the learning agent fights during training: each opponent kind's share of the episodes."""

    mix: dict[str, float] = Field(default_factory=lambda: {BASELINE: 1.0})
    """Episode share per kind (``self_play``, ``baseline``, a ladder name, or a league kind: ``latest``,
    ``prioritized``, ``pfsp``), normalised to sum to 1; the spec's baseline alone is the simplest curriculum
    that still teaches NH basics."""
    scripted_in_env: bool = True
    """Run ladder rungs inside the environment (one agent per env step, the faster path) rather than as RLlib
    policies in seat 1 (`policies/scripted.py`); both play identically."""
    league_slots: PositiveInt = 4
    """Frozen league snapshots each env runner holds at once (weights are swapped in every iteration), so
    worker memory stays bounded however large the league grows."""
    targets: Annotated[list[str], _known_once(None, "model file", "a")] = Field(default_factory=list)
    """Frozen model files (``*.nhmodel``) the ``target`` kind draws from, uniformly; each plays seat 1 as
    deployed (greedy) and is never trained (`policies/model_file_policy.py`). `osrs-rllib exploit` sets it."""

    @model_validator(mode="after")
    def _check_targets(self) -> OpponentsConfig:
        if not self.scripted_in_env:
            for name, weight in self.mix.items():
                if weight > 0 and name in LADDER and needs_opponent_action(name):
                    raise _Invalid(
                        f"{name!r} must see the learner's action of the tick, which only the environment can show it",
                        "scripted_in_env: true, or no share for this rung",
                        field="scripted_in_env",
                    )
        if self.mix.get(TARGET, 0) > 0 and not self.targets:
            raise _Invalid(
                "the mix gives 'target' a share but opponents.targets is empty",
                "model files in opponents.targets (e.g. [experiments/nh/models/best.nhmodel])",
                field="targets",
            )
        return self

    @field_validator("mix")
    @classmethod
    def _check_mix(cls, mix: dict[str, float]) -> dict[str, float]:
        for name, weight in mix.items():
            if name not in OPPONENT_KINDS:
                suggestion = _closest(name, OPPONENT_KINDS)
                raise _Invalid("unknown opponent kind", _one_of(OPPONENT_KINDS), field=name, suggestion=suggestion)
            if weight < 0:
                raise _Invalid(f"got {weight!r}", "a share ≥ 0", field=name)
        if not any(w > 0 for w in mix.values()):
            raise _Invalid(f"every share is zero ({mix})", "at least one opponent kind with a share > 0")
        return mix

    def normalized(self) -> dict[str, float]:
        """The kinds with a positive share, mapped to their probability (the shares sum to 1)."""
        total = sum(self.mix.values())
        return {name: w / total for name, w in self.mix.items() if w > 0}


class PPOConfig(_Section):
    """PPO's hyperparameters, all explicit: RLlib's defaults are not the ones that train NH agents."""

    gamma: float = Field(0.99, gt=0, le=1)
    """Discount per tick; 0.99 gives a ~100-tick horizon, longer than a typical kill sequence."""
    gae_lambda: float = Field(0.95, ge=0, le=1)
    """GAE λ: bias/variance trade-off of the advantage estimate; 0.95 is the usual PPO value."""
    clip_param: float = Field(0.2, gt=0)
    """PPO's policy-ratio clip ε; 0.2 as in the PPO paper."""
    vf_clip_param: float | None = Field(10.0, gt=0)
    """RLlib clips the *squared* value error at this; 10 only catches outliers (returns are within ±~3);
    null turns it off."""
    vf_loss_coeff: float = Field(0.5, ge=0)
    """Weight of the value loss in the total loss (0.5, CleanRL's value)."""
    entropy_coeff: NonNegativeSchedule = Schedule.constant(0.01)
    """Entropy bonus, a constant or ``[[step, value], ...]``; 0.01 keeps the 12 action heads exploring."""
    lr: PositiveSchedule = Schedule.constant(3e-4)
    """Adam learning rate, a constant or ``[[step, value], ...]``; 3e-4 is PPO's standard starting value."""
    grad_clip: float | None = Field(0.5, gt=0)
    """Global gradient-norm clip (null = off); 0.5 as in CleanRL and SB3."""
    kl_coeff: float = Field(0.0, ge=0)
    """Initial coefficient of RLlib's adaptive KL penalty; 0 disables it (the ratio clip is enough)."""
    kl_target: float = Field(0.01, gt=0)
    """Target KL of the adaptive penalty (only read when kl_coeff > 0)."""
    train_batch_size: PositiveInt = 8192
    """Env steps per training iteration."""
    minibatch_size: PositiveInt = 1024
    """Steps per SGD minibatch (≤ train_batch_size); 8 minibatches per epoch with the defaults."""
    num_epochs: PositiveInt = 4
    """SGD passes over each train batch; 4 reuses samples without drifting far from the behaviour policy."""
    rollout_fragment_length: Annotated[int | Literal["auto"], PlainValidator(_fragment_length)] = "auto"
    """Steps each env contributes per sample call; ``auto`` = train batch / total envs, so batches fill evenly."""
    grad_accumulation_steps: PositiveInt = 1
    """Micro-batches each SGD minibatch is split into, their gradients summed (weighted by size) before one optimiser
    step: the same update with a k-th of the activations in memory (`osrs_rllib/grad_accumulation.py`); 1 = off."""

    @model_validator(mode="after")
    def _check_accumulation(self) -> PPOConfig:
        if self.grad_accumulation_steps > self.minibatch_size:
            raise _Invalid(
                f"grad_accumulation_steps {self.grad_accumulation_steps} > minibatch_size {self.minibatch_size}",
                "at most one micro-batch per sample of a minibatch",
                field="grad_accumulation_steps",
                related=("minibatch_size",),
            )
        return self

    @model_validator(mode="after")
    def _check_sizes(self) -> PPOConfig:
        if self.minibatch_size > self.train_batch_size:
            raise _Invalid(
                f"minibatch_size {self.minibatch_size} > train_batch_size {self.train_batch_size}",
                "minibatch_size ≤ train_batch_size",
                field="minibatch_size",
                related=("train_batch_size",),
            )
        return self

    @property
    def num_minibatches(self) -> int:
        """Minibatches per epoch (derived; RLlib keeps a partial last one)."""
        return -(-self.train_batch_size // self.minibatch_size)


class RunnersConfig(_Section):
    """How sampling is spread over processes (RLlib env runners) and vectorised envs."""

    num_env_runners: NonNegativeInt = 1
    """Sampling processes; 0 samples in the driver. One runner plus the learner fills a 2-core laptop."""
    num_envs_per_env_runner: PositiveInt = 16
    """Envs stepped together per runner, so the policy runs on batches of 16 instead of 1."""
    num_cpus_per_env_runner: float = Field(1.0, ge=0)
    """CPUs Ray reserves per runner; one, as the simulator is single-threaded Python."""
    sample_timeout_s: float = Field(120.0, gt=0)
    """Seconds a sample call may take before RLlib gives up on a runner; generous for slow laptops."""
    sampler: Literal["lockstep", "rllib"] = "lockstep"
    """``lockstep``: `osrs_rllib/lockstep_sampler.py`, all envs of a runner step together and each policy acts
    once per tick on one batch (sampling ~1.7× faster here); ``rllib``: RLlib's generic `EnvRunnerV2`."""

    @property
    def total_envs(self) -> int:
        """Envs sampling in parallel (derived): the driver's when there are no runners."""
        return max(1, self.num_env_runners) * self.num_envs_per_env_runner


class EvaluationConfig(_Section):
    """Periodic evaluation fights, the source of win rates (training-batch win rates are biased)."""

    interval: NonNegativeInt = 5
    """Training iterations between evaluations; 0 turns evaluation off."""
    fights: PositiveInt = 200
    """Fights per build per opponent per evaluation, spread evenly over fight types when those are randomised;
    the headline averages the trained builds (50 per build over six builds: about ±3 points at 95 %)."""
    unseen_builds: Annotated[list[str], _known_once([b.value for b in Build], "build", "a")] = Field(
        default_factory=list
    )
    """Builds also evaluated, `fights` each, as a check of how the agent does on a build it never trained on
    (e.g. MAXED for the §13.3 core builds); reported apart, outside the headline."""
    opponents: Annotated[list[str], _known_once(EVAL_OPPONENTS, "opponent", "an")] = Field(
        default_factory=lambda: [BASELINE]
    )
    """Opponents to evaluate against: ``baseline`` or ladder names (no self-play: it has no fixed target)."""
    deterministic: bool = True
    """Evaluate the greedy policy (most likely value of every head): what a deployed bot plays."""
    stochastic: bool = False
    """Also evaluate the sampling policy (what training sees); off by default as it doubles the cost."""
    seed: NonNegativeInt = 1_000_000
    """Base seed of evaluation fights, far from training seeds so the two never share an episode."""

    @model_validator(mode="after")
    def _check_enabled(self) -> EvaluationConfig:
        if self.interval > 0 and not self.opponents:
            raise _Invalid(
                "no opponents while evaluation is on", "at least one opponent (or interval 0)", field="opponents"
            )
        if self.interval > 0 and not (self.deterministic or self.stochastic):
            raise _Invalid(
                "both deterministic and stochastic are false while evaluation is on",
                "at least one of them true (or interval 0)",
                field="deterministic",
                related=("interval", "stochastic"),
            )
        return self


class CheckpointConfig(_Section):
    """When checkpoints are written and which are kept."""

    interval: NonNegativeInt = 5
    """Training iterations between checkpoints; 0 writes only the final one."""
    keep_last: PositiveInt = 3
    """Most recent checkpoints kept on disk (older ones are deleted); 3 bounds a laptop's disk use."""
    keep_best: bool = True
    """Also keep the checkpoint with the best evaluation win rate (needs evaluation.interval > 0)."""
    best_by: str | None = None
    """The evaluation opponent whose win rate (first mode, mean of the trained builds) picks the best checkpoint
    and ``best.nhmodel``; null = the first of `evaluation.opponents`. Pick the hardest opponent that still
    separates models: a saturated one (every model near 100 %) makes "best" a coin flip between checkpoints."""


class StopConfig(_Section):
    """When training stops: at whichever set limit comes first (at least one must be set)."""

    iterations: PositiveInt | None = None
    """Training iterations; null = no limit."""
    env_steps: PositiveInt | None = None
    """Sampled env steps; null = no limit."""
    minutes: float | None = Field(60.0, gt=0)
    """Wall-clock minutes; an hour is a useful first laptop run."""

    @model_validator(mode="after")
    def _check_some_limit(self) -> StopConfig:
        if self.iterations is None and self.env_steps is None and self.minutes is None:
            raise _Invalid("no limit is set", "at least one of stop.iterations, stop.env_steps, stop.minutes")
        return self


class LoggingConfig(_Section):
    """What a run reports while it trains."""

    tensorboard: bool = True
    """Write TensorBoard event files (``charts/``, ``losses/``, ``eval/`` scalars) in the experiment dir."""
    live: bool = True
    """Show the live terminal view; turn off in CI and on clusters where nobody watches a terminal."""
    log_level: Annotated[str, AfterValidator(_log_level)] = "INFO"
    """Python logging level of the application (DEBUG, INFO, WARNING, ERROR)."""


class TrainConfig(_Section):
    """One training job, as resolved from a YAML file (see the module docstring); `load_config` builds it."""

    name: Annotated[str, AfterValidator(_experiment_name)] = "nh"
    """Experiment name (the directory under experiments_dir); the loader defaults it to the file's stem."""
    seed: NonNegativeInt = 0
    """Base seed of the run (env runners, envs and the network derive theirs from it)."""
    experiments_dir: str = "experiments"
    """Where experiment directories are created, relative to the current directory."""
    ray: RayConfig = RayConfig()
    """Ray: local or cluster."""
    env: EnvConfig = EnvConfig()
    """The environment: reset parameters, reward weights, frame stacking."""
    opponents: OpponentsConfig = OpponentsConfig()
    """The training opponents' mix."""
    model: NetworkConfig = NetworkConfig()
    """Policy and value network sizes (`policies.network_config.NetworkConfig`)."""
    league: LeagueConfig = LeagueConfig()
    """The league (`league.config.LeagueConfig` without its mix): snapshots, qualities, PFSP, exploiters,
    ratings. It runs when opponents.mix has a league kind or there are exploiters."""
    ppo: PPOConfig = PPOConfig()
    """PPO hyperparameters."""
    runners: RunnersConfig = RunnersConfig()
    """Sampling processes and envs."""
    evaluation: EvaluationConfig = EvaluationConfig()
    """Evaluation cadence and opponents."""
    checkpoint: CheckpointConfig = CheckpointConfig()
    """Checkpoint cadence and retention."""
    stop: StopConfig = StopConfig()
    """Stop criteria."""
    logging: LoggingConfig = LoggingConfig()
    """TensorBoard, terminal view, log level."""
    init: InitConfig = InitConfig()
    """A warm start from a model file (``train --init``); none by default."""

    @field_validator("league", mode="before")
    @classmethod
    def _league_mix_is_elsewhere(cls, value: Any) -> Any:
        if isinstance(value, Mapping) and "opponent_mix" in value:
            problem = "the league's mix is opponents.mix"
            raise _Invalid(problem, "no opponent_mix here", field="opponent_mix")
        return value

    @model_validator(mode="after")
    def _check_across_sections(self) -> TrainConfig:
        best_by = self.checkpoint.best_by
        if best_by is not None and best_by not in self.evaluation.opponents:
            raise _Invalid(
                f"best_by {best_by!r} is not an evaluation opponent",
                f"one of evaluation.opponents {self.evaluation.opponents}, or null (the first)",
                field="checkpoint.best_by",
                related=("evaluation.opponents",),
            )
        if self.checkpoint.keep_best and self.evaluation.interval == 0:
            raise _Invalid(
                "keep_best needs evaluation win rates but evaluation is off (evaluation.interval 0)",
                "keep_best false, or evaluation.interval > 0",
                field="checkpoint.keep_best",
                related=("evaluation.interval",),
            )
        return self

    @property
    def league_enabled(self) -> bool:
        """Whether training runs the league (a league kind in the mix, or exploiters)."""
        mix = self.opponents.normalized()
        return any(k in mix for k in LEAGUE_KINDS) or self.league.main_exploiters + self.league.league_exploiters > 0

    def league_mix(self) -> dict[str, float]:
        """`opponents.mix` in the league's vocabulary (ladder rungs become ``scripted_<name>``)."""
        return {(f"scripted_{k}" if k in LADDER else k): v for k, v in self.opponents.normalized().items()}

    def to_dict(self) -> dict[str, Any]:
        """Plain YAML/JSON-ready values (schedules and the network in their YAML form); loads back equal."""
        return _plain(self.model_dump(mode="python"))


def _plain(value: Any) -> Any:
    """Tuples to lists and enums to their names, recursively, so that YAML's safe dumper can write the
    value (`env.params` may hold `Build` members when a config is built in code)."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, enum.Enum):
        return value.name
    return value


# ---------------------------------------------------------------------------------------------------------
# YAML
# ---------------------------------------------------------------------------------------------------------


class _Dumper(yaml.SafeDumper):
    """Safe dumping that quotes strings `StrictLoader` would read as floats, so a dump loads back equal."""


_Dumper.add_implicit_resolver("tag:yaml.org,2002:float", FLOAT_12, FLOAT_FIRST_CHARS)


def _represent_list(dumper: _Dumper, data: list[Any]) -> yaml.Node:
    """Lists of scalars, and lists of such lists (schedules), on one line; anything else in block style."""
    flat = all(
        not isinstance(x, dict | list) or (isinstance(x, list) and not any(isinstance(y, dict | list) for y in x))
        for x in data
    )
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=flat)


_Dumper.add_representer(list, _represent_list)


def _yaml_problem(exc: yaml.YAMLError) -> str:
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc)
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
    return f"invalid YAML{where}: {problem}"


# ---------------------------------------------------------------------------------------------------------
# Loading: extends, overrides, provenance
# ---------------------------------------------------------------------------------------------------------

KeyPath = tuple[str, ...]
Provenance = dict[KeyPath, str]
"""Where each key of the resolved mapping was last written: a file, or `SET_SOURCE`."""


def _replace(path: KeyPath, value: Any, source: str, prov: Provenance) -> None:
    """Record that `source` wrote `value` at `path`: it and every key below it, forgetting earlier writers there."""
    for key in [k for k in prov if k[: len(path)] == path]:
        del prov[key]
    prov[path] = source
    for key, child in value.items() if isinstance(value, Mapping) else ():
        _replace((*path, str(key)), child, source, prov)


def _merge(base: dict[str, Any], over: Mapping[str, Any], source: str, prov: Provenance, prefix: KeyPath = ()) -> None:
    """Deep-merge `over`, written by `source`, into `base` in place: mappings merge, anything else replaces."""
    for key, value in over.items():
        path = (*prefix, str(key))
        if isinstance(value, Mapping) and isinstance(base.get(key), Mapping):
            prov.setdefault(path, source)
            base[key] = dict(base[key])  # a copy: YAML aliases may share the mapping with another key
            _merge(base[key], value, source, prov, path)
        else:
            base[key] = value
            _replace(path, value, source, prov)


def _read_yaml(file: str) -> dict[str, Any]:
    try:
        text = Path(file).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(file, None, _compose("file not found", "a YAML config file", _sibling_hint(file))) from None
    except IsADirectoryError:
        raise ConfigError(file, None, "is a directory; expected a YAML config file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(file, None, f"cannot read the file ({exc})") from None
    try:
        data = yaml.load(text, Loader=StrictLoader)  # a SafeLoader subclass
    except yaml.YAMLError as exc:
        raise ConfigError(file, None, _yaml_problem(exc)) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        sections = ", ".join(TrainConfig.model_fields)
        raise ConfigError(
            file, None, f"the top level is {_describe(data)}; expected a mapping of sections ({sections})"
        )
    return data


def _sibling_hint(file: str) -> str | None:
    """The closest ``.yml`` file name in the same directory, for a mistyped path."""
    path = Path(file)
    try:
        siblings = [p.name for p in path.parent.iterdir() if p.suffix in (".yml", ".yaml")]
    except OSError:
        return None
    close = _closest(path.name, siblings)
    return str(path.parent / close) if close else None


def _chain(file: str, seen: tuple[str, ...] = ()) -> list[tuple[str, dict[str, Any]]]:
    """`file` and its ``extends`` ancestors with their own data, the root ancestor first (later files win)."""
    data = _read_yaml(file)
    parent = data.pop("extends", None)
    if parent is None:
        return [(file, data)]
    if not isinstance(parent, str) or not parent.strip():
        raise ConfigError(
            file, "extends", f"got {_describe(parent)}; expected the path of another config file, relative to this one"
        )
    parent_file = os.path.normpath(os.path.join(os.path.dirname(file), parent))
    if os.path.realpath(parent_file) in [os.path.realpath(f) for f in (*seen, file)]:
        cycle = " -> ".join((*seen, file, parent_file))
        raise ConfigError(
            file, "extends", f"extends cycle {cycle}; expected a chain that ends in a file without extends"
        )
    if not os.path.isfile(parent_file):
        hint = _sibling_hint(parent_file)
        raise ConfigError(
            file,
            "extends",
            _compose(f"file {parent_file} not found", "a path relative to this file", hint and Path(hint).name),
        )
    return [*_chain(parent_file, (*seen, file)), (file, data)]


def _apply_override(data: dict[str, Any], prov: Provenance, override: str) -> None:
    """Apply one ``key.path=value`` (value read as YAML) in place; the value replaces what was there."""
    key, sep, raw = override.partition("=")
    key = key.strip()
    if not sep or not key:
        raise ConfigError(SET_SOURCE, None, f"got {override!r}; expected key.path=value (e.g. ppo.lr=1e-4)")
    path = tuple(part.strip() for part in key.split("."))
    if any(not part for part in path):
        raise ConfigError(SET_SOURCE, key, "empty part in the key path; expected dotted names such as ppo.lr")
    if path[0] == "extends":
        raise ConfigError(SET_SOURCE, key, "extends cannot be overridden; expected it in a config file")
    try:
        value = yaml.load(raw, Loader=StrictLoader) if raw.strip() else None  # a SafeLoader subclass
    except yaml.YAMLError as exc:
        raise ConfigError(SET_SOURCE, key, f"cannot read the value {raw!r}: {_yaml_problem(exc)}") from None
    node = data
    for depth, part in enumerate(path[:-1]):
        child = node.get(part)
        if child is None:
            child = node[part] = {}
            prov[path[: depth + 1]] = SET_SOURCE
        elif not isinstance(child, dict):
            raise ConfigError(
                SET_SOURCE,
                key,
                f"{'.'.join(path[: depth + 1])} is {_describe(child)}, not a "
                "mapping; expected a key path into a section",
            )
        node = child
    node[path[-1]] = value
    _replace(path, value, SET_SOURCE, prov)


@dataclass(frozen=True)
class _Resolved:
    """A resolved mapping with what is needed to blame the right source for a problem in it."""

    data: dict[str, Any]
    prov: Provenance
    sources: tuple[str, ...]
    """Every source in the order it was applied: the root ancestor first, ``--set`` last."""

    def blame(self, path: KeyPath, related: Sequence[KeyPath] = ()) -> str:
        """The source of the key at `path`: its own for a key that was written; for a section or a key
        left at its default, the last source that wrote anything in the nearest written section. With
        `related` keys (a cross-field check), the last of their sources and that of `path`."""
        if related:
            return max((self.blame(p) for p in (path, *related)), key=self.sources.index)
        for end in range(len(path), 0, -1):
            prefix = path[:end]
            if prefix in self.prov:
                writers = {src for key, src in self.prov.items() if key[:end] == prefix}
                return max(writers, key=self.sources.index)
        return self.sources[-2]  # nothing of it was written: the file named on the command line


def _resolve(path: str | os.PathLike[str], overrides: Sequence[str]) -> _Resolved:
    file = os.fspath(path)
    chain = _chain(file)
    data: dict[str, Any] = {}
    prov: Provenance = {}
    for source, layer in chain:
        _merge(data, layer, source, prov)
    for override in overrides:
        _apply_override(data, prov, override)
    if "name" not in data:
        data["name"] = Path(file).stem
        prov[("name",)] = file
    return _Resolved(data, prov, (*(source for source, _ in chain), SET_SOURCE))


def resolve_config_dict(path: str | os.PathLike[str], overrides: Sequence[str] = ()) -> dict[str, Any]:
    """The config mapping after ``extends`` and overrides, before validation (``name`` filled in).

    Raises:
        ConfigError: A missing or unreadable file, invalid YAML, a top level that is not a mapping, an
            ``extends`` cycle or a malformed override.
    """
    return _resolve(path, overrides).data


def load_config(path: str | os.PathLike[str], overrides: Sequence[str] = ()) -> TrainConfig:
    """Resolve `path` (``extends``, then `overrides` in order) and validate it as a `TrainConfig`.

    Args:
        path: The YAML file.
        overrides: ``key.path=value`` strings (``--set``), the value read as YAML.

    Returns:
        The validated, frozen config.

    Raises:
        ConfigError: Anything wrong, as one line naming the file the bad key came from, the key path,
            the problem and what was expected.
    """
    resolved = _resolve(path, overrides)
    _reject_non_finite(resolved.data, (), resolved)
    try:
        return TrainConfig.model_validate(resolved.data)
    except ValidationError as exc:
        raise _config_error(exc, resolved) from None


def _reject_non_finite(node: Any, path: KeyPath, resolved: _Resolved) -> None:
    """NaN and infinity are never a sensible setting (a learning rate, a reward weight, a schedule point): they
    are rejected wherever they appear, before any section's own validation, so no section can forget to."""
    if isinstance(node, float) and not math.isfinite(node):
        key = ".".join(str(p) for p in path if not isinstance(p, int))
        where = "".join(f"[{p}]" for p in path if isinstance(p, int))
        raise ConfigError(resolved.blame(tuple(p for p in path if not isinstance(p, int))), key + where,
                          f"got {node}; expected a finite number")  # fmt: skip
    if isinstance(node, Mapping):
        for k, v in node.items():
            _reject_non_finite(v, (*path, str(k)), resolved)
    elif isinstance(node, list | tuple):
        for i, v in enumerate(node):
            _reject_non_finite(v, (*path, i), resolved)


def dump_config(cfg: TrainConfig, header: str | None = None) -> str:
    """`cfg` as YAML, every value written out; `load_config` of the text gives an equal config.

    Args:
        cfg: The config.
        header: Optional comment lines put on top (each prefixed with ``# ``).
    """
    text = yaml.dump(
        cfg.to_dict(), Dumper=_Dumper, sort_keys=False, default_flow_style=False, width=120, allow_unicode=True
    )
    if header:
        text = "".join(f"# {line}\n" for line in header.splitlines()) + text
    return text


# ---------------------------------------------------------------------------------------------------------
# Validation errors → ConfigError
# ---------------------------------------------------------------------------------------------------------

_EXPECTED_TYPE = {
    "int_type": "an integer",
    "int_parsing": "an integer",
    "int_from_float": "an integer",
    "float_type": "a number",
    "float_parsing": "a number",
    "finite_number": "a finite number",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "string_type": "a string",
    "dict_type": "a mapping",
    "list_type": "a list",
    "model_type": "a mapping",
    "model_attributes_type": "a mapping",
}
_EXPECTED_BOUND = {"greater_than": (">", "gt"), "greater_than_equal": ("≥", "ge"), "less_than": ("<", "lt"),
                   "less_than_equal": ("≤", "le")}  # fmt: skip


def _section_keys(loc: Sequence[Any]) -> list[str]:
    """The valid keys of the model or pydantic dataclass at `loc` (section names below `TrainConfig`); a field
    left out of the dump (the league's own mix) is not one."""
    model: Any = TrainConfig
    for part in loc:
        field = model.__pydantic_fields__.get(str(part))
        model = field.annotation if field is not None else None
        if not hasattr(model, "__pydantic_fields__"):
            return []
    return [name for name, field in model.__pydantic_fields__.items() if not field.exclude]


def _config_error(exc: ValidationError, resolved: _Resolved) -> ConfigError:
    """The first validation problem as a one-line `ConfigError` blaming the key's own file."""
    err = exc.errors(include_url=False)[0]
    loc = tuple(str(p) for p in err["loc"])
    kind, ctx, value = err["type"], err.get("ctx") or {}, err.get("input")
    related: list[KeyPath] = []
    if loc and loc[-1] == "[key]":  # a mapping key of the wrong type, e.g. `1:` where a name goes
        loc = loc[:-1]
        message = _compose(f"the key {_describe(value)} is not a name", "a string key", None)
    elif isinstance(problem := ctx.get("error"), _Invalid):  # this module's own check
        related = [(*loc, *r.split(".")) for r in problem.related]
        if problem.field:
            loc = (*loc, *problem.field.split("."))
        message = str(problem)
    elif kind in ("extra_forbidden", "unexpected_keyword_argument"):  # a model's, a pydantic dataclass's
        valid = _section_keys(loc[:-1])
        message = _compose("unknown key", _one_of(valid), _closest(loc[-1], valid))
    elif kind in _EXPECTED_TYPE:
        message = _compose(f"got {_describe(value)}", _EXPECTED_TYPE[kind], None)
    elif kind in _EXPECTED_BOUND:
        sign, bound = _EXPECTED_BOUND[kind]
        message = _compose(f"got {value!r}", f"a value {sign} {ctx[bound]}", None)
    elif kind == "value_error" and isinstance(ctx.get("error"), KeyedError):  # a section's own keyed error
        loc, message = (*loc[:-1], *ctx["error"].key.split(".")), ctx["error"].detail
    elif kind == "value_error" and "error" in ctx:
        message = str(ctx["error"])
    else:
        message = f"{err['msg']} (got {_describe(value)})"
    key = ".".join(loc) or None
    return ConfigError(resolved.blame(loc, related), key, message)
