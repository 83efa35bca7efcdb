"""Game operations shared by the agent's action (spec §5) and the scripted baseline (spec §18).

Each function is one thing a player can do in the game: switch a prayer on, eat, drink, cast
Vengeance. They enforce the game's own rules (timers, requirements) and fail silently where the game
would, because the environment does not enforce the action masks (spec §5, intro).
"""

from __future__ import annotations

from envs.nh.items import CONSUMABLES, Ids, PotionType
from envs.nh.prayers import CONFLICTS, PRAYERS, Prayer
from envs.nh.state import (
    EMPTY,
    TIMER_NEVER_SET,
    PlayerState,
    Skill,
    Spellbook,
    TimerId,
)

FOOD_TIMER_TICKS = 3  # §3, §8.2, App. C
KARAMBWAN_TIMER_TICKS = 3  # §3, §8.2
POTION_TIMER_TICKS = 3  # §3, §8.3
FOOD_ATTACK_DELAY_TICKS = 3  # §8.2, App. C
KARAMBWAN_ATTACK_DELAY_TICKS = 2  # §8.2, App. C
SHARK_HEAL = 20  # §8.1
KARAMBWAN_HEAL = 18  # §8.1
ANGLERFISH_MAX_HEAL = 22  # §8.1
VENGEANCE_COOLDOWN_TICKS = 50  # §5.6, App. C
VENGEANCE_MIN_MAGIC = 94  # §5.6
VENGEANCE_MIN_BASE_DEFENCE = 40  # §5.6
PIETY_TIER_MIN_BASE_DEFENCE = 70  # §7.1
BREW_DEFENCE_RAISE_BASE = 2  # §8.3: a brew raises Defence by floor(2 + base × 20 / 100)
BREW_DEFENCE_RAISE_PCT = 20  # §8.3
BREW_DRAIN_BASE = 2  # §8.3: Attack (base, [DEV]), Strength, Magic and Ranged drop floor(x / 10) + 2
BREW_DRAIN_DIVISOR = 10  # §8.3
FOOD_PRIORITY = (Ids.SHARK, Ids.KARAMBWAN, Ids.ANGLERFISH)
"""The game's food list in priority order (spec §8.1): Shark, then Karambwan, then Anglerfish."""


# ---- prayer (§7.2) ------------------------------------------------------------------------------
def can_activate(p: PlayerState, prayer: Prayer) -> bool:
    """Requirements of spec §7.1/§7.2: points left, base Prayer level, base Defence for the 70s."""
    data = PRAYERS[prayer]
    if p.level[Skill.PRAYER] <= 0 or p.base[Skill.PRAYER] < data.level:
        return False
    return not (data.needs_defence_70 and p.base[Skill.DEFENCE] < PIETY_TIER_MIN_BASE_DEFENCE)


def activate_prayer(p: PlayerState, prayer: Prayer) -> bool:
    """Switch a prayer on, switching conflicting ones off (spec §7.2). Returns whether it is newly on.

    The caller starts the drain task when this returns True and none is running (spec §7.3).
    """
    if prayer in p.prayers or not can_activate(p, prayer):
        return False
    p.prayers -= CONFLICTS[prayer]
    p.prayers.add(prayer)
    return True


def deactivate_all_prayers(p: PlayerState) -> None:
    p.prayers.clear()


# ---- hitpoints ----------------------------------------------------------------------------------
def heal(p: PlayerState, amount: int, cap: int) -> int:
    """Raise hitpoints by up to `amount`, not above `cap`; a dying player does not heal (spec §2).

    Returns the hitpoints actually gained (the reward's heal signals count only those, §17.1).
    """
    if p.dying or amount <= 0:
        return 0
    hp = p.level[Skill.HITPOINTS]
    gained = max(0, min(amount, cap - hp))
    p.level[Skill.HITPOINTS] = hp + gained
    return gained


def effect_heal(p: PlayerState, amount: int) -> int:
    """Heals from effects (blood spells, blood fury, sacrifice): never above max(base, current) (§6.7)."""
    return heal(p, amount, max(p.base_hp, p.hp))


