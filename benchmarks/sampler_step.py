"""The lockstep sampler's time per env step, split into env / inference / sampler, for its dict path and its array
path (`osrs_rllib/training/sampling/arrays.py`) on the same machine, interleaved fragment by fragment.

How to run this script::

    .venv/bin/python benchmarks/sampler_step.py                  # configs/nh.yml's env settings, 64 envs
    .venv/bin/python benchmarks/sampler_step.py --fragments 12 --json
    .venv/bin/python benchmarks/sampler_step.py --set env.frame_stack=2   # a setting the array path leaves alone

It builds `osrs-rllib train`'s algorithm for the config twice, sampling in the driver with one torch thread (as on
an env runner) and `--envs` environments on one compiled batch, pushes a league plan that puts nh.yml's kinds of
opponent in seat 1 (the in-simulator baseline, self-play, the two scripted rungs and two league slots, with the
config's shares), then alternates fragments of the two paths (one warm-up fragment each) so that load on the
machine falls on both alike. Per fragment and env step (ms): **env** (stepping the fights: the core call and the
environment's Python), **inference** (the forward passes), **sampler** (the sampler's own bookkeeping: trajectories,
episode ends, the fragment's batch with its advantages). Medians over the fragments; `--json`: the last line is
one JSON object (``dict_path``, ``array_path``: each part's median ms per env step; ``speedup`` of env + sampler;
``array_path_applies``: whether the settings take the array path at all).

Nothing is asserted: this script prints figures; tests/osrs_rllib/test_lockstep_arrays.py proves the two paths'
batches identical.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
PARTS = ("env", "inference", "sampler")


def league_plan(cfg: Any) -> Any:
    """nh.yml's opponent kinds as one league plan: the fixed kinds at their shares, the snapshot share on two slots."""
    from league.callback import LeaguePlan, PlanEntry, slot_policy_id

    mix = cfg.opponents.mix
    rows = [
        PlanEntry(None, "baseline", "baseline", mix.get("baseline", 0.0)),
        PlanEntry("main", "main", "self_play", mix.get("self_play", 0.0)),
        PlanEntry(None, "scripted_prayer_switcher", "prayer_switcher", mix.get("prayer_switcher", 0.0)),
        PlanEntry(None, "scripted_tribrid", "tribrid", mix.get("tribrid", 0.0)),
    ]
    slots = min(2, cfg.opponents.league_slots)
    rows += [
        PlanEntry(slot_policy_id(i), f"main_{i + 1}", "prioritized", mix.get("prioritized", 0.0) / slots)
        for i in range(slots)
    ]
    rows = [r for r in rows if r.prob > 0]
    total = sum(r.prob for r in rows)
    rows = [PlanEntry(r.seat_policy, r.opponent, r.kind, r.prob / total) for r in rows]
    return LeaguePlan(generation=1, learners=("main",), learner_probs=(1.0,), tables={"main": tuple(rows)})


def build(config: str, overrides: list[str], arrays: bool) -> tuple[Any, Any]:
    from osrs_rllib.config.schema import load_config
    from osrs_rllib.training.algorithm import build_algorithm_config, register_everything
    from osrs_rllib.training.sampling.lockstep import LockstepSampler

    register_everything()
    cfg = load_config(config, overrides)
    algo = build_algorithm_config(cfg).build_algo()
    worker = algo.env_runner
    sampler = worker.__dict__["_lockstep"] = LockstepSampler(worker, arrays=arrays)
    if arrays and sampler.arrays is None:
        print("note: the array path does not apply to these settings; both runs take the dict path")
    plan = league_plan(cfg)
    for env in worker.async_env.get_sub_environments():
        if getattr(env, "league_mode", False):
            env.set_league_plan(plan)
    return algo, sampler


def fragment_ms(worker: Any, sampler: Any) -> dict[str, float]:
    """One fragment; ms per env step of each part."""
    before = dict(sampler._perf)
    t0 = time.perf_counter()
    worker.sample()
    wall = time.perf_counter() - t0
    steps = sampler.fragment_length * len(sampler.envs)
    spent = {k: sampler._perf[k] - before[k] for k in before}
    out = {"env": spent["env"], "inference": spent["inference"]}
    out["sampler"] = wall - out["env"] - out["inference"]
    return {k: v * 1000 / steps for k, v in {**out, "total": wall}.items()}


def main() -> int | None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default=str(REPO / "configs" / "nh.yml"))
    parser.add_argument("--envs", type=int, default=64, help="environments on the batch (nh.yml: 64 per runner)")
    parser.add_argument("--fragment", type=int, default=64, help="env steps per environment per fragment")
    parser.add_argument("--fragments", type=int, default=8, help="timed fragments per path, after one warm-up")
    parser.add_argument("--set", dest="overrides", action="append", default=[], help="config override key=value")
    parser.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    args = parser.parse_args()
    import ray
    import torch

    overrides = [
        *args.overrides,
        "runners.num_env_runners=0",
        f"runners.num_envs_per_env_runner={args.envs}",
        f"ppo.train_batch_size={args.envs * args.fragment}",
        f"ppo.minibatch_size={args.envs * args.fragment}",
        "ray.num_cpus=1",
    ]
    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False, configure_logging=False)
    rows: dict[str, list[dict[str, float]]] = {"dict_path": [], "array_path": []}
    algos = []
    runs: dict[str, tuple[Any, Any]] = {}
    try:
        for name, arrays in (("dict_path", False), ("array_path", True)):
            algo, sampler = build(args.config, overrides, arrays)
            algos.append(algo)
            runs[name] = (algo.env_runner, sampler)
        torch.set_num_threads(1)  # an env runner's one CPU (building the algorithm set the learner's threads)
        for i in range(args.fragments + 1):
            for name, (worker, sampler) in runs.items():
                ms = fragment_ms(worker, sampler)
                if i > 0:
                    rows[name].append(ms)
    finally:
        for algo in algos:
            algo.stop()
        ray.shutdown()
    report: dict[str, Any] = {
        "machine": {"platform": platform.platform(), "python": platform.python_version()},
        "config": args.config,
        "overrides": args.overrides,
        "envs": args.envs,
        "fragment": args.fragment,
        "fragments": args.fragments,
        "array_path_applies": runs["array_path"][1].arrays is not None,
    }
    for name, per in rows.items():
        report[name] = {k: statistics.median(r[k] for r in per) for k in (*PARTS, "total")}
    own = {n: report[n]["env"] + report[n]["sampler"] for n in rows}
    report["speedup"] = own["dict_path"] / own["array_path"] if own["array_path"] else None
    for name in rows:
        m = report[name]
        print(f"{name:>10}: env {m['env']:.4f} ms, inference {m['inference']:.4f} ms, sampler {m['sampler']:.4f} ms, "
              f"total {m['total']:.4f} ms per env step (medians of {args.fragments} fragments)")  # fmt: skip
    print(f"env + sampler: {report['speedup']:.2f}x faster on the array path")
    if args.json:
        print(json.dumps(report))
    return None


if __name__ == "__main__":
    sys.exit(main())
