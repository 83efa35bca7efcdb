"""The learning curve of the main job: train `configs/nh.yml` for 60 minutes, then rate the final policy
against the baseline over 500 fights.

How to run this script::

    .venv/bin/python benchmarks/learning_curve.py                   # 60 minutes, the issue's bar
    .venv/bin/python benchmarks/learning_curve.py --minutes 10      # a shorter look
    .venv/bin/python benchmarks/learning_curve.py --json

It runs ``osrs-rllib train`` exactly as a user does (a subprocess, experiment ``learning-curve`` under
``--experiments-dir``, replaced if it exists) with ``stop.minutes`` set to ``--minutes``, then reads the
evaluation points the run wrote to TensorBoard (``eval/baseline/<mode>/win_rate`` against env steps) and
finally plays ``--fights`` fights of the final model file (``models/latest.nhmodel``, deterministic)
against the in-simulator baseline with the run's own fight parameters.

Results to expect: the closing notes of the training issue record this machine's curve. Nothing is
asserted: this script prints figures.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
NAME = "learning-curve"


def read_curve(tensorboard_dir: Path) -> list[dict[str, Any]]:
    """Evaluation points (iteration, env steps, win rate and its interval) from the run's event files."""
    from tensorboard.backend.event_processing.event_multiplexer import EventMultiplexer

    mux = EventMultiplexer({"run": str(tensorboard_dir)}, size_guidance={"scalars": 0})
    mux.Reload()
    tags = set(mux.Runs().get("run", {}).get("scalars", []))
    mode = next((m for m in ("deterministic", "stochastic") if f"eval/baseline/{m}/win_rate" in tags), None)
    if mode is None:
        return []
    steps = {e.step: e.value for e in mux.Scalars("run", "charts/env_steps")}
    low = {e.step: e.value for e in mux.Scalars("run", f"eval/baseline/{mode}/win_rate_low")}
    high = {e.step: e.value for e in mux.Scalars("run", f"eval/baseline/{mode}/win_rate_high")}
    return [
        {
            "iteration": e.step,
            "env_steps": int(steps.get(e.step, 0)),
            "mode": mode,
            "win_rate": e.value,
            "low": low.get(e.step),
            "high": high.get(e.step),
        }
        for e in mux.Scalars("run", f"eval/baseline/{mode}/win_rate")
    ]


def final_rating(exp_dir: Path, fights: int, seed: int) -> dict[str, Any]:
    import yaml

    from osrs_rllib.evaluation import evaluate
    from policies.model_file import load_model_file

    model = load_model_file(exp_dir / "models" / "latest.nhmodel")
    params = dict(yaml.safe_load((exp_dir / "config.yml").read_text())["env"]["params"])
    params.pop("include_opponent_observation", None)

    def act(obs: Any, masks: Any, deterministic: bool) -> Any:
        return model.act(obs, masks, deterministic)

    result = evaluate(
        act, ["baseline"], fights, params=params, deterministic=True, seed=seed, frame_stack=model.frame_stack
    )[0]
    return {
        **result.to_dict(),
        "model_iteration": model.metadata.get("iteration"),
        "model_env_steps": model.metadata.get("env_steps"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="configs/nh.yml")
    parser.add_argument("--minutes", type=float, default=60.0)
    parser.add_argument("--fights", type=int, default=500)
    parser.add_argument("--seed", type=int, default=123_456)
    parser.add_argument("--experiments-dir", default=str(REPO / "experiments"))
    parser.add_argument("--set", dest="overrides", action="append", default=[], help="extra config override")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    exp_dir = Path(args.experiments_dir) / NAME
    command = [
        sys.executable,
        "-m",
        "osrs_rllib.cli",
        "train",
        args.config,
        "--name",
        NAME,
        "--force",
        "--set",
        f"experiments_dir={args.experiments_dir}",
        "--set",
        f"stop.minutes={args.minutes}",
        "--set",
        "ray.include_dashboard=false",
        "--set",
        "logging.live=false",
    ]
    for override in args.overrides:
        command += ["--set", override]
    started = time.time()
    proc = subprocess.run(command, cwd=REPO, capture_output=True, text=True, check=False)
    wall = time.time() - started
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout[-4000:] + proc.stderr[-4000:])
        sys.exit(proc.returncode)
    curve = read_curve(exp_dir / "tensorboard")
    final = final_rating(exp_dir, args.fights, args.seed)
    report = {"config": args.config, "minutes": args.minutes, "wall_seconds": wall, "curve": curve, "final": final}
    if args.json:
        print(json.dumps(report, indent=1))
        return
    print(f"trained {args.config} for {args.minutes:g} minutes ({wall / 60:.1f} min wall)")
    print(f"{'iteration':>9} {'env steps':>11} {'win rate vs baseline':>22}")
    for p in curve:
        print(f"{p['iteration']:>9} {p['env_steps']:>11,} {p['win_rate']:>8.1%} [{p['low']:.1%}, {p['high']:.1%}]")
    print(
        f"final policy (iteration {final['model_iteration']}, {final['model_env_steps']:,} env steps): "
        f"{final['wins']}/{final['fights']} won vs baseline = {final['win_rate']:.1%} "
        f"[{final['win_rate_low']:.1%}, {final['win_rate_high']:.1%}], {final['mean_fight_ticks']:.0f} ticks per fight"
    )


if __name__ == "__main__":
    main()
