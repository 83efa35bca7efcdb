"""`play`: many fights between two policies through the lockstep loop, as per-fight (and per-tick) DataFrames.

The fights are played by `osrs_rllib.evaluation.match.play_match` (side A in seat 0 in every fight), so a model acts for
every live fight in one forward pass per tick; `workers > 1` splits the fights over processes, each running its
own loop. Every random draw of a fight is tied to the fight, never to the batch it ran in: fight ``k`` uses
simulator seed ``seed + k``, a scripted side is seeded from ``(seed + k, seat)`` and a sampling model draws its
noise from the same pair, exactly as `osrs-rllib fight` does. So the same seed gives the same DataFrames whatever
``parallel`` and ``workers`` are, and deterministic fights match `osrs-rllib fight` fight by fight.

Figures are read from the simulator state after each tick (`on_step` hands over the engine), once per tick
and player by `_TickReader`; the per-fight row is the sum of the per-tick rows by construction, which the
tests check. The state is read through `osrs_rllib.replay.engine_views`, so the fights run on either engine with the
same figures (and replays): the compiled core by default (``engine="auto"``).

A model side plays by the rules it was trained under (`policies.fight_rules`: its training config's masks and
``death_match``) unless `play`'s options set them, as in `osrs-rllib fight`; the DataFrames carry the rules used
in ``.attrs["rules"]``.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import multiprocessing
import os
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch

from envs.nh.contract import CRITIC_SIZE, HEADS, FrameStack
from envs.nh.core_engine import AnyEngine, check_engine
from envs.nh.engine import EngineStep
from envs.nh.loadouts import Build
from envs.nh.params import OPPONENT_AGENT, OPPONENT_BASELINE, FightParams
from envs.nh.sim import Outcome
from osrs_rllib.analysis.policies import AnalysisError, Policy, load_policy, policy_from_spec
from osrs_rllib.analysis.ticks import _COUNTS, STYLES, _state_row, _TickReader
from osrs_rllib.evaluation import (
    FightHooks,
    LadderSeat,
    Seat,
    SeatedPlayer,
    SeatNoise,
    play_match,
    seat_seed,
)
from osrs_rllib.replay import PlayerLike, engine_views
from osrs_rllib.replay.format import write_replay
from osrs_rllib.replay.recorder import FightRecorder, player_info, replay_name, winrate_fn
from policies.fight_rules import RulesConflict, fight_rules_of, resolve_fight_rules
from policies.torch_threads import torch_threads

logger = logging.getLogger(__name__)

DEFAULT_PARALLEL_FIGHTS = 64
"""Fights stepped in lockstep per process: one forward pass serves all of them."""
RESERVED_OPTIONS = frozenset({"opponent", "first_player_baseline"})
"""Reset options `play` sets itself (from the sides)."""
BUILD_OPTIONS = frozenset({"account_build", "build", "accountBuild"})
ACTION_COLUMNS = tuple(f"act_{spec.id}" for spec in HEADS)
"""Per-tick columns of the 12 heads' actions (spec §14.1), -1 where the simulator's baseline played."""
SIDES = ("a", "b")


# ---------------------------------------------------------------------------------------------------------
# Seats
# ---------------------------------------------------------------------------------------------------------
class _Recorder:
    """What each seat did this tick, per fight: filled by the seats' `act`, read by `on_step`."""

    def __init__(self, seeds: Sequence[int], fights: Sequence[int], record: bool, critic: bool) -> None:
        self.fight_of = {int(s): k for s, k in zip(seeds, fights, strict=True)}
        self.record = record
        self.critic = critic
        self.actions: dict[tuple[int, int], np.ndarray] = {}
        self.values: dict[tuple[int, int], float] = {}
        self.win_probs: dict[tuple[int, int], float] = {}
        self.obs: dict[tuple[int, int], np.ndarray] = {}
        self.masks: dict[tuple[int, int], np.ndarray] = {}
        self.critic_stacks: dict[tuple[int, int], FrameStack] = {}
        self.critic_in: dict[tuple[int, int], np.ndarray] = {}


