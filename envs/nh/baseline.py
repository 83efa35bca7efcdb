"""The scripted baseline opponent of spec §18, exactly as it effectively acts in evaluation.

It lives inside the simulator and calls game operations directly (no action interface): its rules
read the full game state, including the agent's pending hits. The [QUIRK 20, KEEP] style choice
uses the never-updated initial values (attack roll 9 999 999, max hit 120, speed 4).
"""

from __future__ import annotations

import numpy as np

from envs.nh import movement, operations
from envs.nh.combat import attack_range, combat_method, defence_roll_against
from envs.nh.equipment import equip_set, on_weapon_changed, recompute_bonuses
from envs.nh.fight_protocols import FightControl
from envs.nh.items import CombatStyle, Ids, PotionType, StyleType
from envs.nh.loadouts import GearSet
from envs.nh.prayers import Prayer
from envs.nh.spells import Spell
from envs.nh.state import (
    PlayerState,
    Skill,
    Spellbook,
    TimerId,
)

OVERHEAD_SWITCH_ROLL_MAX = 4  # §18.3 rule 1: U[0, 4] = 2, probability 1/5
OVERHEAD_SWITCH_ROLL_HIT = 2
SPEC_MAX_TARGET_HP = 59  # §18.3 rule 2
SPEC_MIN_ENERGY = 50  # §18.3 rule 2
STEP_AWAY_MIN_ATTACK_TICKS = 2  # §18.3 rule 3: ATTACK timer with more than 2 ticks left
STEP_AWAY_TILES = 3  # §18.3 rule 3
STEP_AWAY_DIRECTIONS = {1: (-1, 0), 2: (1, 0), 3: (0, 1)}  # U[1,3]: west, east, north
RESTORE_BELOW_PRAYER = 50  # §18.3 rule 4
ICE_BARRAGE_LEVEL = 94  # §18.3 rule 5, §6.7
MELEE_MAX_TARGET_HP = 45  # §18.3 rule 6
STORED_ATTACK_ROLL = 9_999_999  # §18.3 rule 6 [QUIRK 20, KEEP]
STORED_MAX_HIT = 120
STORED_SPEED_TICKS = 4
PROTECTED_MAX_HIT_PCT = 70  # §18.3 rule 6: floor(maxHit × 0.7)
EAT_BELOW_HP = 30  # §18.4
EAT_ROUTINE_HP_PCT = 65  # §18.4: h ≤ baseHP × 65 / 100
RELOAD_MIN_FREE_SLOTS = 2  # §18.4 reset while idle: more than 2 free slots
RELOAD_BELOW_ENERGY = 76  # §18.4: less than 76 % special energy
IDLE_WALK_RADIUS = (1, 6)  # §18.4: r = U[1, 6]
IDLE_WALK_N = (40, 80)  # §18.4: n = U[40, 80], walk when U[0, n] ≤ 1
_PENDING_HIT_HORIZON = 2  # §18.2: pending hits whose delay counter is below 2

_DEFENCE_STYLE = {  # §18.3 rule 6: melee uses the slash defence roll
    CombatStyle.MELEE: StyleType.SLASH,
    CombatStyle.RANGED: StyleType.RANGED,
    CombatStyle.MAGIC: StyleType.MAGIC,
}
_PROTECT = {
    CombatStyle.MELEE: Prayer.PROTECT_FROM_MELEE,
    CombatStyle.RANGED: Prayer.PROTECT_FROM_MISSILES,
    CombatStyle.MAGIC: Prayer.PROTECT_FROM_MAGIC,
}


# ---- predicates of §18.2 ------------------------------------------------------------------------
def _ready(b: PlayerState) -> bool:
    """ATTACK has ≤ 1 tick left before this tick's decrement, or was never set (§18.2)."""
    return b.timer_ticks[TimerId.ATTACK] <= 1


def _mobile(p: PlayerState) -> bool:
    return not p.timer_active(TimerId.FREEZE)


def hp_after_pending(e: PlayerState) -> int:
    """`E.hpAfterPending` of spec §18.2."""
    pending = sum(h.total for h in e.hit_queue if h.delay < _PENDING_HIT_HORIZON)
    return e.hp - pending - sum(e.damage_queue)


def _can_cast_barrage(b: PlayerState) -> bool:
    return b.spellbook is Spellbook.ANCIENT and b.level[Skill.MAGIC] >= ICE_BARRAGE_LEVEL


def _agent_can_reach(e: PlayerState, b: PlayerState) -> bool:
    """The agent's reach test by its current method, without side effects (§11.6 [QUIRK 12, DROP])."""
    m = combat_method(e)
    return movement.can_reach(e, b, m.style is CombatStyle.MELEE, attack_range(e, m), side_effect=False)


