"""Turning a pydantic validation failure back into a package's own keyed error.

The config dataclasses (`NetworkConfig`, `LeagueConfig`) raise their own `...Error(key, message)` from their
validators; pydantic wraps it in a `ValidationError`. Callers of ``from_dict`` (model files, league
checkpoints) expect the package's error with its `key`, so this unwraps it. Duck-typed on
``ValidationError.errors()``, so this bottom layer does not import pydantic.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol, TypeVar


class _KeyedError(Protocol):
    def __init__(self, key: str, message: str) -> None: ...


E = TypeVar("E", bound=_KeyedError)


def keyed_error(exc: Any, error_type: type[E]) -> E:
    """The first problem of pydantic's `exc` as an `error_type(key, message)`: the validator's own error when
    it raised one, else pydantic's message for a check pydantic ran itself (a non-finite float, a wrong type)."""
    err = exc.errors(include_url=False)[0]
    original = (err.get("ctx") or {}).get("error")
    if isinstance(original, error_type):
        return original
    key = ".".join(str(part) for part in err["loc"]) or "value"
    return error_type(key, f"{err['msg']}, got {err.get('input')!r}")


Check = tuple[Callable[[Any], bool], str]
"""A field's check as data: a predicate on the raw value, and what the error says is expected."""


def is_int(value: Any) -> bool:
    """An integer that is not a bool (YAML ``true`` is not a count)."""
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: Any) -> bool:
    """An int or float that is not a bool."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def checked(checks: Mapping[str, Check], error_type: type[E], name: str, value: Any) -> Any:
    """`value` when the check of field `name` passes, else ``error_type(name, "expected …, got …")``: the one
    wording every config dataclass uses for a bad value."""
    ok, expected = checks[name]
    if not ok(value):
        raise error_type(name, f"expected {expected}, got {value!r}")
    return value
