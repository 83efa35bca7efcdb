"""The league study: which opponent recipe gives the agent that holds best, at an equal training budget.

Every recipe is a preset in ``configs/study/`` (``mix``: today's ``nh.yml``; ``past-self``; ``pfsp``;
``exploiters``: ``nh-exploiters.yml``; ``expert-entropy``; ``exploiters-mixing``: exploiters with a larger
entropy bonus on the attack-style and prayer heads; ``exploiters-expert``: exploiters with the expert rung in
main's mix). Each trains the same env steps, then its final
model (``models/latest.nhmodel``: the same budget for every recipe; ``best`` would pick a different step per
recipe) is measured the way a user measures it:

* win rate per build against the baseline and the expert, ``--fights`` per build, greedy, under the model's
  training rules (`tools/model_card.py`'s ``win_rates`` machinery, the evaluation's fight options);
* head to head against every other recipe's model, ``--h2h-fights`` per build, half from each seat
  (`osrs_rllib.evaluation.policy_fights.evaluate_vs_model`, both sides greedy);
* exploitability at the standard budget (`osrs-rllib exploit MODEL --env-steps 4000000`), against the model
  playing greedy and, a second run, sampling (``--model-sampling``).

Each stage is a separate, resumable command, because the whole study takes hours on 2 cores (six recipes of
20M env steps are 10-18 hours of a 2-core machine, with the measurements and exploit runs) and a run may stop
in between: ``train`` continues a recipe's run with ``--resume`` and skips finished ones, ``exploit`` the same,
and every measurement is written to ``--out`` (JSON) as soon as it is made, so ``report`` prints the table from
whatever is there::

    .venv/bin/python -m tools.league_study train --env-steps 20000000            # all recipes, in turn
    .venv/bin/python -m tools.league_study train --recipes mix,pfsp --env-steps 20000000
    .venv/bin/python -m tools.league_study measure                                # win rates + head to head
    .venv/bin/python -m tools.league_study measure --reference mix-1cf6cfb=results/study/mix-1cf6cfb.nhmodel
    .venv/bin/python -m tools.league_study exploit                                # 4M steps, 2 per recipe
    .venv/bin/python -m tools.league_study report                                 # the markdown table

On a fresh machine the stages read what has landed in ``results/study`` (``--landed``) where the
experiments and ``--out`` lack it: a recipe whose model landed is not trained again, its figures and exploit runs
are not measured again, and it plays the head to head from its landed file. The study's models are kept in git
history, not in the tree; results/study/README.md gives the command that puts each back.

``--reference NAME=MODEL`` seats a model the study did not train (an earlier run of a recipe, a shipped model)
beside the recipes in ``measure``'s ratings and head to head. A row only ever holds one model's figures: when a
recipe's model changes (retrained), ``measure`` and ``exploit`` drop what was measured on the old weights and
``exploit`` starts its runs over.

Nothing is asserted: this script prints figures; docs/league.md keeps the table it printed.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
STUDY_DIR = REPO / "configs" / "study"
RECIPES: tuple[str, ...] = (
    "mix",
    "past-self",
    "pfsp",
    "exploiters",
    "expert-entropy",
    "exploiters-mixing",
    "exploiters-expert",
)
"""The recipes in the order of the table; each is ``configs/study/<name>.yml``."""
DEFAULT_ENV_STEPS = 20_000_000
"""Training budget of every recipe: about an hour of the compiled core on a quiet 2-core machine."""
STANDARD_EXPLOIT_STEPS = 4_000_000
PREFIX = "study-"
LANDED = REPO / "results" / "study"
"""What the study has landed in the repository (results/study/README.md): every figure so far,
``league-study.json``, and any recipe's model ``<recipe>.nhmodel`` fetched back from git history. A fresh machine
has no ``experiments/``, so the stages read the study from here where their own files are missing."""


def run_name(recipe: str) -> str:
    return f"{PREFIX}{recipe}"


def model_path(experiments: Path, recipe: str, landed: Path | None = LANDED) -> Path:
    """The recipe's final model: its run's ``latest.nhmodel``, else the landed copy (the run is gone), else the
    run's path, which does not exist yet."""
    trained = experiments / run_name(recipe) / "models" / "latest.nhmodel"
    if trained.exists() or landed is None or not (landed / f"{recipe}.nhmodel").exists():
        return trained
    return landed / f"{recipe}.nhmodel"