# ---- phase A (§18.2–18.4) -----------------------------------------------------------------------
def decide(sim: FightControl, b: PlayerState) -> None:
    """The baseline's rules for this tick, run before its timer decrement (spec §4.1, §18.2)."""
    if b.remembered_target is None and b.last_attacker is not None:
        b.remembered_target = b.last_attacker
    e = b.remembered_target
    if e is not None and b.hp > 0:
        _fight_rules(sim, b, e)
    _maintenance(sim, b)


def _fight_rules(sim: FightControl, b: PlayerState, e: PlayerState) -> None:
    """Spec §18.3, evaluated in order; a rule that acts ends the evaluation."""
    rng = sim.rng
    # 1. overhead prayer
    if int(rng.integers(0, OVERHEAD_SWITCH_ROLL_MAX + 1)) == OVERHEAD_SWITCH_ROLL_HIT:
        m = combat_method(e)
        if m.style is CombatStyle.MELEE and _agent_can_reach(e, b):
            sim.activate_prayer(b, Prayer.PROTECT_FROM_MELEE)
        elif m.style is CombatStyle.RANGED:
            sim.activate_prayer(b, Prayer.PROTECT_FROM_MISSILES)
        else:
            sim.activate_prayer(b, Prayer.PROTECT_FROM_MAGIC)
    ready = _ready(b)
    sets, prayers = b.loadout.sets, b.loadout.set_prayers
    # 2. special attack
    if (
        ready
        and _mobile(b)
        and hp_after_pending(e) <= SPEC_MAX_TARGET_HP
        and b.special_energy >= SPEC_MIN_ENERGY
        and Prayer.PROTECT_FROM_MELEE not in e.prayers
    ):
        sim.activate_prayers(b, prayers[GearSet.SPEC])
        equip_set(b, sets[GearSet.SPEC], unequip_rest=False)
        b.selected_spell = None
        if not b.special_armed:
            b.special_armed = True
        b.target = e
        return
    # 3. step away
    if (
        b.timer_ticks[TimerId.ATTACK] > STEP_AWAY_MIN_ATTACK_TICKS
        and not b.walk_queue
        and not _mobile(e)
        and movement.distance(b, e) == 1
        and _agent_can_reach(e, b)
    ):
        dx, dy = STEP_AWAY_DIRECTIONS[int(rng.integers(1, 4))]
        end_x, end_y = movement.queue_end(b)
        movement.append_path(b, end_x + dx * STEP_AWAY_TILES, end_y + dy * STEP_AWAY_TILES)
        return
    # 4. restore prayer
    if b.level[Skill.PRAYER] < RESTORE_BELOW_PRAYER and operations.find_potion(b, PotionType.RESTORE) is not None:
        operations.drink_potion(b, PotionType.RESTORE, fewest_first=False)
        return
    # 5. freeze
    if ready and _mobile(e) and not e.timer_active(TimerId.FREEZE_IMMUNITY) and _can_cast_barrage(b):
        _switch_magic(sim, b, e)
        return
    # 6. best-style attack
    if ready:
        _best_style_attack(sim, b, e)


def _switch_magic(sim: FightControl, b: PlayerState, e: PlayerState) -> None:
    """Rules 5 and 6 (magic): even an empty magic set casts [QUIRK 13, KEEP]."""
    sim.activate_prayers(b, b.loadout.set_prayers[GearSet.MAGIC])
    equip_set(b, b.loadout.sets[GearSet.MAGIC], unequip_rest=False)
    b.selected_spell = Spell.ICE_BARRAGE
    b.target = e


_F32_SPEED = np.float32(1000.0 / (600.0 * STORED_SPEED_TICKS))


def style_dps(defence_roll: int, protected: bool) -> np.float32:
    """Rule 6's float32 damage-per-second estimate from the stored initial values [QUIRK 20, KEEP]."""
    a = np.float32(STORED_ATTACK_ROLL)
    d = np.float32(defence_roll)
    if STORED_ATTACK_ROLL > defence_roll:
        hit = np.float32(1.0) - (d + np.float32(2.0)) / (np.float32(2.0) * (a + np.float32(1.0)))
    else:
        hit = a / (np.float32(2.0) * (d + np.float32(1.0)))
    max_hit = STORED_MAX_HIT * PROTECTED_MAX_HIT_PCT // 100 if protected else STORED_MAX_HIT
    return np.float32(hit * np.float32(max_hit) * _F32_SPEED)


