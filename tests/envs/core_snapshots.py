"""The Python engine's state in the plain form the compiled core's snapshots take.

The differential tests compare the compiled core's dicts (`FightBatch.player`, `.events`, `.stats`) with
these, field by field: enums as their number (IntEnums by value, other enums by position), player references
as player indices, sets as sorted lists. One place for the mapping, so a new ported field is added once for
every test; `test_core_mirrors.py` checks that it names every field of the Python definitions.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import pytest

from envs.nh.core import (
    REQUIRE_CORE_ENV,
    StaleCoreError,
    load_core,
    load_testing_core,
    mirrors,
    require_core,
    reset_params,
)
from envs.nh.items import ITEMS, SLOT_WEAPON, Stance, WeaponClass
from envs.nh.loadouts import Build, GearSet, Loadout
from envs.nh.sim import FightSim
from envs.nh.state import EMPTY, FightMode, PendingHit, PlayerState, Spellbook
from envs.nh.stats import EpisodeStats, TickEvents

BUILDS = list(Build)
GEAR_SETS = list(GearSet)
WEAPON_CLASSES = list(WeaponClass)
EFFECTS = {tag: k for k, tag in enumerate(mirrors.EFFECTS)}  # NH_EFFECT_* (generated from mirrors.EFFECTS)


def compiled_core(testing: bool = True) -> ModuleType:
    """The compiled core a core test module runs against: the testing build (`load_testing_core`: the batch
    API and the differential drivers) or, with `testing=False`, the production one (`load_core`).

    Where it is not built the module is skipped, unless `OSRS_RLLIB_REQUIRE_CORE` is set (CI sets it, as does
    `pytest --require-core`): then a missing core fails the module instead of turning it green by skipping.
    A stale core (built from other C sources) always fails, with the command that rebuilds it.
    """
    try:
        return load_testing_core() if testing else load_core()
    except StaleCoreError:
        raise
    except ImportError as exc:
        if require_core():
            pytest.fail(f"{exc} ({REQUIRE_CORE_ENV} is set: a missing core is a failure, not a skip)", pytrace=False)
        pytest.skip(str(exc), allow_module_level=True)


def loadout(lo: Loadout) -> dict[str, Any]:
    """A Loadout as `_nhcore` returns it (sets in GearSet order)."""
    return {
        "build": BUILDS.index(lo.build),
        "spellbook": list(Spellbook).index(lo.spellbook),
        "fight_mode": list(FightMode).index(lo.fight_mode),
        "primary_food": lo.primary_food,
        "sets": [list(lo.sets[gs]) for gs in GEAR_SETS],
        "equipment": list(lo.equipment),
        "inventory": list(lo.inventory),
        "melee_special_weapon": lo.melee_special_weapon,
        "ranged_weapon": lo.ranged_weapon,
        "magic_weapon": lo.magic_weapon,
        "ranged_special": lo.ranged_special,
        "has_nightmare_staff": lo.has_nightmare_staff,
    }


core_params = reset_params
"""`envs.nh.core.reset_params` (kept under the tests' name)."""


def _ref(p: PlayerState | None) -> int | None:
    return None if p is None else p.index


def _style(p: PlayerState) -> tuple[int, int, int, int]:
    """(weapon class, style index, stance, style type) as nh_player holds them."""
    wid = p.equipment[SLOT_WEAPON]
    wclass = ITEMS[wid].weapon_class if wid != EMPTY and ITEMS[wid].weapon_class else WeaponClass.UNARMED
    assert p.style is not None
    return (
        WEAPON_CLASSES.index(wclass),
        wclass.styles.index(p.style),
        list(Stance).index(p.style.stance),
        int(p.style.style_type.value),
    )


def _hit(h: PendingHit) -> dict[str, Any]:
    return {
        "attacker": h.attacker.index,
        "damages": list(h.damages),
        "accurate": bool(h.accurate),
        "delay": h.delay,
        "style": int(h.style),
        "effect": EFFECTS[h.effect],
    }


def player(p: PlayerState) -> dict[str, Any]:
    """Every field of a PlayerState as `FightBatch.player` returns it."""
    return {
        "index": p.index,
        "loadout": loadout(p.loadout),
        "base": list(p.base),
        "level": list(p.level),
        "equipment": list(p.equipment),
        "inventory": list(p.inventory),
        "spellbook": list(Spellbook).index(p.spellbook),
        "fight_mode": list(FightMode).index(p.fight_mode),
        "is_baseline": p.is_baseline,
        "bonuses": list(p.bonuses),
        "style": _style(p),
        "timer_ticks": list(p.timer_ticks),
        "timer_uncapped": list(p.timer_uncapped),
        "prayers": sorted(int(pr) for pr in p.prayers),
        "prayer_drain_acc": p.prayer_drain_acc,
        "prayer_drain_running": p.prayer_drain_running,
        "special_energy": p.special_energy,
        "special_armed": p.special_armed,
        "gmaul_queued": p.gmaul_queued,
        "special_regen_running": p.special_regen_running,
        "vengeance": p.vengeance,
        "target": _ref(p.target),
        "last_attacker": _ref(p.last_attacker),
        "last_hit_received_tick": p.last_hit_received_tick,
        "selected_spell": None if p.selected_spell is None else int(p.selected_spell),
        "previous_spell": None if p.previous_spell is None else int(p.previous_spell),
        "auto_retaliate": p.auto_retaliate,
        "hit_queue": [_hit(h) for h in p.hit_queue],
        "damage_queue": list(p.damage_queue),
        "hitsplats": list(p.hitsplats),
        "x": p.x,
        "y": p.y,
        "walk_queue": [tuple(t) for t in p.walk_queue],
        "moving": p.moving,
        "running": p.running,
        "run_energy": p.run_energy,
        "last_run_recovery_tick": p.last_run_recovery_tick,
        "spawn": tuple(p.spawn),
        "pid": p.pid,
        "pid_countdown": p.pid_countdown,
        "poison_damage": p.poison_damage,
        "dying": p.dying,
        "remembered_target": _ref(p.remembered_target),
    }


def _style_or_none(style: object) -> int | None:
    return None if style is None else int(style)


def events(ev: TickEvents) -> dict[str, Any]:
    """TickEvents as `FightBatch.events` returns it (a hit record's delay is left out: see nh_state.h)."""
    return {
        "hits": [
            {
                "attacker": r.hit.attacker.index,
                "damages": list(r.hit.damages),
                "accurate": bool(r.hit.accurate),
                "style": int(r.hit.style),
                "effect": EFFECTS[r.hit.effect],
                "attack_speed": r.attack_speed,
                "defender_protection": _style_or_none(r.defender_protection),
                "smite": r.smite,
            }
            for r in ev.hits
        ],
        "extra_damage_dealt": ev.extra_damage_dealt,
        "healed": ev.healed,
        "eat_at_hp": ev.eat_at_hp,
        "wasted_food": ev.wasted_food,
        "wasted_brew": ev.wasted_brew,
    }


def stats(st: EpisodeStats) -> dict[str, Any]:
    """EpisodeStats as `FightBatch.stats` returns it."""
    return {
        "n_hits": st.n_hits,
        "style_counts": list(st.style_counts),
        "defender_prayer_counts": list(st.defender_prayer_counts),
        "protected_count": st.protected_count,
        "recent": [(int(style), bool(correct)) for style, correct in st.recent],
        "recent_prayed": [int(style) for style in st.recent_prayed],
        "gear_samples": [None if s is None else list(s) for s in st.gear_samples],
        "dealt_scale_sum": st.dealt_scale_sum,
        "received_scale_sum": st.received_scale_sum,
        "observed_opponent_hp": st.observed_opponent_hp,
        "known_lunar_opponent": st.known_lunar_opponent,
    }


_TASK_KINDS = {
    "_schedule_retaliation": "retaliation",
    "_start_sacrifice": "sacrifice",
    "_start_bleed": "bleed",
    "_poison": "poison",
    "drain_special": "special_regen",
    "activate_prayer": "prayer_drain",
}


def tasks(sim: FightSim) -> list[tuple[str, int, int]]:
    """(kind, next_tick, period) of the simulator's tasks; the kind from the closure's defining method."""
    out = []
    for task in sim.tasks:
        owner = task.run.__qualname__.split(".<locals>")[0].split(".")[-1]
        out.append((_TASK_KINDS[owner], task.next_tick, task.period))
    return out
