"""Ancient combat spells (spec §6.7) as a table."""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum


class Spell(IntEnum):
    ICE_RUSH = 0
    ICE_BURST = 1
    ICE_BLITZ = 2
    ICE_BARRAGE = 3
    BLOOD_RUSH = 4
    BLOOD_BURST = 5
    BLOOD_BLITZ = 6
    BLOOD_BARRAGE = 7


@dataclass(frozen=True, slots=True)
class SpellData:
    """One row of spec §6.7: level, max hit, freeze ticks (ice) and heal fraction in percent (blood)."""

    spell: Spell
    name: str
    level: int
    max_hit: int
    freeze_ticks: int
    heal_pct: int

    @property
    def is_ice(self) -> bool:
        return self.freeze_ticks > 0


SPELLS: dict[Spell, SpellData] = {
    s.spell: s
    for s in (
        SpellData(Spell.ICE_RUSH, "Ice Rush", 58, 16, 8, 0),
        SpellData(Spell.ICE_BURST, "Ice Burst", 70, 22, 16, 0),
        SpellData(Spell.ICE_BLITZ, "Ice Blitz", 82, 26, 24, 0),
        SpellData(Spell.ICE_BARRAGE, "Ice Barrage", 94, 30, 32, 0),
        SpellData(Spell.BLOOD_RUSH, "Blood Rush", 56, 15, 0, 10),
        SpellData(Spell.BLOOD_BURST, "Blood Burst", 68, 21, 0, 15),
        SpellData(Spell.BLOOD_BLITZ, "Blood Blitz", 80, 25, 0, 20),
        SpellData(Spell.BLOOD_BARRAGE, "Blood Barrage", 92, 29, 0, 25),
    )
}

ICE_TIERS = (Spell.ICE_BARRAGE, Spell.ICE_BLITZ, Spell.ICE_BURST, Spell.ICE_RUSH)
BLOOD_TIERS = (Spell.BLOOD_BARRAGE, Spell.BLOOD_BLITZ, Spell.BLOOD_BURST, Spell.BLOOD_RUSH)
SPELL_ATTACK_SPEED_TICKS = 5  # §6.2: every combat spell
MAGIC_RANGE_TILES = 10  # §6.2
FREEZE_IMMUNITY_EXTRA_TICKS = 5  # §6.7: immunity = freeze + 5


def best_castable(tiers: tuple[Spell, ...], magic_level: int) -> Spell:
    """Highest tier castable at `magic_level`; the lowest tier is the fallback (spec §5.7)."""
    for spell in tiers:
        if magic_level >= SPELLS[spell].level:
            return spell
    return tiers[-1]
