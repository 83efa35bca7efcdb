"""The NH fight simulator core: one `FightSim.step` is one game tick (spec §4).

Layout of a tick (spec §4.1), one helper per phase:

1. `_run_tasks`: scheduled tasks (prayer drain, special regeneration, retaliation, bleed, sacrifice,
   poison) in creation order.
2. `_phase_a`: per player in PID order: the baseline's rules, the timer decrement, the agent's action.
3. `_phase_b`: per player in PID order: PID countdown, movement, hit queue, attack, last-attacker
   expiry, run energy, the baseline's idle walk, stat restore.
4. `_end_of_tick`: known-Lunar marks, LMS prayer refill, termination and truncation.

The simulator knows nothing of RLlib or gymnasium: it takes one 12-head action per agent and leaves
observations, masks and rewards to `observation.py`, `masks.py` and `rewards.py`. Every random
number comes from the one generator `self.rng`, in the order of spec §16.6.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum

import numpy as np

from envs.nh import baseline, movement, operations
from envs.nh.actions import apply_action
from envs.nh.combat import Method, attack_range, combat_method, create_hits, special_for_weapon
from envs.nh.equipment import on_weapon_changed, recompute_bonuses
from envs.nh.items import Bonus, CombatStyle, Ids, Slot
from envs.nh.loadouts import Build, Loadout, baseline_loadout, choose_build, draw_build, make_loadout
from envs.nh.params import OPPONENT_AGENT, FightParams
from envs.nh.prayers import PRAYERS, Prayer
from envs.nh.spells import FREEZE_IMMUNITY_EXTRA_TICKS, SPELLS
from envs.nh.state import (
    FightMode,
    PendingHit,
    PlayerState,
    Skill,
    Spellbook,
    TimerId,
)
from envs.nh.stats import EpisodeStats, HitRecord, TickEvents

log = logging.getLogger(__name__)

# ---- constants (spec sections in comments) ----------------------------------------------------
TRAINING_SPAWN_X = (3041, 3101)  # §16.2, inclusive
TRAINING_SPAWN_Y = (3530, 3557)  # §16.2
SELF_PLAY_SPAWN_BOX = (-5, 4)  # §16.2: [x0 − 5, x0 + 4] × [y0 − 5, y0 + 4]
EVAL_AGENT_TILE = (3096, 3530)  # §16.2
EVAL_BASELINE_TILE = (3095, 3530)  # §16.2
PID_COUNTDOWN_TICKS = (40, 60)  # §4.4, U[40, 60]
STAT_CHANGE_PERIOD_TICKS = 100  # §9.4
LAST_ATTACKER_EXPIRY_TICKS = 10  # §4.1 step 3.5 [QUIRK 16, DROP]
RUN_ENERGY_RECOVERY_TICKS = 3  # §11.3 [QUIRK 8, DROP]
MAX_RUN_ENERGY = 100  # §11.3
SPECIAL_REGEN_PERIOD_TICKS = 50  # §6.11
SPECIAL_REGEN_AMOUNT = 10  # §6.11
MAX_SPECIAL_ENERGY = 100  # §6.9
PRAYER_BONUS_DRAIN_FACTOR = 0.0333  # §7.3
POISON_PERIOD_TICKS = 30  # §6.10.5
POISON_START_DAMAGE = 6  # §6.10.5 "super" poison
POISON_DECAY_EVERY = 5  # §6.10.5: every 5th application first drops by 1
POISON_CHANCE_MAX = 20  # §6.10.5: U[0, 20] ≤ 5
POISON_CHANCE_HIT = 5
BLOOD_FURY_ROLL_MAX = 100  # §6.10.1: U[0, 100] < 20
BLOOD_FURY_ROLL_BELOW = 20
BLOOD_FURY_HEAL_PCT = 30  # §6.10.1
VENGEANCE_REFLECT_PCT = 75  # §6.10.2
SMITE_DIVISOR = 4  # §6.10.3
REDEMPTION_TRIGGER_DIVISOR = 10  # §6.10.4: HP − dmg ≤ floor(baseHP / 10)
REDEMPTION_HEAL_PCT = 25  # §6.10.4
SACRIFICE_RUNS = 8  # §6.9 Ancient godsword
SACRIFICE_DAMAGE = 25  # §6.9
SACRIFICE_CANCEL_DISTANCE_TILES = 5  # §6.9
BLEED_EVERY_TICKS = 3  # §6.9 Morrigan's javelin
BLEED_MAX_PER_TICK = 5  # §6.9
STATIUS_DEFENCE_PCT = 70  # §6.9: floor(current × 7 / 10)
GMAUL_SPEC_COST = 50  # §6.9


class Outcome(Enum):
    """Result of a fight from one player's point of view (spec §16.3)."""

    WON = "won"
    LOST = "lost"
    TIED = "tied"


