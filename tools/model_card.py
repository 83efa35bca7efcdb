"""A model file's card: what it is, where it came from, and how it fights every scripted opponent.

How to run this script::

    .venv/bin/python -m tools.model_card models/nh-main.nhmodel                      # 500 fights per build
    .venv/bin/python -m tools.model_card models/nh-main.nhmodel --fights 50          # quicker, wider intervals
    .venv/bin/python -m tools.model_card MODEL --exploit experiments/exploit-nh-main # + exploitability
    .venv/bin/python -m tools.model_card MODEL --exploit RUN --exploit SAMPLING_RUN  # both model modes
    .venv/bin/python -m tools.model_card MODEL --json                                # one JSON object
    .venv/bin/python -m tools.model_card MODEL --jobs 2 --cache card.json            # 2 processes, resumable
    .venv/bin/python -m tools.model_card MODEL --sampling baseline,expert            # + rows of sampling play

What is measured, and under which rules (`docs/models.md` holds the cards this script printed):

* **Identity**: the file's SHA-256 (the card's checksum, which ``tests/test_shipped_models.py`` compares with the
  file), its size, the weight checksum it records, the experiment, iteration and env steps it was exported at,
  and the network shape.
* **Win rate per build against every opponent**: the baseline and every ladder rung (`envs.opponents.LADDER`,
  weakest to strongest), ``--fights`` fights per trained build plus the unseen MAXED build, the model greedy, in
  seat 0, through `osrs_rllib.evaluation.policy_fights.evaluate`: the same fights training's evaluation plays, under the
  **model's own training rules** (the ``env.params`` and frame stack recorded in the file, with the
  evaluation's seat options), evaluation seeds from ``--seed``. Each cell has its 95 % Wilson interval. The
  headline of a row is the mean over the trained builds (equal fights per build).
* **Sampling play** (``--sampling OPPONENTS``): the same fights against the named opponents with the model sampling
  each action head instead of taking its most probable value (torch's generator seeded from ``--seed``, so a row
  replays): how ``serve`` answers a request that leaves out ``deterministic``, and how a model's sampling exploit
  run (``exploit --model-sampling``) meets it, so that a model whose exploitability is its sampling run's can be
  judged against the scripted rungs in the same mode.
* **Exploitability**: read from ``osrs-rllib exploit`` runs' ``exploit.json`` (``--exploit DIR`` or ``--exploit
  FILE``, once per run), each of which must have exploited this very file (same weight checksum); the card states
  each run's budget. Give it the run against the model's greedy play and the one against its sampling play
  (``exploit --model-sampling``), once per seed: the model's figure is ``osrs-rllib ship``'s, the worst run of its
  better mode, each run's the better of its exploiter's greedy and sampling play (docs/league.md, "The league
  study").

Nothing is asserted: this script prints figures.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import platform
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from envs.nh.loadouts import Build
from envs.opponents import LADDER
from osrs_rllib.evaluation.policy_fights import evaluate
from osrs_rllib.exploit.measure import EXPLOIT_FILE
from osrs_rllib.exploit.report import MODE_NAMES
from policies.model_file import ModelFile, load_model_file

OPPONENTS: tuple[str, ...] = ("baseline", *LADDER)
"""Every scripted opponent, the baseline first, then the ladder weakest to strongest."""
UNSEEN_BUILDS: tuple[Build, ...] = (Build.MAXED,)
"""Played as a generalisation check and reported apart (the §13.3 core preset never trains on MAXED)."""
DEFAULT_FIGHTS = 500
"""Fights per build: the shipped-model bar's count (an interval of about ±2 points near 95 %)."""
CARD_SEED = 2_000_000
"""Evaluation seed of cards: far from training (0…) and training's evaluation (1,000,000…) seeds."""


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def training_params(model: ModelFile) -> dict[str, Any]:
    """The fights the model trained in (`policies.fight_rules`, the one reader of a model's rules): its training
    ``env.params`` without the seating options."""
    from policies.fight_rules import fight_rules_of

    return dict(fight_rules_of(model).training_options)


