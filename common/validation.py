"""What the config dataclasses (`NetworkConfig`, `LeagueConfig`, `RewardWeights`) share: their keyed error,
building one from a plain mapping, and each field's check as data.

They raise their own `KeyedError` subclass from their validators; pydantic wraps it in a `ValidationError`.
Callers of ``from_dict`` (model files, league checkpoints, the training schema) expect the package's error
with its `key`, so `from_mapping` unwraps it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple, TypeVar

from pydantic import ValidationError

from common.suggest import IN_PARENS, did_you_mean


class KeyedError(ValueError):
    """A setting is unknown or invalid: `key` names it and `detail` is the message without it, so that the
    training schema can blame the key in its own wording."""

    prefix = ""
    """Put before the key in ``str()`` (``"reward weight "``)."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(f"{self.prefix}{key}: {message}")
        self.key, self.detail = key, message


E = TypeVar("E", bound=KeyedError)
T = TypeVar("T")


def from_mapping(cls: type[T], values: Mapping[str, Any] | None, error_type: type[E], unknown: str) -> T:
    """`cls(**values)` with every problem as one `error_type`: an unknown key gets `unknown` formatted with
    ``{hint}`` (the closest valid name) and ``{names}`` (every valid one), a bad value its validator's error."""
    values = dict(values or {})
    names = [f.name for f in dataclasses.fields(cls)]  # type: ignore[arg-type]
    for key in values:
        if key not in names:
            hint = did_you_mean(key, names, IN_PARENS)
            raise error_type(str(key), unknown.format(hint=hint, names=names))
    try:
        return cls(**values)
    except ValidationError as exc:  # the validator's own error, else pydantic's (a non-finite float, a wrong type)
        err = exc.errors(include_url=False)[0]
        if isinstance(original := (err.get("ctx") or {}).get("error"), error_type):
            raise original from None
        key = ".".join(str(part) for part in err["loc"]) or "value"
        raise error_type(key, f"{err['msg']}, got {err.get('input')!r}") from None


class Check(NamedTuple):
    """A field's check as data: a predicate on the raw value, what the error says is expected, and for a closed
    set of names the names themselves, so that a typo gets the closest one."""

    ok: Callable[[Any], bool]
    expected: str
    choices: tuple[str, ...] = ()


def one_of(choices: Sequence[str]) -> Check:
    """The check of a field that takes one of `choices`."""
    return Check(lambda v: v in choices, f"one of {list(choices)}", tuple(choices))


def is_int(value: Any) -> bool:
    """An integer that is not a bool (YAML ``true`` is not a count)."""
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: Any) -> bool:
    """An int or float that is not a bool."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def checked(checks: Mapping[str, Check], error_type: type[E], name: str, value: Any) -> Any:
    """`value` when the check of field `name` passes, else ``error_type(name, "expected …, got …")``: the one
    wording every config dataclass uses for a bad value."""
    ok, expected, choices = checks[name]
    if not ok(value):
        hint = did_you_mean(value, choices, IN_PARENS) if choices else ""
        raise error_type(name, f"expected {expected}, got {value!r}{hint}")
    return value
