"""Every scripted opponent by name, in the order measured by `osrs-rllib rate` (docs/strength.md).

The hand-written rungs of `envs.opponents.ladder` and the graded NH levels of `envs.opponents.nh_ladder`
form one ladder. Its order is not asserted but measured: a round robin of every rung and the in-simulator
baseline (at least 100 fights per pair, every build) rates them in this order, and
`tests/envs/test_graded_ladder.py` keeps checking it.
"""

from __future__ import annotations

from collections.abc import Callable

from envs.opponents.ladder import NoOp, PrayerSwitcher, RandomLegal, ScriptedPolicy, StayAlive, Tribrid
from envs.opponents.nh_ladder import LEVELS_BY_NAME, GradedNH


def _level(name: str) -> Callable[[], ScriptedPolicy]:
    skill = LEVELS_BY_NAME[name]
    return lambda: GradedNH(skill)


_FACTORIES: dict[str, Callable[[], ScriptedPolicy]] = {
    NoOp.name: NoOp,
    RandomLegal.name: RandomLegal,
    StayAlive.name: StayAlive,
    PrayerSwitcher.name: PrayerSwitcher,
    Tribrid.name: Tribrid,
    **{name: _level(name) for name in LEVELS_BY_NAME},
}

MEASURED_ORDER: tuple[str, ...] = (
    "noop",
    "random",
    "stay_alive",
    "novice",
    "prayer_switcher",
    "apprentice",
    "tribrid",
    "adept",
    "veteran",
    "expert",
    "prescient",
)
"""Weakest to strongest, as rated by `osrs-rllib rate` (openskill mu; 100 fights per pair over every build,
docs/strength.md has the table). The baseline, not a rung, rates between ``prayer_switcher`` and
``apprentice``."""

LADDER: dict[str, Callable[[], ScriptedPolicy]] = {name: _FACTORIES[name] for name in MEASURED_ORDER}
"""Scripted opponents by name, weakest to strongest by measurement."""
if set(LADDER) != set(_FACTORIES):
    raise ValueError(f"MEASURED_ORDER must list every scripted opponent once: {sorted(set(_FACTORIES) ^ set(LADDER))}")

PRESCIENT: frozenset[str] = frozenset(name for name, skill in LEVELS_BY_NAME.items() if skill.prescient)
"""Rungs that must be shown the opponent's action of the tick: upper bounds, not honest players."""


def needs_opponent_action(name: str) -> bool:
    """Whether the rung `name` can only be hosted where the other seat's action is known first."""
    return name in PRESCIENT


def make_opponent(name: str, seed: int | None = None) -> ScriptedPolicy:
    """Build the ladder opponent `name` and reset it with `seed`.

    Raises:
        ValueError: `name` is not in `LADDER` (the message lists the valid names).
    """
    try:
        factory = LADDER[name]
    except KeyError:
        raise ValueError(
            f"unknown scripted opponent {name!r}; valid names, weakest to strongest (measured): {', '.join(LADDER)}"
        ) from None
    policy = factory()
    policy.reset(seed)
    return policy
