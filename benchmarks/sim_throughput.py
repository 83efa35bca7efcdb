"""Simulator throughput on one core: ticks per second of `NHEngine` for three matchups.

How to run this script::

    .venv/bin/python benchmarks/sim_throughput.py              # 10 s per scenario, a table
    .venv/bin/python benchmarks/sim_throughput.py --seconds 2  # quicker, noisier
    .venv/bin/python benchmarks/sim_throughput.py --json       # one JSON object

Scenarios (every tick builds observations and masks for both players, `observe_all=True`):

* ``baseline_vs_baseline``: two in-simulator baselines (spec §18). They stay idle until one is hit, so
  every fight runs to `max_episode_ticks`; this measures a quiet tick, not a busy one.
* ``random_vs_random``: the ``random`` ladder policy in both seats (self-play engine).
* ``tribrid_vs_baseline``: the ``tribrid`` ladder policy against the in-simulator baseline.

Each scenario's time (``--seconds``) is split evenly between two loops, both single-process:

1. **full loop**: what an evaluation run pays per tick: policy ``act`` for every acting seat, the engine
   step and the resets between fights. The policy's share is timed separately and reported.
2. **engine only**: acting seats are driven by a minimal sampler written here (a uniformly random legal
   value per head under the §14.2 dependencies, via `apply_dependencies_and_force`, with random numbers
   drawn in blocks). Only the ``engine.step`` call is timed (``perf_counter`` around it), so neither the
   sampler nor the resets count. In ``tribrid_vs_baseline`` the sampler replaces the tribrid, so this
   loop is really random-legal against the baseline; with no acting seat (baseline vs baseline) both
   loops measure the same thing.

Results to expect: a pure-Python simulator, so a few thousand ticks per second per core; the figures of
the machine the project was developed on are in the report that introduced this script. Nothing is
asserted: this script prints figures (STYLE 17).

``--core`` adds the compiled core (docs/compiled-core.md) beside the Python engine on the tick
**plus both players' masks, observations, signals and rewards** (default weights): the Python engine is
timed on `NHEngine.step` (``observe_all=True``), the core on `FightBatch.step_batch` over ``--batch`` fights
writing masks, observations and rewards into preallocated arrays (one call per tick of the whole batch).
Both are driven by the same kind of masked random actions, sampled outside the timed calls from the masks
the previous tick returned: each head uniform over the values its environment mask (§14.3) allows, 0 when
none is (the §14.2 dependencies between heads are not applied: vectorised over the batch).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from envs.nh.contract import (
    HEAD_SIZES,
    OBS_SIZE,
    BoolArray,
    Head,
    IntArray,
    apply_dependencies_and_force,
    masked_random_actions,
)
from envs.nh.core import load_core, reset_params, reward_weights_mapping
from envs.nh.engine import NHEngine
from envs.nh.params import OPPONENT_AGENT, OPPONENT_BASELINE, FightParams
from envs.nh.rewards import RewardWeights
from envs.opponents import ScriptedPolicy, make_opponent

WARMUP_TICKS = 50
"""Ticks stepped before each timed loop (imports, first allocations, caches)."""


@dataclass(frozen=True, slots=True)
class Scenario:
    name: str
    params: FightParams
    seats: tuple[str | None, str | None]
    """Ladder policy of player 0 and player 1; None where the simulator's baseline plays."""


SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        "baseline_vs_baseline",
        FightParams(opponent=OPPONENT_BASELINE, first_player_baseline=True),
        (None, None),
    ),
    Scenario("random_vs_random", FightParams(opponent=OPPONENT_AGENT), ("random", "random")),
    Scenario("tribrid_vs_baseline", FightParams(opponent=OPPONENT_BASELINE), ("tribrid", None)),
)


@dataclass(frozen=True, slots=True)
class Result:
    scenario: str
    full_ticks: int
    full_seconds: float
    full_ticks_per_s: float
    """Ticks per wall-clock second of the full loop (policy act + step + resets)."""
    policy_share: float
    """Fraction of the full loop's wall time spent in policy `act` calls."""
    engine_ticks: int
    engine_step_seconds: float
    engine_ticks_per_s: float
    """Ticks per second of `engine.step` alone (sampler and resets excluded)."""
    sampler_us_per_tick: float
    """Microseconds per tick the minimal sampler took for all acting seats (not in the figure above)."""
    fights: int
    """Fights finished across both loops."""


class BlockSampler:
    """A uniformly random legal value per head (§14.2 via `apply_dependencies_and_force`).

    Uniform numbers are drawn 4096 at a time so that a head's choice is one index into `flatnonzero`.
    """

    def __init__(self, seed: int) -> None:
        self._rng = np.random.default_rng(seed)
        self._u = self._rng.random(4096)
        self._i = 0

    def _choose(self, head: Head, legal: BoolArray) -> int:
        if self._i == len(self._u):
            self._u = self._rng.random(len(self._u))
            self._i = 0
        values = np.flatnonzero(legal)
        value = int(values[int(self._u[self._i] * len(values))])
        self._i += 1
        return value

    def sample(self, mask: BoolArray) -> IntArray:
        return apply_dependencies_and_force(mask, self._choose)


