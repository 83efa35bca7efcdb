"""Settings of the league, as one frozen dataclass (mirrors `policies/network_config.py`).

It imports no Ray, so the application's config schema can describe the ``league`` section cheaply; the
kind names and PFSP weightings it validates against come from `league.sampling`.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, ClassVar

from league.players import SCRIPTED_PREFIX, TARGET_PREFIX
from league.sampling import CURRENT_MAIN, OPPONENT_KINDS, PFSP, PFSP_WEIGHTINGS, PRIORITIZED, SELF_PLAY

DEFAULT_OPPONENT_MIX: Mapping[str, float] = MappingProxyType({SELF_PLAY: 0.5, PRIORITIZED: 0.3, PFSP: 0.2})
"""Main's default mix: half pure self-play (OpenAI Five used 80 %), the rest spread over past selves."""
MAIN_MIX_KINDS: tuple[str, ...] = tuple(k for k in OPPONENT_KINDS if k != CURRENT_MAIN)
"""Kinds main's mix may use (``main`` would be self-play again)."""


class LeagueConfigError(ValueError):
    """A league setting is unknown or invalid; `key` names it."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(f"{key}: {message}")
        self.key = key
        self.detail = message


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _closest_hint(key: str, names: list[str] | tuple[str, ...]) -> str:
    close = difflib.get_close_matches(str(key), list(names), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _check_mix(values: Any) -> Mapping[str, float]:
    """Check every key and share of the mix; returns a read-only copy with float shares."""
    if isinstance(values, Mapping):
        items = list(values.items())
    elif isinstance(values, list | tuple) and all(isinstance(x, list | tuple) and len(x) == 2 for x in values):
        items = [tuple(x) for x in values]
    else:
        raise LeagueConfigError("opponent_mix", f"expected a mapping of kind to share, got {values!r}")
    for kind, share in items:
        fixed_id = isinstance(kind, str) and kind.startswith((SCRIPTED_PREFIX, TARGET_PREFIX))
        if kind not in MAIN_MIX_KINDS and not fixed_id:
            raise LeagueConfigError(
                f"opponent_mix.{kind}",
                f"unknown opponent kind{_closest_hint(str(kind), MAIN_MIX_KINDS)}; valid kinds: "
                f"{list(MAIN_MIX_KINDS)} or a fixed player id ('scripted_<name>', 'target_<slug>')",
            )
        if not _is_number(share) or share < 0:
            raise LeagueConfigError(f"opponent_mix.{kind}", f"expected a share ≥ 0, got {share!r}")
    if not any(share > 0 for _, share in items):
        raise LeagueConfigError("opponent_mix", f"every share is zero ({dict(items)}); give one kind a share > 0")
    return MappingProxyType({str(k): float(v) for k, v in items})


@dataclass(frozen=True)
class LeagueConfig:
    """How the league grows, whom the learners play, and how results are rated (see `docs/league.md`)."""

    __pydantic_config__: ClassVar[dict[str, Any]] = {"extra": "forbid"}

    snapshot_interval: int = 10
    """Training iterations between two snapshots of main (its first one is taken at this iteration)."""
    opponent_mix: Mapping[str, float] = field(default_factory=lambda: DEFAULT_OPPONENT_MIX, hash=False)
    """Main's opponent mix, kind → share (normalised; read-only). Kinds: `OPPONENT_KINDS` except ``main``, or
    one fixed player id; a kind with nobody to offer yet is skipped."""
    eta: float = 0.01
    """Quality learning rate η of prioritized past-self sampling (OpenAI Five)."""
    pfsp_weighting: str = "hard"
    """PFSP weighting: ``hard`` (1−x)^p, ``var`` x(1−x), ``linear`` 1−x or ``linear_capped`` min(½, 1−x)."""
    pfsp_p: float = 2.0
    """Exponent p of the ``hard`` weighting (2 is AlphaStar's ``squared``)."""
    payoff_decay: float = 0.99
    """Decay applied to a pair's counts before each new game of the pair (1 = plain average)."""
    main_exploiters: int = 0
    """Number of main exploiters (they play only main)."""
    league_exploiters: int = 0
    """Number of league exploiters (they play PFSP over every snapshot)."""
    exploiter_win_threshold: float = 0.7
    """An exploiter is checkpointed when its mean score over its recent games is above this share."""
    exploiter_min_games: int = 100
    """Length of that window of recent games; no win-rate decision before it is full."""
    exploiter_step_budget: int | None = 5_000_000
    """Env steps after which an exploiter is checkpointed whatever its win rate (null: never)."""
    league_exploiter_reset_probability: float = 0.25
    """Chance that a league exploiter is reset to main's weights after a checkpoint (main exploiters: always)."""
    elo_k: float = 32.0
    """Elo K factor."""
    elo_start: float = 1500.0
    """Elo of a new player (snapshots start at their source's rating instead)."""
    max_snapshots: int | None = None
    """Cap on frozen snapshots (null: no cap); over it, the lowest-quality snapshot of the learner with the
    most snapshots is evicted, the oldest among equal qualities."""
    seed: int = 0
    """Seed of the league's own generator (the league-exploiter reset draws)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "opponent_mix", _check_mix(self.opponent_mix))
        for key in ("snapshot_interval", "exploiter_min_games"):
            if not _is_int(getattr(self, key)) or getattr(self, key) < 1:
                raise LeagueConfigError(key, f"expected a positive integer, got {getattr(self, key)!r}")
        for key in ("main_exploiters", "league_exploiters", "seed"):
            if not _is_int(getattr(self, key)) or getattr(self, key) < 0:
                raise LeagueConfigError(key, f"expected a non-negative integer, got {getattr(self, key)!r}")
        for key in ("exploiter_step_budget", "max_snapshots"):
            value = getattr(self, key)
            if value is not None and (not _is_int(value) or value < 1):
                raise LeagueConfigError(key, f"expected a positive integer or null (no limit), got {value!r}")
        if not _is_number(self.eta) or self.eta <= 0:
            raise LeagueConfigError("eta", f"expected a positive number, got {self.eta!r}")
        if self.pfsp_weighting not in PFSP_WEIGHTINGS:
            raise LeagueConfigError(
                "pfsp_weighting",
                f"expected one of {list(PFSP_WEIGHTINGS)}, got {self.pfsp_weighting!r}"
                f"{_closest_hint(str(self.pfsp_weighting), list(PFSP_WEIGHTINGS))}",
            )
        if not _is_number(self.pfsp_p) or self.pfsp_p <= 0:
            raise LeagueConfigError("pfsp_p", f"expected a positive number, got {self.pfsp_p!r}")
        if not _is_number(self.payoff_decay) or not 0 < self.payoff_decay <= 1:
            raise LeagueConfigError("payoff_decay", f"expected a number in (0, 1], got {self.payoff_decay!r}")
        for key in ("exploiter_win_threshold", "league_exploiter_reset_probability"):
            value = getattr(self, key)
            if not _is_number(value) or not 0 <= value <= 1:
                raise LeagueConfigError(key, f"expected a probability in [0, 1], got {value!r}")
        if not _is_number(self.elo_k) or self.elo_k <= 0:
            raise LeagueConfigError("elo_k", f"expected a positive number, got {self.elo_k!r}")
        if not _is_number(self.elo_start):
            raise LeagueConfigError("elo_start", f"expected a number, got {self.elo_start!r}")

    @property
    def mix(self) -> dict[str, float]:
        """`opponent_mix` as a mapping."""
        return dict(self.opponent_mix)

    @classmethod
    def from_dict(cls, values: Mapping[str, Any] | None) -> LeagueConfig:
        """Build from a plain mapping (YAML, a checkpoint); unknown keys name the closest valid one."""
        values = dict(values or {})
        names = [f.name for f in dataclasses.fields(cls)]
        for key in values:
            if key not in names:
                raise LeagueConfigError(
                    str(key), f"unknown league option{_closest_hint(str(key), names)}; valid options: {names}"
                )
        return cls(**values)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready mapping (the mix as a mapping); `from_dict(to_dict())` round-trips."""
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        out["opponent_mix"] = self.mix
        return out