# ---- food (§8.1, §8.2) --------------------------------------------------------------------------
def anglerfish_heal(base_hp: int) -> int:
    """Anglerfish heal for a base Hitpoints level (spec §8.1)."""
    c = 2
    for threshold, value in ((25, 4), (50, 6), (75, 8), (93, 13)):
        if base_hp >= threshold:
            c = value
    return min(base_hp // 10 + c, ANGLERFISH_MAX_HEAL)


def nominal_heal(food_id: int, base_hp: int) -> int:
    """Heal of a food item as the reward signals count it (spec §17.1)."""
    if food_id == Ids.ANGLERFISH:
        return anglerfish_heal(base_hp)
    return CONSUMABLES[food_id].heal


def primary_food(p: PlayerState) -> int | None:
    """First non-karambwan food carried, in priority order (spec §5.2, §8.1)."""
    inv = p.inventory
    for fid in FOOD_PRIORITY:
        if fid != Ids.KARAMBWAN and fid in inv:
            return fid
    return None


def has_any_food(p: PlayerState) -> bool:
    inv = p.inventory
    return any(fid in inv for fid in FOOD_PRIORITY)


def _delay_attack(p: PlayerState, ticks: int) -> None:
    """Eating delays a pending attack (spec §8.2 step 2)."""
    u = p.timer_uncapped[TimerId.ATTACK]
    if u != TIMER_NEVER_SET and u + ticks > 0:
        p.set_timer(TimerId.ATTACK, u + ticks)


def _extend_timer(p: PlayerState, timer: int, ticks: int) -> None:
    """`TIMER := max(TIMER, n)` (spec §8.2 step 1)."""
    if p.timer_ticks[timer] < ticks:
        p.set_timer(timer, ticks)


def food_heal_and_cap(p: PlayerState, food_id: int) -> tuple[int, int]:
    """Nominal heal and the hitpoint cap it may reach (spec §8.1)."""
    if food_id == Ids.ANGLERFISH:
        h = anglerfish_heal(p.base_hp)
        return h, p.base_hp + h
    return CONSUMABLES[food_id].heal, p.base_hp


def eat_food(p: PlayerState, food_id: int) -> bool:
    """Eat one normal food item (spec §8.2). Returns whether it was eaten."""
    if p.timer_active(TimerId.FOOD) or food_id not in p.inventory:
        return False
    _extend_timer(p, TimerId.FOOD, FOOD_TIMER_TICKS)
    _delay_attack(p, FOOD_ATTACK_DELAY_TICKS)
    p.inventory[p.inventory.index(food_id)] = EMPTY
    amount, cap = food_heal_and_cap(p, food_id)
    heal(p, amount, cap)
    return True


def eat_karambwan(p: PlayerState) -> bool:
    """Eat a cooked karambwan (spec §8.2): only KARAMBWAN blocks it, so it combos after food."""
    if p.timer_active(TimerId.KARAMBWAN) or Ids.KARAMBWAN not in p.inventory:
        return False
    _extend_timer(p, TimerId.FOOD, FOOD_TIMER_TICKS)
    p.set_timer(TimerId.KARAMBWAN, KARAMBWAN_TIMER_TICKS)
    p.set_timer(TimerId.POTION, POTION_TIMER_TICKS)
    _delay_attack(p, KARAMBWAN_ATTACK_DELAY_TICKS)
    p.inventory[p.inventory.index(Ids.KARAMBWAN)] = EMPTY
    heal(p, KARAMBWAN_HEAL, p.base_hp)
    return True


# ---- potions (§8.3) -----------------------------------------------------------------------------
def find_potion(p: PlayerState, potion: PotionType, fewest_first: bool = True) -> int | None:
    """Inventory slot of the potion to drink: fewest doses first for agents (§5.3), most for the baseline (§18.3)."""
    if not p.inventory_facts().doses[potion]:
        return None  # none carried: every potion item holds at least one dose (checked below the function)
    best_slot, best_doses = None, 0
    for slot, iid in enumerate(p.inventory):
        c = CONSUMABLES.get(iid)
        if c is None or c.potion is not potion:
            continue
        better = c.doses < best_doses if fewest_first else c.doses > best_doses
        if best_slot is None or better:
            best_slot, best_doses = slot, c.doses
    return best_slot


if any(c.doses < 1 for c in CONSUMABLES.values() if c.potion is not None):
    raise AssertionError("a potion item with no dose breaks find_potion's shortcut (consumables.csv, §8.3)")


def _boost(p: PlayerState, skill: int, boost: int) -> None:
    """Super combat / ranging rule: add to the current level, capped at base + boost (spec §8.3)."""
    base, cur = p.base[skill], p.level[skill]
    if base + boost > cur:
        p.level[skill] = min(cur + boost, base + boost)


def _raise_capped(p: PlayerState, skill: int, amount: int, cap: int) -> None:
    """Brew raise: nothing if already above the cap (spec §8.3)."""
    cur = p.level[skill]
    if cur <= cap:
        p.level[skill] = min(cur + amount, cap)


def brew_hp_boost(base_hp: int) -> int:
    """Saradomin brew hitpoints raise `floor(2 + 0.15 × baseHP)` (spec §8.3)."""
    return 2 + base_hp * 15 // 100


def restore_amount(base: int) -> int:
    """Super restore `floor(8 + base / 4)` (spec §8.3)."""
    return 8 + base // 4


def combat_boost(base: int) -> int:
    """Super combat `floor(0.15 × base) + 5` (spec §8.3)."""
    return base * 15 // 100 + 5


def ranging_boost(base: int) -> int:
    """Ranging potion `floor(0.10 × base) + 4` (spec §8.3)."""
    return base // 10 + 4


def brew_defence_raise(base_defence: int) -> int:
    """A brew dose's Defence raise, also the cap above base it may reach (spec §8.3)."""
    return BREW_DEFENCE_RAISE_BASE + base_defence * BREW_DEFENCE_RAISE_PCT // 100


def brew_drain(level: int) -> int:
    """What a brew dose takes from a drained level (spec §8.3)."""
    return level // BREW_DRAIN_DIVISOR + BREW_DRAIN_BASE


def apply_potion(p: PlayerState, potion: PotionType) -> None:
    """The effect of one dose (spec §8.3)."""
    lv, base = p.level, p.base
    if potion is PotionType.BREW:
        d_raise = brew_defence_raise(base[Skill.DEFENCE])
        _raise_capped(p, Skill.DEFENCE, d_raise, base[Skill.DEFENCE] + d_raise)
        if not p.dying:
            h_raise = brew_hp_boost(base[Skill.HITPOINTS])
            _raise_capped(p, Skill.HITPOINTS, h_raise, base[Skill.HITPOINTS] + h_raise)
        lv[Skill.ATTACK] = max(0, lv[Skill.ATTACK] - brew_drain(base[Skill.ATTACK]))  # [DEV] base Attack
        for s in (Skill.STRENGTH, Skill.MAGIC, Skill.RANGED):
            lv[s] = max(0, lv[s] - brew_drain(lv[s]))
    elif potion is PotionType.RESTORE:
        if lv[Skill.PRAYER] < base[Skill.PRAYER]:
            lv[Skill.PRAYER] = min(lv[Skill.PRAYER] + restore_amount(base[Skill.PRAYER]), base[Skill.PRAYER])
        for s in (Skill.ATTACK, Skill.DEFENCE, Skill.STRENGTH, Skill.RANGED, Skill.MAGIC):
            if lv[s] < base[s]:
                lv[s] = min(lv[s] + restore_amount(base[s]), base[s])
    elif potion is PotionType.COMBAT:
        for s in (Skill.ATTACK, Skill.STRENGTH, Skill.DEFENCE):
            _boost(p, s, combat_boost(base[s]))
    else:
        _boost(p, Skill.RANGED, ranging_boost(base[Skill.RANGED]))


def drink_potion(p: PlayerState, potion: PotionType, fewest_first: bool = True) -> bool:
    """Drink one dose (spec §8.3). Clears the combat target [QUIRK 24, KEEP]."""
    if p.timer_active(TimerId.POTION):
        return False
    slot = find_potion(p, potion, fewest_first)
    if slot is None:
        return False
    p.set_timer(TimerId.POTION, POTION_TIMER_TICKS)
    p.set_timer(TimerId.FOOD, FOOD_TIMER_TICKS)
    p.target = None
    doses = CONSUMABLES[p.inventory[slot]].doses
    p.inventory[slot] = Ids.VIAL if doses == 1 else _potion_with(potion, doses - 1)
    apply_potion(p, potion)
    return True


_POTION_IDS = {(c.potion, c.doses): c.id for c in CONSUMABLES.values() if c.potion is not None}


def _potion_with(potion: PotionType, doses: int) -> int:
    return _POTION_IDS[(potion, doses)]


# ---- vengeance (§5.6) ---------------------------------------------------------------------------
def cast_vengeance(p: PlayerState) -> bool:
    """Cast Vengeance (spec §5.6); runes are never a constraint (rune pouch, §10.4)."""
    if (
        p.spellbook is not Spellbook.LUNAR
        or p.level[Skill.MAGIC] < VENGEANCE_MIN_MAGIC
        or p.base[Skill.DEFENCE] < VENGEANCE_MIN_BASE_DEFENCE
        or p.vengeance
        or p.timer_active(TimerId.VENGEANCE_COOLDOWN)
    ):
        return False
    p.vengeance = True
    p.set_timer(TimerId.VENGEANCE_COOLDOWN, VENGEANCE_COOLDOWN_TICKS)
    return True