def load_results(out: Path, landed: Path | None = LANDED) -> dict[str, Any]:
    """The figures measured so far: `out`, else (a fresh machine) the landed ones, so nothing is measured twice."""
    for path in (out, None if landed is None else landed / "league-study.json"):
        if path is not None and path.exists():
            return json.loads(path.read_text())
    return {"recipes": {}, "head_to_head": {}}


def save_results(out: Path, results: dict[str, Any]) -> None:
    from common.atomic_files import write_json_atomic

    write_json_atomic(out, results)


def _osrs(*args: str) -> int:
    """Run the CLI as a user does, in the foreground, its output passing through."""
    cmd = [sys.executable, "-m", "osrs_rllib.cli", *args]
    print("$ osrs-rllib " + " ".join(args), flush=True)
    return subprocess.run(cmd, cwd=REPO, check=False).returncode


def _finished(exp_dir: Path) -> bool:
    status = exp_dir / "status.json"
    return status.exists() and json.loads(status.read_text()).get("state") == "finished"


def train(recipes: list[str], env_steps: int, experiments: Path, landed: Path | None = LANDED) -> None:
    """Train each recipe to `env_steps` (minutes unlimited), resuming a run that stopped part-way; a recipe whose
    final model has landed and whose run is not here (another machine trained it) is finished."""
    for recipe in recipes:
        exp = experiments / run_name(recipe)
        if _finished(exp) and (exp / "models" / "latest.nhmodel").exists():
            print(f"{recipe}: finished already ({exp})")
            continue
        if not exp.exists() and model_path(experiments, recipe, landed).exists():
            print(f"{recipe}: finished already (landed: {model_path(experiments, recipe, landed)})")
            continue
        resume = (exp / "checkpoints").is_dir() and any((exp / "checkpoints").iterdir())
        args = [
            "train",
            str(STUDY_DIR / f"{recipe}.yml"),
            "--name",
            run_name(recipe),
            "--set",
            f"stop.env_steps={env_steps}",
            "--set",
            "stop.minutes=null",
            "--set",
            f"experiments_dir={experiments}",
            "--set",
            "ray.include_dashboard=false",
        ]
        code = _osrs(*args, "--resume" if resume else "--force")
        if code != 0:
            raise SystemExit(f"{recipe}: training exited with {code}")


def _act_of(model: Any) -> Any:
    def act(obs: np.ndarray, masks: np.ndarray, deterministic: bool) -> np.ndarray:
        return np.asarray(model.act(obs, masks.astype(np.float32), deterministic=deterministic))

    return act


def parse_references(values: list[str]) -> dict[str, Path]:
    """``NAME=MODEL`` pairs: models the study did not train (an earlier run of a recipe, a shipped model) that
    `measure` rates and seats head to head beside the recipes, under their own names."""
    refs: dict[str, Path] = {}
    for value in values:
        name, sep, path = value.partition("=")
        if not sep or not name or not path:
            raise ValueError(f"--reference {value!r}: expected NAME=MODEL, e.g. old-mix=results/study/old.nhmodel")
        if name in RECIPES or name in refs or "|" in name:
            raise ValueError(f"--reference {value!r}: the name {name!r} is a recipe's, taken, or holds '|'")
        if not Path(path).is_file():
            raise ValueError(f"--reference {value!r}: no model file at {path}")
        refs[name] = Path(path)
    return refs


