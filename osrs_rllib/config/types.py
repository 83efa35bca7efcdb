"""The field types of the training config: counts that accept ``1e6``, `StepSchedule`, and the hand-written checks.

Why apart from the schema: these are the vocabulary the sections (`osrs_rllib/config/schema.py`) are written in;
each raises `Invalid` (`common/validation.py`), so a bad value is worded like every other problem.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, GetCoreSchemaHandler
from pydantic_core import core_schema

from common.suggest import closest
from common.validation import Invalid, describe, is_number, one_of
from envs.nh.contract import frame_offsets

LOG_LEVELS: tuple[str, ...] = ("DEBUG", "INFO", "WARNING", "ERROR")

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
class StepSchedule:
    """A constant, or a piecewise-linear schedule over a training clock (``ppo.lr``, ``ppo.entropy_coeff``, the
    novelty and observation-noise scales).

    Which clock: ``ppo.lr`` and ``ppo.entropy_coeff`` are RLlib's schedules, which run on its sampled *agent* steps
    (one per acting learner seat: a self-play env step counts two, so nh.yml's mix advances them ~1.16x faster than
    env steps). The novelty and noise schedules run on sampled env steps (`osrs_rllib.training.sampling.shaping`). The
    pairs are still written ``[env_step, value]``, the form existing configs use.

    Not `envs.nh.rewards.Schedule`, the spec's §17.4 reward-weight schedule ``[a, b, n]`` over training
    iterations: the two keep their own YAML forms because both are written in existing experiments'
    ``config.yml`` files (and the weights' form is mirrored in the compiled core's tables), hence the two names.

    YAML: a number, or a list of ``[env_step, value]`` pairs with strictly increasing steps starting at
    0, interpolated linearly and holding the last value afterwards. This is the ``lr_schedule`` /
    ``entropy_coeff_schedule`` format of RLlib's old API stack, so `to_rllib` passes it through unchanged.
    """

    points: tuple[tuple[int, float], ...]
    """``(env_step, value)`` pairs; a constant is the single pair ``(0, value)``."""

    @classmethod
    def constant(cls, value: float) -> StepSchedule:
        """The schedule that is `value` at every step."""
        return cls(((0, float(value)),))

    @classmethod
    def parse(cls, raw: Any) -> StepSchedule:
        """Read the YAML form (a number or ``[[step, value], ...]``).

        Raises:
            ValueError: Not a number or a list of pairs, steps not integers, not starting at 0 or not
                strictly increasing.
        """
        if isinstance(raw, StepSchedule):
            return raw
        if is_number(raw):
            return cls.constant(raw)
        shape = "a number or a list of [env_step, value] pairs starting at step 0"
        if not isinstance(raw, list | tuple) or not raw:
            raise Invalid(f"got {describe(raw)}", shape)
        points: list[tuple[int, float]] = []
        for pair in raw:
            if not isinstance(pair, list | tuple) or len(pair) != 2 or not all(is_number(x) for x in pair):
                raise Invalid(f"got {describe(pair)} in the schedule", f"{shape}, e.g. [[0, 3e-4], [1e6, 1e-4]]")
            step, value = _integral(pair[0]), float(pair[1])
            if not isinstance(step, int) or step < 0:
                raise Invalid(f"got step {pair[0]!r}", "env steps that are non-negative integers")
            points.append((step, value))
        if points[0][0] != 0:
            raise Invalid(f"the schedule starts at step {points[0][0]}", "a first pair at step 0, [0, initial]")
        steps = [s for s, _ in points]
        if any(b <= a for a, b in itertools.pairwise(steps)):
            raise Invalid(f"steps {steps} are not strictly increasing", "strictly increasing env steps")
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


def _schedule_bounds(lower: float, inclusive: bool) -> Callable[[StepSchedule], StepSchedule]:
    """An after-validator requiring every breakpoint of a schedule to be > (or ≥) `lower`."""
    sign = "≥" if inclusive else ">"

    def check(schedule: StepSchedule) -> StepSchedule:
        for value in schedule.values:
            if value < lower or (value == lower and not inclusive):
                raise Invalid(f"got {value!r}", f"values {sign} {lower:g} at every step")
        return schedule

    return check


PositiveStepSchedule = Annotated[StepSchedule, AfterValidator(_schedule_bounds(0.0, inclusive=False))]
NonNegativeStepSchedule = Annotated[StepSchedule, AfterValidator(_schedule_bounds(0.0, inclusive=True))]


def _fragment_length(value: Any) -> int | Literal["auto"]:
    """A positive integer or ``"auto"``; written by hand so that a bad value gives one clear error."""
    value = _integral(value)
    if value == "auto" or (isinstance(value, int) and not isinstance(value, bool) and value > 0):
        return value  # type: ignore[no-any-return]
    raise Invalid(f"got {describe(value)}", 'a positive integer or "auto" (train batch / number of envs)')


def _learner_threads(value: Any) -> int | Literal["auto"]:
    """A positive thread count or ``"auto"`` (`osrs_rllib/training/learner/threads.py`)."""
    value = _integral(value)
    if value == "auto" or (isinstance(value, int) and not isinstance(value, bool) and value > 0):
        return value  # type: ignore[no-any-return]
    raise Invalid(f"got {describe(value)}", 'a positive number of threads or "auto" (measured per iteration)')


def _frame_stack(value: Any) -> int | list[int]:
    """Frame stacking as `envs.nh.contract.frame_offsets` accepts it (spec §15.3), kept as written."""
    value = _integral(value)
    if not (isinstance(value, int | list) and not isinstance(value, bool)):
        raise Invalid(f"got {describe(value)}", "a frame count ≥ 1 or a list of frame offsets such as [0, 1, 3]")
    try:
        frame_offsets(value)
    except (TypeError, ValueError) as exc:
        raise Invalid(str(exc), "a frame count ≥ 1 or a non-empty list of offsets ≥ 0") from None
    return list(value) if isinstance(value, list) else value


def _log_level(value: str) -> str:
    upper = value.upper()
    if upper not in LOG_LEVELS:
        raise Invalid(f"got {value!r}", one_of(LOG_LEVELS), suggestion=closest(upper, LOG_LEVELS))
    return upper


_NAME_PATTERN = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]*$")


def _experiment_name(value: str) -> str:
    if not _NAME_PATTERN.match(value):
        raise Invalid(
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
                raise Invalid(f"unknown {what} {name!r}", one_of(valid), suggestion=closest(name, valid))
        if len(set(names)) != len(names):
            raise Invalid(f"{names} names {article} {what} twice", f"each {what} once")
        return names

    return AfterValidator(check)


class _Section(BaseModel):
    """Shared settings: unknown keys are errors, types are strict (no ``"3"`` for 3), values are frozen."""

    model_config = ConfigDict(
        extra="forbid", strict=True, frozen=True, use_attribute_docstrings=True, allow_inf_nan=False
    )
