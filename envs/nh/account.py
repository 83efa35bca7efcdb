"""What a player brings to a fight that both the loadout tables and the fight state name: skills, spellbooks,
fight modes and the size of the inventory.

Why a module of its own: `envs.nh.loadouts` builds `Loadout`s from these and `envs.nh.state` holds a `Loadout`
in every `PlayerState`; with these names in `state` the two imported each other.
"""

from __future__ import annotations

from enum import Enum, IntEnum

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


class Spellbook(Enum):
    ANCIENT = "ancient"
    LUNAR = "lunar"


class FightMode(Enum):
    """Fight modes (spec §13.2)."""

    NORMAL = "NORMAL"
    LMS = "LMS"
    PVP_ARENA = "PVP_ARENA"
