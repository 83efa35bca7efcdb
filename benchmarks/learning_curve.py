"""The learning curve of the main job: train `configs/nh.yml` for 60 minutes, then rate the final policy
against the baseline over 500 fights per build (the six trained builds and MAXED, never trained on).

How to run this script::

    .venv/bin/python benchmarks/learning_curve.py                   # 60 minutes, the issue's bar
    .venv/bin/python benchmarks/learning_curve.py --minutes 10      # a shorter look
    .venv/bin/python benchmarks/learning_curve.py --json

It runs ``osrs-rllib train`` exactly as a user does (a subprocess, experiment ``learning-curve`` under
``--experiments-dir``, replaced if it exists) with ``stop.minutes`` set to ``--minutes``, then reads the
evaluation points the run wrote to TensorBoard (``eval/baseline/<mode>/win_rate``, the mean over the trained
builds, and ``eval/baseline/<build or fight type>/<mode>/win_rate``, against env steps) and finally plays
``--fights`` fights per build of the final model file (``models/latest.nhmodel``, deterministic and
stochastic) against the in-simulator baseline with the run's own fight parameters, split by build and
fight type.

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
    """Evaluation points against the baseline from the run's event files: per iteration the env steps, the
    headline (mean over the trained builds) with its interval, and every build's and fight type's win rate
    (``eval/baseline/<name>/<mode>/win_rate``)."""
    from tensorboard.backend.event_processing.event_multiplexer import EventMultiplexer

    mux = EventMultiplexer({"run": str(tensorboard_dir)}, size_guidance={"scalars": 0})
    mux.Reload()
    tags = set(mux.Runs().get("run", {}).get("scalars", []))
    mode = next((m for m in ("deterministic", "stochastic") if f"eval/baseline/{m}/win_rate" in tags), None)
    if mode is None:
        return []

    def series(tag: str) -> dict[int, float]:
        return {e.step: e.value for e in mux.Scalars("run", tag)}

    steps = series("charts/env_steps")
    low, high = series(f"eval/baseline/{mode}/win_rate_low"), series(f"eval/baseline/{mode}/win_rate_high")
    split_tags = sorted(
        t
        for t in tags
        if t.startswith("eval/baseline/") and t.endswith(f"/{mode}/win_rate") and t.count("/") == 4
    )
    splits = {t.split("/")[2]: series(t) for t in split_tags}
    return [
        {
            "iteration": e.step,
            "env_steps": int(steps.get(e.step, 0)),
            "mode": mode,
            "win_rate": e.value,
            "low": low.get(e.step),
            "high": high.get(e.step),
            "split": {name: values[e.step] for name, values in splits.items() if e.step in values},
        }
        for e in mux.Scalars("run", f"eval/baseline/{mode}/win_rate")
    ]


def final_rating(exp_dir: Path, fights: int, seed: int, unseen: list[str]) -> list[dict[str, Any]]:
    """`fights` fights per build (trained builds and `unseen`) of the final model file against the baseline,
    deterministic and stochastic, with the run's own fight parameters (rules included), split by build and
    fight type."""
    from envs.nh.loadouts import Build
    from osrs_rllib.evaluation import evaluate
    from policies.fight_rules import fight_rules_of
    from policies.model_file import load_model_file

    model = load_model_file(exp_dir / "models" / "latest.nhmodel")
    params = dict(fight_rules_of(model).training_options)

    def act(obs: Any, masks: Any, deterministic: bool) -> Any:
        return model.act(obs, masks, deterministic)

    out = []
    for deterministic in (True, False):
        result = evaluate(
            act,
            ["baseline"],
            fights,
            params=params,
            deterministic=deterministic,
            seed=seed,
            frame_stack=model.frame_stack,
            unseen_builds=[Build(b) for b in unseen],
        )[0]
        out.append(
            {
                **result.to_dict(),
                "model_iteration": model.metadata.get("iteration"),
                "model_env_steps": model.metadata.get("env_steps"),
            }
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="configs/nh.yml")
    parser.add_argument("--minutes", type=float, default=60.0)
    parser.add_argument("--fights", type=int, default=500, help="final fights per build (and per mode)")
    parser.add_argument("--unseen", nargs="*", default=["MAXED"], help="builds never trained on, reported apart")
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
    finals = final_rating(exp_dir, args.fights, args.seed, args.unseen)
    report = {"config": args.config, "minutes": args.minutes, "wall_seconds": wall, "curve": curve, "final": finals}
    if args.json:
        print(json.dumps(report, indent=1))
        return
    print(f"trained {args.config} for {args.minutes:g} minutes ({wall / 60:.1f} min wall)")
    names = sorted({name for p in curve for name in p["split"]})
    print(f"{'iteration':>9} {'env steps':>11} {'mean of builds':>24}  " + " ".join(f"{n:>10}" for n in names))
    for p in curve:
        cells = " ".join(f"{p['split'][n]:>10.0%}" if n in p["split"] else f"{'':>10}" for n in names)
        print(
            f"{p['iteration']:>9} {p['env_steps']:>11,} {p['win_rate']:>8.1%} [{p['low']:.1%}, {p['high']:.1%}]  "
            + cells
        )
    for final in finals:
        print(
            f"\nfinal policy, {final['mode']} (iteration {final['model_iteration']}, {final['model_env_steps']:,} "
            f"env steps), {args.fights} fights per build vs baseline: mean of {len(final['builds'])} trained builds "
            f"{final['win_rate']:.1%} [{final['win_rate_low']:.1%}, {final['win_rate_high']:.1%}], "
            f"{final['mean_fight_ticks']:.0f} ticks per fight"
        )
        for group in ("by_build", "by_fight_type"):
            for name, row in final[group].items():
                tag = " (never trained)" if name in final["unseen_builds"] else ""
                print(
                    f"  {name:<12} {row['wins']:>4}/{row['fights']:<4} {row['win_rate']:>6.1%} "
                    f"[{row['win_rate_low']:.1%}, {row['win_rate_high']:.1%}]{tag}"
                )


if __name__ == "__main__":
    main()
