"""Item, weapon and consumable data, loaded once from the tables in `envs/nh/data/`.

The numbers live in CSV files (spec Appendix A, §6.2, §8); this module only turns them into frozen
dataclasses and checks them on load, so that a typo in a table is an error naming the file and row
rather than a silently wrong fight.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from dataclasses import dataclass
from enum import Enum, IntEnum
from importlib import resources
from pathlib import Path

DATA_DIR = Path(str(resources.files("envs.nh") / "data"))


class Slot(IntEnum):
    """Equipment slots in the order of spec §2."""

    HEAD = 0
    CAPE = 1
    NECK = 2
    AMMO = 3
    WEAPON = 4
    BODY = 5
    SHIELD = 6
    LEGS = 7
    HANDS = 8
    FEET = 9
    RING = 10


NUM_SLOTS = len(Slot)


class Bonus(IntEnum):
    """Index into the 14-entry equipment bonus vector (spec §10.3)."""

    STAB_ATTACK = 0
    SLASH_ATTACK = 1
    CRUSH_ATTACK = 2
    MAGIC_ATTACK = 3
    RANGED_ATTACK = 4
    STAB_DEFENCE = 5
    SLASH_DEFENCE = 6
    CRUSH_DEFENCE = 7
    MAGIC_DEFENCE = 8
    RANGED_DEFENCE = 9
    MELEE_STRENGTH = 10
    RANGED_STRENGTH = 11
    MAGIC_DAMAGE_TENTHS = 12  # tenths of a percent (§10.3)
    PRAYER = 13


NUM_BONUSES = len(Bonus)

# Plain-int names of a few slot and bonus indices, kept for callers outside the simulator (replays, analysis,
# the league, the core's snapshot tests); the simulator itself indexes with `Slot.X` and `Bonus.X`.
SLOT_WEAPON = int(Slot.WEAPON)
SLOT_AMMO = int(Slot.AMMO)
SLOT_SHIELD = int(Slot.SHIELD)
SLOT_RING = int(Slot.RING)
B_MAGIC_ATTACK = int(Bonus.MAGIC_ATTACK)
B_RANGED_ATTACK = int(Bonus.RANGED_ATTACK)
B_SLASH_DEFENCE = int(Bonus.SLASH_DEFENCE)
B_MAGIC_DEFENCE = int(Bonus.MAGIC_DEFENCE)
B_RANGED_DEFENCE = int(Bonus.RANGED_DEFENCE)
B_MELEE_STRENGTH = int(Bonus.MELEE_STRENGTH)
B_RANGED_STRENGTH = int(Bonus.RANGED_STRENGTH)
B_MAGIC_DAMAGE_TENTHS = int(Bonus.MAGIC_DAMAGE_TENTHS)


class Stance(Enum):
    """Fight-style stance (spec §6.2, stance effects)."""

    ACCURATE = "accurate"
    AGGRESSIVE = "aggressive"
    CONTROLLED = "controlled"
    DEFENSIVE = "defensive"
    RAPID = "rapid"
    LONGRANGE = "longrange"


class StyleType(Enum):
    """The bonus a melee style attacks with; ranged and magic have their own."""

    STAB = Bonus.STAB_ATTACK
    SLASH = Bonus.SLASH_ATTACK
    CRUSH = Bonus.CRUSH_ATTACK
    RANGED = Bonus.RANGED_ATTACK
    MAGIC = Bonus.MAGIC_ATTACK

    @property
    def defence_bonus(self) -> Bonus:
        """The defence bonus that defends against this style (attack index + 5, §10.3)."""
        return Bonus(self.value + 5)


@dataclass(frozen=True, slots=True)
class FightStyle:
    """One entry of a weapon class's style list (spec §6.2)."""

    name: str
    stance: Stance
    style_type: StyleType


class CombatStyle(IntEnum):
    """Observation/reward style classification (spec §6.1) and the three combat families."""

    MELEE = 0
    RANGED = 1
    MAGIC = 2


