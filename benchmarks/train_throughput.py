"""End-to-end training throughput of a config (default `configs/nh.yml`): env steps per second, and where
the time goes.

How to run this script::

    .venv/bin/python benchmarks/train_throughput.py                       # configs/nh.yml, 4 iterations
    .venv/bin/python benchmarks/train_throughput.py --iterations 2 --set ppo.train_batch_size=2048
    .venv/bin/python benchmarks/train_throughput.py --json

It builds exactly the PPO algorithm `osrs-rllib train` builds (same config, same env, same policy and
callbacks) on an embedded Ray with the config's CPU count, runs one warm-up iteration (actor start-up,
first allocations), then `--iterations` timed ones. Evaluation and checkpoints are not included: they
run every N iterations and are reported by the training run itself.

Reported per iteration (medians over the timed iterations):

* **env steps/s**: sampled env steps / wall time of ``algo.train()``;
* **sample / learn / sync**: RLlib's own timers of the PPO step (sampling, SGD epochs, weight sync);
* inside sampling, per env step on the env runners: **env** (the simulator + observations, both seats),
  **inference** (the policy forward passes) and **processing** (the sampler's own bookkeeping: collecting
  trajectories, advantages; for ``runners.sampler=rllib`` RLlib's connectors and collectors).

Compare the samplers with ``--set runners.sampler=rllib``.

Results to expect: see the closing notes of the training issue for this machine's figures. Nothing is
asserted: this script prints figures.
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


def per_env_step(cfg: Any, perf: dict[str, float]) -> dict[str, float]:
    """Sampler timings in ms per env step. The lockstep sampler reports them so; RLlib's `EnvRunnerV2`
    reports ms per vector step (one step of all of a runner's envs), so those are divided by the env count."""
    if cfg.runners.sampler == "lockstep":
        return dict(perf)
    return {k: v / cfg.runners.num_envs_per_env_runner for k, v in perf.items()}


def run(config: str, overrides: list[str], iterations: int) -> dict[str, Any]:
    import ray

    from osrs_rllib.config import load_config
    from osrs_rllib.rllib_config import build_algorithm_config, register_everything
    from osrs_rllib.train_report import env_steps_of

    cfg = load_config(config, overrides)
    from common.ray_errors import dashboard_port_beside_others

    ray.init(num_cpus=cfg.ray.num_cpus, include_dashboard=False, dashboard_port=dashboard_port_beside_others(),
             log_to_driver=False, configure_logging=False)
    try:
        register_everything()
        algo = build_algorithm_config(cfg).build_algo()
        rows = []
        try:
            for i in range(iterations + 1):
                before = env_steps_of(algo.train()) if i == 0 else rows[-1]["env_steps_total"]
                t0 = time.perf_counter()
                result = algo.train()
                seconds = time.perf_counter() - t0
                steps = env_steps_of(result) - before
                timers = result.get("timers", {})
                perf = per_env_step(cfg, (result.get("env_runners") or {}).get("sampler_perf", {}))
                rows.append(
                    {
                        "seconds": seconds,
                        "env_steps": steps,
                        "env_steps_total": env_steps_of(result),
                        "env_steps_per_s": steps / seconds,
                        "sample_ms": timers.get("sample_time_ms"),
                        "learn_ms": timers.get("learn_time_ms"),
                        "sync_ms": timers.get("synch_weights_time_ms"),
                        "env_ms_per_step": perf.get("mean_env_wait_ms"),
                        "inference_ms_per_step": perf.get("mean_inference_ms"),
                        "processing_ms_per_step": (perf.get("mean_raw_obs_processing_ms") or 0.0)
                        + (perf.get("mean_action_processing_ms") or 0.0),
                    }
                )
        finally:
            algo.stop()
    finally:
        ray.shutdown()

    def median(key: str) -> float | None:
        values = [r[key] for r in rows if r.get(key) is not None]
        return statistics.median(values) if values else None

    return {
        "machine": {"platform": platform.platform(), "python": platform.python_version(), "cpus": cfg.ray.num_cpus},
        "config": config,
        "overrides": overrides,
        "train_batch_size": cfg.ppo.train_batch_size,
        "env_runners": cfg.runners.num_env_runners,
        "envs_per_runner": cfg.runners.num_envs_per_env_runner,
        "sampler": cfg.runners.sampler,
        "iterations": rows,
        "median": {k: median(k) for k in rows[0] if k != "env_steps_total"},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default=str(REPO / "configs" / "nh.yml"))
    parser.add_argument("--iterations", type=int, default=4, help="timed iterations after one warm-up")
    parser.add_argument("--set", dest="overrides", action="append", default=[], help="config override key=value")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    report = run(args.config, args.overrides, max(1, args.iterations))
    if args.json:
        print(json.dumps(report, indent=1))
        return
    m = report["median"]
    print(f"config: {report['config']} {' '.join(report['overrides'])}")
    print(
        f"train batch {report['train_batch_size']}, {report['env_runners']} env runner(s) × "
        f"{report['envs_per_runner']} envs ({report['sampler']} sampler), {report['machine']['cpus']} CPUs"
    )
    print(f"{'iter':>4} {'seconds':>8} {'steps':>7} {'steps/s':>8} {'sample ms':>10} {'learn ms':>9}")
    for i, r in enumerate(report["iterations"], 1):
        print(
            f"{i:>4} {r['seconds']:>8.2f} {r['env_steps']:>7} {r['env_steps_per_s']:>8,.0f} "
            f"{r['sample_ms'] or 0:>10,.0f} {r['learn_ms'] or 0:>9,.0f}"
        )

    def f(key: str, spec: str) -> str:
        return "–" if m.get(key) is None else format(m[key], spec)

    print(f"median env steps/s: {f('env_steps_per_s', ',.0f')}")
    print(
        f"where the time goes per iteration: sampling {f('sample_ms', ',.0f')} ms, "
        f"learning {f('learn_ms', ',.0f')} ms, "
        f"weight sync {f('sync_ms', ',.0f')} ms"
    )
    print(
        f"per env step on the runners: env {f('env_ms_per_step', '.3f')} ms, inference "
        f"{f('inference_ms_per_step', '.3f')} ms, sampler processing {f('processing_ms_per_step', '.3f')} ms"
    )


if __name__ == "__main__":
    sys.exit(main())
