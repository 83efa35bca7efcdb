"""Tick order, timers, consumables and combat effects of the simulator core (spec §3–§11)."""

from __future__ import annotations

import numpy as np
import pytest

from envs.nh.contract import AttackHead, Head, MeleeType, MovementHead, PotionHead, PrayerHead
from envs.nh.items import Ids, PotionType
from envs.nh.loadouts import Build
from envs.nh.params import FightParams
from envs.nh.prayers import Prayer
from envs.nh.sim import FightSim, Outcome
from envs.nh.spells import Spell
from envs.nh.state import Skill, TimerId


def noop() -> np.ndarray:
    return np.zeros(12, dtype=np.int64)


def action(**heads: int) -> np.ndarray:
    a = noop()
    for name, value in heads.items():
        a[Head[name.upper()]] = value
    return a


MELEE = action(attack=AttackHead.MELEE, melee_attack_type=MeleeType.NORMAL)


def duel(build: Build = Build.PURE, seed: int = 0, **kw: object) -> FightSim:
    """Self-play fight with player 0 first in PID order, adjacent (cardinal) players."""
    sim = FightSim(FightParams(account_build=build, opponent="agent", **kw))  # type: ignore[arg-type]
    sim.reset(seed=seed)
    p0, p1 = sim.players
    p0.pid, p1.pid = 0.2, 0.7
    p0.pid_countdown = p1.pid_countdown = 10_000
    p0.x, p0.y = 3096, 3530
    p1.x, p1.y = 3095, 3530
    return sim


def test_reset_simulates_nothing_and_players_start_idle() -> None:
    sim = duel()
    assert sim.tick == 0
    for p in sim.players:
        assert p.target is None and p.hp == p.base_hp == 99
        assert p.timer_ticks[TimerId.STAT_CHANGE] == 100
        assert p.special_energy == 100 and p.running and p.run_energy == 100


def test_melee_from_lower_pid_lands_same_tick_higher_pid_next_tick() -> None:
    """Spec §4.3/§4.6: melee has delay 0; PID decides whether it lands this tick or the next."""
    sim = duel()
    p0, p1 = sim.players
    sim.step([MELEE, MELEE])
    assert sim.events[0].hits and sim.events[1].hits
    # p0's hit was executed in p1's phase B of the same tick; p1's hit waits in p0's queue
    assert not p1.hit_queue
    assert len(p0.hit_queue) == 1
    assert p0.timer_ticks[TimerId.ATTACK] == 4  # scimitar speed 4 (§6.2)
    sim.step([noop(), noop()])
    assert not p0.hit_queue


def test_attack_cycle_every_speed_ticks() -> None:
    """Spec §4.2: an attack in tick T registers ATTACK = s; the next fires in tick T + s."""
    sim = duel()
    attack_ticks = []
    sim.step([MELEE, None])
    for _ in range(12):
        if sim.events[0].hits:
            attack_ticks.append(sim.tick)
        sim.step([None, None])
    assert attack_ticks[:3] == [1, 5, 9]


def test_eating_on_the_ready_tick_delays_the_attack_by_three() -> None:
    """Spec §8.2: u = 0 when the attack becomes ready → ATTACK := 3."""
    sim = duel()
    p0 = sim.players[0]
    p0.level[Skill.HITPOINTS] = 50
    sim.step([MELEE, None])  # tick 1: attack, ATTACK = 4
    for _ in range(3):
        sim.step([None, None])  # ticks 2–4
    eat = action(food=1)
    sim.step([eat, None])  # tick 5: uncapped 0 at the decrement → delayed to 3
    assert not sim.events[0].hits
    assert p0.timer_ticks[TimerId.ATTACK] == 3
    assert p0.hp == 50 + 22  # anglerfish heal at 99 HP (§8.1)


def test_food_brew_karambwan_combo_in_one_tick() -> None:
    """Spec §8.2: food → brew → karambwan all in one tick."""
    sim = duel(Build.LMS_PURE)
    p0 = sim.players[0]
    p0.level[Skill.HITPOINTS] = 40
    a = action(food=1, potion=PotionHead.BREW, karambwan=1)
    sim.step([a, None])
    # shark 20, brew +16, karambwan 18
    assert p0.hp == 40 + 20 + 16 + 18
    assert p0.timer_ticks[TimerId.FOOD] == 3
    assert p0.timer_ticks[TimerId.POTION] == 3
    assert p0.timer_ticks[TimerId.KARAMBWAN] == 3


def test_potion_clears_target_quirk_24() -> None:
    sim = duel()
    p0 = sim.players[0]
    p0.target = sim.players[1]
    sim.step([action(potion=PotionHead.RANGING), None])
    assert p0.target is None
    assert p0.level[Skill.RANGED] == 99 + 13  # ranging potion at 99 (App. C)


def test_saradomin_brew_levels() -> None:
    """Spec §8.3 and Appendix C: brew at 99 HP → +16 (cap 115); Attack drain uses base Attack."""
    sim = duel(Build.MAXED)
    p0 = sim.players[0]
    sim.step([action(potion=PotionHead.BREW), None])
    assert p0.hp == 115
    assert p0.level[Skill.DEFENCE] == 120
    assert p0.level[Skill.ATTACK] == 99 - (9 + 2)
    assert p0.level[Skill.STRENGTH] == 99 - (9 + 2)


def test_protection_prayer_and_smite() -> None:
    sim = duel()
    p0 = sim.players[0]
    sim.step([action(prayer=PrayerHead.PROTECT_MELEE), None])
    assert Prayer.PROTECT_FROM_MELEE in p0.prayers
    sim.step([action(prayer=PrayerHead.SMITE), None])
    assert p0.prayers == {Prayer.SMITE}