def _acting_seats(sc: Scenario) -> list[int]:
    return [i for i, s in enumerate(sc.seats) if s is not None]


def full_loop(sc: Scenario, seconds: float, seed: int) -> tuple[int, float, float, int]:
    """Run policies + engine for `seconds`; returns (ticks, wall seconds, seconds in act, fights)."""
    engine = NHEngine(sc.params, observe_all=True)
    policies: list[ScriptedPolicy | None] = [
        None if name is None else make_opponent(name, seed + i) for i, name in enumerate(sc.seats)
    ]
    fight_seed = seed
    engine.reset(seed=fight_seed)
    act_s = 0.0
    ticks = fights = 0
    warm = WARMUP_TICKS
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        if warm == 0:
            start = time.perf_counter()
            deadline = start + seconds
            act_s, ticks, fights = 0.0, 0, 0
        warm -= 1
        t0 = time.perf_counter()
        actions = [None if p is None else p.act(engine.obs[i], engine.masks[i]) for i, p in enumerate(policies)]
        t1 = time.perf_counter()
        act_s += t1 - t0
        step = engine.step(actions)
        ticks += 1
        if step.terminated or step.truncated:
            fights += 1
            fight_seed += 1
            engine.reset(seed=fight_seed)
        if warm < 0 and t1 >= deadline:
            break
    return ticks, time.perf_counter() - start, act_s, fights


def engine_loop(sc: Scenario, seconds: float, seed: int) -> tuple[int, float, float, int]:
    """Minimal sampler + engine; returns (ticks, seconds in step, seconds in sampler, fights)."""
    engine = NHEngine(sc.params, observe_all=True)
    seats = _acting_seats(sc)
    sampler = BlockSampler(seed)
    fight_seed = seed
    engine.reset(seed=fight_seed)
    actions: list[IntArray | None] = [None, None]
    step_s = sample_s = 0.0
    ticks = fights = 0
    warm = WARMUP_TICKS
    deadline = time.perf_counter() + seconds
    clock: Callable[[], float] = time.perf_counter
    while True:
        if warm == 0:
            step_s = sample_s = 0.0
            ticks = fights = 0
            deadline = clock() + seconds
        warm -= 1
        t0 = clock()
        for i in seats:
            actions[i] = sampler.sample(engine.masks[i])
        t1 = clock()
        step = engine.step(actions)
        t2 = clock()
        sample_s += t1 - t0
        step_s += t2 - t1
        ticks += 1
        if step.terminated or step.truncated:
            fights += 1
            fight_seed += 1
            engine.reset(seed=fight_seed)
        if warm < 0 and t2 >= deadline:
            break
    return ticks, step_s, sample_s, fights


def run_scenario(sc: Scenario, seconds: float, seed: int) -> Result:
    f_ticks, f_s, act_s, f_fights = full_loop(sc, seconds / 2, seed)
    e_ticks, step_s, sample_s, e_fights = engine_loop(sc, seconds / 2, seed)
    return Result(
        scenario=sc.name,
        full_ticks=f_ticks,
        full_seconds=f_s,
        full_ticks_per_s=f_ticks / f_s,
        policy_share=act_s / f_s,
        engine_ticks=e_ticks,
        engine_step_seconds=step_s,
        engine_ticks_per_s=e_ticks / step_s,
        sampler_us_per_tick=1e6 * sample_s / e_ticks,
        fights=f_fights + e_fights,
    )


# ---- compiled core beside the Python engine, tick only (``--core``) ----------------------------------
CORE_SCENARIOS: dict[str, tuple[FightParams, tuple[bool, bool]]] = {
    "baseline_vs_baseline": (FightParams(opponent=OPPONENT_BASELINE, first_player_baseline=True), (False, False)),
    "random_vs_random": (FightParams(opponent=OPPONENT_AGENT), (True, True)),
    "random_vs_baseline": (FightParams(opponent=OPPONENT_BASELINE), (True, False)),
}
"""Parameters and acting seats of the tick-only comparison."""



def python_tick_loop(params: FightParams, seats: tuple[bool, bool], seconds: float, seed: int) -> float:
    """Ticks per second of `NHEngine.step` (tick, both players' masks and observations, signals, rewards)."""
    rng = np.random.default_rng(seed)
    engine = NHEngine(params, observe_all=True)
    fight_seed = seed
    engine.reset(seed=fight_seed)
    step_s, ticks = 0.0, 0
    while step_s < seconds:
        a = masked_random_actions(rng, engine.masks).tolist()
        actions = [a[0] if seats[0] else None, a[1] if seats[1] else None]
        t0 = time.perf_counter()
        res = engine.step(actions)
        step_s += time.perf_counter() - t0
        ticks += 1
        if res.terminated or res.truncated:
            fight_seed += 1
            engine.reset(seed=fight_seed)
    return ticks / step_s