class _ModelSeat:
    """A model acting for all live fights in one forward pass; sampling noise is drawn per fight."""

    def __init__(self, policy: Policy, seat: int, rec: _Recorder) -> None:
        assert policy.model is not None
        self.module = policy.model.module
        self.deterministic = policy.deterministic
        self.seat = seat
        self.rec = rec
        self.noise = SeatNoise(seat)
        self.winrate = winrate_fn(policy.model)
        """The model's win-probability extension, read while recording; None when it has none."""

    def forget(self, seed: int) -> None:
        self.noise.forget(seed)

    def __call__(self, obs: np.ndarray, masks: np.ndarray, seeds: Sequence[int]) -> np.ndarray:
        rec = self.rec
        noise = None if self.deterministic else torch.from_numpy(self.noise.draw(seeds))
        with torch.no_grad():
            obs_t = torch.from_numpy(obs)
            mask_t = torch.from_numpy(masks.astype(np.float32))
            if rec.record:
                features = self.module.features(obs_t)
                actions_t, _, _ = self.module.sample_from_features(features, mask_t, self.deterministic, noise)
                critic = obs_t
                if rec.critic:
                    critic = torch.from_numpy(
                        np.stack([rec.critic_in[(rec.fight_of[int(s)], self.seat)] for s in seeds])
                    )
                values = self.module.value(critic, features).numpy()
                win_probs = self.winrate(obs_t) if self.winrate is not None else None
            else:
                actions_t, _ = self.module(obs_t, mask_t, self.deterministic, noise)
        actions = actions_t.numpy()
        if rec.record:
            for j, s in enumerate(seeds):
                key = (rec.fight_of[int(s)], self.seat)
                rec.actions[key] = actions[j]
                rec.values[key] = float(values[j])
                if win_probs is not None:
                    rec.win_probs[key] = float(win_probs[j])
        return actions


class _LadderSeat:
    """A scripted rung (one bot per fight, seeded like `osrs-rllib fight`'s) that reports its actions."""

    def __init__(self, name: str, seat: int, rec: _Recorder) -> None:
        self.inner = LadderSeat(name, lambda fight_seed: seat_seed(fight_seed, seat))
        self.seat = seat
        self.rec = rec

    def forget(self, seed: int) -> None:
        self.inner.forget(seed)

    def __call__(self, obs: np.ndarray, masks: np.ndarray, seeds: Sequence[int]) -> np.ndarray:
        actions = self.inner(obs, masks, seeds)
        if self.rec.record:
            for j, s in enumerate(seeds):
                self.rec.actions[(self.rec.fight_of[int(s)], self.seat)] = actions[j]
        return actions


def _seat(policy: Policy, seat: int, rec: _Recorder) -> tuple[Seat, Any]:
    act = _ModelSeat(policy, seat, rec) if policy.kind == "model" else _LadderSeat(policy.source, seat, rec)
    return Seat(act, policy.frame_stack), act


# ---------------------------------------------------------------------------------------------------------
# One process's share of the fights
# ---------------------------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class _Job:
    a: tuple[str, str, bool]
    b: tuple[str, str, bool]
    fights: tuple[int, ...]
    """Fight indices of this job (fight k has seed `seed + k` and params `params[k]`)."""
    seed: int
    params: tuple[FightParams, ...]
    record: bool
    parallel: int
    threads: int = 1
    """Torch threads while the job runs (restored afterwards)."""
    replay_dir: str | None = None
    """Write each fight's replay file here (`osrs_rllib.replay`)."""
    engine: str = "auto"
    """The simulator (`make_engine`)."""


