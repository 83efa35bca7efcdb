"""Soak test of the simulator: millions of random-legal ticks with every state invariant checked.

How to run this script::

    .venv/bin/python benchmarks/soak.py                          # 10,000,000 ticks on 2 processes
    .venv/bin/python benchmarks/soak.py --ticks 200000 --workers 4
    .venv/bin/python benchmarks/soak.py --ticks 200000 --json    # the figures as one JSON object, the last line

Fights are ``random`` against ``random`` (the ladder's uniformly random legal policy in both seats of
the self-play engine), and a share of them (``--baseline-share``, default 0.25) ``random`` against the
in-simulator baseline of spec §18. Every fight has gear, build (all builds, chosen by random player
identifiers, §12.7) and fight-type randomisation on, and training spawns (§16.2).

After every tick, for both players:

* hitpoints ≥ 0, special energy in 0..100, prayer points ≥ 0, every level ≥ 0, 28 inventory slots;
* observations finite;
* the fight has ended (terminated or truncated) by ``max_episode_ticks``.

Work is split into chunks of ``--chunk-ticks`` ticks with their own seed (``(seed, chunk index)``), so a
failure is reproducible from the chunk it names. A fight still running when its chunk's budget is spent
is dropped (not counted). A progress line is printed at most every ``--progress-every`` seconds.

Results to expect: no violations and no exceptions, exit status 0; the throughput of
`sim_throughput.py` times the number of workers (cores permitting). The script exits 1 on the first
exception or broken invariant, printing the chunk, fight seed and tick.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import sys
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from envs.nh.contract import IntArray
from envs.nh.engine import NHEngine
from envs.nh.loadouts import Build
from envs.nh.params import OPPONENT_AGENT, OPPONENT_BASELINE, FightParams
from envs.nh.state import Skill
from envs.opponents import make_opponent

INVENTORY_SLOTS = 28
MAX_SPECIAL_ENERGY = 100
SOAK_MAX_EPISODE_TICKS = 2000
"""Truncation limit of the soak's fights (the §13.1 default)."""


@dataclass(frozen=True, slots=True)
class Chunk:
    index: int
    ticks: int
    seed: int
    baseline_share: float


@dataclass(slots=True)
class ChunkResult:
    index: int
    ticks: int = 0
    episodes: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    """Keys ``<matchup>/<won|lost|tied|truncated>`` from player 0's view."""
    error: str | None = None
    """The broken invariant or the traceback, with what is needed to reproduce it."""


def check_invariants(engine: NHEngine) -> str | None:
    """The first broken invariant of the current state, or None."""
    sim = engine.sim
    for p in sim.players:
        who = f"player {p.index}"
        if p.hp < 0:
            return f"{who}: hitpoints {p.hp} < 0"
        if not 0 <= p.special_energy <= MAX_SPECIAL_ENERGY:
            return f"{who}: special energy {p.special_energy} outside 0..{MAX_SPECIAL_ENERGY}"
        if p.level[Skill.PRAYER] < 0:
            return f"{who}: prayer points {p.level[Skill.PRAYER]} < 0"
        if min(p.level) < 0:
            return f"{who}: levels {list(p.level)} contain a negative"
        if len(p.inventory) != INVENTORY_SLOTS:
            return f"{who}: inventory has {len(p.inventory)} slots, expected {INVENTORY_SLOTS}"
    if not np.isfinite(engine.obs).all():
        bad = np.argwhere(~np.isfinite(engine.obs)).tolist()
        return f"non-finite observation entries (player, index): {bad[:10]}"
    return None


