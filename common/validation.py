"""The one way a setting is checked and the one way a bad one is worded, for every layer's configuration.

Why here: the simulator's `FightParams` and `RewardWeights`, the league's `LeagueConfig`, the network's
`NetworkConfig` and the application's `TrainConfig` are all pydantic models or pydantic dataclasses. They state
their checks as pydantic types and constraints (the named types below, ``Field(gt=...)``, ``Strict()``), and
a check pydantic cannot state raises `Invalid`. `render` turns any resulting `ValidationError` into one line,
``<what was wrong>; expected <what> (did you mean 'x'?)``: the layers raise it as their `KeyedError` (model
files, league checkpoints and reset options have no file), the application's `ConfigError` adds the file that
set the key (`osrs_rllib/config/errors.py`). Pydantic is the one third-party import of `common/`: every layer
that has settings already depends on it, and the layer rules (`tests/test_layers.py`) forbid only frameworks.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Annotated, Any, ClassVar, TypeVar

from pydantic import ConfigDict, Field, GetCoreSchemaHandler, Strict, TypeAdapter, ValidationError, WrapValidator
from pydantic_core import ErrorDetails, core_schema

from common.suggest import IN_PARENS, closest, did_you_mean

KeyPath = tuple[str, ...]

# ---------------------------------------------------------------------------------------------------------
# The problem a check raises, and its wording
# ---------------------------------------------------------------------------------------------------------


class Invalid(ValueError):
    """A value problem raised by a validator, split into the parts every error message is made of.

    `field` names a sub-key below the location pydantic reports (a cross-field check on the ``ppo`` section
    blames ``minibatch_size``; a bad reward weight its own name). `related` lists the other keys of a
    cross-field check, relative to the same location: the application's error names the file that wrote the
    last of them, since that write made the combination impossible. Pydantic keeps a validator's `ValueError`
    in the error's context, which is how `render` reads these back.
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
        super().__init__(compose(problem, expected, suggestion))
        self.field, self.related = field, related


def compose(problem: str, expected: str | None, suggestion: str | None) -> str:
    """``problem; expected <expected> (did you mean 'x'?)``: the order every configuration error keeps."""
    text = problem
    if expected:
        text += f"; expected {expected}"
    if suggestion:
        text += f" (did you mean {suggestion!r}?)"
    return text


def one_of(names: Iterable[str]) -> str:
    """'one of a, b, c' for a short list; long lists (reward weights) are summarised instead of dumped."""
    ordered = sorted(names)
    if len(ordered) <= 16:
        return "one of " + ", ".join(ordered)
    return f"one of {len(ordered)} names ({', '.join(ordered[:4])}, ...)"


def describe(value: object) -> str:
    """`value` as the user wrote it, in YAML terms: ``'high' (a string)``, ``null``, ``[1, 2] (a list)``."""
    if value is None:
        return "null"
    kinds = {bool: "true/false", int: "an integer", float: "a number", str: "a string", list: "a list",
             dict: "a mapping"}  # fmt: skip
    kind = kinds.get(type(value), type(value).__name__)
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{text} ({kind})"


# ---------------------------------------------------------------------------------------------------------
# Field types shared by the layers' configs
# ---------------------------------------------------------------------------------------------------------


def expect(expected: str) -> WrapValidator:
    """Word any failure of the type it annotates as ``got <value>; expected <expected>``, for a type whose
    constraints read better as one phrase ("a positive integer or null") than as pydantic's parts."""

    def wrap(value: Any, handler: Callable[[Any], Any]) -> Any:
        try:
            return handler(value)
        except ValidationError:
            raise Invalid(f"got {describe(value)}", expected) from None

    return WrapValidator(wrap)


def choice(names: Sequence[str], what: str = "") -> WrapValidator:
    """The check of a field that takes one of `names`: a typo gets the closest one."""

    def wrap(value: Any, handler: Callable[[Any], Any]) -> Any:
        if value not in names:
            problem = f"invalid {what} {value!r}" if what else f"got {describe(value)}"
            raise Invalid(problem, one_of(names), suggestion=closest(value, names))
        return handler(value)

    return WrapValidator(wrap)