def _s(name: str, stance: Stance, style_type: StyleType) -> FightStyle:
    return FightStyle(name, stance, style_type)


_A, _G, _C, _D, _R, _L = (
    Stance.ACCURATE,
    Stance.AGGRESSIVE,
    Stance.CONTROLLED,
    Stance.DEFENSIVE,
    Stance.RAPID,
    Stance.LONGRANGE,
)
_ST, _SL, _CR, _RG = StyleType.STAB, StyleType.SLASH, StyleType.CRUSH, StyleType.RANGED

_RANGED_STYLES = (_s("accurate", _A, _RG), _s("rapid", _R, _RG), _s("longrange", _L, _RG))
_STAFF_STYLES = (_s("bash", _A, _CR), _s("pound", _G, _CR), _s("focus", _D, _CR))
_SWORD_STYLES = (_s("chop", _A, _SL), _s("slash", _G, _SL), _s("lunge", _C, _ST), _s("block", _D, _SL))
_STAB_STYLES = (_s("stab", _A, _ST), _s("lunge", _G, _ST), _s("slash", _G, _SL), _s("block", _D, _ST))
_BLUNT_STYLES = (_s("pound", _A, _CR), _s("pummel", _G, _CR), _s("block", _D, _CR))
_GODSWORD_STYLES = (_s("chop", _A, _SL), _s("slash", _G, _SL), _s("smash", _G, _CR), _s("block", _D, _SL))
_AXE_STYLES = (_s("chop", _A, _SL), _s("hack", _G, _SL), _s("smash", _G, _CR), _s("block", _D, _SL))


class WeaponClass(Enum):
    """Weapon "interface" (spec §6.2): its style list and its observation family (§6.1)."""

    CROSSBOW = ("ranged", _RANGED_STYLES)
    BALLISTA = ("ranged", _RANGED_STYLES)
    DARK_BOW = ("ranged", _RANGED_STYLES)
    KNIFE = ("ranged", _RANGED_STYLES)
    JAVELIN = ("ranged", _RANGED_STYLES)
    STAFF = ("magic", _STAFF_STYLES)
    BLADED_STAFF = ("magic", (_s("jab", _A, _ST), _s("swipe", _G, _SL), _s("fend", _D, _CR)))
    ANCIENT_STAFF = ("magic", _STAFF_STYLES)
    SCIMITAR = ("melee", _SWORD_STYLES)
    WHIP = ("melee", (_s("flick", _A, _SL), _s("lash", _C, _SL), _s("deflect", _D, _SL)))
    CLAWS = ("melee", _SWORD_STYLES)
    DRAGON_DAGGER = ("melee", _STAB_STYLES)
    GHRAZI_RAPIER = ("melee", _STAB_STYLES)
    LONGSWORD = ("melee", _SWORD_STYLES)
    GODSWORD = ("melee", _GODSWORD_STYLES)
    WARHAMMER = ("melee", _BLUNT_STYLES)
    ELDER_MAUL = ("melee", _BLUNT_STYLES)
    GRANITE_MAUL = ("melee", _BLUNT_STYLES)
    GREATAXE = ("melee", _AXE_STYLES)
    UNARMED = ("melee", (_s("punch", _A, _CR), _s("kick", _G, _CR), _s("block", _D, _CR)))

    def __new__(cls, family: str, styles: tuple[FightStyle, ...]) -> WeaponClass:
        # Several classes share a style list; a running number keeps them distinct members, since
        # Enum would otherwise turn equal values into aliases (JAVELIN would *be* CROSSBOW).
        member = object.__new__(cls)
        member._value_ = len(cls.__members__)
        return member

    def __init__(self, family: str, styles: tuple[FightStyle, ...]) -> None:
        self.family = {"melee": CombatStyle.MELEE, "ranged": CombatStyle.RANGED, "magic": CombatStyle.MAGIC}[
            family
        ]
        self.styles = styles

    @property
    def default_style(self) -> FightStyle:
        """First aggressive style, else the first one (spec §6.2); rapid counts as aggressive for ranged."""
        for style in self.styles:
            if style.stance in (Stance.AGGRESSIVE, Stance.RAPID):
                return style
        return self.styles[0]

    @property
    def is_ranged(self) -> bool:
        return self.family is CombatStyle.RANGED