def identity(path: Path, model: ModelFile) -> dict[str, Any]:
    meta, trained = model.meta, model.metadata
    config = trained.get("config") or {}
    return {
        "file": str(path),
        "sha256": file_sha256(path),
        "bytes": path.stat().st_size,
        "tensor_sha256": meta.get("tensor_sha256"),
        "experiment": trained.get("experiment"),
        "iteration": trained.get("iteration"),
        "env_steps": trained.get("env_steps"),
        "network": meta.get("network"),
        "frame_stack": model.frame_stack,
        "opponent_mix": (config.get("opponents") or {}).get("mix"),
        "rules": training_params(model),
    }


def _opponent_row(
    path: Path, opponent: str, fights: int, seed: int, engine: str, deterministic: bool = True
) -> dict[str, Any]:
    """One opponent's evaluation row (`EvalResult.to_dict()`), the model in seat 0, greedy unless told to sample.

    Takes the file's path, not the loaded model, so that a worker process of ``--jobs`` loads its own copy (the
    fights of one opponent are one batch; opponents are independent)."""
    import torch

    torch.set_num_threads(1)
    torch.manual_seed(seed)  # sampling play draws from torch's generator: the same seed, the same row
    model = load_model_file(path)

    def act(obs: np.ndarray, masks: np.ndarray, deterministic: bool) -> np.ndarray:
        return np.asarray(model.act(obs, masks.astype(np.float32), deterministic=deterministic))

    t0 = time.perf_counter()
    (result,) = evaluate(
        act,
        [opponent],
        fights,
        params=training_params(model),
        deterministic=deterministic,
        seed=seed,
        frame_stack=model.frame_stack,
        unseen_builds=UNSEEN_BUILDS,
        engine=engine,
        parallel=64,
    )
    row = result.to_dict()
    row["seconds"] = time.perf_counter() - t0
    return row


def _cache_key(sha256: str, fights: int, seed: int, engine: str, opponent: str, deterministic: bool = True) -> str:
    return f"{sha256}/{fights}/{seed}/{engine}/{opponent}" + ("" if deterministic else "/sampling")


def win_rates(
    path: Path,
    fights: int,
    seed: int,
    engine: str,
    *,
    jobs: int = 1,
    cache: Path | None = None,
    opponents: tuple[str, ...] = OPPONENTS,
    deterministic: bool = True,
) -> list[dict[str, Any]]:
    """One evaluation row per opponent, in the order of `opponents` (every one by default), the model greedy
    unless `deterministic` is false.

    `jobs` processes play opponents side by side (a card is about an hour of one core). `cache` keeps each finished
    row in a JSON file, keyed by the file's checksum, fights, seed, engine and mode, so an interrupted card resumes
    where it stopped instead of replaying every opponent."""
    sha = file_sha256(path)
    done: dict[str, dict[str, Any]] = json.loads(cache.read_text()) if cache is not None and cache.exists() else {}

    def key(opponent: str) -> str:
        return _cache_key(sha, fights, seed, engine, opponent, deterministic)

    def keep(opponent: str, row: dict[str, Any]) -> None:
        done[key(opponent)] = row
        print(
            f"  {opponent:>16}: {row['win_rate']:.1%} ({row['fights']} fights, {row['seconds']:.0f} s)"
            + ("" if deterministic else ", sampling"),
            file=sys.stderr,
        )
        if cache is not None:
            tmp = cache.with_suffix(cache.suffix + ".tmp")
            tmp.write_text(json.dumps(done, indent=1))
            tmp.replace(cache)

    todo = [o for o in opponents if key(o) not in done]
    if jobs <= 1:
        for opponent in todo:
            keep(opponent, _opponent_row(path, opponent, fights, seed, engine, deterministic))
    else:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor, as_completed

        with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
            futures = {pool.submit(_opponent_row, path, o, fights, seed, engine, deterministic): o for o in todo}
            for future in as_completed(futures):
                keep(futures[future], future.result())
    return [done[key(o)] for o in opponents]


