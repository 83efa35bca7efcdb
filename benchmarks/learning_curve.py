"""The learning curve of the main job: train `configs/nh.yml` for 60 minutes, then rate the final policy
against the baseline over 500 fights per build (the six trained builds and MAXED, never trained on).

How to run this script::

    .venv/bin/python benchmarks/learning_curve.py                   # 60 minutes, the issue's bar
    .venv/bin/python benchmarks/learning_curve.py --minutes 10      # a shorter look
    .venv/bin/python benchmarks/learning_curve.py --json
    # the warm-start bar: from scratch and from a cloned model, same config and seed, one budget each
    .venv/bin/python benchmarks/learning_curve.py --init bc-expert.nhmodel --env-steps 2000000 \
        --set evaluation.interval=10 --set 'evaluation.opponents=[baseline]' --set checkpoint.best_by=null --fights 0

It runs ``osrs-rllib train`` exactly as a user does (a subprocess, experiment ``learning-curve`` under
``--experiments-dir``, replaced if it exists) with ``stop.minutes`` set to ``--minutes``, then reads the
evaluation points the run wrote to TensorBoard (``eval/baseline/<mode>/win_rate``, the mean over the trained
builds, and ``eval/baseline/<build or fight type>/<mode>/win_rate``, against env steps) and finally plays
``--fights`` fights per build of the final model file (``models/latest.nhmodel``, deterministic and
stochastic) against the in-simulator baseline with the run's own fight parameters, split by build and
fight type.

With ``--init MODEL`` it trains twice, one run after the other with the same config, seed and budget: from scratch
(experiment ``learning-curve-scratch``) and from the model file (``learning-curve-init``, ``train --init``), and
prints both curves and, for each, the env steps of the first evaluation point whose mean over the trained builds
reaches ``--bar`` (95 %), and their ratio: the warm-start bar is a from-init run that needs at most half the scratch
run's steps. ``--env-steps`` gives both the same sample budget (``--minutes`` stays a guard); evaluate often
(``--set evaluation.interval=10``) or the first crossing is only known to the nearest evaluation; ``--fights 0``
skips the final rating.

Results to expect: the closing notes of the training issue record this machine's curve; docs/training.md
("Warm starts") the warm-start figures. Nothing is asserted: this script prints figures.
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
sys.path.insert(0, str(REPO))
from osrs_rllib.experiments.layout import STATE_FILE  # noqa: E402

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
    from osrs_rllib.evaluation.policy_fights import evaluate
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


def steps_to_bar(curve: list[dict[str, Any]], bar: float) -> int | None:
    """Env steps of the first evaluation point whose headline (mean over the trained builds) reaches `bar`."""
    return next((p["env_steps"] for p in curve if p["win_rate"] >= bar), None)


def train_run(args: argparse.Namespace, name: str, extra: list[str]) -> tuple[float, list[dict[str, Any]]]:
    """``osrs-rllib train`` as a user runs it (experiment `name`, replaced); returns the wall time and its curve."""
    command = [
        sys.executable,
        "-m",
        "osrs_rllib.cli",
        "train",
        args.config,
        "--name",
        name,
        "--force",
        "--set",
        f"experiments_dir={args.experiments_dir}",
        "--set",
        f"stop.minutes={args.minutes}",
        "--set",
        "ray.include_dashboard=false",
        "--set",
        "logging.live=false",
        *extra,
    ]
    if args.env_steps is not None:
        command += ["--set", f"stop.env_steps={args.env_steps}"]
    for override in args.overrides:
        command += ["--set", override]
    started = time.time()
    proc = subprocess.run(command, cwd=REPO, capture_output=True, text=True, check=False)
    wall = time.time() - started
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout[-4000:] + proc.stderr[-4000:])
        sys.exit(proc.returncode)
    return wall, read_curve(Path(args.experiments_dir) / name / "tensorboard")


def print_curve(curve: list[dict[str, Any]]) -> None:
    names = sorted({name for p in curve for name in p["split"]})
    print(f"{'iteration':>9} {'env steps':>11} {'mean of builds':>24}  " + " ".join(f"{n:>10}" for n in names))
    for p in curve:
        cells = " ".join(f"{p['split'][n]:>10.0%}" if n in p["split"] else f"{'':>10}" for n in names)
        print(
            f"{p['iteration']:>9} {p['env_steps']:>11,} {p['win_rate']:>8.1%} [{p['low']:.1%}, {p['high']:.1%}]  "
            + cells
        )


def steps_ratio(
    first: int | None, second: int | None, first_budget: int, bar_ratio: float | None
) -> tuple[float | None, float | None, bool | None]:
    """``(ratio, bound, passed)`` of two runs' env steps to the bar: `ratio` = second / first where both reached it;
    where only the second did, the first needs more than the `first_budget` steps it trained, so the ratio is below
    `bound` = second / first_budget, which decides the bar as well as the ratio would. `passed` (None without a
    `bar_ratio`): the known ratio or bound is at most `bar_ratio`; False where that is not shown (the second run never
    reached the bar, or only a bound above `bar_ratio` is known)."""
    ratio = second / first if first and second is not None else None
    bound = second / first_budget if first is None and second is not None and first_budget else None
    known = ratio if ratio is not None else bound
    passed = None if bar_ratio is None else known is not None and known <= bar_ratio
    return ratio, bound, passed


def compare(args: argparse.Namespace, variants: dict[str, list[str]], bar_ratio: float | None) -> None:
    """Train the same config, seed and budget once per variant (label → extra ``train`` arguments), one after the
    other on the same machine, and print the curves side by side: env steps per second, the first evaluation at
    ``--bar``, the final rating per build. `bar_ratio`: the largest ratio of the second variant's steps to the
    first's that passes (the warm start's: 0.5), None where no bar applies."""
    runs: dict[str, dict[str, Any]] = {}
    for label, extra in variants.items():
        name = f"{NAME}-{label}"
        wall, curve = train_run(args, name, extra)
        exp_dir = Path(args.experiments_dir) / name
        finals = final_rating(exp_dir, args.fights, args.seed, args.unseen) if args.fights else []
        state_file = exp_dir / STATE_FILE
        state = json.loads(state_file.read_text()) if state_file.exists() else {}
        env_steps = state.get("env_steps") or (curve[-1]["env_steps"] if curve else 0)
        train_seconds = state.get("train_seconds") or wall
        runs[label] = {"experiment": name, "wall_seconds": wall, "curve": curve, "final": finals,
                       "env_steps": env_steps, "env_steps_per_s": env_steps / train_seconds if train_seconds else None,
                       "steps_to_bar": steps_to_bar(curve, args.bar)}  # fmt: skip
    first, second = list(runs)[:2]
    a, b = runs[first]["steps_to_bar"], runs[second]["steps_to_bar"]
    ratio, bound, passed = steps_ratio(a, b, runs[first]["env_steps"], bar_ratio)
    speed = (runs[second]["env_steps_per_s"] or 0) / (runs[first]["env_steps_per_s"] or 1)
    report = {"config": args.config, "variants": variants, "bar": args.bar, "env_steps": args.env_steps,
              "minutes": args.minutes, "runs": runs, f"{second}_over_{first}_steps_to_bar": ratio,
              f"{second}_over_{first}_steps_to_bar_below": bound,
              f"{second}_over_{first}_env_steps_per_s": speed, "passed": passed}  # fmt: skip
    if args.json:
        print(json.dumps(report, indent=1))
        return
    for label, run in runs.items():
        print(f"\n{label}: {args.config} {' '.join(variants[label])} ({run['wall_seconds'] / 60:.1f} min wall, "
              f"{run['env_steps']:,} env steps, {run['env_steps_per_s'] or 0:,.0f} env steps/s while training)")
        print_curve(run["curve"])
        for final in run["final"]:
            print(f"  final, {final['mode']}: mean of {len(final['builds'])} builds {final['win_rate']:.1%} "
                  f"[{final['win_rate_low']:.1%}, {final['win_rate_high']:.1%}]; "
                  + " ".join(f"{k} {r['win_rate']:.1%}" for k, r in final["by_build"].items()))  # fmt: skip

    def fmt(steps: int | None) -> str:
        return "not reached" if steps is None else f"{steps:,} env steps"

    verdict = "" if ratio is None else f"; {second} / {first} = {ratio:.2f}"
    if bound is not None:
        verdict = f"; {second} / {first} < {bound:.3f} ({first} not at the bar after {runs[first]['env_steps']:,})"
    if passed is not None and (ratio is not None or bound is not None):
        verdict += f" (bar ≤ {bar_ratio:.2f}: {'met' if passed else 'not met'})"
    print(f"\nfirst evaluation at ≥ {args.bar:.0%} vs the baseline (mean of the trained builds): "
          f"{first} {fmt(a)}, {second} {fmt(b)}{verdict}; env steps/s {second} / {first} = {speed:.2f}")  # fmt: skip


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
    parser.add_argument("--init", default=None, help="also train from this model file and compare")
    parser.add_argument("--no-init-critic", dest="init_critic", action="store_false", help="--init's actor only")
    parser.add_argument("--env-steps", type=int, default=None, help="sample budget of each run (stop.env_steps)")
    parser.add_argument("--bar", type=float, default=0.95, help="win rate whose first crossing is compared")
    args = parser.parse_args()
    if args.init is not None:
        init_args = ["--init", str(Path(args.init).resolve())] + ([] if args.init_critic else ["--no-init-critic"])
        compare(args, {"scratch": [], "init": init_args}, bar_ratio=0.5)
        return

    exp_dir = Path(args.experiments_dir) / NAME
    wall, curve = train_run(args, NAME, [])
    finals = final_rating(exp_dir, args.fights, args.seed, args.unseen) if args.fights else []
    report = {"config": args.config, "minutes": args.minutes, "wall_seconds": wall, "curve": curve, "final": finals}
    if args.json:
        print(json.dumps(report, indent=1))
        return
    print(f"trained {args.config} for {args.minutes:g} minutes ({wall / 60:.1f} min wall)")
    print_curve(curve)
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
