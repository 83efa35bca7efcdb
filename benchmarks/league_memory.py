"""Memory of an env runner as the league grows: after 5 snapshots and after 200 (the issue's bar: within 20 %).

How to run this script::

    .venv/bin/python benchmarks/league_memory.py                 # 5 → 200 snapshots, a table
    .venv/bin/python benchmarks/league_memory.py --snapshots 50  # quicker
    .venv/bin/python benchmarks/league_memory.py --json

It builds the training algorithm of `configs/smoke.yml` with the league on (PFSP and prioritized
past-self in the mix, one remote env runner, 4 opponent slots), adds snapshots of main (each a perturbed
copy, as training would produce), and after every batch of new snapshots re-plans (new snapshots are
swapped into the slots) and trains a few iterations so the runner really plays them. The resident set
size (RSS) of the remote env runner process is read after 5 snapshots and after the last one, each after
a `gc.collect()` in the runner. The driver's RSS is reported too: snapshot weights live on disk, not in
any process.

Nothing is asserted: this script prints figures.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]


def _rss_mb() -> float:
    import gc

    import psutil

    gc.collect()
    return psutil.Process(os.getpid()).memory_info().rss / 2**20


def run(snapshots: int, iterations_per_batch: int) -> dict[str, Any]:
    import ray

    from league.callback import LeagueRunner
    from osrs_rllib.config.schema import load_config
    from osrs_rllib.training.algorithm import build_algorithm_config, fixed_policies, make_league, register_everything

    cfg = load_config(
        REPO / "configs" / "smoke.yml",
        [
            "opponents.mix={baseline: 0.4, prioritized: 0.3, pfsp: 0.3}",
            "opponents.league_slots=4",
            "runners.num_env_runners=1",
            "runners.num_envs_per_env_runner=4",
            "env.params.max_episode_ticks=50",
            "league.snapshot_interval=1000000",
        ],
    )
    from common.ray_errors import dashboard_port_beside_others

    ray.init(num_cpus=2, include_dashboard=False, dashboard_port=dashboard_port_beside_others(),
             log_to_driver=False, configure_logging=False)
    rows = []
    try:
        register_everything()
        store = Path(tempfile.mkdtemp(prefix="league-memory-"))
        runner = LeagueRunner(make_league(cfg), store, cfg.opponents.league_slots, fixed_policies(), seed=0)
        algo = build_algorithm_config(cfg, tuple(runner.league.learners)).build_algo()
        rng = np.random.default_rng(0)
        base = algo.get_policy("main").get_weights()
        try:
            targets = sorted({5, snapshots} | set(range(25, snapshots, 25)))
            made = 0
            for target in targets:
                while made < target:
                    made += 1
                    weights = {
                        k: (v + rng.normal(0, 0.01, v.shape).astype(v.dtype)) if v.dtype == np.float32 else v
                        for k, v in base.items()
                    }
                    snap = runner.league.add_snapshot("main", iteration=made, training_steps=made)
                    runner.save_weights(snap[0].snapshot_id, weights)
                for _ in range(iterations_per_batch):
                    runner.plan(algo)
                    algo.train()
                runner_rss = algo.env_runner_group.foreach_env_runner(lambda w: _rss_mb(), local_env_runner=False)
                rows.append(
                    {
                        "snapshots": made,
                        "env_runner_rss_mb": runner_rss[0],
                        "driver_rss_mb": _rss_mb(),
                        "distinct_in_slots": len({c[0] for c in runner.slot_contents if c}),
                    }
                )
        finally:
            algo.stop()
    finally:
        ray.shutdown()
    first = next(r for r in rows if r["snapshots"] == 5)
    last = rows[-1]
    return {
        "rows": rows,
        "after_5_mb": first["env_runner_rss_mb"],
        f"after_{last['snapshots']}_mb": last["env_runner_rss_mb"],
        "growth": last["env_runner_rss_mb"] / first["env_runner_rss_mb"] - 1.0,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--snapshots", type=int, default=200)
    parser.add_argument("--iterations", type=int, default=2, help="iterations trained after each batch of snapshots")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    report = run(max(5, args.snapshots), max(1, args.iterations))
    if args.json:
        print(json.dumps(report, indent=1))
        return
    print(f"{'snapshots':>9} {'env runner RSS MB':>18} {'driver RSS MB':>14} {'distinct in slots':>18}")
    for r in report["rows"]:
        print(
            f"{r['snapshots']:>9} {r['env_runner_rss_mb']:>18.1f} {r['driver_rss_mb']:>14.1f} "
            f"{r['distinct_in_slots']:>18}"
        )
    print(f"env runner memory growth from 5 to {report['rows'][-1]['snapshots']} snapshots: {report['growth']:+.1%}")


if __name__ == "__main__":
    main()