def entry_for(results: dict[str, Any], name: str, tensor_sha256: str | None) -> dict[str, Any]:
    """The results entry of `name`'s model, emptied first when it holds another model's figures (a recipe
    retrained, or a reference replaced): a row must never mix the measurements of two sets of weights."""
    entry = results["recipes"].setdefault(name, {})
    if entry.get("tensor_sha256") not in (None, tensor_sha256):
        print(f"{name}: the model changed since it was measured; its old figures are dropped", flush=True)
        entry.clear()
    entry["tensor_sha256"] = tensor_sha256
    return entry


def measure(
    recipes: list[str],
    experiments: Path,
    out: Path,
    fights: int,
    h2h_fights: int,
    engine: str,
    references: dict[str, Path] | None = None,
    landed: Path | None = LANDED,
) -> None:
    """Win rates against the baseline and the expert, and every pair head to head (recipes and references);
    saved as they come."""
    from osrs_rllib.evaluation.policy_fights import evaluate, evaluate_vs_model
    from policies.model_file import load_model_file
    from tools.model_card import CARD_SEED, training_params

    results = load_results(out, landed)
    paths = {r: model_path(experiments, r, landed) for r in recipes} | dict(references or {})
    models = {r: load_model_file(path) for r, path in paths.items() if path.exists()}
    for recipe, model in models.items():
        entry = entry_for(results, recipe, model.meta.get("tensor_sha256"))
        entry["env_steps"] = model.metadata.get("env_steps")
        if recipe in (references or {}):
            entry["reference"] = str(paths[recipe])
        for opponent in ("baseline", "expert"):
            if entry.get(opponent, {}).get("tensor_sha256") == entry["tensor_sha256"]:
                continue
            (row,) = evaluate(
                _act_of(model),
                [opponent],
                fights,
                params=training_params(model),
                seed=CARD_SEED,
                frame_stack=model.frame_stack,
                engine=engine,
                parallel=64,
            )
            d = row.to_dict()
            entry[opponent] = {
                "tensor_sha256": entry["tensor_sha256"],
                "win_rate": d["win_rate"],
                "win_rate_low": d["win_rate_low"],
                "win_rate_high": d["win_rate_high"],
                "by_build": {b: t["win_rate"] for b, t in d["by_build"].items()},
            }
            print(f"{recipe} vs {opponent}: {d['win_rate']:.1%}", flush=True)
            save_results(out, results)
    for a, b in combinations(sorted(models), 2):
        key = f"{a}|{b}"
        sums = (models[a].meta.get("tensor_sha256"), models[b].meta.get("tensor_sha256"))
        if results["head_to_head"].get(key, {}).get("weights") == list(sums):
            continue
        row = evaluate_vs_model(
            _act_of(models[a]),
            models[b],
            h2h_fights,
            params=training_params(models[a]),
            frame_stack=models[a].frame_stack,
            seed=CARD_SEED,
            opponent=b,
            engine=engine,
        )
        results["head_to_head"][key] = {
            "weights": list(sums),
            "win_rate": row["win_rate"],
            "win_rate_low": row["win_rate_low"],
            "win_rate_high": row["win_rate_high"],
            "fights": row["fights"],
            "losses": row["losses"],
        }
        print(f"{a} vs {b}: {row['win_rate']:.1%} over {row['fights']} fights", flush=True)
        save_results(out, results)


MODEL_MODES: tuple[str, ...] = ("greedy", "sampling")
"""How the model plays in its exploit runs: greedy as `fight` and `serve` deploy it, and sampling its action
distribution (`osrs-rllib exploit --model-sampling`); the bar is on the better of the two."""


def exploit_key(model_mode: str) -> str:
    """Where a recipe's entry keeps the exploit figure of one model mode."""
    return "exploitability" if model_mode == "greedy" else "exploitability_model_sampling"


