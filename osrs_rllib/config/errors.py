"""Every training-config problem as one line: `ConfigError`, the layers' renderer plus the file to blame.

Why a module of its own: the schema (`osrs_rllib/config/schema.py`), its field types (`osrs_rllib/config/types.py`)
and the file loader (`osrs_rllib/config/files.py`) all raise or word these errors. The wording itself is
`common.validation.render`, the one every layer's config uses; what the application adds is the file (or
``--set``) that wrote the offending key, so a problem reads ``<file>: <key>: <got>; expected <what>``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pydantic import ValidationError

from common.validation import KeyPath, render

__all__ = ["Blame", "ConfigError", "config_error"]

Blame = Callable[[KeyPath, Sequence[KeyPath]], str]
"""Where the key at a path came from (a file or ``--set``), given the other keys of a cross-field check."""


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


def config_error(exc: ValidationError, root: type[Any], blame: Blame) -> ConfigError:
    """The first validation problem as a one-line `ConfigError` blaming the key's own file."""
    loc, message, related = render(exc.errors(include_url=False)[0], root)
    return ConfigError(blame(loc, related), ".".join(loc) or None, message)