def _fight_row(
    k: int, seed: int, engine: AnyEngine, step: EngineStep, totals: list[list[int]], names: tuple[str, str]
) -> dict[str, Any]:
    info = engine.info(0)
    a, b = (dict(zip(_COUNTS, t, strict=True)) for t in totals)
    outcome = step.outcomes[0]
    winner = {Outcome.WON: "a", Outcome.LOST: "b"}.get(outcome, "tie") if outcome is not None else "tie"
    row: dict[str, Any] = {
        "fight": k,
        "seed": seed,
        "a": names[0],
        "b": names[1],
        "build": engine.build.value,
        "fight_type": engine.fight_mode.value,
        "winner": winner,
        "won": winner == "a",
        "truncated": outcome is None,
        "ticks": engine.tick,
        "damage_dealt": b["damage_taken"],
        "damage_received": a["damage_taken"],
    }
    for s in STYLES:
        row[f"damage_dealt_{s}"] = a[f"hit_damage_{s}"]
    for s in STYLES:
        row[f"damage_received_{s}"] = b[f"hit_damage_{s}"]
    row.update(
        hits=a["hits"],
        hits_on_prayer=a["hits_on_prayer"],
        hits_off_prayer=a["hits_off_prayer"],
        off_prayer_rate=a["hits_off_prayer"] / a["hits"] if a["hits"] else math.nan,
        hits_received=a["hits_received"],
        hits_received_protected=a["hits_received_protected"],
        correct_prayer_rate=a["hits_received_protected"] / a["hits_received"] if a["hits_received"] else math.nan,
        food_eaten=a["food_eaten"],
        karambwans_eaten=a["karambwans_eaten"],
        brew_doses=a["brew_doses"],
        food_wasted_hp=a["food_wasted_hp"],
        brew_wasted_hp=a["brew_wasted_hp"],
        specials_used=a["specials_used"],
        special_energy_used=a["special_energy_used"],
        frozen_ticks=a["frozen_ticks"],
        target_frozen_ticks=b["frozen_ticks"],
        hp_left=info["hp"],
        opp_hp_left=info["opponent_hp"],
        opp_hits=b["hits"],
        opp_food_eaten=b["food_eaten"],
        opp_karambwans_eaten=b["karambwans_eaten"],
        opp_brew_doses=b["brew_doses"],
        opp_specials_used=b["specials_used"],
    )
    return row