def exploit(
    recipes: list[str],
    experiments: Path,
    out: Path,
    env_steps: int,
    model_modes: tuple[str, ...] = MODEL_MODES,
    landed: Path | None = LANDED,
) -> None:
    """`osrs-rllib exploit` each recipe's model at the standard budget, once per model mode (resumable), then
    record the figures."""
    from policies.model_file import load_model_file

    results = load_results(out, landed)
    for recipe in recipes:
        path = model_path(experiments, recipe, landed)
        if not path.exists():
            print(f"{recipe}: no model yet, skipped")
            continue
        sha = load_model_file(path).meta.get("tensor_sha256")
        entry = entry_for(results, recipe, sha)
        for mode in model_modes:
            if entry.get(exploit_key(mode), {}).get("tensor_sha256") == sha:
                print(f"{recipe}: exploited already ({mode} model)")
                continue
            name = f"{PREFIX}exploit-{recipe}" + ("-sampling" if mode == "sampling" else "")
            exp = experiments / name
            report_path = exp / "exploit.json"
            report = json.loads(report_path.read_text()) if report_path.exists() else None
            stale = report is not None and exploited_sha(report) != sha  # the recipe was retrained since
            if report is None or report.get("exploitability") is None or stale:
                resume = not stale and (exp / "checkpoints").is_dir() and any((exp / "checkpoints").iterdir())
                code = _osrs(
                    "exploit",
                    str(path),
                    "--env-steps",
                    str(env_steps),
                    "--name",
                    name,
                    "--set",
                    f"experiments_dir={experiments}",
                    "--set",
                    "ray.include_dashboard=false",
                    *(["--model-sampling"] if mode == "sampling" else []),
                    "--resume" if resume else "--force",
                )
                if code != 0:
                    raise SystemExit(f"{recipe}: exploit ({mode} model) exited with {code}")
                report = json.loads(report_path.read_text())
            entry[exploit_key(mode)] = exploit_entry(report)
            save_results(out, results)


def exploited_sha(report: dict[str, Any]) -> str | None:
    """The weights checksum of the model an `exploit.json` measured (``model``: the one model, in every version
    of the report)."""
    return (report.get("model") or {}).get("tensor_sha256")


def exploit_entry(report: dict[str, Any]) -> dict[str, Any]:
    """What the study keeps of an `exploit.json`: the headline, and both exploiter modes' final figures (the
    headline is the better of the exploiter's greedy and sampling play), with the weights it measured."""
    ex = report["exploitability"]
    entry = {k: ex[k] for k in ("win_rate", "win_rate_low", "win_rate_high", "mode", "env_steps", "steps_to_pass_half")}
    entry["tensor_sha256"] = exploited_sha(report)
    for mode, row in report.get("final", {}).get("modes", {}).items():
        entry[f"final_{mode}"] = {k: row[k] for k in ("win_rate", "win_rate_low", "win_rate_high", "fights")}
    return entry


def _pct(row: dict[str, Any] | None) -> str:
    if not row:
        return "–"
    return f"{row['win_rate']:.1%} [{row['win_rate_low']:.1%}, {row['win_rate_high']:.1%}]"


def _exploit_cell(ex: dict[str, Any] | None) -> str:
    """The exploiter's final figures, greedy / sampling, where the run recorded both (the model plays greedy), else
    the headline figure (the better of the two)."""
    if not ex:
        return "–"
    modes = [ex.get(f"final_{m}") for m in ("deterministic", "stochastic")]
    if all(modes):
        return " / ".join(_pct(m) for m in modes)
    return _pct(ex)


def _passes_half(ex: dict[str, Any] | None) -> str:
    if ex is None:
        return "–"
    half = ex.get("steps_to_pass_half")
    return f"{half:,}" if half else "never"


