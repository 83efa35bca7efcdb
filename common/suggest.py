"""The one "did you mean" helper: every error about an unknown name suggests the closest valid one.

It sits in `common/` so that the simulator, the league, the network config, the serving protocol and the
application's config schema all phrase a typo the same way, with the same closeness cutoff.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = ["IN_PARENS", "closest", "closest_names", "did_you_mean"]

IN_PARENS = " (did you mean {!r}?)"
"""The `did_you_mean` template of config errors, whose message goes on after the hint."""


def closest_names(word: object, choices: Iterable[str], n: int = 1, cutoff: float = 0.6) -> list[str]:
    """Up to `n` valid names most like `word` (difflib ratio ≥ `cutoff`), the closest first."""
    return difflib.get_close_matches(str(word), list(choices), n=n, cutoff=cutoff)


def closest(word: object, choices: Iterable[str], cutoff: float = 0.6) -> str | None:
    """The valid name most like `word`, or None when nothing is close."""
    close = closest_names(word, choices, 1, cutoff)
    return close[0] if close else None


def did_you_mean(word: object, choices: Iterable[str], template: str = "; did you mean {!r}?") -> str:
    """The hint to append to an error (`template` holds the suggestion), or ``""`` when nothing is close.

    The separator differs by caller (``"; did you mean 'x'?"`` in data errors, ``" (did you mean 'x'?)"``
    in config errors): each keeps the wording its tests and users already know.
    """
    match = closest(word, choices)
    return template.format(match) if match is not None else ""
