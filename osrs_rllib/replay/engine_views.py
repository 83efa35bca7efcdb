"""What the fight tools read of a fight after a tick, the same on both engines.

The analysis API (`osrs_rllib.analysis.fights`) reads each player's visible state and the hits of the tick.
On the Python engine those are the simulator's own objects (`engine.sim.players`, `engine.sim.events`); on the
compiled core they are read from `CoreEngine.player_state(i)` and `CoreEngine.events(i)` (plain dicts) into
small views that carry the attributes the readers use, under the Python names (`hp`, `level`,
`inventory_facts()`, `loadout.sets`, `hits[k].hit.style`, ...). So the readers stay one piece of code, the
Python engine's, and give the same figures on both engines by construction; the tests compare them fight by
fight.

A view is a snapshot: read it after the tick it describes, not later.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from envs.nh.core_engine import AnyEngine, CoreEngine
from envs.nh.items import CombatStyle
from envs.nh.loadouts import GearSet
from envs.nh.prayers import Prayer
from envs.nh.state import SK_HITPOINTS, InventoryFacts, inventory_facts

_GEAR_SETS = list(GearSet)
"""The core numbers gear sets by their `GearSet` position (`tests/envs/core_snapshots.py`)."""
_STYLES = list(CombatStyle)


class PlayerLike(Protocol):
    """The attributes of `envs.nh.state.PlayerState` that the fight tools read."""

    level: list[int]
    base: list[int]
    equipment: list[int]
    inventory: list[int]
    prayers: set[Prayer]
    special_energy: int
    special_armed: bool
    vengeance: bool
    timer_ticks: list[int]
    hitsplats: list[int]
    x: int
    y: int

    @property
    def hp(self) -> int: ...

    def inventory_facts(self) -> InventoryFacts: ...


@dataclass(frozen=True, slots=True)
class _LoadoutView:
    sets: Mapping[GearSet, tuple[int, ...]]


@dataclass(slots=True)
class CorePlayerView:
    """One player of a core fight after a tick, under `PlayerState`'s attribute names (those the tools read)."""

    index: int
    loadout: _LoadoutView
    base: list[int]
    level: list[int]
    equipment: list[int]
    inventory: list[int]
    prayers: set[Prayer]
    special_energy: int
    special_armed: bool
    vengeance: bool
    timer_ticks: list[int]
    hitsplats: list[int]
    x: int
    y: int
    run_energy: int
    poison_damage: int
    target: int | None
    """The target's player index (the Python engine holds the player itself; the tools ask only whether set)."""

    @property
    def hp(self) -> int:
        return self.level[SK_HITPOINTS]

    @property
    def base_hp(self) -> int:
        return self.base[SK_HITPOINTS]

    def inventory_facts(self) -> InventoryFacts:
        return inventory_facts(self.inventory)

    @classmethod
    def from_core(cls, state: Mapping[str, Any]) -> CorePlayerView:
        """From `CoreEngine.player_state(i)` (plain values: enums as numbers, references as player indices)."""
        sets = {gs: tuple(ids) for gs, ids in zip(_GEAR_SETS, state["loadout"]["sets"], strict=True)}
        return cls(
            index=int(state["index"]),
            loadout=_LoadoutView(sets),
            base=list(state["base"]),
            level=list(state["level"]),
            equipment=list(state["equipment"]),
            inventory=list(state["inventory"]),
            prayers={Prayer(p) for p in state["prayers"]},
            special_energy=int(state["special_energy"]),
            special_armed=bool(state["special_armed"]),
            vengeance=bool(state["vengeance"]),
            timer_ticks=list(state["timer_ticks"]),
            hitsplats=list(state["hitsplats"]),
            x=int(state["x"]),
            y=int(state["y"]),
            run_energy=int(state["run_energy"]),
            poison_damage=int(state["poison_damage"]),
            target=state["target"],
        )


@dataclass(frozen=True, slots=True)
class HitView:
    """A created hit's rolls as the tools read them (`envs.nh.state.PendingHit`'s names)."""

    style: CombatStyle
    damages: tuple[int, ...]
    accurate: bool

    @property
    def total(self) -> int:
        return sum(self.damages)


@dataclass(frozen=True, slots=True)
class HitRecordView:
    """One hit a player created this tick (`envs.nh.stats.HitRecord`'s names): the hit and the defender's
    overhead protection when it was created (None without one)."""

    hit: HitView
    defender_protection: CombatStyle | None
    attack_speed: int
    smite: bool


@dataclass(frozen=True, slots=True)
class CoreEventsView:
    """What one player did this tick on a core fight (`envs.nh.stats.TickEvents`' names)."""

    hits: tuple[HitRecordView, ...]
    extra_damage_dealt: int
    healed: int
    eat_at_hp: int | None
    wasted_food: int
    wasted_brew: int

    @classmethod
    def from_core(cls, events: Mapping[str, Any]) -> CoreEventsView:
        """From `CoreEngine.events(i)` (styles as numbers)."""
        hits = tuple(
            HitRecordView(
                HitView(_STYLES[r["style"]], tuple(r["damages"]), bool(r["accurate"])),
                None if r["defender_protection"] is None else _STYLES[r["defender_protection"]],
                int(r["attack_speed"]),
                bool(r["smite"]),
            )
            for r in events["hits"]
        )
        return cls(
            hits,
            int(events["extra_damage_dealt"]),
            int(events["healed"]),
            events["eat_at_hp"],
            int(events["wasted_food"]),
            int(events["wasted_brew"]),
        )


class EventsLike(Protocol):
    """The attributes of `envs.nh.stats.TickEvents` that the fight tools read."""

    wasted_food: int
    wasted_brew: int

    @property
    def hits(self) -> Sequence[Any]: ...


def players(engine: AnyEngine) -> tuple[PlayerLike, PlayerLike]:
    """Both players' state after the last tick (or the reset), from either engine."""
    if isinstance(engine, CoreEngine):
        return (CorePlayerView.from_core(engine.player_state(0)), CorePlayerView.from_core(engine.player_state(1)))
    p0, p1 = engine.sim.players
    return p0, p1


def events(engine: AnyEngine) -> tuple[EventsLike, EventsLike]:
    """Both players' events of the last tick (hits created, supplies wasted), from either engine."""
    if isinstance(engine, CoreEngine):
        return (CoreEventsView.from_core(engine.events(0)), CoreEventsView.from_core(engine.events(1)))
    e0, e1 = engine.sim.events
    return e0, e1
