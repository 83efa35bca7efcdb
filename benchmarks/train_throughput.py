"""End-to-end training throughput of a config (default `configs/nh.yml`): env steps per second, and where
the time goes.

How to run this script::

    .venv/bin/python benchmarks/train_throughput.py                       # configs/nh.yml, 4 iterations
    .venv/bin/python benchmarks/train_throughput.py --iterations 2 --set ppo.train_batch_size=2048
    .venv/bin/python benchmarks/train_throughput.py --json
    .venv/bin/python benchmarks/train_throughput.py --whole-run --minutes 6 --json   # a whole run's time account

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

``--whole-run --minutes M`` runs the config as ``osrs-rllib train`` does instead (the same `Trainer`: its
evaluation, checkpoint and league snapshot intervals as they are, TensorBoard, a temporary experiments directory
unless ``--experiments-dir``) until M minutes of wall time have passed since its first iteration began (or a stop
limit of the config is reached), and prints the run's time account (`osrs_rllib.training.time_account`): where every
second went. Its figures:

* **whole-run env steps/s**: env steps over the wall time from the first iteration to the run's end (start-up,
  i.e. Ray's start and building the algorithm, is accounted but left out of the rate: a 6-minute run would
  otherwise weigh it 10 times as much as an hour does);
* **between-evaluations env steps/s**: env steps over the time inside ``algo.train()`` only (sampling, learning,
  weight and statistics sync): the rate with nothing else to do, as the default mode measures it.

With ``--json`` the last line is one JSON object: ``whole_run_env_steps_per_s``,
``between_evaluations_env_steps_per_s``, ``wall_s`` (the whole run, start-up included), ``time_account_s``
(seconds per part, summing to ``wall_s``) and more.

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

    from osrs_rllib.config import load_config, ray_cpus
    from osrs_rllib.training.algorithm import build_algorithm_config, machine_choice, register_everything
    from osrs_rllib.training.report import env_steps_of

    cfg = load_config(config, overrides)
    from common.ray_errors import dashboard_port_beside_others

    ray.init(num_cpus=ray_cpus(cfg.ray.num_cpus), include_dashboard=False,
             dashboard_port=dashboard_port_beside_others(), log_to_driver=False, configure_logging=False)
    try:
        register_everything()
        machine = machine_choice(cfg).to_json()
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
        "machine": {"platform": platform.platform(), "python": platform.python_version(), **machine},
        "config": config,
        "overrides": overrides,
        "train_batch_size": cfg.ppo.train_batch_size,
        "env_runners": machine["num_env_runners"],
        "envs_per_runner": cfg.runners.num_envs_per_env_runner,
        "sampler": cfg.runners.sampler,
        "iterations": rows,
        "median": {k: median(k) for k in rows[0] if k != "env_steps_total"},
    }


class WallClockLimit:
    """A stop rule (`osrs_rllib.training.parts.StopRule`): `minutes` of wall time from its first check (the loop's
    start, so Ray's start-up does not eat the budget), or the config's own limits, whichever comes first."""

    def __init__(self, minutes: float, limits: Any) -> None:
        self.minutes = minutes
        self.limits = limits
        self.started: float | None = None

    def __call__(self, state: Any) -> str | None:
        now = time.perf_counter()
        if self.started is None:
            self.started = now
        if now - self.started >= self.minutes * 60:
            return f"reached {self.minutes:g} minutes of wall time"
        return self.limits(state)


def whole_run(config: str, overrides: list[str], minutes: float, experiments_dir: str | None) -> dict[str, Any]:
    """Train `config` as `osrs-rllib train` does for `minutes` of wall time; the run's time account and rates."""
    import tempfile

    from osrs_rllib.config.schema import load_config
    from osrs_rllib.experiments.layout import Experiment
    from osrs_rllib.training import Trainer
    from osrs_rllib.training.parts import StopLimits

    with tempfile.TemporaryDirectory(prefix="train-throughput-") as tmp:
        root = experiments_dir or tmp
        cfg = load_config(config, [*overrides, f"experiments_dir={root}", "logging.live=false"])
        exp = Experiment.open(cfg.experiments_dir, cfg.name, force=True)
        command = [sys.executable, *sys.argv]
        code = Trainer(cfg, exp, stop_rule=WallClockLimit(minutes, StopLimits(cfg.stop)), command=command).run()
        run = exp.read_run()
    account = run.get("time_account") or {}
    whole, between = account.get("whole_run_env_steps_per_s"), account.get("between_evaluations_env_steps_per_s")
    return {
        "mode": "whole_run",
        "machine": {"platform": platform.platform(), "python": platform.python_version(), **(run.get("machine") or {})},
        "config": config,
        "overrides": overrides,
        "minutes": minutes,
        "exit_code": code,
        "state": run.get("state"),
        "iterations": account.get("iterations"),
        "env_steps": account.get("env_steps"),
        "wall_s": account.get("wall_s"),
        "loop_wall_s": account.get("loop_wall_s"),
        "algorithm_s": account.get("algorithm_s"),
        "whole_run_env_steps_per_s": whole,
        "between_evaluations_env_steps_per_s": between,
        "whole_over_between": whole / between if whole is not None and between else None,
        "time_account_s": account.get("parts_s"),
        "time_account_share": account.get("shares"),
        "sampling_split_s": account.get("sampling_split_s"),
        "evaluation": {"interval": cfg.evaluation.interval, "fights": cfg.evaluation.fights},
        "checkpoint_interval": cfg.checkpoint.interval,
        "snapshot_interval": cfg.league.snapshot_interval if cfg.league_enabled else None,
    }


def main() -> int | None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default=str(REPO / "configs" / "nh.yml"))
    parser.add_argument("--iterations", type=int, default=4, help="timed iterations after one warm-up")
    parser.add_argument("--set", dest="overrides", action="append", default=[], help="config override key=value")
    parser.add_argument("--json", action="store_true", help="print one JSON object (--whole-run: as the last line)")
    parser.add_argument("--whole-run", action="store_true", help="a whole training run, with its time account")
    parser.add_argument("--minutes", type=float, default=6.0, help="--whole-run: wall minutes from the first iteration")
    parser.add_argument("--experiments-dir", default=None, help="--whole-run: keep the run here (default: temporary)")
    args = parser.parse_args()
    if args.whole_run:
        report = whole_run(args.config, args.overrides, args.minutes, args.experiments_dir)
        if report["whole_over_between"] is not None:
            print(
                f"whole run: {report['whole_run_env_steps_per_s']:,.0f} env steps/s after start-up; between "
                f"evaluations (inside algo.train()): {report['between_evaluations_env_steps_per_s']:,.0f}/s "
                f"({report['whole_over_between']:.0%})"
            )
        if args.json:
            print(json.dumps(report))
        return report["exit_code"] or None
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
