"""Reset parameters and episode inputs (spec §13.1), validated with errors that list the valid choices.

`FightParams` is a frozen pydantic dataclass: building one checks every field with the same coercion that
`from_options` applies (names or members for enums, lists for tuples). `from_options` runs once per
episode reset, so it coerces only the options it is given and copies the validated base without a second
pass (`_with`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import field, fields
from typing import Any

from pydantic import ConfigDict, ValidationInfo, field_validator
from pydantic.dataclasses import dataclass

from common.suggest import did_you_mean
from envs.nh.loadouts import Build
from envs.nh.state import FightMode

DEFAULT_MAX_EPISODE_TICKS = 2000  # §13.1, §16.4
OPPONENT_BASELINE = "baseline"
OPPONENT_AGENT = "agent"


class ParamError(ValueError):
    """A reset option is unknown or has an invalid value; the message lists the valid choices.

    `key` names the option as given, when one option is to blame (the config schema points at it).
    """

    def __init__(self, message: str, key: str | None = None) -> None:
        super().__init__(message)
        self.key = key


@dataclass(frozen=True, slots=True, config=ConfigDict(extra="forbid"))
class FightParams:
    """Everything that defines a fight besides the seed (spec §13.1).

    Names are snake_case; the spec's camelCase names are accepted as aliases by `from_options`.
    """

    account_build: Build = Build.PURE
    """Build when `randomize_build` is off."""
    randomize_build: bool = False
    """Choose the build from `random_build_options`: by the player identifiers when any is given (§12.7, the
    reference's rule), else one seeded draw per episode (the project decision of §12.7)."""
    random_build_options: tuple[Build, ...] = (Build.PURE, Build.ZERKER, Build.MED)
    """Candidate builds for `randomize_build`."""
    random_build_weights: tuple[float, ...] | None = None
    """Relative weights of `random_build_options` for the per-episode draw; None = uniform."""
    randomize_gear: bool = False
    """Apply the gear randomisation of §12.6."""
    randomize_fight_type: bool = False
    """Draw the fight mode uniformly from NORMAL, LMS, PVP_ARENA (§13.1)."""
    fight_type: FightMode | None = None
    """Fight mode of both players; None keeps the build's mode (§12.1)."""
    only_switch_prayer_when_about_to_attack: bool = True
    """Mask protection prayers unless the opponent's attack is about to come (§14.3)."""
    only_switch_gear_when_attack_soon: bool = True
    """Mask attacks unless the agent's own attack timer is ready (§14.3)."""
    allow_smite: bool = True
    """If false Smite is always masked."""
    allow_redemption: bool = True
    """If false Redemption is always masked."""
    allow_moving_if_can_attack: bool = False
    """If false, movement is masked while the agent's attack is ready (§14.3)."""
    agent: str = ""
    """Identifier of player 0 (build choice, §12.7)."""
    target: str = ""
    """Identifier of player 1 (build choice, §12.7)."""
    episode_id: str = ""
    """Reported back in the info; no effect on the fight (§16.6)."""
    opponent: str = OPPONENT_BASELINE
    """`baseline` (the scripted bot of §18 plays player 1) or `agent` (player 1 is acted for)."""
    training: bool = False
    """Random spawn positions (§16.2)."""
    death_match: bool = True
    """If false a fight also ends TIED when a player has no food left (§16.3)."""
    max_episode_ticks: int = DEFAULT_MAX_EPISODE_TICKS
    """Truncation limit in ticks (§16.4); 0 disables it."""
    include_opponent_observation: bool = False
    """Also return the opponent's own observation for the critic (§15.3)."""
    first_player_baseline: bool = False
    """Tools only: player 0 is a scripted baseline too (baseline-vs-baseline fights and benchmarks).
    The spec's player 0 is always an agent; two baselines stay idle until one is hit (§18.2)."""
    extra: Mapping[str, Any] = field(default_factory=dict)
    """Not part of the simulator: options consumed by wrappers (e.g. the scripted opponent's name)."""

    @field_validator("*", mode="before")
    @classmethod
    def _check(cls, value: Any, info: ValidationInfo) -> Any:
        return value if info.field_name == "extra" else _coerce(str(info.field_name), value)

    def __post_init__(self) -> None:
        _check_weights(self)

    @classmethod
    def from_options(cls, options: Mapping[str, Any] | None, base: FightParams | None = None) -> FightParams:
        """Validate reset options on top of `base` (spec §13.1: unknown names and values are errors)."""
        params = base or cls()
        if not options:
            return params
        changes: dict[str, Any] = {}
        for key, value in options.items():
            name = option_name(key)
            try:
                changes[name] = _coerce(name, value)
            except ParamError as exc:
                raise ParamError(str(exc), key) from None
        return _check_weights(_with(params, changes))


def _with(params: FightParams, changes: Mapping[str, Any]) -> FightParams:
    """`params` with `changes`, each already coerced by `_coerce`: a copy, not a second validation pass."""
    out = object.__new__(FightParams)  # slots: faster than copy.copy (2.7 µs against 6 µs here)
    for name in _FIELDS:
        object.__setattr__(out, name, changes[name] if name in changes else getattr(params, name))
    return out


def _check_weights(params: FightParams) -> FightParams:
    """One draw weight per candidate build (the pair is checked together, whichever was set last)."""
    weights = params.random_build_weights
    if weights is not None and len(weights) != len(params.random_build_options):
        raise ParamError(
            f"random_build_weights has {len(weights)} entries for {len(params.random_build_options)} "
            f"random_build_options {[b.name for b in params.random_build_options]}; give one weight per build",
            "random_build_weights",
        )
    return params


_FIELDS = {f.name for f in fields(FightParams)}


def _camel(name: str) -> str:
    """``max_episode_ticks`` → ``maxEpisodeTicks``: the reference's spelling of a §13.1 option."""
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


_ALIASES = {
    **{_camel(name): name for name in _FIELDS - {"extra", "first_player_baseline"} if "_" in name},
    "build": "account_build",
    "fight_mode": "fight_type",
}
"""The spec's camelCase names of §13.1 and two short forms; the tools-only switch keeps its one name."""


def option_name(key: str) -> str:
    """The `FightParams` field a reset option sets (``allowSmite`` and ``allow_smite`` both set ``allow_smite``),
    so that callers which treat some options apart (the fight rules, `policies/fight_rules.py`) see every
    spelling of one option as the same option.

    Raises:
        ParamError: `key` is no reset option; the message lists the valid ones.
    """
    name = _ALIASES.get(key, key)
    if name not in _FIELDS or name == "extra":
        hint = did_you_mean(key, sorted((_FIELDS - {"extra"}) | set(_ALIASES)))
        raise ParamError(f"unknown reset option {key!r}{hint} Valid options: {sorted(_FIELDS - {'extra'})}", key)
    return name


def _enum_value(enum: type, value: Any, what: str) -> Any:
    if isinstance(value, enum):
        return value
    valid = [m.name for m in enum]  # type: ignore[attr-defined]
    if isinstance(value, str) and value.upper() in valid:
        return enum[value.upper()]  # type: ignore[index]
    raise ParamError(f"invalid {what} {value!r}; valid choices: {valid}")


def _weights(value: Any) -> tuple[float, ...]:
    """Relative draw weights: finite, non-negative, not all zero (an all-zero list could never draw)."""
    if isinstance(value, str) or not hasattr(value, "__iter__"):
        raise ParamError(f"random_build_weights must be a list of numbers, got {value!r}")
    out = []
    for w in value:
        if isinstance(w, bool) or not isinstance(w, int | float) or not math.isfinite(w) or w < 0:
            raise ParamError(f"random_build_weights entries must be finite numbers ≥ 0, got {w!r}")
        out.append(float(w))
    if not any(out):
        raise ParamError("random_build_weights must not all be 0")
    return tuple(out)


def _coerce(name: str, value: Any) -> Any:
    if name == "account_build":
        return _enum_value(Build, value, "build")
    if name == "random_build_options":
        if isinstance(value, str) or not hasattr(value, "__iter__"):
            raise ParamError(f"random_build_options must be a list of builds, got {value!r}")
        builds = tuple(_enum_value(Build, v, "build") for v in value)
        if not builds:
            raise ParamError("random_build_options must name at least one build")
        return builds
    if name == "random_build_weights":
        return None if value is None else _weights(value)
    if name == "fight_type":
        return None if value is None else _enum_value(FightMode, value, "fight type")
    if name == "opponent":
        if value not in (OPPONENT_BASELINE, OPPONENT_AGENT):
            raise ParamError(f"invalid simulator opponent {value!r}; valid choices: ['baseline', 'agent']")
        return value
    if name == "max_episode_ticks":
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ParamError(f"max_episode_ticks must be an integer ≥ 0 (0 = no limit), got {value!r}")
        return value
    if name in ("agent", "target", "episode_id"):
        return str(value)
    if not isinstance(value, bool):
        raise ParamError(f"{name} must be true or false, got {value!r}")
    return value
