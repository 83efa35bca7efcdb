"""Every training-config problem as one line: `ConfigError` and the renderer that words pydantic's errors.

Why a module of its own: the schema (`osrs_rllib/config.py`), its field types (`osrs_rllib/config_types.py`)
and the file loader (`osrs_rllib/config_files.py`) all raise or word these errors, and one renderer keeps a
problem's key, file, what was expected and what was given in the same order wherever it was found.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from pydantic import ValidationError

from common.suggest import closest as _closest
from common.validation import KeyedError

KeyPath = tuple[str, ...]
Blame = Callable[[KeyPath, Sequence[KeyPath]], str]
"""Where the key at a path came from (a file or ``--set``), given the other keys of a cross-field check."""

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


def _section_keys(root: type[Any], loc: Sequence[Any]) -> list[str]:
    """The valid keys of the model or pydantic dataclass at `loc` (section names below `root`, the
    `TrainConfig`); a field left out of the dump (the league's own mix) is not one."""
    model: Any = root
    for part in loc:
        field = model.__pydantic_fields__.get(str(part))
        model = field.annotation if field is not None else None
        if not hasattr(model, "__pydantic_fields__"):
            return []
    return [name for name, field in model.__pydantic_fields__.items() if not field.exclude]


def _config_error(exc: ValidationError, root: type[Any], blame: Blame) -> ConfigError:
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
        valid = _section_keys(root, loc[:-1])
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
    return ConfigError(blame(loc, related), key, message)
