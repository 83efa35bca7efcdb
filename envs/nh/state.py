"""Player and hit state of an NH fight (spec §2, §3).

A new episode is a new `PlayerState`: nothing is reset field by field, so nothing can leak from one
fight into the next (the reference's quirks 8, 10 and 22 were exactly such leaks).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from enum import Enum, IntEnum
from typing import TYPE_CHECKING

from envs.nh.items import (
    CONSUMABLES,
    ITEMS,
    NUM_BONUSES,
    CombatStyle,
    FightStyle,
    Item,
    PotionType,
    Slot,
)
from envs.nh.prayers import Prayer
from envs.nh.spells import Spell

if TYPE_CHECKING:
    from envs.nh.loadouts import Loadout

EMPTY = -1
"""Item id of an empty equipment or inventory slot."""

INVENTORY_SIZE = 28  # §2


class Skill(IntEnum):
    """Skills that matter in a fight (spec §9.1)."""

    ATTACK = 0
    STRENGTH = 1
    DEFENCE = 2
    HITPOINTS = 3
    RANGED = 4
    MAGIC = 5
    PRAYER = 6


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


class Spellbook(Enum):
    ANCIENT = "ancient"
    LUNAR = "lunar"


class FightMode(Enum):
    """Fight modes (spec §13.2)."""

    NORMAL = "NORMAL"
    LMS = "LMS"
    PVP_ARENA = "PVP_ARENA"


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

    # ---- timers --------------------------------------------------------------------------------
    def set_timer(self, timer: TimerId, ticks: int) -> None:
        """Register a timer: both counters become `ticks` (spec §3)."""
        self.timer_ticks[timer] = ticks
        self.timer_uncapped[timer] = ticks

    def timer_active(self, timer: TimerId) -> bool:
        return self.timer_ticks[timer] > 0

    def remaining(self, timer: TimerId) -> int:
        """"Remaining ticks" as masks and observations see them: `max(ticks − 1, 0)` (spec §3)."""
        t = self.timer_ticks[timer]
        return t - 1 if t > 1 else 0

    def decrement_timers(self) -> None:
        """Once per tick at the start of the player's phase-A slot (spec §3, §4.1)."""
        ticks, unc = self.timer_ticks, self.timer_uncapped
        for i in range(NUM_TIMERS):
            if unc[i] != TIMER_NEVER_SET:
                unc[i] -= 1
            if ticks[i] > 0:
                ticks[i] -= 1

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

    def inventory_count(self, item_id: int) -> int:
        return self.inventory.count(item_id)

    def free_inventory_slots(self) -> int:
        return self.inventory.count(EMPTY)

    def potion_doses(self, potion: PotionType) -> int:
        """Total doses of one potion family carried (spec §15.2 entries 22–25)."""
        return inventory_doses(tuple(self.inventory))[potion]


_DOSES_CACHE: dict[tuple[int, ...], tuple[int, ...]] = {}


def inventory_doses(inventory: tuple[int, ...]) -> tuple[int, ...]:
    """Doses per potion family (indexed by `PotionType` value; index 0 unused), memoised by contents.

    Observations, masks and rewards all read these every tick; the inventory changes rarely.
    """
    cached = _DOSES_CACHE.get(inventory)
    if cached is not None:
        return cached
    doses = [0] * (len(PotionType) + 1)
    for iid in inventory:
        c = CONSUMABLES.get(iid)
        if c is not None and c.potion is not None:
            doses[c.potion] += c.doses
    if len(_DOSES_CACHE) > 1 << 14:
        _DOSES_CACHE.clear()
    result = tuple(doses)
    _DOSES_CACHE[inventory] = result
    return result


def weapon_family(p: PlayerState) -> CombatStyle:
    """Style classification by the wielded weapon's class (spec §6.1): what observers see."""
    w = p.weapon
    return w.weapon_class.family if w is not None and w.weapon_class is not None else CombatStyle.MELEE