Flag = Annotated[bool, Strict()]
"""true or false, nothing YAML might mean by it (``yes`` is a string here)."""
Number = Annotated[float, Strict(), expect("a number")]
"""Any finite number (the models refuse infinities and NaN); no bool, no string."""
PositiveNumber = Annotated[float, Strict(), Field(gt=0), expect("a positive number")]
Probability = Annotated[float, Strict(), Field(ge=0, le=1), expect("a probability in [0, 1]")]
PositiveCount = Annotated[int, Strict(), Field(gt=0), expect("a positive integer")]
"""An integer ≥ 1; a YAML ``true`` is not one."""
Count = Annotated[int, Strict(), Field(ge=0), expect("a non-negative integer")]
"""An integer ≥ 0; a YAML ``true`` is not one."""


def is_number(value: Any) -> bool:
    """An int or float that is not a bool (for checks written by hand, such as a schedule's pairs)."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def positive_count_or_null(meaning: str) -> Any:
    """A positive integer, or null meaning `meaning` ("no limit")."""
    return Annotated[Annotated[int, Strict(), Field(gt=0)] | None, expect(f"a positive integer or null ({meaning})")]


class SetFields(Mapping[str, Any]):
    """The fields of a config model that a config sets, each checked by the model's own field types, and
    nothing else: a subclass names the model (`config_model`).

    Why not the model itself: a training config's ``env.params`` and ``env.reward_weights`` are dumped into the
    experiment's ``config.yml`` as the user set them, and resumed from it, so the keys left unset must stay
    unset (the simulator's defaults apply); the model instance is kept beside them (`model`).
    """

    __slots__ = ("_instance", "_values")
    config_model: ClassVar[Any]
    """The pydantic dataclass whose fields these are."""
    aliases: ClassVar[Mapping[str, str]] = {}
    """Other spellings of a field's name (the spec's camelCase ones), read as the field."""
    hidden: ClassVar[frozenset[str]] = frozenset()
    """Fields a config cannot set (not part of the model's configuration)."""

    def __init__(self, values: Mapping[str, Any] | None = None, instance: Any = None) -> None:
        self._values = dict(values or {})
        self._instance = instance

    @property
    def model(self) -> Any:
        """The model built from these fields, every other field at its default."""
        if self._instance is None:
            self._instance = self.config_model(**self._values)
        return self._instance

    def __getitem__(self, key: str) -> Any:
        return self._values[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._values!r})"

    @classmethod
    def _validate(cls, raw: Any) -> SetFields:
        if isinstance(raw, cls):
            return raw
        if not isinstance(raw, Mapping):
            raise Invalid(f"got {describe(raw)}", "a mapping")
        valid = [name for name in cls.config_model.__pydantic_fields__ if name not in cls.hidden]
        values: dict[str, Any] = {}
        for key, value in raw.items():
            name = cls.aliases.get(key, key)
            if name not in valid:
                hint = closest(key, [*valid, *cls.aliases])
                raise Invalid("unknown key", one_of(valid), field=str(key), suggestion=hint)
            values[name] = value
        try:
            instance = cls.config_model(**values)
        except ValidationError as exc:  # the model's own problem, worded once, blamed on its field
            loc, message, _ = render(exc.errors(include_url=False)[0], cls.config_model)
            raise Invalid(message, field=".".join(loc) or None) from None
        # the values as the config wrote them (checked, under the fields' own names): readers compare them with
        # the YAML's words (`random_build_options` are build names, not enum members) and dump them back as set
        return cls(values, instance)

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        return core_schema.no_info_plain_validator_function(
            cls._validate,
            serialization=core_schema.plain_serializer_function_ser_schema(dict),
        )


# ---------------------------------------------------------------------------------------------------------
# The renderer
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
    "tuple_type": "a list",
    "model_type": "a mapping",
    "model_attributes_type": "a mapping",
    "dataclass_type": "a mapping",
    "dataclass_exact_type": "a mapping",
}
_EXPECTED_BOUND = {"greater_than": (">", "gt"), "greater_than_equal": ("≥", "ge"), "less_than": ("<", "lt"),
                   "less_than_equal": ("≤", "le")}  # fmt: skip
_UNKNOWN = ("extra_forbidden", "unexpected_keyword_argument")