def run_chunk(chunk: Chunk) -> ChunkResult:
    """Step fights until `chunk.ticks` ticks have run; stop at the first failure."""
    result = ChunkResult(chunk.index)
    rng = np.random.default_rng(np.random.SeedSequence((chunk.seed, chunk.index)))
    builds = tuple(Build)
    engine = NHEngine()
    fight_seed = -1
    tick_in_fight = 0
    try:
        while result.ticks < chunk.ticks:
            matchup = "random_vs_baseline" if rng.random() < chunk.baseline_share else "random_vs_random"
            fight_seed = int(rng.integers(2**63 - 1))
            params = FightParams(
                opponent=OPPONENT_BASELINE if matchup == "random_vs_baseline" else OPPONENT_AGENT,
                randomize_gear=True,
                randomize_build=True,
                random_build_options=builds,
                randomize_fight_type=True,
                training=True,
                agent=f"soak-{rng.integers(1 << 30)}",
                target=f"soak-{rng.integers(1 << 30)}",
                max_episode_ticks=SOAK_MAX_EPISODE_TICKS,
            )
            engine.reset(seed=fight_seed, params=params)
            policies = [make_opponent("random", fight_seed + 1)]
            if matchup == "random_vs_random":
                policies.append(make_opponent("random", fight_seed + 2))
            tick_in_fight = 0
            error = check_invariants(engine)
            while error is None and result.ticks < chunk.ticks:
                actions: list[IntArray | None] = [None, None]
                for i, policy in enumerate(policies):
                    actions[i] = policy.act(engine.obs[i], engine.masks[i])
                step = engine.step(actions)
                result.ticks += 1
                tick_in_fight += 1
                error = check_invariants(engine)
                if step.terminated or step.truncated:
                    result.episodes += 1
                    o = step.outcomes[0]
                    result.outcomes[f"{matchup}/{'truncated' if o is None else o.value}"] += 1
                    break
                if tick_in_fight >= SOAK_MAX_EPISODE_TICKS and error is None:
                    error = f"fight still running after max_episode_ticks={SOAK_MAX_EPISODE_TICKS}"
            if error is not None:
                result.error = (
                    f"chunk {chunk.index} (seed {chunk.seed}), {matchup} fight seed {fight_seed}, "
                    f"tick {tick_in_fight}, build {engine.sim.build.value}, "
                    f"mode {engine.sim.fight_mode.value}: {error}"
                )
                return result
    except Exception:
        result.error = (
            f"chunk {chunk.index} (seed {chunk.seed}), fight seed {fight_seed}, tick {tick_in_fight}: "
            f"exception\n{traceback.format_exc()}"
        )
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ticks", type=int, default=10_000_000, help="total ticks (default 10,000,000)")
    parser.add_argument("--workers", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument("--seed", type=int, default=0, help="base seed (default 0)")
    parser.add_argument("--baseline-share", type=float, default=0.25, help="share of fights vs the baseline")
    parser.add_argument("--chunk-ticks", type=int, default=50_000, help="ticks per work chunk (default 50,000)")
    parser.add_argument("--progress-every", type=float, default=10.0, help="seconds between progress lines")
    parser.add_argument("--json", action="store_true", help="also print one JSON object, the last line")
    args = parser.parse_args(argv)
    if args.ticks < 1 or args.workers < 1 or args.chunk_ticks < 1 or args.seed < 0:
        parser.error("--ticks, --workers and --chunk-ticks must be positive and --seed >= 0")
    if not 0.0 <= args.baseline_share <= 1.0:
        parser.error("--baseline-share must be in [0, 1]")

    n_chunks = -(-args.ticks // args.chunk_ticks)
    chunks = [
        Chunk(i, min(args.chunk_ticks, args.ticks - i * args.chunk_ticks), args.seed, args.baseline_share)
        for i in range(n_chunks)
    ]
    print(
        f"soak: {args.ticks:,} ticks in {n_chunks} chunks on {args.workers} worker(s), seed {args.seed}, "
        f"baseline share {args.baseline_share:g}",
        flush=True,
    )
    start = time.perf_counter()
    last_print = start
    ticks = episodes = 0
    outcomes: Counter[str] = Counter()
    failure: str | None = None
    ctx = mp.get_context("spawn")
    with ctx.Pool(args.workers) as pool:
        for res in pool.imap_unordered(run_chunk, chunks):
            ticks += res.ticks
            episodes += res.episodes
            outcomes.update(res.outcomes)
            if res.error is not None:
                failure = res.error
                pool.terminate()
                break
            now = time.perf_counter()
            if now - last_print >= args.progress_every:
                last_print = now
                rate = ticks / (now - start)
                eta = (args.ticks - ticks) / rate if rate else float("inf")
                print(
                    f"  {ticks:>12,} ticks  {episodes:>8,} fights  {rate:>9,.0f} ticks/s  eta {eta:,.0f} s",
                    flush=True,
                )
    elapsed = time.perf_counter() - start
    print(f"ticks run: {ticks:,}")
    print(f"episodes: {episodes:,}")
    for key in sorted(outcomes):
        print(f"  {key}: {outcomes[key]:,}")
    print(f"elapsed: {elapsed:,.1f} s ({ticks / elapsed:,.0f} ticks/s)")
    if failure is not None:
        print(f"FAILED: {failure}", file=sys.stderr)
    else:
        print("OK: no exceptions, no broken invariants")
    if args.json:
        report = {"ticks": ticks, "episodes": episodes, "outcomes": dict(sorted(outcomes.items())),
                  "elapsed_s": elapsed, "ok": failure is None, "failure": failure}  # fmt: skip
        print(json.dumps(report), flush=True)
    return 0 if failure is None else 1


if __name__ == "__main__":
    sys.exit(main())
