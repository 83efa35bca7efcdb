"""Soak test of the compiled simulator core: millions of ticks through `FightBatch.step_batch`, with the
state invariants checked, crashes caught and the process's memory watched.

How to run this script::

    .venv/bin/python benchmarks/soak_core.py                        # 10,000,000 ticks, batch of 256
    .venv/bin/python benchmarks/soak_core.py --ticks 500000 --batch 64
    .venv/bin/python benchmarks/soak_core.py --ticks 500000 --json  # the figures as one JSON object, the last line

Fights are set up as `soak.py` sets up the Python engine's: gear, build (all builds, by random player
identifiers, §12.7) and fight-type randomisation on, training spawns (§16.2), a share of them
(``--baseline-share``) against the in-simulator baseline of spec §18 and the rest agent against agent.
Actions are random per head over what the masks allow (`contract.masked_random_actions`). A fight that ends
is reset at once with new parameters and a new seed, so the batch stays full.

Checked:

* every tick, for every fight: observations and rewards finite; a fight never outlives
  ``max_episode_ticks``;
* every ``--check-every`` batch steps, every fight's tick count and both hitpoints (`brief`), and the whole
  state of ``--deep`` fights (`player`): hitpoints ≥ 0, special energy in 0..100, prayer points and every
  level ≥ 0, 28 inventory slots;
* memory: the resident set size after the first 10 % of the ticks and at the end; growth beyond
  ``--max-growth-mb`` fails the soak (the core allocates its fights once; nothing should grow);
* the core's own broken-invariant errors (an overflowing hit queue, an impossible state) surface as
  exceptions from `step_batch` and fail the soak with the fight's seed.

Results to expect: no violations, exit status 0, a few hundred thousand ticks per second on one core
(docs/compiled-core.md records a run). Exits 1 on the first failure, printing what reproduces it.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter

import numpy as np

from envs.nh.contract import HEAD_SIZES, OBS_SIZE, masked_random_actions
from envs.nh.core import load_core, reset_params, reward_weights_mapping
from envs.nh.loadouts import Build
from envs.nh.params import OPPONENT_AGENT, OPPONENT_BASELINE, FightParams
from envs.nh.rewards import CORE_REWARD_WEIGHTS
from envs.nh.state import Skill

INVENTORY_SLOTS = 28
MAX_SPECIAL_ENERGY = 100
SOAK_MAX_EPISODE_TICKS = 2000
"""Truncation limit of the soak's fights (the §13.1 default)."""
OUTCOMES = ("running", "won", "lost", "tied")
"""The core's outcome codes in `step_batch`'s results."""


def rss_mb() -> float:
    """Resident set size of this process (Linux ``/proc``)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return float("nan")


def fight_params(rng: np.random.Generator, baseline_share: float) -> FightParams:
    return FightParams(
        opponent=OPPONENT_BASELINE if rng.random() < baseline_share else OPPONENT_AGENT,
        randomize_gear=True,
        randomize_build=True,
        random_build_options=tuple(Build),
        randomize_fight_type=True,
        training=True,
        agent=f"soak-{rng.integers(1 << 30)}",
        target=f"soak-{rng.integers(1 << 30)}",
        max_episode_ticks=SOAK_MAX_EPISODE_TICKS,
    )


def deep_check(player: dict) -> str | None:
    """The first broken invariant of one player's whole state (`FightBatch.player`), or None."""
    hp = player["level"][Skill.HITPOINTS]
    if hp < 0:
        return f"hitpoints {hp} < 0"
    if not 0 <= player["special_energy"] <= MAX_SPECIAL_ENERGY:
        return f"special energy {player['special_energy']} outside 0..{MAX_SPECIAL_ENERGY}"
    if player["level"][Skill.PRAYER] < 0:
        return f"prayer points {player['level'][Skill.PRAYER]} < 0"
    if min(player["level"]) < 0:
        return f"levels {player['level']} contain a negative"
    if len(player["inventory"]) != INVENTORY_SLOTS:
        return f"inventory has {len(player['inventory'])} slots, expected {INVENTORY_SLOTS}"
    return None