def keys_of(model: Any) -> list[str]:
    """The keys a config model (a pydantic model or dataclass) accepts; a field left out of dumps is not one."""
    fields = getattr(model, "__pydantic_fields__", None)
    if fields is None:
        return []
    return [name for name, field in fields.items() if not field.exclude]


def model_at(root: Any, loc: Sequence[Any]) -> Any:
    """The model or dataclass at `loc` below `root`, following field annotations; None where none is."""
    model = root
    for part in loc:
        fields = getattr(model, "__pydantic_fields__", None)
        field = fields.get(str(part)) if fields is not None else None
        model = getattr(field, "annotation", None)
        if model is None:
            return None
    return model


def render(err: ErrorDetails, root: Any) -> tuple[KeyPath, str, list[KeyPath]]:
    """One validation problem as ``(key path, message, related key paths)``; `root` is the validated model,
    whose field annotations name the valid keys of an unknown one."""
    loc = tuple(str(p) for p in err["loc"])
    kind, ctx, value = err["type"], err.get("ctx") or {}, err.get("input")
    related: list[KeyPath] = []
    if loc and loc[-1] == "[key]":  # a mapping key of the wrong type, e.g. `1:` where a name goes
        loc = loc[:-1]
        message = compose(f"the key {describe(value)} is not a name", "a string key", None)
    elif isinstance(problem := ctx.get("error"), Invalid):  # a validator's own check
        related = [(*loc, *r.split(".")) for r in problem.related]
        if problem.field:
            loc = (*loc, *problem.field.split("."))
        message = str(problem)
    elif kind in _UNKNOWN:
        valid = keys_of(model_at(root, loc[:-1]))
        message = compose("unknown key", one_of(valid), closest(loc[-1], valid))
    elif kind in _EXPECTED_TYPE:
        message = compose(f"got {describe(value)}", _EXPECTED_TYPE[kind], None)
    elif kind in _EXPECTED_BOUND:
        sign, bound = _EXPECTED_BOUND[kind]
        message = compose(f"got {value!r}", f"a value {sign} {ctx[bound]}", None)
    elif kind == "value_error" and isinstance(ctx.get("error"), KeyedError):  # a keyed error raised inside
        loc, message = (*loc[:-1], *ctx["error"].key.split(".")), ctx["error"].detail
    elif kind == "value_error" and "error" in ctx:
        message = str(ctx["error"])
    else:
        message = f"{err['msg']} (got {describe(value)})"
    return loc, message, related


# ---------------------------------------------------------------------------------------------------------
# The layers' keyed error
# ---------------------------------------------------------------------------------------------------------


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


def problem_with(value: Any, kind: Any) -> str | None:
    """What is wrong with `value` as a `kind` (a type above, e.g. `PositiveNumber`), worded by `render`; None
    when nothing is. For a single setting outside any config model, such as a command's option checked by the
    library: ``--minutes: got -1 (an integer); expected a positive number``."""
    try:
        TypeAdapter(kind, config=ConfigDict(allow_inf_nan=False)).validate_python(value)  # as every config model
    except ValidationError as exc:
        return render(exc.errors(include_url=False)[0], None)[1]
    return None


def from_mapping(cls: type[T], values: Mapping[str, Any] | None, error_type: type[E]) -> T:
    """`cls(**values)` with the first problem as one `error_type`, worded by `render`."""
    values = dict(values or {})
    names = [f.name for f in dataclasses.fields(cls)]  # type: ignore[arg-type]
    for key in values:
        if key not in names:
            raise error_type(str(key), compose("unknown key", one_of(names), closest(key, names)))
    try:
        return cls(**values)
    except ValidationError as exc:
        loc, message, _ = render(exc.errors(include_url=False)[0], cls)
        raise error_type(".".join(loc) or "value", message) from None


__all__ = [
    "IN_PARENS",
    "Count",
    "Flag",
    "Invalid",
    "KeyedError",
    "Number",
    "PositiveCount",
    "PositiveNumber",
    "Probability",
    "SetFields",
    "choice",
    "compose",
    "describe",
    "did_you_mean",
    "expect",
    "from_mapping",
    "is_number",
    "keys_of",
    "model_at",
    "one_of",
    "positive_count_or_null",
    "problem_with",
    "render",
]