RANGED_RANGE_TILES: dict[WeaponClass, int] = {  # §6.2 ranged range table
    WeaponClass.CROSSBOW: 7,
    WeaponClass.BALLISTA: 7,
    WeaponClass.DARK_BOW: 9,
    WeaponClass.KNIFE: 4,
    WeaponClass.JAVELIN: 5,
}
# Weapons whose ammo slot is ignored for bonuses (§10.3): they are their own ammunition.
AMMO_IGNORED_CLASSES = frozenset({WeaponClass.KNIFE, WeaponClass.JAVELIN})


@dataclass(frozen=True, slots=True)
class Item:
    """One wearable item (spec Appendix A)."""

    id: int
    name: str
    slot: Slot
    two_handed: bool
    bonuses: tuple[int, ...]
    weapon_class: WeaponClass | None
    attack_speed: int  # ticks before the rapid adjustment (§6.2); 0 for non-weapons

    def bonus(self, b: Bonus) -> int:
        return self.bonuses[b]


class ConsumableKind(Enum):
    FOOD = "food"
    POTION = "potion"
    EMPTY = "empty"
    POUCH = "pouch"


class PotionType(IntEnum):
    """Potion families in the order of action head 4 (spec §14.1)."""

    BREW = 1
    RESTORE = 2
    COMBAT = 3
    RANGING = 4


POT_BREW = int(PotionType.BREW)
POT_RESTORE = int(PotionType.RESTORE)
POT_COMBAT = int(PotionType.COMBAT)
POT_RANGING = int(PotionType.RANGING)


@dataclass(frozen=True, slots=True)
class Consumable:
    """Food, potion doses, the empty vial and the rune pouch (spec §8, Appendix A)."""

    id: int
    name: str
    kind: ConsumableKind
    potion: PotionType | None
    doses: int
    heal: int


class DataError(ValueError):
    """A data table is malformed; the message names the file and row."""


def _rows(path: Path) -> Iterator[tuple[int, dict[str, str]]]:
    with path.open(newline="", encoding="utf-8") as fh:
        lines = [(n, line) for n, line in enumerate(fh, start=1) if line.strip() and not line.startswith("#")]
    reader = csv.DictReader(line for _, line in lines)
    for (lineno, _), row in zip(lines[1:], reader, strict=True):
        yield lineno, row


def _load_items(path: Path) -> dict[int, Item]:
    fields = [b.name.lower() for b in Bonus]
    items: dict[int, Item] = {}
    for lineno, row in _rows(path):
        where = f"{path.name}:{lineno}"
        try:
            bonuses = tuple(int(row[f]) for f in fields)
            wclass = WeaponClass[row["weapon_class"]] if row["weapon_class"] else None
            item = Item(
                id=int(row["id"]),
                name=row["name"],
                slot=Slot[row["slot"].upper()],
                two_handed=row["two_handed"] == "1",
                bonuses=bonuses,
                weapon_class=wclass,
                attack_speed=int(row["attack_speed"] or 0),
            )
        except (KeyError, ValueError) as exc:
            raise DataError(f"{where}: bad item row {row!r}: {exc}") from exc
        if (item.slot is Slot.WEAPON) != (item.weapon_class is not None):
            raise DataError(f"{where}: weapons (and only weapons) need a weapon_class and attack_speed")
        if item.id in items:
            raise DataError(f"{where}: duplicate item id {item.id}")
        items[item.id] = item
    return items


