"""How training scales with the machine: env steps per second of sampling, seconds of learning per iteration and
the whole iteration's rate, for each number of env runners and each learner device asked for.

How to run this script::

    .venv/bin/python benchmarks/scaling.py --runners 1,2 --json               # this laptop, the CPU learner
    .venv/bin/python benchmarks/scaling.py --runners 2,4,8,15 --devices cpu,cuda --json   # a GPU workstation

Each setting builds exactly the algorithm `osrs-rllib train configs/nh.yml` builds (`benchmarks/train_throughput.py`:
the same config, env, policy and callbacks, on an embedded Ray with the machine's cores), runs one
warm-up iteration and `--iterations` timed ones, and reports medians:

* ``env_steps_per_s``: env steps sampled per second of sampling (RLlib's sample timer): what the runners deliver;
* ``learn_s_per_iter``: seconds of PPO's update per iteration (RLlib's learn timer), on the device asked for;
* ``iteration_env_steps_per_s``: env steps per second of a whole ``algo.train()`` (sampling, learning, weight sync).

The batch per iteration is the config's on every setting (``ppo.rollout_fragment_length: auto``), so the learning
seconds compare the same work. With ``--json`` every setting is one JSON line. Nothing is asserted: this prints
figures (docs/training.md, "Scaling with the machine", keeps the ones measured).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))


def measure(config: str, runners: int, device: str, iterations: int, overrides: list[str]) -> dict[str, Any]:
    """One setting's row: `runners` env runners, the learner on `device`."""
    from train_throughput import run

    from osrs_rllib.config import usable_cores

    cpus = max(runners, usable_cores())  # Ray schedules a runner per CPU; the machine's cores are the real limit
    sets = [f"runners.num_env_runners={runners}", f"ray.num_cpus={cpus}", f"learner.device={device}", *overrides]
    result = run(config, sets, iterations)
    median = result["median"]
    sample_s = (median["sample_ms"] or 0.0) / 1000
    return {
        "config": config,
        "runners": runners,
        "device": device,
        "cores": usable_cores(),
        "train_batch_size": result["train_batch_size"],
        "envs_per_runner": result["envs_per_runner"],
        "env_steps_per_s": median["env_steps"] / sample_s if sample_s else None,
        "learn_s_per_iter": (median["learn_ms"] or 0.0) / 1000,
        "iteration_env_steps_per_s": median["env_steps_per_s"],
        "overrides": overrides,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", default=str(REPO / "configs" / "nh.yml"))
    parser.add_argument("--runners", default="1,2", help="comma-separated env runner counts")
    parser.add_argument("--devices", default="cpu", help="comma-separated learner devices: cpu, cuda")
    parser.add_argument("--iterations", type=int, default=3, help="timed iterations per setting (after a warm-up)")
    parser.add_argument("--set", action="append", default=[], dest="overrides", help="key.path=value; repeatable")
    parser.add_argument("--json", action="store_true", help="one JSON line per setting")
    args = parser.parse_args(argv)
    for device in args.devices.split(","):
        for runners in (int(r) for r in args.runners.split(",")):
            row = measure(args.config, runners, device, args.iterations, args.overrides)
            if args.json:
                print(json.dumps(row), flush=True)
            else:
                print(f"{device:4} {runners:3} runners: sampling {row['env_steps_per_s'] or 0:8,.0f} env steps/s, "
                      f"learning {row['learn_s_per_iter']:6.2f} s/iter, whole iteration "
                      f"{row['iteration_env_steps_per_s']:8,.0f} env steps/s", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