def exploitability(exploit: Path, tensor_sha256: str | None) -> dict[str, Any]:
    """One exploit run's final figures, from its experiment directory or a copy of its report (a landed
    ``results/.../exploit-*.json``); refuses a run that exploited another file."""
    report = json.loads((exploit / EXPLOIT_FILE if exploit.is_dir() else exploit).read_text())
    if report["model"].get("tensor_sha256") != tensor_sha256:
        raise SystemExit(f"{exploit} exploited weights {report['model'].get('tensor_sha256')}, not this file's")
    if report.get("exploitability") is None:
        raise SystemExit(f"{exploit} has no final exploitability yet (state {report.get('state')!r})")
    final = report["final"]
    return {
        "report": str(exploit),
        "model_mode": report.get("evaluation", {}).get("model_mode", "deterministic"),
        **report["exploitability"],
        "modes": {
            MODE_NAMES.get(m, m): {
                "win_rate": r["win_rate"],
                "win_rate_low": r["win_rate_low"],
                "win_rate_high": r["win_rate_high"],
                "by_build": {b: t["win_rate"] for b, t in r["by_build"].items()},
                "by_seat": {s: t["win_rate"] for s, t in r["by_seat"].items()},
            }
            for m, r in final["modes"].items()
        },
        "curve": [(e["env_steps"], e["win_rate"]) for e in report["series"]],
    }


def _cell(row: dict[str, Any]) -> str:
    return f"{row['win_rate']:.1%} [{row['win_rate_low']:.1%}, {row['win_rate_high']:.1%}]"


def _build_cell(split: dict[str, Any]) -> str:
    return f"{split['win_rate']:.1%} ({split['win_rate_low']:.0%}–{split['win_rate_high']:.0%})"


def _rate_table(rows: list[dict[str, Any]], builds: list[str]) -> list[str]:
    """A markdown table of win rates: one row per opponent, the mean of the trained builds, then each build."""
    lines = ["| opponent | all | " + " | ".join(builds) + " |", "|---|---|" + "---|" * len(builds)]
    for row in rows:
        cells = [_build_cell(row["by_build"][b]) if b in row["by_build"] else "–" for b in builds]
        lines.append(f"| {row['opponent']} | {_cell(row)} | " + " | ".join(cells) + " |")
    return lines


def markdown(card: dict[str, Any]) -> str:
    ident, rows = card["identity"], card["win_rates"]
    name = Path(ident["file"]).name
    builds = [*rows[0]["builds"], *rows[0]["unseen_builds"]]
    lines = [
        f"### `{name}`",
        "",
        "| | |",
        "|---|---|",
        f"| sha256 | `{ident['sha256']}` |",
        f"| size | {ident['bytes']:,} bytes |",
        f"| weights checksum | `{ident['tensor_sha256']}` |",
        f"| trained | experiment `{ident['experiment']}`, iteration {ident['iteration']}, "
        f"{ident['env_steps']:,} env steps |",
        f"| network | {json.dumps(ident['network'])} |",
        f"| opponent mix | {json.dumps(ident['opponent_mix'])} |",
        f"| rules (training `env.params`) | {json.dumps(ident['rules'])} |",
        "",
        f"Win rate of the model (greedy, seat 0) under its training rules, {card['fights']} fights per build "
        f"(seed {card['seed']}), 95 % intervals; *all* is the mean of the trained builds; "
        f"{', '.join(rows[0]['unseen_builds'])} is unseen in training:",
        "",
        *_rate_table(rows, builds),
    ]
    sampled = card.get("sampling_win_rates") or []
    if sampled:
        lines += [
            "",
            "The same fights with the model sampling its action heads (as `serve` answers a request without "
            "`deterministic`, and as its sampling exploit run meets it):",
            "",
            *_rate_table(sampled, builds),
        ]
    runs = card.get("exploitability") or []
    for ex in runs:
        lines += [
            "",
            f"Exploitability at {ex['budget_env_steps']:,} exploiter env steps (`osrs-rllib exploit`, "
            f"{ex['fights']} final fights, both seats, the model {MODE_NAMES.get(ex['model_mode'], 'greedy')}): "
            f"**{ex['win_rate']:.1%}** "
            f"[{ex['win_rate_low']:.1%}, {ex['win_rate_high']:.1%}] (the exploiter "
            f"{MODE_NAMES.get(ex['mode'], ex['mode'])}, its better mode); exploiter "
            + ", ".join(f"{m} {_cell(r)}" for m, r in ex["modes"].items())
            + "; the exploiter first passed 50 % "
            + (f"after {ex['steps_to_pass_half']:,} env steps" if ex.get("steps_to_pass_half") else "never")
            + f" (`{ex['report']}`).",
        ]
    if len(runs) > 1:
        worst = model_exploitability(runs)
        mode = MODE_NAMES.get(worst["model_mode"], worst["model_mode"])
        lines += ["", f"The model's exploitability, the worst run of its better mode ({mode}): **{_cell(worst)}**."]
    return "\n".join(lines)


