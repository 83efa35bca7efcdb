"""Player and hit state of an NH fight (spec §2, §3).

A new episode is a new `PlayerState`: nothing is reset field by field, so nothing can leak from one
fight into the next (the reference's quirks 8, 10 and 22 were exactly such leaks).
"""

from __future__ import annotations

import functools
from collections import deque
from dataclasses import dataclass, field
from enum import IntEnum

# Re-exported for the many modules that import them from here; they are defined in `account` so that
# `loadouts` need not import this module.
from envs.nh.account import EMPTY as EMPTY
from envs.nh.account import INVENTORY_SIZE as INVENTORY_SIZE
from envs.nh.account import FightMode as FightMode
from envs.nh.account import Skill as Skill
from envs.nh.account import Spellbook as Spellbook
from envs.nh.items import (
    CONSUMABLES,
    ITEMS,
    NUM_BONUSES,
    CombatStyle,
    FightStyle,
    Ids,
    Item,
    PotionType,
    Slot,
)
from envs.nh.loadouts.loadout import Loadout
from envs.nh.prayers import Prayer
from envs.nh.spells import Spell


class TimerId(IntEnum):
    """Per-player timers (spec §3)."""

    ATTACK = 0
    FOOD = 1
    KARAMBWAN = 2
    POTION = 3
    FREEZE = 4
    FREEZE_IMMUNITY = 5
    VENGEANCE_COOLDOWN = 6
    STAT_CHANGE = 7


NUM_TIMERS = len(TimerId)
TIMER_NEVER_SET = -100
"""`uncapped` value of a timer that was never registered (spec §15.2 entry 43 uses −100)."""


# Plain-int names of the skill and timer indices, read by the C core's table generator (`NH_SK_*`, `NH_T_*`)
# and kept for callers outside the simulator; the simulator itself indexes with `Skill.X` and `TimerId.X`.
SK_ATTACK = int(Skill.ATTACK)
SK_STRENGTH = int(Skill.STRENGTH)
SK_DEFENCE = int(Skill.DEFENCE)
SK_HITPOINTS = int(Skill.HITPOINTS)
SK_RANGED = int(Skill.RANGED)
SK_MAGIC = int(Skill.MAGIC)
SK_PRAYER = int(Skill.PRAYER)
T_ATTACK = int(TimerId.ATTACK)
T_FOOD = int(TimerId.FOOD)
T_KARAMBWAN = int(TimerId.KARAMBWAN)
T_POTION = int(TimerId.POTION)
T_FREEZE = int(TimerId.FREEZE)
T_FREEZE_IMMUNITY = int(TimerId.FREEZE_IMMUNITY)
T_VENGEANCE_COOLDOWN = int(TimerId.VENGEANCE_COOLDOWN)
T_STAT_CHANGE = int(TimerId.STAT_CHANGE)


@dataclass(slots=True)
class PendingHit:
    """A hit in its victim's hit queue (spec §4.3, §4.5).

    Damage is fixed at creation (§6.5); `effect` names the after-hit effect of the combat method
    (Statius drain, Ancient-godsword sacrifice, Morrigan bleed), executed when the hit lands.
    """

    attacker: PlayerState
    damages: list[int]
    accurate: bool
    delay: int
    style: CombatStyle
    effect: str = ""

    @property
    def total(self) -> int:
        return sum(self.damages)