# ---- scheduled tasks (§4.1 step 1) -------------------------------------------------------------
@dataclass(slots=True)
class Task:
    """A scheduled task: `run` returns False when the task is finished."""

    next_tick: int
    period: int
    run: Callable[[], bool]


@dataclass(slots=True)
class TickResult:
    """What a tick did, for the environment layer."""

    tick: int
    outcomes: tuple[Outcome | None, Outcome | None]
    truncated: bool

    @property
    def terminated(self) -> bool:
        return self.outcomes[0] is not None


class FightSim:
    """Two players and one generator; `reset` builds a fight, `step` simulates one tick.

    Player 0 is always acted for; player 1 is acted for in self-play (`params.opponent == "agent"`)
    and is the scripted baseline of spec §18 otherwise.
    """

    def __init__(self, params: FightParams | None = None, seed: int | None = None) -> None:
        self.params = params or FightParams()
        self.rng = np.random.default_rng(seed)
        self.players: list[PlayerState] = []
        self.stats: list[EpisodeStats] = []
        self.events: list[TickEvents] = []
        self.tasks: list[Task] = []
        self.tick = 0
        self.done = True
        self.fight_mode = FightMode.NORMAL
        self.build = Build.PURE

    # =========================================================================================
    # reset (§16.1)
    # =========================================================================================
    def reset(self, seed: int | None = None, params: FightParams | None = None) -> None:
        """Build both players (draws in the order of spec §16.6); simulates no tick."""
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        if params is not None:
            self.params = params
        prm, rng = self.params, self.rng
        self.tick = 0
        self.tasks = []
        self.done = False
        # 0. build (§12.7): the identifier rule when identifiers are given, else one draw (project decision)
        if not prm.randomize_build:
            self.build = prm.account_build
        elif prm.agent or prm.target:
            self.build = choose_build(prm.random_build_options, prm.agent, prm.target)
        else:
            self.build = draw_build(prm.random_build_options, prm.random_build_weights, rng)
        # 1. fight mode
        if prm.randomize_fight_type:
            mode = (FightMode.NORMAL, FightMode.LMS, FightMode.PVP_ARENA)[int(rng.integers(0, 3))]
        else:
            mode = prm.fight_type
        # 2. gear randomisation
        self_play = prm.opponent == OPPONENT_AGENT
        gear_rng = rng if prm.randomize_gear else None
        load0 = make_loadout(self.build, gear_rng)
        load1 = make_loadout(self.build, gear_rng) if self_play else baseline_loadout(load0)
        self.fight_mode = mode or load0.fight_mode
        if prm.first_player_baseline:
            load0 = baseline_loadout(load0)
        p0 = self._new_player(0, load0, is_baseline=prm.first_player_baseline)
        p1 = self._new_player(1, load1, is_baseline=not self_play)
        self.players = [p0, p1]
        # 3. spawn tiles
        if prm.training:
            x0 = int(rng.integers(TRAINING_SPAWN_X[0], TRAINING_SPAWN_X[1] + 1))
            y0 = int(rng.integers(TRAINING_SPAWN_Y[0], TRAINING_SPAWN_Y[1] + 1))
            if self_play:
                lo, hi = SELF_PLAY_SPAWN_BOX
                x1 = int(rng.integers(max(TRAINING_SPAWN_X[0], x0 + lo), min(TRAINING_SPAWN_X[1], x0 + hi) + 1))
                y1 = int(rng.integers(max(TRAINING_SPAWN_Y[0], y0 + lo), min(TRAINING_SPAWN_Y[1], y0 + hi) + 1))
            else:
                x1, y1 = x0 - 1, y0
        else:
            x0, y0 = EVAL_AGENT_TILE
            x1, y1 = EVAL_AGENT_TILE if self_play else EVAL_BASELINE_TILE
        for p, (x, y) in ((p0, (x0, y0)), (p1, (x1, y1))):
            p.x, p.y = x, y
            p.spawn = (x, y)
        # 4. PID
        for p in self.players:
            p.pid = float(rng.random())
            p.pid_countdown = int(rng.integers(PID_COUNTDOWN_TICKS[0], PID_COUNTDOWN_TICKS[1] + 1))
        self.stats = [EpisodeStats(), EpisodeStats()]
        self.events = [TickEvents(), TickEvents()]

    def _new_player(self, index: int, loadout: Loadout, is_baseline: bool) -> PlayerState:
        p = PlayerState(
            index=index,
            loadout=loadout,
            base=list(loadout.base_levels),
            level=list(loadout.base_levels),
            equipment=list(loadout.equipment),
            inventory=list(loadout.inventory),
            spellbook=loadout.spellbook,
            fight_mode=self.fight_mode,
            is_baseline=is_baseline,
            auto_retaliate=is_baseline,  # §18.1: the baseline retaliates; agents do not (§4.5 step 7)
        )
        on_weapon_changed(p)
        recompute_bonuses(p)
        p.set_timer(TimerId.STAT_CHANGE, STAT_CHANGE_PERIOD_TICKS)
        return p

    def opponent(self, p: PlayerState) -> PlayerState:
        return self.players[1 - p.index]

    @property
    def agents(self) -> list[PlayerState]:
        return [p for p in self.players if not p.is_baseline]

    # =========================================================================================
    # step (§4.1)
    # =========================================================================================
    def step(self, actions: Sequence[Sequence[int] | None]) -> TickResult:
        """Simulate one tick; `actions[i]` is player i's 12-head action (ignored for the baseline)."""
        if self.done:
            raise RuntimeError("the fight is over: call reset() before stepping again (spec §16.3)")
        self.tick += 1
        for ev in self.events:
            ev.clear()
        p0, p1 = self.players
        p0.hitsplats.clear()
        p1.hitsplats.clear()
        order = [p1, p0] if p1.pid < p0.pid else [p0, p1]  # by PID, ties in player order (a stable sort)
        self._run_tasks()
        self._phase_a(order, actions)
        self._phase_b(order)
        return self._end_of_tick()

    # ---- step 1: scheduled tasks --------------------------------------------------------------
    def schedule(self, period: int, run: Callable[[], bool]) -> None:
        """Create a task: it first runs in step 1 of tick `now + period` (spec §4.1 step 1)."""
        self.tasks.append(Task(self.tick + period, period, run))

    def _run_tasks(self) -> None:
        tick = self.tick
        due = [t for t in self.tasks if t.next_tick == tick]
        if not due:
            return
        finished: list[Task] = []
        for task in due:
            if task.run():
                task.next_tick = tick + task.period
            else:
                finished.append(task)
        for task in finished:
            self.tasks.remove(task)

    # ---- step 2: phase A ----------------------------------------------------------------------
    def _phase_a(self, order: list[PlayerState], actions: Sequence[Sequence[int] | None]) -> None:
        for p in order:
            if p.is_baseline:
                baseline.decide(self, p)
            p.decrement_timers()
            if not p.is_baseline:
                action = actions[p.index]
                if action is not None:
                    apply_action(self, p, action)

    # ---- step 3: phase B ----------------------------------------------------------------------
    def _phase_b(self, order: list[PlayerState]) -> None:
        for p in order:
            self._pid_countdown(p)
            self._movement(p)
            self._process_hit_queue(p)
            self._attack(p)
            if p.last_attacker is not None and self.tick - p.last_hit_received_tick >= LAST_ATTACKER_EXPIRY_TICKS:
                p.last_attacker = None
            p.gmaul_queued = 0
            self._recover_run_energy(p)
            if p.is_baseline:
                baseline.idle_walk(self, p)
            self._stat_change(p)

    def _pid_countdown(self, p: PlayerState) -> None:
        """PID re-roll (spec §4.4); PvP-Arena locks agents' PIDs [QUIRK 9, KEEP for the baseline]."""
        if self.fight_mode is FightMode.PVP_ARENA and not p.is_baseline:
            return
        p.pid_countdown -= 1
        if p.pid_countdown <= 0:
            p.pid = float(self.rng.random())
            p.pid_countdown = int(self.rng.integers(PID_COUNTDOWN_TICKS[0], PID_COUNTDOWN_TICKS[1] + 1))

    def _movement(self, p: PlayerState) -> None:
        """Movement step (spec §11.3, §11.4): frozen players stay, attackers follow first."""
        if p.timer_active(TimerId.FREEZE):
            movement.reset_walk(p)
            return
        t = p.target
        if t is not None:
            method = combat_method(p)
            movement.follow(p, t, method.style is CombatStyle.MELEE, attack_range(p, method))
        movement.take_steps(p)

    def _recover_run_energy(self, p: PlayerState) -> None:
        """+1 run energy per 3 ticks while not moving (spec §11.3) [QUIRK 8, DROP]."""
        if (
            p.run_energy < MAX_RUN_ENERGY
            and (not p.moving or not p.running)
            and self.tick - p.last_run_recovery_tick >= RUN_ENERGY_RECOVERY_TICKS
        ):
            p.run_energy += 1
            p.last_run_recovery_tick = self.tick

    def _stat_change(self, p: PlayerState) -> None:
        """Natural restore and decay every 100 ticks (spec §9.4)."""
        if p.timer_active(TimerId.STAT_CHANGE) or p.hp <= 0:
            return
        p.set_timer(TimerId.STAT_CHANGE, STAT_CHANGE_PERIOD_TICKS)
        lv, base = p.level, p.base
        for s in Skill:
            if s is not Skill.PRAYER and lv[s] < base[s]:
                lv[s] += 1
        for s in Skill:
            if lv[s] > base[s]:
                lv[s] -= 1

    # ---- hit queue (§4.5) ---------------------------------------------------------------------
    def _process_hit_queue(self, v: PlayerState) -> None:
        if v.hp <= 0:
            v.hit_queue.clear()
            v.damage_queue.clear()
            return
        if v.hit_queue:
            kept: list[PendingHit] = []
            for hit in v.hit_queue:
                if hit.attacker.hp <= 0:
                    continue
                if hit.delay <= 0:
                    self._execute_hit(v, hit)
                else:
                    hit.delay -= 1
                    kept.append(hit)
            v.hit_queue = kept
        if v.damage_queue:
            self._apply_damage_queue(v)

    def _apply_damage_queue(self, v: PlayerState) -> None:
        """Every queued amount lands this pass, capped to the current hitpoints (spec §4.5 step 10)."""
        for amount in v.damage_queue:
            dealt = min(amount, v.hp)
            v.level[Skill.HITPOINTS] -= dealt
            v.hitsplats.append(dealt)
            if v.level[Skill.HITPOINTS] <= 0:
                v.dying = True
        v.damage_queue.clear()

    def _execute_hit(self, v: PlayerState, hit: PendingHit) -> None:
        """A pending hit whose delay elapsed (spec §4.5 steps 1–9)."""
        a = hit.attacker
        if v.hp <= 0 or a.hp <= 0:
            return
        total = hit.total
        if hit.accurate:
            if Prayer.REDEMPTION in v.prayers:
                self._redemption(v, total)
            if Prayer.SMITE in a.prayers:
                v.level[Skill.PRAYER] = max(0, v.level[Skill.PRAYER] - total // SMITE_DIVISOR)
        if hit.accurate or hit.style is not CombatStyle.MAGIC:
            v.damage_queue.extend(hit.damages)
        if hit.effect:
            self._after_hit_effect(v, hit, total)
        if hit.style is CombatStyle.MELEE and total > 0:
            if a.equipment[Slot.WEAPON] == Ids.DRAGON_DAGGER_PPP and v.poison_damage == 0:
                if int(self.rng.integers(0, POISON_CHANCE_MAX + 1)) <= POISON_CHANCE_HIT:
                    self._poison(v)
            if a.wears(Ids.AMULET_OF_BLOOD_FURY):
                if int(self.rng.integers(0, BLOOD_FURY_ROLL_MAX + 1)) < BLOOD_FURY_ROLL_BELOW:
                    self.events[a.index].healed += operations.effect_heal(a, total * BLOOD_FURY_HEAL_PCT // 100)
        if total > 0 and v.vengeance:
            reflect = total * VENGEANCE_REFLECT_PCT // 100
            if reflect > 0:
                a.damage_queue.append(reflect)
                self.events[v.index].extra_damage_dealt += reflect
                v.vengeance = False
        if v.auto_retaliate and v.target is None and not v.moving:
            self._schedule_retaliation(v, a)
        v.last_attacker = a
        v.last_hit_received_tick = self.tick
        if v.is_baseline:
            baseline.on_hit(self, v, total)

    def _redemption(self, v: PlayerState, total: int) -> None:
        """Spec §6.10.4."""
        remaining = v.hp - total
        if 0 < remaining <= v.base_hp // REDEMPTION_TRIGGER_DIVISOR:
            v.level[Skill.PRAYER] = 0
            operations.deactivate_all_prayers(v)
            amount = v.base[Skill.PRAYER] * REDEMPTION_HEAL_PCT // 100
            self.events[v.index].healed += operations.heal(v, amount, v.base_hp)

    def _after_hit_effect(self, v: PlayerState, hit: PendingHit, total: int) -> None:
        """Spell/special effects when a hit lands (spec §4.5 step 4, §6.9)."""
        a = hit.attacker
        if hit.effect == "statius":
            if hit.accurate and total > 0:
                v.level[Skill.DEFENCE] = v.level[Skill.DEFENCE] * STATIUS_DEFENCE_PCT // 100
        elif hit.effect == "ags_sacrifice":
            if hit.accurate:
                self._start_sacrifice(a, v)
        elif hit.effect == "morrigan_bleed" and total > 0:
            self._start_bleed(a, v, total)

    def _schedule_retaliation(self, v: PlayerState, a: PlayerState) -> None:
        def run() -> bool:
            v.target = a
            return False

        self.schedule(1, run)

    def _start_sacrifice(self, a: PlayerState, v: PlayerState) -> None:
        """Ancient godsword blood sacrifice: 25 damage and 25 heal on the 8th run (spec §6.9)."""
        runs = [0]

        def run() -> bool:
            runs[0] += 1
            if movement.distance(a, v) >= SACRIFICE_CANCEL_DISTANCE_TILES:
                return False
            if runs[0] < SACRIFICE_RUNS:
                return True
            v.damage_queue.append(SACRIFICE_DAMAGE)
            self.events[a.index].extra_damage_dealt += SACRIFICE_DAMAGE
            self.events[a.index].healed += operations.effect_heal(a, SACRIFICE_DAMAGE)
            return False

        self.schedule(1, run)

    def _start_bleed(self, a: PlayerState, v: PlayerState, total: int) -> None:
        """Morrigan's javelin bleed: min(5, rest) every 3rd tick until `total` is re-dealt (spec §6.9)."""
        state = [0, 0]  # runs, dealt

        def run() -> bool:
            if a.dying or v.dying:
                return False
            state[0] += 1
            if state[0] % BLEED_EVERY_TICKS:
                return True
            amount = min(BLEED_MAX_PER_TICK, total - state[1])
            state[1] += amount
            v.damage_queue.append(amount)
            self.events[a.index].extra_damage_dealt += amount
            return state[1] < total

        self.schedule(1, run)

    def _poison(self, v: PlayerState) -> None:
        """Super poison: 6 every 30 ticks, −1 on every 5th application, ends at ≤ 1 (spec §6.10.5)."""
        v.poison_damage = POISON_START_DAMAGE
        count = [0]

        def run() -> bool:
            if v.dying or v.poison_damage == 0:
                return False
            count[0] += 1
            if count[0] % POISON_DECAY_EVERY == 0:
                v.poison_damage -= 1
            amount = v.poison_damage
            v.damage_queue.append(amount)
            if amount <= 1:
                v.poison_damage = 0
                return False
            return True

        self.schedule(POISON_PERIOD_TICKS, run)

    # ---- attack (§6.1) ------------------------------------------------------------------------
    def _attack(self, a: PlayerState) -> None:
        t = a.target
        if t is None:
            return
        # (d) both alive and closer than 40 tiles
        if a.hp <= 0 or t.hp <= 0 or movement.distance(a, t) >= movement.MAX_ATTACK_DISTANCE_TILES:
            a.target = None
            return
        method = combat_method(a)
        # (a) reach
        if not movement.can_reach(a, t, method.style is CombatStyle.MELEE, attack_range(a, method), True):
            return
        # (b) attack timer (the granite-maul special ignores it)
        if method is not Method.GRANITE_MAUL and a.timer_active(TimerId.ATTACK):
            return
        # (c) the method allows it
        if method is Method.MAGIC_SPELL:
            spell = a.selected_spell
            assert spell is not None
            if a.spellbook is not Spellbook.ANCIENT or a.level[Skill.MAGIC] < SPELLS[spell].level:
                return
        elif method.is_special:
            cost = self._special_cost(a, method)
            if a.special_energy < cost:
                a.special_armed = False
                a.target = None
                return
        self._perform_attack(a, t, method)

    @staticmethod
    def _special_cost(a: PlayerState, method: Method) -> int:
        if method is Method.GRANITE_MAUL:
            return GMAUL_SPEC_COST * max(a.gmaul_queued, 1)
        spec = special_for_weapon(a.equipment[Slot.WEAPON])
        return spec[1] if spec is not None else 0

    def _perform_attack(self, a: PlayerState, t: PlayerState, method: Method) -> None:
        outcome = create_hits(self.rng, a, t, movement.distance(a, t))
        if method is not Method.GRANITE_MAUL:
            a.set_timer(TimerId.ATTACK, outcome.attack_speed)
        if outcome.energy_cost:
            self.drain_special(a, outcome.energy_cost)
        a.special_armed = False
        a.gmaul_queued = 0
        protection = protection_style(t)
        smite = Prayer.SMITE in a.prayers
        ev = self.events[a.index]
        stats = self.stats[a.index]
        for hit in outcome.hits:
            t.hit_queue.append(hit)
            ev.hits.append(HitRecord(hit, outcome.attack_speed, protection, smite))
            stats.record_hit(a, hit.style, protection)
        if outcome.freeze_ticks and not t.timer_active(TimerId.FREEZE) and not t.timer_active(
            TimerId.FREEZE_IMMUNITY
        ):
            t.set_timer(TimerId.FREEZE, outcome.freeze_ticks)
            t.set_timer(TimerId.FREEZE_IMMUNITY, outcome.freeze_ticks + FREEZE_IMMUNITY_EXTRA_TICKS)
            movement.reset_walk(t)
        if outcome.heal:
            ev.healed += operations.effect_heal(a, outcome.heal)
        if method is Method.MAGIC_SPELL or method is Method.NIGHTMARE_STAFF:
            if outcome.spell is not None:
                a.previous_spell = outcome.spell
            a.selected_spell = None
            a.target = None
            movement.reset_walk(a)

    # ---- shared mechanisms used by actions and the baseline -----------------------------------
    def drain_special(self, p: PlayerState, amount: int) -> None:
        """Spend special energy and start regeneration if none runs (spec §6.11)."""
        p.special_energy = max(0, p.special_energy - amount)
        if p.special_regen_running:
            return
        p.special_regen_running = True

        def run() -> bool:
            p.special_energy = min(MAX_SPECIAL_ENERGY, p.special_energy + SPECIAL_REGEN_AMOUNT)
            if p.special_energy >= MAX_SPECIAL_ENERGY:
                p.special_regen_running = False
                return False
            return True

        self.schedule(SPECIAL_REGEN_PERIOD_TICKS, run)

    def activate_prayer(self, p: PlayerState, prayer: Prayer) -> None:
        """Switch a prayer on and start the drain task if none runs (spec §7.2, §7.3)."""
        if operations.activate_prayer(p, prayer) and not p.prayer_drain_running:
            p.prayer_drain_running = True
            self.schedule(1, lambda: self._drain_prayer(p))

    def activate_prayers(self, p: PlayerState, prayers: Sequence[Prayer]) -> None:
        if p.level[Skill.PRAYER] > 0:
            for prayer in prayers:
                self.activate_prayer(p, prayer)

    def _drain_prayer(self, p: PlayerState) -> bool:
        """One run of the drain task (spec §7.3); returns False when it stops."""
        if not p.prayers or p.hp <= 0:
            p.prayer_drain_acc = 0.0
            p.prayer_drain_running = False
            return False
        drain = sum(PRAYERS[q].drain_per_minute for q in p.prayers)
        per_tick = drain / 100 / (1 + PRAYER_BONUS_DRAIN_FACTOR * p.bonuses[Bonus.PRAYER])
        p.prayer_drain_acc += per_tick
        if p.prayer_drain_acc >= 1:
            whole = int(p.prayer_drain_acc)
            p.level[Skill.PRAYER] = max(0, p.level[Skill.PRAYER] - whole)
            p.prayer_drain_acc -= whole
            if p.level[Skill.PRAYER] == 0:
                operations.deactivate_all_prayers(p)
                p.prayer_drain_acc = 0.0
                p.prayer_drain_running = False
                return False
        return True

    # ---- step 4: end of tick ------------------------------------------------------------------
    def _end_of_tick(self) -> TickResult:
        p0, p1 = self.players
        st0, st1 = self.stats
        if p1.vengeance:
            st0.known_lunar_opponent = True
        if p0.vengeance:
            st1.known_lunar_opponent = True
        if self.fight_mode is FightMode.LMS:
            for p in self.agents:
                p.level[Skill.PRAYER] = p.base[Skill.PRAYER]
        for p, q, st in ((p0, p1, st0), (p1, p0, st1)):
            if q.hitsplats:
                st.observed_opponent_hp = q.hp / q.base_hp
                st.dealt_scale_sum += sum(q.hitsplats) / q.base_hp
            if p.hitsplats:
                st.received_scale_sum += sum(p.hitsplats) / p.base_hp
        outcome0 = self._outcome(p0, p1)
        outcomes: tuple[Outcome | None, Outcome | None] = (outcome0, _mirror(outcome0))
        truncated = False
        if outcome0 is not None:
            self.done = True
        elif self.params.max_episode_ticks and self.tick >= self.params.max_episode_ticks:
            truncated = True
            self.done = True
        return TickResult(self.tick, outcomes, truncated)

    def _outcome(self, me: PlayerState, opp: PlayerState) -> Outcome | None:
        """Terminal check from player 0's view (spec §16.3) [QUIRK 6, DROP]."""
        if me.dying and opp.dying:
            return Outcome.TIED
        if opp.dying:
            return Outcome.WON
        if me.dying:
            return Outcome.LOST
        if not self.params.death_match and (not operations.has_any_food(me) or not operations.has_any_food(opp)):
            return Outcome.TIED
        return None


_MIRROR = {Outcome.WON: Outcome.LOST, Outcome.LOST: Outcome.WON, Outcome.TIED: Outcome.TIED, None: None}


def _mirror(o: Outcome | None) -> Outcome | None:
    return _MIRROR[o]


_PROTECTION = {
    Prayer.PROTECT_FROM_MAGIC: CombatStyle.MAGIC,
    Prayer.PROTECT_FROM_MISSILES: CombatStyle.RANGED,
    Prayer.PROTECT_FROM_MELEE: CombatStyle.MELEE,
}


def protection_style(p: PlayerState) -> CombatStyle | None:
    """The style a player's active protection prayer blocks, if any (check order Magic, Missiles, Melee)."""
    for prayer, style in _PROTECTION.items():
        if prayer in p.prayers:
            return style
    return None