def _best_style_attack(sim: FightControl, b: PlayerState, e: PlayerState) -> None:
    options: list[CombatStyle] = []
    if _can_cast_barrage(b):
        options.append(CombatStyle.MAGIC)
    options.append(CombatStyle.RANGED)
    if _mobile(b) and hp_after_pending(e) <= MELEE_MAX_TARGET_HP:
        options.append(CombatStyle.MELEE)
    best: CombatStyle | None = None
    best_dps = np.float32(0.0)
    for style in options:
        dps = style_dps(defence_roll_against(e, _DEFENCE_STYLE[style]), _PROTECT[style] in e.prayers)
        if dps > best_dps:
            best, best_dps = style, dps
    if best is None:
        return
    sets, prayers = b.loadout.sets, b.loadout.set_prayers
    if best is CombatStyle.MAGIC:
        _switch_magic(sim, b, e)
        return
    gear = GearSet.RANGED if best is CombatStyle.RANGED else GearSet.MELEE
    sim.activate_prayers(b, prayers[gear])
    equip_set(b, sets[gear], unequip_rest=False)
    b.selected_spell = None
    if best is CombatStyle.RANGED:
        b.special_armed = False
    b.target = e


# ---- maintenance (§18.4) ------------------------------------------------------------------------
def eat_routine(b: PlayerState, h: int) -> None:
    """Eat (and combo a karambwan) when `h ≤ 65 %` of base HP (spec §18.4)."""
    if h * 100 > b.base_hp * EAT_ROUTINE_HP_PCT:
        return
    for food in operations.FOOD_PRIORITY:
        if food in b.inventory:
            if food == Ids.KARAMBWAN:
                operations.eat_karambwan(b)
            else:
                operations.eat_food(b, food)
                operations.eat_karambwan(b)
            return


def _maintenance(sim: FightControl, b: PlayerState) -> None:
    if b.hp <= 0:
        return
    if b.hp < EAT_BELOW_HP:
        eat_routine(b, b.hp)
    _pot_up(b)
    if b.remembered_target is None and (
        b.free_inventory_slots() > RELOAD_MIN_FREE_SLOTS or b.special_energy < RELOAD_BELOW_ENERGY
    ):
        _reload_preset(b)


def _pot_up(b: PlayerState) -> None:
    """The first applicable of: anglerfish, ranging potion, super combat (spec §18.4)."""
    lv, base = b.level, b.base
    if lv[Skill.HITPOINTS] <= base[Skill.HITPOINTS] and Ids.ANGLERFISH in b.inventory:
        operations.eat_food(b, Ids.ANGLERFISH)
    elif lv[Skill.RANGED] <= base[Skill.RANGED] and operations.find_potion(b, PotionType.RANGING) is not None:
        operations.drink_potion(b, PotionType.RANGING, fewest_first=False)
    elif lv[Skill.STRENGTH] <= base[Skill.STRENGTH] and operations.find_potion(b, PotionType.COMBAT) is not None:
        operations.drink_potion(b, PotionType.COMBAT, fewest_first=False)


def _reload_preset(b: PlayerState) -> None:
    """Reset while idle [QUIRK 23, KEEP]; never fires in the simulator (spec §18.4), kept for fidelity."""
    load = b.loadout
    b.inventory = list(load.inventory)
    b.equipment = list(load.equipment)
    b.spellbook = load.spellbook
    b.level = list(load.base_levels)
    b.special_energy = 100
    b.special_armed = False
    b.vengeance = False
    b.prayers.clear()
    b.timer_ticks[TimerId.FREEZE] = 0
    b.poison_damage = 0
    b.run_energy = 100
    movement.reset_walk(b)
    b.x, b.y = b.spawn
    on_weapon_changed(b)
    recompute_bonuses(b)


def on_hit(sim: FightControl, b: PlayerState, total: int) -> None:
    """Damage reaction (spec §18.4, §4.5 step 9): eat with the hitpoints the hit will leave."""
    h = b.hp - total
    if h > 0:
        eat_routine(b, h)


# ---- phase B (§18.4 idle walk) ------------------------------------------------------------------
def idle_walk(sim: FightControl, b: PlayerState) -> None:
    """Wander near the spawn tile while idle (spec §18.4, draw order §16.6)."""
    if b.target is not None or b.last_attacker is not None or b.timer_active(TimerId.FREEZE) or b.moving:
        return
    rng = sim.rng
    r = int(rng.integers(IDLE_WALK_RADIUS[0], IDLE_WALK_RADIUS[1] + 1))
    n = int(rng.integers(IDLE_WALK_N[0], IDLE_WALK_N[1] + 1))
    if int(rng.integers(0, n + 1)) > 1:
        return
    dx = int(rng.integers(-r, r + 1))
    dy = int(rng.integers(-r, r + 1))
    movement.append_path(b, b.spawn[0] + dx, b.spawn[1] + dy, diagonal_first=True)