def report(results: dict[str, Any]) -> str:
    recipes = [r for r in RECIPES if r in results["recipes"]] + sorted(set(results["recipes"]) - set(RECIPES))
    lines = [
        "| recipe | env steps | vs baseline | vs expert | weakest build vs expert "
        "| exploitability (4M), model greedy: exploiter greedy / sampling | model sampling: exploiter greedy / "
        "sampling | passes 50 % at (model greedy / sampling) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in recipes:
        e = results["recipes"][r]
        expert = e.get("expert")
        weakest = min(expert["by_build"].items(), key=lambda kv: kv[1]) if expert else None
        modes = [e.get(exploit_key(m)) for m in MODEL_MODES]
        lines.append(
            f"| {r} | {e.get('env_steps') or 0:,} | {_pct(e.get('baseline'))} | {_pct(expert)} | "
            + (f"{weakest[0]} {weakest[1]:.1%}" if weakest else "–")
            + "".join(f" | {_exploit_cell(ex)}" for ex in modes)
            + " | "
            + " / ".join(_passes_half(ex) for ex in modes)
            + " |"
        )
    if results.get("head_to_head"):
        lines += ["", "Head to head (row's win rate against the column, both seats, every trained build):", ""]
        lines += ["| | " + " | ".join(recipes) + " |", "|---|" + "---|" * len(recipes)]
        h2h = results["head_to_head"]
        for a in recipes:
            cells = []
            for b in recipes:
                if a == b:
                    cells.append("–")
                elif f"{a}|{b}" in h2h:
                    cells.append(f"{h2h[f'{a}|{b}']['win_rate']:.1%}")
                elif f"{b}|{a}" in h2h:
                    other = h2h[f"{b}|{a}"]
                    cells.append(f"{other['losses'] / max(1, other['fights']):.1%}")
                else:
                    cells.append("–")
            lines.append(f"| {a} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("stage", choices=["train", "measure", "exploit", "report"])
    parser.add_argument("--recipes", default=",".join(RECIPES), help="comma-separated recipe names")
    parser.add_argument("--env-steps", type=int, default=None, help="training budget (train) or exploit budget")
    parser.add_argument("--experiments-dir", type=Path, default=REPO / "experiments")
    parser.add_argument("--out", type=Path, default=REPO / "experiments" / "league-study.json")
    parser.add_argument("--fights", type=int, default=500, help="fights per build against baseline and expert")
    parser.add_argument("--h2h-fights", type=int, default=100, help="head-to-head fights per build and pair")
    parser.add_argument("--engine", default="auto", choices=["auto", "core", "python"])
    parser.add_argument(
        "--reference",
        action="append",
        default=[],
        metavar="NAME=MODEL",
        help="measure: a model the study did not train, rated and seated head to head beside the recipes (repeatable)",
    )
    parser.add_argument(
        "--landed",
        type=lambda v: None if v in ("", "none") else Path(v),
        default=LANDED,
        help="where the study's finished models and figures landed, read where --experiments-dir and --out lack "
        "them ('none': only those)",
    )
    parser.add_argument(
        "--model-modes", default=",".join(MODEL_MODES), help="exploit: how the model plays, greedy and/or sampling"
    )
    args = parser.parse_args(argv)
    recipes = [r for r in args.recipes.split(",") if r]
    unknown = [r for r in recipes if not (STUDY_DIR / f"{r}.yml").exists()]
    if unknown:
        parser.error(f"unknown recipes {unknown}; the presets are {sorted(p.stem for p in STUDY_DIR.glob('*.yml'))}")
    try:
        references = parse_references(args.reference)
    except ValueError as exc:
        parser.error(str(exc))
    experiments = args.experiments_dir.resolve()
    t0 = time.perf_counter()
    if args.stage == "train":
        train(recipes, args.env_steps or DEFAULT_ENV_STEPS, experiments, args.landed)
    elif args.stage == "measure":
        measure(recipes, experiments, args.out, args.fights, args.h2h_fights, args.engine, references, args.landed)
    elif args.stage == "exploit":
        modes = tuple(m for m in args.model_modes.split(",") if m)
        if not modes or set(modes) - set(MODEL_MODES):
            parser.error(f"--model-modes {args.model_modes!r}: expected a comma-separated subset of {MODEL_MODES}")
        exploit(recipes, experiments, args.out, args.env_steps or STANDARD_EXPLOIT_STEPS, modes, args.landed)
    print(report(load_results(args.out, args.landed)))
    print(f"({args.stage}: {time.perf_counter() - t0:.0f} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