def _run_job(job: _Job) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Play `job.fights` in one lockstep loop; returns (per-fight rows, per-tick rows).

    Torch runs one thread per process by default: the networks are small, so intra-op threads only spin
    against the simulator (and other processes) for the same cores; `workers` is the way to use more.
    """
    with torch_threads(job.threads):
        return _run_job_inner(job)


def _run_job_inner(job: _Job) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    pa, pb = policy_from_spec(job.a), policy_from_spec(job.b)
    names = (pa.name, pb.name)
    seeds = [job.seed + k for k in job.fights]
    critic = job.record and any(p.model is not None and p.model.critic_size != p.model.obs_size for p in (pa, pb))
    rec = _Recorder(seeds, job.fights, job.record, critic)
    sides, acting = _sides(pa, pb, rec)
    params = [job.params[k] for k in job.fights]
    fight_rows: list[dict[str, Any]] = []
    tick_rows: list[dict[str, Any]] = []
    readers: dict[int, _TickReader] = {}
    totals: dict[int, list[list[int]]] = {}
    replays: dict[int, FightRecorder] = {}
    players = [
        player_info(side, p.name, p.kind, p.source, p.model, p.deterministic)
        for side, p in zip(SIDES, (pa, pb), strict=True)
    ]

    def observe(k: int, engine: AnyEngine) -> None:
        """Keep what each acting seat will see next tick (its raw observation, mask and critic input)."""
        for seat in range(len(acting)):
            if job.record:
                rec.obs[(k, seat)] = engine.obs[seat].copy()
                rec.masks[(k, seat)] = engine.masks[seat].copy()
            if critic:
                rec.critic_in[(k, seat)] = rec.critic_stacks[(k, seat)].push(engine.critic_obs(seat))

    def on_start(local: int, engine: AnyEngine) -> None:
        k = job.fights[local]  # play_match numbers the fights of this job from 0
        readers[k] = _TickReader(engine_views.players(engine))
        totals[k] = [[0] * len(_COUNTS), [0] * len(_COUNTS)]
        if critic:
            for seat, p in enumerate((pa, pb)[: len(acting)]):
                offsets = p.frame_stack if p.model is not None and p.model.critic_size != p.model.obs_size else [0]
                rec.critic_stacks[(k, seat)] = FrameStack(offsets, CRITIC_SIZE)
        if job.replay_dir is not None:
            replays[k] = FightRecorder(engine, job.seed + k, players, [True, len(acting) > 1], {"fight": k})
        observe(k, engine)

    def on_step(local: int, engine: AnyEngine, step: EngineStep) -> None:
        k = job.fights[local]
        reader = readers[k]
        tally = totals[k]
        per_player = []
        state, tick_events = engine_views.players(engine), engine_views.events(engine)
        for i in (0, 1):
            counts = reader.counts(state, tick_events, i)
            t = tally[i]
            for j, c in enumerate(counts):
                t[j] += c
            per_player.append(counts)
        if job.record:
            _tick_rows(rec, k, job.seed + k, engine.tick, state, per_player, tick_rows, len(acting))
        done = step.terminated or step.truncated
        if job.replay_dir is not None:
            keys = [(k, seat) for seat in (0, 1)]
            replays[k].step(
                engine,
                [rec.actions.get(key) for key in keys],
                [rec.values.get(key) for key in keys],
                [rec.win_probs.get(key) for key in keys],
            )
            if done:
                write_replay(replays.pop(k).finish(step), Path(job.replay_dir) / replay_name(k))
        if done:
            fight_rows.append(_fight_row(k, job.seed + k, engine, step, tally, names))
            del readers[k], totals[k]
            _forget(rec, acting, k, job.seed + k)
        else:
            observe(k, engine)

    _play(job, sides, params, seeds, FightHooks(on_start=on_start, on_step=on_step))
    return fight_rows, tick_rows


def _sides(pa: Policy, pb: Policy, rec: _Recorder) -> tuple[list[SeatedPlayer | None], list[Any]]:
    """Both sides as `play_match` takes them (None: the simulator's baseline) and the acting seats, which forget
    an ended fight in `on_step` together with the recorder's state of it (`_forget`)."""
    seat0, act0 = _seat(pa, 0, rec)
    seat1, act1 = (None, None) if pb.kind == "baseline" else _seat(pb, 1, rec)
    sides = [SeatedPlayer(seat0), None if seat1 is None else SeatedPlayer(seat1)]
    return sides, [act0] if act1 is None else [act0, act1]


def _play(
    job: _Job, sides: list[SeatedPlayer | None], params: list[FightParams], seeds: list[int], hooks: FightHooks
) -> None:
    """Side A in seat 0 every fight; the opponent's observation is built when a critic reads it (`fight_params`)."""
    play_match(
        sides[0],
        sides[1],
        params,
        seeds,
        [0] * len(seeds),
        parallel=job.parallel,
        engine=job.engine,
        hooks=hooks,
        opponent_observation=any(p.include_opponent_observation for p in params),
    )


def _tick_rows(
    rec: _Recorder,
    k: int,
    fight_seed: int,
    tick: int,
    state: Sequence[PlayerLike],
    per_player: list[list[int]],
    out: list[dict[str, Any]],
    n: int,
) -> None:
    """The tick's row of each player: its state, event counts, and what the acting seats chose and saw."""
    for i in (0, 1):
        row: dict[str, Any] = {"fight": k, "seed": fight_seed, "tick": tick, "player": SIDES[i]}
        row.update(_state_row(state[i]))
        row.update(zip(_COUNTS, per_player[i], strict=True))
        key = (k, i)
        actions = rec.actions.get(key) if i < n else None
        for h, col in enumerate(ACTION_COLUMNS):
            row[col] = int(actions[h]) if actions is not None else -1
        row["value"] = rec.values.get(key, math.nan) if i < n else math.nan
        row["win_prob"] = rec.win_probs.get(key, math.nan) if i < n else math.nan
        row["obs"] = rec.obs.get(key) if i < n else None
        row["mask"] = rec.masks.get(key) if i < n else None
        out.append(row)


def _forget(rec: _Recorder, acting: Sequence[Any], k: int, fight_seed: int) -> None:
    """Drop an ended fight's per-seat state (the players' and the recorder's)."""
    for seat, act in enumerate(acting):
        act.forget(fight_seed)
        for d in (rec.actions, rec.values, rec.win_probs, rec.obs, rec.masks, rec.critic_in, rec.critic_stacks):
            d.pop((k, seat), None)


# ---------------------------------------------------------------------------------------------------------
# The public entry point
# ---------------------------------------------------------------------------------------------------------
def fight_params(
    b: Policy, fights: int, build: Any = None, options: Mapping[str, Any] | None = None, *, critic: bool = False
) -> tuple[FightParams, ...]:
    """One `FightParams` per fight: the reset options, who plays seat B, and the build of fight k
    (``build[k % len(build)]``: fights spread evenly over several builds, and over fight types when the
    options randomise them, as `osrs_rllib.evaluation.stratified.spread` does for `osrs-rllib fight`).

    Raises:
        AnalysisError: An option `play` sets itself, or an unknown build.
        ParamError: An unknown or invalid reset option (spec §13.1).
    """
    options = dict(options or {})
    reserved = sorted(RESERVED_OPTIONS & set(options))
    if reserved:
        raise AnalysisError(
            f"reset option(s) {reserved} are set by play() itself from the sides: choose them with a and b"
        )
    if build is not None and BUILD_OPTIONS & set(options):
        raise AnalysisError(
            f"give the build once: build={build!r} and reset option(s) {sorted(BUILD_OPTIONS & set(options))}"
        )
    base = FightParams.from_options(options)
    base = dataclasses.replace(
        base,
        opponent=OPPONENT_BASELINE if b.kind == "baseline" else OPPONENT_AGENT,
        first_player_baseline=False,
        include_opponent_observation=critic or base.include_opponent_observation,
    )
    if build is None:
        return (base,) * fights
    builds = [build] if isinstance(build, str | Build) else list(build)
    if not builds:
        raise AnalysisError("build=[] names no build; pass None for the default or one or more builds")
    resolved = []
    for item in builds:
        try:
            resolved.append(FightParams.from_options({"account_build": item}).account_build)
        except ValueError as exc:
            raise AnalysisError(str(exc)) from None
    from osrs_rllib.evaluation import spread

    return tuple(spread(base, fights, resolved))


def play(
    a: Any,
    b: Any = "baseline",
    fights: int = 100,
    seed: int = 0,
    build: str | Build | Sequence[str | Build] | None = None,
    *,
    record: bool | str | os.PathLike[str] = False,
    deterministic: bool = True,
    parallel: int = DEFAULT_PARALLEL_FIGHTS,
    workers: int = 1,
    threads: int = 1,
    engine: str = "auto",
    **options: Any,
) -> pd.DataFrame | tuple[pd.DataFrame, pd.DataFrame]:
    """Fight side A against side B `fights` times; one row per fight, from A's point of view.

    Args:
        a: Side A (player 0): anything `load_policy` takes except ``baseline``.
        b: Side B (player 1): the same, or ``baseline`` (the simulator's own bot, spec §18).
        fights: Number of fights, ≥ 1.
        seed: Base seed, ≥ 0; fight k uses seed + k (the same fights as `osrs-rllib fight --seed`).
        build: One build (``"MED"``) or several (fights spread evenly over them); None keeps the reset
            options' build (PURE by default).
        record: Also return the per-tick DataFrame (two rows per tick, ``player`` ``a`` and ``b``); a
            directory also writes every fight as a replay file ``fight-<k>.nhreplay`` into it
            (`osrs_rllib.replay`, docs/replays.md; watch one with `show_replay`).
        deterministic: For sides given by name or path: greedy model actions, or sampled ones.
        parallel: Fights stepped together per process (one forward pass serves all of them).
        workers: Processes to spread the fights over (spawned; each runs its own lockstep loop).
        threads: Torch threads per process while fighting (1 suits these small networks best).
        engine: The simulator (`envs.nh.core_engine.make_engine`): ``auto`` (the compiled core when built, else
            the Python engine with one log line), ``core`` or ``python``; the DataFrames and the replays are the
            same on both.
        **options: Reset options of spec §13.1 (``max_episode_ticks=500``, ``randomize_gear=True``, ...). A model
            side's training rules (``allow_smite``, ... `policies.fight_rules.RULE_KEYS`) apply unless set here.

    Returns:
        The per-fight DataFrame: ``fight``, ``seed``, ``a``, ``b``, ``build``, ``fight_type``, ``winner``
        (``a``, ``b`` or ``tie``), ``won``, ``truncated``, ``ticks``; landed damage ``damage_dealt`` /
        ``damage_received`` and the rolled hit damage by style (``damage_dealt_melee``, ...;
        before landing, so hits still in flight at the end count and a kill's overkill too); ``hits``,
        ``hits_on_prayer``, ``hits_off_prayer``, ``off_prayer_rate``, ``hits_received``,
        ``hits_received_protected``, ``correct_prayer_rate``; ``food_eaten``, ``karambwans_eaten``,
        ``brew_doses``, ``food_wasted_hp``, ``brew_wasted_hp``; ``specials_used``, ``special_energy_used``,
        ``frozen_ticks``, ``target_frozen_ticks``, ``hp_left``, and B's ``opp_*`` supplies and specials.
        With `record`, ``(fights, ticks)``: each tick row holds a player's state after the tick (hitpoints,
        prayer points, overhead, prayers, gear set, weapon, special energy, vengeance, timers, food, brews
        and karambwans left, position), what the tick added to the per-fight sums (same column names as
        the counts above, plus ``damage_taken``), the action of every head (``act_<head>``, -1 for the
        simulator's baseline), the model's value estimate ``value``, its win probability ``win_prob`` (NaN unless the
        model file carries the ``winrate`` extension) and the ``obs`` / ``mask`` it acted on. Both DataFrames
        hold the rules played by in ``.attrs["rules"]`` (`FightRules.to_dict`).

    Raises:
        AnalysisError: A bad side, count, seed or option, or two model sides trained under different rules
            that the options leave open (the message says which).

    Example:
        >>> df = play("tribrid", "baseline", fights=20, seed=1)
        >>> len(df), set(df.winner) <= {"a", "b", "tie"}
        (20, True)
        >>> df, ticks = play("experiments/nh/models/best.nhmodel", "baseline", fights=1, record=True)  # doctest: +SKIP
    """
    if fights < 1:
        raise AnalysisError(f"fights must be at least 1, got {fights}")
    if seed < 0:
        raise AnalysisError(f"seed must be >= 0, got {seed}")
    if min(workers, parallel, threads) < 1:
        raise AnalysisError(f"workers, parallel and threads must be >= 1, got {workers}, {parallel}, {threads}")
    pa = load_policy(a, deterministic=deterministic)
    pb = load_policy(b, deterministic=deterministic)
    if pa.kind == "baseline":
        raise AnalysisError(
            "the simulator's baseline can only be side B; swap the sides (every figure is from A's view)"
        )
    replay_dir = None if isinstance(record, bool) else str(record)
    try:
        check_engine(engine)
    except ValueError as exc:
        raise AnalysisError(str(exc)) from None
    if replay_dir is not None:
        Path(replay_dir).mkdir(parents=True, exist_ok=True)
    record = bool(record)
    critic = record and any(p.model is not None and p.model.critic_size != p.model.obs_size for p in (pa, pb))
    try:
        rules = resolve_fight_rules(
            [fight_rules_of(p.model, name=p.name) for p in (pa, pb) if p.model is not None],
            options,
            how_to_set="{key}={python}",
        )
    except RulesConflict as exc:
        raise AnalysisError(f"{exc}; pass them to play() as keyword arguments") from None
    params = fight_params(pb, fights, build, {**rules.options(), **options}, critic=critic)
    workers = min(workers, fights)
    chunks = [tuple(range(fights))[w::workers] for w in range(workers)]
    jobs = [
        _Job(pa.spec(), pb.spec(), chunk, seed, params, record, parallel, threads, replay_dir, engine)
        for chunk in chunks
    ]
    logger.info("play %s vs %s: %d fights, seed %d, %d worker(s)", pa.name, pb.name, fights, seed, workers)
    if workers == 1:
        results = [_run_job(jobs[0])]
    else:
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
            results = list(pool.map(_run_job, jobs))
    fight_rows = [r for res in results for r in res[0]]
    frame = pd.DataFrame(fight_rows).sort_values("fight", kind="stable").reset_index(drop=True)
    frame.attrs["rules"] = rules.to_dict()
    if not record:
        return frame
    tick_rows = [r for res in results for r in res[1]]
    ticks = pd.DataFrame(tick_rows).sort_values(["fight", "tick", "player"], kind="stable").reset_index(drop=True)
    ticks.attrs["rules"] = rules.to_dict()
    return frame, ticks