def test_prayer_drain_matches_spec_formula() -> None:
    """Spec §7.3: Protect from Melee (20/min) with prayer bonus b drains 0.2/(1+0.0333 b) per tick."""
    sim = duel()
    p0 = sim.players[0]
    sim.step([action(prayer=PrayerHead.PROTECT_MELEE), None])
    start = p0.level[Skill.PRAYER]
    per_tick = 20 / 100 / (1 + 0.0333 * p0.bonuses[13])
    n = 50
    for _ in range(n):
        sim.step([None, None])
    acc, expected = 0.0, 0
    for _ in range(n):
        acc += per_tick
        if acc >= 1:
            expected += int(acc)
            acc -= int(acc)
    assert start - p0.level[Skill.PRAYER] == expected


def test_ice_barrage_freezes_and_grants_immunity() -> None:
    sim = duel(seed=3)
    p0, p1 = sim.players
    ice = action(attack=AttackHead.MAGIC, mage_attack_type=1)
    for _ in range(40):
        sim.step([ice if sim.players[0].timer_ticks[TimerId.ATTACK] == 0 else noop(), None])
        if p1.timer_active(TimerId.FREEZE):
            break
    assert p1.timer_ticks[TimerId.FREEZE] == 32 or p1.timer_ticks[TimerId.FREEZE] == 31
    assert p1.timer_ticks[TimerId.FREEZE_IMMUNITY] - p1.timer_ticks[TimerId.FREEZE] == 5
    assert p0.selected_spell is None and p0.previous_spell is Spell.ICE_BARRAGE
    assert p0.target is None  # casting clears the target (§6.1)


def test_vengeance_reflects_three_quarters() -> None:
    sim = duel(Build.MED)
    p0, p1 = sim.players
    p1.spellbook = p1.spellbook.__class__.LUNAR
    p1.vengeance = True
    hits_before = 0
    for _ in range(30):
        sim.step([MELEE if p0.timer_ticks[TimerId.ATTACK] == 0 else noop(), None])
        if sim.events[1].extra_damage_dealt:
            hits_before = sim.events[1].extra_damage_dealt
            break
    assert hits_before > 0
    assert not p1.vengeance


def test_movement_clears_target_and_walks() -> None:
    sim = duel()
    p0 = sim.players[0]
    p0.set_timer(TimerId.ATTACK, 3)
    sim.step([action(movement=MovementHead.FARCAST, farcast_distance=5), None])  # distance 6
    assert p0.target is None
    assert max(abs(p0.x - 3095), abs(p0.y - 3530)) in (2, 3)  # running: 2 tiles this tick
    for _ in range(3):
        sim.step([None, None])
    assert max(abs(p0.x - 3095), abs(p0.y - 3530)) == 6


def test_double_kill_is_a_tie() -> None:
    sim = duel()
    p0, p1 = sim.players
    p0.level[Skill.HITPOINTS] = 1
    p1.level[Skill.HITPOINTS] = 1
    p0.damage_queue.append(5)
    p1.damage_queue.append(5)
    res = sim.step([None, None])
    assert res.outcomes == (Outcome.TIED, Outcome.TIED)
    with pytest.raises(RuntimeError):
        sim.step([None, None])


def test_truncation_at_max_ticks() -> None:
    sim = duel(max_episode_ticks=5)
    for _ in range(4):
        assert not sim.step([None, None]).truncated
    res = sim.step([None, None])
    assert res.truncated and not res.terminated


def test_stat_restore_every_hundred_ticks() -> None:
    sim = duel()
    p0 = sim.players[0]
    sim.step([action(potion=PotionHead.RANGING), None])
    boosted = p0.level[Skill.RANGED]
    for _ in range(98):
        sim.step([None, None])
    assert sim.tick == 99 and p0.level[Skill.RANGED] == boosted
    sim.step([None, None])
    assert p0.level[Skill.RANGED] == boosted - 1


def test_baseline_waits_for_first_hit_then_fights() -> None:
    sim = FightSim(FightParams(account_build=Build.PURE))
    sim.reset(seed=5)
    b = sim.players[1]
    sim.step([None, None])
    assert b.hp == 99 + 22  # spawn anglerfish overheal in tick 1 (§18.4)
    for _ in range(20):
        sim.step([None, None])
    assert b.target is None and b.remembered_target is None
    # the agent attacks; after its first hit lands the baseline's fight rules run
    for _ in range(30):
        sim.step([MELEE, None])
        if b.remembered_target is not None:
            break
    assert b.remembered_target is sim.players[0]


def test_same_seed_same_fight() -> None:
    def run(seed: int) -> list[tuple[int, int]]:
        sim = FightSim(FightParams(randomize_gear=True, randomize_build=True, training=True))
        sim.reset(seed=seed)
        rng = np.random.default_rng(99)
        trace = []
        for _ in range(300):
            a = np.array([rng.integers(0, n) for n in (4, 3, 3, 4, 5, 2, 2, 2, 2, 5, 7, 6)])
            res = sim.step([a, None])
            trace.append((sim.players[0].hp, sim.players[1].hp))
            if res.terminated or res.truncated:
                break
        return trace

    assert run(11) == run(11)
    assert run(11) != run(12)


def test_inventory_potion_dose_choice() -> None:
    """Agents drink the fewest-dose potion first (§5.3)."""
    sim = duel()
    p0 = sim.players[0]
    slots = [i for i, iid in enumerate(p0.inventory) if iid == Ids.ANGLERFISH][:1]
    p0.inventory[slots[0]] = 6691  # a 1-dose brew
    p0.level[Skill.HITPOINTS] = 50
    sim.step([action(potion=PotionHead.BREW), None])
    assert p0.inventory[slots[0]] == Ids.VIAL
    assert p0.potion_doses(PotionType.BREW) == 20  # five 4-dose brews untouched