def _load_consumables(path: Path) -> dict[int, Consumable]:
    out: dict[int, Consumable] = {}
    for lineno, row in _rows(path):
        try:
            c = Consumable(
                id=int(row["id"]),
                name=row["name"],
                kind=ConsumableKind(row["kind"]),
                potion=PotionType[row["potion"]] if row["potion"] else None,
                doses=int(row["doses"]),
                heal=int(row["heal"]),
            )
        except (KeyError, ValueError) as exc:
            raise DataError(f"{path.name}:{lineno}: bad consumable row {row!r}: {exc}") from exc
        out[c.id] = c
    return out


ITEMS: dict[int, Item] = {**_load_items(DATA_DIR / "items.csv"), **_load_items(DATA_DIR / "items_manual.csv")}
CONSUMABLES: dict[int, Consumable] = _load_consumables(DATA_DIR / "consumables.csv")
if set(ITEMS) & set(CONSUMABLES):
    raise DataError(f"ids both wearable and consumable: {sorted(set(ITEMS) & set(CONSUMABLES))}")

_BY_NAME: dict[str, list[Item]] = {}
for _it in ITEMS.values():
    _BY_NAME.setdefault(_it.name.lower(), []).append(_it)
_CONS_BY_NAME = {c.name.lower(): c for c in CONSUMABLES.values()}


def item_by_name(name: str, slot: Slot | None = None) -> Item:
    """Look up a wearable item by its wiki name (and slot, where a name is shared, e.g. Ghostly robe)."""
    candidates = _BY_NAME.get(name.lower(), [])
    if slot is not None:
        candidates = [c for c in candidates if c.slot is slot]
    if len(candidates) != 1:
        raise KeyError(f"no unique item named {name!r}" + (f" in slot {slot.name}" if slot else ""))
    return candidates[0]


def item_id(name: str, slot: Slot | None = None) -> int:
    """Item id by name, wearable or consumable."""
    cons = _CONS_BY_NAME.get(name.lower())
    if cons is not None:
        return cons.id
    return item_by_name(name, slot).id


def potion_id(potion: PotionType, doses: int) -> int:
    """Id of the `doses`-dose potion of a family (Appendix A consumables)."""
    for c in CONSUMABLES.values():
        if c.potion is potion and c.doses == doses:
            return c.id
    raise KeyError(f"no {potion.name} potion with {doses} doses")


def is_ranged_weapon(item: Item | None) -> bool:
    return item is not None and item.weapon_class is not None and item.weapon_class.is_ranged


# Named ids used by rules (Appendix A). Tables refer to items by id; rules refer to these names.
class Ids:
    """Item ids that game rules test for by identity (spec Appendix A)."""

    SHARK = 385
    KARAMBWAN = 3144
    ANGLERFISH = 13441
    VIAL = 229
    RUNE_POUCH = 12791
    DRAGON_DAGGERS = frozenset({1215, 1231, 5680, 5698})
    DRAGON_DAGGER_PPP = 5698  # the only poisonous weapon of the loadouts (§6.10.5)
    DRAGON_CLAWS = 13652
    ARMADYL_GODSWORD = 11802
    ANCIENT_GODSWORD = 26233
    GRANITE_MAUL = 4153
    VESTAS_LONGSWORD = 22613
    STATIUS_WARHAMMER = 22622
    DARK_BOW = 11235
    ARMADYL_CROSSBOW = 11785
    ZARYTE_CROSSBOW = 26374
    RUNE_CROSSBOW = 9185
    LIGHT_BALLISTA = 19478
    HEAVY_BALLISTA = 19481
    MORRIGANS_JAVELIN = 22636
    DRAGON_KNIVES = frozenset({22804, 22810})
    VOLATILE_NIGHTMARE_STAFF = 24424
    ZURIELS_STAFF = 22647
    AMULET_OF_BLOOD_FURY = 24780
    DHAROKS_SET = frozenset({4716, 4718, 4720, 4722})
    DHAROKS_GREATAXE = 4718
    OPAL_BOLTS = frozenset({9236, 21932})
    DIAMOND_BOLTS = frozenset({9243, 21946})
    DRAGONSTONE_BOLTS = frozenset({9244, 21948})