def core_tick_loop(params: FightParams, seats: tuple[bool, bool], seconds: float, seed: int, n: int) -> float:
    """Ticks per second (fights × ticks) of `FightBatch.step_batch` with masks and observations, resets excluded."""
    core = load_core()
    rng = np.random.default_rng(seed)
    batch = core.FightBatch(n)
    prm = reset_params(params)
    fight_seed = seed
    for i in range(n):
        batch.reset(i, np.random.default_rng(fight_seed + i).bit_generator.state, prm)
    fight_seed += n
    batch.set_reward_weights(reward_weights_mapping(RewardWeights()))
    has = np.tile(np.asarray(seats, dtype=np.int32), (n, 1))
    results = np.zeros((n, 4), dtype=np.int32)
    masks = np.zeros((n, 2, sum(HEAD_SIZES)), dtype=bool)  # NUM_MASK: one per head value
    obs = np.zeros((n, 2, OBS_SIZE), dtype=np.float32)
    rewards = np.zeros((n, 2), dtype=np.float64)
    batch.write_masks(masks, obs)
    step_s, ticks = 0.0, 0
    while step_s < seconds:
        actions = masked_random_actions(rng, masks)
        t0 = time.perf_counter()
        stepped = batch.step_batch(actions, has, results, masks, obs, rewards)
        step_s += time.perf_counter() - t0
        ticks += stepped
        ended = np.flatnonzero((results[:, 1] != 0) | (results[:, 3] != 0))
        for i in ended:
            if batch.fight(int(i))["done"]:
                batch.reset(int(i), np.random.default_rng(fight_seed).bit_generator.state, prm)
                fight_seed += 1
        if len(ended):
            batch.write_masks(masks, obs)  # the reset fights' first masks (the others' are rewritten unchanged)
        results[ended] = 0
    return ticks / step_s


def core_comparison(seconds: float, seed: int, n: int, as_json: bool) -> list[dict[str, Any]]:
    rows = []
    for name, (params, seats) in CORE_SCENARIOS.items():
        py = python_tick_loop(params, seats, seconds / 2, seed)
        c = core_tick_loop(params, seats, seconds / 2, seed, n)
        rows.append({"scenario": name, "python_ticks_per_s": py, "core_ticks_per_s": c, "speedup": c / py})
        if not as_json:
            if len(rows) == 1:
                print(f"\ntick + both players' masks, observations and rewards, core batch of {n} fights")
                print(f"{'scenario':<22} {'python ticks/s':>15} {'core ticks/s':>14} {'speed-up':>9}")
            print(f"{name:<22} {py:>15,.0f} {c:>14,.0f} {c / py:>8.1f}x", flush=True)
    return rows


def machine_info() -> dict[str, Any]:
    """Platform, CPU model, core count, Python/numpy versions and the load when the run started.

    A load average above the core count means other processes competed for the CPU: rerun on an idle
    machine before comparing figures.
    """
    cpu = platform.processor() or "unknown"
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {
        "platform": platform.platform(),
        "cpu": cpu,
        "logical_cpus": os.cpu_count(),
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "numpy": np.__version__,
        "load_average_1m": round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="wall time per scenario (default 10)")
    parser.add_argument("--seed", type=int, default=0, help="base seed (default 0)")
    parser.add_argument(
        "--scenario", action="append", choices=[s.name for s in SCENARIOS], help="run only these (repeatable)"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    parser.add_argument(
        "--core", action="store_true", help="also time the compiled core beside the Python engine (rewards included)"
    )
    parser.add_argument("--batch", type=int, default=256, help="fights per core batch with --core (default 256)")
    args = parser.parse_args(argv)
    if args.seconds <= 0:
        parser.error("--seconds must be positive")

    machine = machine_info()
    chosen = [s for s in SCENARIOS if not args.scenario or s.name in args.scenario]
    if not args.json:
        print("machine:", ", ".join(f"{k}={v}" for k, v in machine.items()))
        print(f"{args.seconds:g} s per scenario, split between the full loop and the engine-only loop\n")
    results = []
    for sc in chosen:
        results.append(run_scenario(sc, args.seconds, args.seed))
        if not args.json:
            r = results[-1]
            if len(results) == 1:
                print(
                    f"{'scenario':<22} {'full ticks/s':>13} {'policy %':>9} {'engine ticks/s':>15} "
                    f"{'sampler us/tick':>16} {'fights':>7}"
                )
            print(
                f"{r.scenario:<22} {r.full_ticks_per_s:>13,.0f} {100 * r.policy_share:>8.1f}% "
                f"{r.engine_ticks_per_s:>15,.0f} {r.sampler_us_per_tick:>16.1f} {r.fights:>7}",
                flush=True,
            )
    core_rows = core_comparison(args.seconds, args.seed, args.batch, args.json) if args.core else None
    if args.json:
        out: dict[str, Any] = {"machine": machine, "seconds": args.seconds, "results": [asdict(r) for r in results]}
        if core_rows is not None:
            out["core_with_rewards"] = core_rows
        print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