def model_exploitability(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The model's figure over its exploit runs by `osrs-rllib ship`'s rule (`osrs_rllib.shipping.ship.exploitability`):
    per mode of play the worst run, since one run is not a measurement, then the better mode's, the one to seat it
    in."""
    from osrs_rllib.shipping.ship import exploitability as ship_exploitability

    mode = ship_exploitability(runs)["mode"]
    return max((r for r in runs if r["model_mode"] == mode), key=lambda r: r["win_rate"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", type=Path)
    parser.add_argument("--fights", type=int, default=DEFAULT_FIGHTS, help="fights per build and opponent")
    parser.add_argument("--seed", type=int, default=CARD_SEED)
    parser.add_argument("--engine", default="auto", choices=["auto", "core", "python"])
    parser.add_argument(
        "--exploit",
        type=Path,
        action="append",
        default=[],
        help="an `osrs-rllib exploit` experiment (or its exploit.json) of this file; repeat for each run",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of markdown")
    parser.add_argument("--jobs", type=int, default=1, help="processes playing opponents side by side")
    parser.add_argument("--cache", type=Path, help="JSON file of finished rows: an interrupted card resumes from it")
    parser.add_argument(
        "--sampling",
        default="",
        help="comma-separated opponents to play again with the model sampling its heads (e.g. baseline,expert)",
    )
    args = parser.parse_args(argv)
    sampling = tuple(o for o in args.sampling.split(",") if o)
    unknown = [o for o in sampling if o not in OPPONENTS]
    if unknown:
        parser.error(f"--sampling: unknown opponent {unknown[0]!r}; one of {', '.join(OPPONENTS)}")
    model = load_model_file(args.model)
    # Read the exploit runs first: a wrong one should stop the card before its hour of fights, not after.
    runs = [exploitability(e, model.meta.get("tensor_sha256")) for e in args.exploit]
    t0 = time.perf_counter()
    card: dict[str, Any] = {
        "identity": identity(args.model, model),
        "fights": args.fights,
        "seed": args.seed,
        "win_rates": win_rates(args.model, args.fights, args.seed, args.engine, jobs=args.jobs, cache=args.cache),
        "machine": {"python": platform.python_version(), "processor": platform.processor() or platform.machine()},
    }
    if sampling:
        card["sampling_win_rates"] = win_rates(
            args.model,
            args.fights,
            args.seed,
            args.engine,
            jobs=args.jobs,
            cache=args.cache,
            opponents=sampling,
            deterministic=False,
        )
    if runs:
        card["exploitability"] = runs
    card["seconds"] = time.perf_counter() - t0
    print(json.dumps(card, indent=2) if args.json else markdown(card))
    return 0


if __name__ == "__main__":
    sys.exit(main())