@dataclass(slots=True)
class PlayerState:
    """Everything the simulator tracks about one player (spec §2)."""

    index: int
    loadout: Loadout
    base: list[int]
    level: list[int]
    equipment: list[int]
    inventory: list[int]
    spellbook: Spellbook
    fight_mode: FightMode
    is_baseline: bool = False
    # derived from equipment (§10)
    bonuses: list[int] = field(default_factory=lambda: [0] * NUM_BONUSES)
    style: FightStyle | None = None
    # timers (§3): `ticks` never below 0, `uncapped` keeps falling; `TIMER_NEVER_SET` until registered
    timer_ticks: list[int] = field(default_factory=lambda: [0] * NUM_TIMERS)
    timer_uncapped: list[int] = field(default_factory=lambda: [TIMER_NEVER_SET] * NUM_TIMERS)
    # prayer (§7)
    prayers: set[Prayer] = field(default_factory=set)
    prayer_drain_acc: float = 0.0
    prayer_drain_running: bool = False
    # special attack (§6.9, §6.11)
    special_energy: int = 100
    special_armed: bool = False
    gmaul_queued: int = 0
    special_regen_running: bool = False
    vengeance: bool = False
    # combat (§6.1)
    target: PlayerState | None = None
    last_attacker: PlayerState | None = None
    last_hit_received_tick: int = -1
    selected_spell: Spell | None = None
    previous_spell: Spell | None = None
    auto_retaliate: bool = False
    hit_queue: list[PendingHit] = field(default_factory=list)
    damage_queue: list[int] = field(default_factory=list)
    hitsplats: list[int] = field(default_factory=list)
    # movement (§11)
    x: int = 0
    y: int = 0
    walk_queue: deque[tuple[int, int]] = field(default_factory=deque)
    moving: bool = False
    running: bool = True
    run_energy: int = 100
    last_run_recovery_tick: int = 0
    spawn: tuple[int, int] = (0, 0)
    # PID (§4.4)
    pid: float = 0.0
    pid_countdown: int = 0
    # poison (§6.10.5); 0 = not poisoned
    poison_damage: int = 0
    dying: bool = False
    # scripted baseline (§18.2): the player whose first hit started its fight rules, kept for the episode
    remembered_target: PlayerState | None = None

    def inventory_facts(self) -> InventoryFacts:
        """What masks, observations and signals read from the inventory (`inventory_facts`)."""
        return inventory_facts(self.inventory)

    # ---- timers --------------------------------------------------------------------------------
    def set_timer(self, timer: int, ticks: int) -> None:
        """Register a timer: both counters become `ticks` (spec §3)."""
        self.timer_ticks[timer] = ticks
        self.timer_uncapped[timer] = ticks

    def timer_active(self, timer: int) -> bool:
        return self.timer_ticks[timer] > 0

    def remaining(self, timer: int) -> int:
        """"Remaining ticks" as masks and observations see them: `max(ticks − 1, 0)` (spec §3)."""
        t = self.timer_ticks[timer]
        return t - 1 if t > 1 else 0

    def decrement_timers(self) -> None:
        """Once per tick at the start of the player's phase-A slot (spec §3, §4.1)."""
        self.timer_uncapped[:] = [u if u == TIMER_NEVER_SET else u - 1 for u in self.timer_uncapped]
        self.timer_ticks[:] = [t - 1 if t > 0 else t for t in self.timer_ticks]

    # ---- equipment views ------------------------------------------------------------------------
    @property
    def weapon(self) -> Item | None:
        wid = self.equipment[Slot.WEAPON]
        return ITEMS[wid] if wid != EMPTY else None

    @property
    def hp(self) -> int:
        return self.level[Skill.HITPOINTS]

    @property
    def base_hp(self) -> int:
        return self.base[Skill.HITPOINTS]

    def wears(self, item_id: int) -> bool:
        return item_id in self.equipment

    def free_inventory_slots(self) -> int:
        return self.inventory.count(EMPTY)

    def potion_doses(self, potion: PotionType) -> int:
        """Total doses of one potion family carried (spec §15.2 entries 22–25)."""
        return inventory_doses(tuple(self.inventory))[potion]


_MEMO_SIZE = 1 << 14
"""Entries kept by each memo below (a fight visits a handful of inventories)."""


@functools.lru_cache(maxsize=_MEMO_SIZE)
def inventory_doses(inventory: tuple[int, ...]) -> tuple[int, ...]:
    """Doses per potion family (indexed by `PotionType` value; index 0 unused), memoised by contents.

    Observations, masks and rewards all read these every tick; the inventory changes rarely.
    """
    doses = [0] * (len(PotionType) + 1)
    for iid in inventory:
        c = CONSUMABLES.get(iid)
        if c is not None and c.potion is not None:
            doses[c.potion] += c.doses
    return tuple(doses)


@dataclass(frozen=True, slots=True)
class InventoryFacts:
    """What observations, masks and signals read from an inventory, computed once per distinct content.

    The inventory changes only when something is eaten, drunk or (un)equipped, but all three readers
    need these numbers for both players every tick (spec §14.3, §15.2 entries 22–27 and 175, §17.1).
    """

    doses: tuple[int, ...]
    """Doses per potion family, indexed by `PotionType` value (index 0 unused)."""
    sharks: int
    karambwans: int
    anglerfish: int
    primary_food: int | None
    """First non-karambwan food in priority order, as `operations.primary_food` (§5.2, §8.1)."""
    has_free_slot: bool


def inventory_facts(inventory: list[int]) -> InventoryFacts:
    """`InventoryFacts` of an inventory, memoised by its contents (the result is shared: read only)."""
    return _inventory_facts(tuple(inventory))


@functools.lru_cache(maxsize=_MEMO_SIZE)
def _inventory_facts(inventory: tuple[int, ...]) -> InventoryFacts:
    sharks, anglerfish = inventory.count(Ids.SHARK), inventory.count(Ids.ANGLERFISH)
    return InventoryFacts(
        doses=inventory_doses(inventory),
        sharks=sharks,
        karambwans=inventory.count(Ids.KARAMBWAN),
        anglerfish=anglerfish,
        primary_food=Ids.SHARK if sharks else Ids.ANGLERFISH if anglerfish else None,
        has_free_slot=EMPTY in inventory,
    )


WEAPON_FAMILY: dict[int, CombatStyle] = {
    iid: item.weapon_class.family for iid, item in ITEMS.items() if item.weapon_class is not None
}
"""Weapon id → style family of its class (spec §6.1); absent (no weapon, no class) means melee."""


def weapon_family(p: PlayerState) -> CombatStyle:
    """Style classification by the wielded weapon's class (spec §6.1): what observers see."""
    return WEAPON_FAMILY.get(p.equipment[Slot.WEAPON], CombatStyle.MELEE)