def soak(ticks: int, batch_size: int, seed: int, baseline_share: float, check_every: int, deep: int,
         max_growth_mb: float, progress_every: float, as_json: bool = False) -> int:
    core = load_core()
    rng = np.random.default_rng(seed)
    batch = core.FightBatch(batch_size)
    batch.set_reward_weights(reward_weights_mapping(CORE_REWARD_WEIGHTS))
    seeds = np.zeros(batch_size, dtype=np.int64)
    params: list[FightParams] = [FightParams()] * batch_size
    has = np.zeros((batch_size, 2), dtype=np.int32)

    def reset(i: int) -> None:
        params[i] = fight_params(rng, baseline_share)
        seeds[i] = rng.integers(2**63 - 1)
        batch.reset(i, np.random.default_rng(int(seeds[i])).bit_generator.state, reset_params(params[i]))
        has[i] = (1, 0 if params[i].opponent == OPPONENT_BASELINE else 1)

    def where(i: int) -> str:
        p = params[i]
        return (f"fight {i}: seed {int(seeds[i])}, opponent {p.opponent}, agent {p.agent!r}, target {p.target!r} "
                f"(FightParams(randomize_gear, randomize_build over every build, randomize_fight_type, training))")

    for i in range(batch_size):
        reset(i)
    results = np.zeros((batch_size, 4), dtype=np.int32)
    masks = np.zeros((batch_size, 2, sum(HEAD_SIZES)), dtype=bool)
    obs = np.zeros((batch_size, 2, OBS_SIZE), dtype=np.float32)
    rewards = np.zeros((batch_size, 2), dtype=np.float64)
    batch.write_masks(masks, obs)
    done_ticks, steps, episodes = 0, 0, 0
    outcomes: Counter[str] = Counter()
    rss_early: float | None = None
    rss_end: float | None = None

    def finish(failure: str | None) -> int:
        """Say how the soak ended (a failure names what reproduces it) and return the exit status."""
        print(f"FAILED: {failure}" if failure is not None else "no violations")
        if as_json:
            print(json.dumps({"ticks": done_ticks, "batch": batch_size, "fights_ended": episodes,
                              "outcomes": dict(sorted(outcomes.items())), "rss_early_mb": rss_early,
                              "rss_end_mb": rss_end, "max_growth_mb": max_growth_mb, "ok": failure is None,
                              "failure": failure}), flush=True)  # fmt: skip
        return 0 if failure is None else 1

    start = last_print = time.perf_counter()
    while done_ticks < ticks:
        actions = masked_random_actions(rng, masks)
        try:
            done_ticks += batch.step_batch(actions, has, results, masks, obs, rewards)
        except Exception as exc:  # the core reports a broken invariant as an exception
            return finish(f"step_batch raised {type(exc).__name__}: {exc} (batch step {steps}, seed {seed})")
        steps += 1
        if not (np.isfinite(obs).all() and np.isfinite(rewards).all()):
            bad = sorted({int(i) for i in np.argwhere(~np.isfinite(obs))[:, 0]}
                         | {int(i) for i in np.argwhere(~np.isfinite(rewards))[:, 0]})
            return finish(f"non-finite observation or reward in {where(bad[0])}")
        if steps % check_every == 0:
            for i in range(batch_size):
                tick, _, _, _, hp0, hp1, _, _ = batch.brief(i)
                if tick > SOAK_MAX_EPISODE_TICKS or hp0 < 0 or hp1 < 0:
                    return finish(f"tick {tick}, hitpoints {hp0}/{hp1} in {where(i)}")
            for i in rng.choice(batch_size, size=min(deep, batch_size), replace=False):
                for p in (0, 1):
                    problem = deep_check(batch.player(int(i), p))
                    if problem is not None:
                        return finish(f"player {p}: {problem} in {where(int(i))}")
        ended = np.flatnonzero((results[:, 1] != 0) | (results[:, 3] != 0))
        for i in ended:
            episodes += 1
            outcomes["truncated" if results[i, 3] else OUTCOMES[results[i, 1]]] += 1
            reset(int(i))
        if len(ended):
            batch.write_masks(masks, obs)
            results[ended] = 0
        if rss_early is None and done_ticks >= ticks // 10:
            rss_early = rss_mb()
        now = time.perf_counter()
        if now - last_print >= progress_every:
            last_print = now
            print(f"{done_ticks:,} ticks, {episodes:,} fights, {done_ticks / (now - start):,.0f} ticks/s, "
                  f"RSS {rss_mb():.1f} MB", flush=True)
    elapsed = time.perf_counter() - start
    rss_end = rss_mb()
    growth = rss_end - (rss_early if rss_early is not None else rss_end)
    print(f"{done_ticks:,} ticks in {elapsed:.1f} s ({done_ticks / elapsed:,.0f} ticks/s, batch {batch_size}), "
          f"{episodes:,} fights ended: {dict(outcomes)}")
    print(f"memory: RSS {rss_early:.1f} MB after 10 % of the ticks, {rss_end:.1f} MB at the end "
          f"(growth {growth:+.1f} MB, limit {max_growth_mb:g})")
    return finish("memory grew" if growth > max_growth_mb else None)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ticks", type=int, default=10_000_000, help="total ticks (default 10,000,000)")
    parser.add_argument("--batch", type=int, default=256, help="fights stepped per call (default 256)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--baseline-share", type=float, default=0.25, help="share of fights vs the baseline")
    parser.add_argument("--check-every", type=int, default=50, help="batch steps between state checks")
    parser.add_argument("--deep", type=int, default=8, help="fights whose whole state each check reads")
    parser.add_argument("--max-growth-mb", type=float, default=16.0, help="allowed RSS growth after warm-up")
    parser.add_argument("--progress-every", type=float, default=10.0, help="seconds between progress lines")
    parser.add_argument("--json", action="store_true", help="also print one JSON object, the last line")
    args = parser.parse_args(argv)
    return soak(args.ticks, args.batch, args.seed, args.baseline_share, args.check_every, args.deep,
                args.max_growth_mb, args.progress_every, args.json)


if __name__ == "__main__":
    sys.exit(main())
