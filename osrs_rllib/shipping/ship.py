"""`osrs-rllib ship EXPERIMENT --name NAME`: the run's shipped model, picked by the rule its config states.

Why a command: a shipped model used to be picked by hand among a run's late files, on fights nobody recorded, and
exported with its provenance in a prose card. Here the config's ``ship:`` section (`osrs_rllib/config/recipe.py`)
is the rule, and this module applies it to a finished run:

1. **Candidates**: the last ``ship.candidates`` checkpoints of the run's last phase (of the run, without phases),
   each copied to ``<experiment>/ship/candidates/iter-NNNNNN.nhmodel`` so that every measurement names a file
   that does not move.
2. **The rung**: each candidate plays ``ship.rung.fights`` fights per trained build against ``ship.rung.opponent``
   on held-out seeds, in each mode of ``ship.rung.modes``, under its own training rules (`evaluate`, the fights
   training's evaluation and the cards play). Its score is the mean of its modes' win rates.
3. **The probe** (``ship.exploit``, optional): the ``finalists`` best by score are each exploited by fresh learners
   (`osrs_rllib.exploit.measure.run_exploit`), one run per seed and model mode. A mode's figure is the worst of its runs
   (one run is not a measurement); the model's exploitability is its better mode's figure, and that mode becomes
   its default play mode (``play_mode`` in the metadata). The finalist with the lowest exploitability ships.
   With ``ship.mixture`` the last phase's per-fight mixture (its ``mixture:`` rule, `osrs_rllib.training.mixture`)
   competes beside the checkpoints: it plays the rung with each fight's member drawn by the fight's seed, as
   ``fight`` seats it, and is a finalist whatever the checkpoints score, since an exploiter facing several late
   models at once is what it is for. Its members share the exploit runs' final fights, so its figure rests on as
   many fights as a single model's. With ``ship.average`` the running average of main's parameters at the last
   phase's newest checkpoint (``ppo.average``, ``average.nhmodel``) competes the same way: a single network, a
   finalist whatever the checkpoints score, since being harder to exploit than the last iterate is its purpose.

   With ``ship.rung.floor`` a candidate that wins less than the floor against the rung in any mode (the mean of
   the builds, or any one build) is neither a finalist nor shipped: the probe ranks only candidates that already
   fight well. When none clears it, nothing is written and the error names what each candidate missed.
4. **The file**: ``<out>/NAME.nhmodel``, the candidate's network byte for byte with metadata that names the recipe
   (the config as given and resolved, the command that trained it, its git commit, the env steps, the seeds) and
   every figure measured, and ``<out>/NAME.card.md``, its card section, printed from the same record
   (``<experiment>/ship/ship.json``). Both are written atomically, the card after the model.

Every measurement is cached in ``<experiment>/ship/`` (a rung row per candidate and mode, an exploit experiment
per run, resumed where it stopped), so a stopped or killed ``ship`` continues where it was: the exploit runs take
about 25 minutes each on 2 cores. A stop (SIGTERM, Ctrl-C) ends it after the measurement in flight; nothing is
shipped until every measurement is there. Bad input (no such run, a run that has not finished, no rule) writes
nothing.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from common.atomic_files import write_json_atomic
from common.paths import portable
from osrs_rllib.config import ShipFloorConfig
from osrs_rllib.experiments import Experiment, read_json
from osrs_rllib.shipping.run import (
    SHIP_FILE,
    Candidate,
    ShipError,
    ShipRun,
    average_candidate,
    average_source,
    candidates_of,
    copy_candidates,
    mixture_candidate,
    mixture_members,
    mixture_metadata,
    open_run,
)

PLAY_MODES = {"deterministic": "greedy", "stochastic": "sampling"}
"""Metadata ``play_mode`` per mode of play: how ``fight``, ``play`` and ``serve`` seat the model by default."""
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")

# ---------------------------------------------------------------------------------------------------------
# Measurements (each cached in the experiment)
# ---------------------------------------------------------------------------------------------------------


def rung_row(run: ShipRun, candidate: Candidate, mode: str) -> dict[str, Any]:
    """The candidate's evaluation row against the rung in `mode` (`EvalResult.to_dict()`), cached by the weights,
    the rung, the fights, the seed and the mode."""
    import numpy as np
    import torch

    from osrs_rllib.evaluation import evaluate
    from policies.fight_rules import fight_rules_of
    from policies.model_file import load_model_file

    rung = run.cfg.ship.rung  # type: ignore[union-attr]
    key = f"{candidate.tensor_sha256[:16]}-{rung.opponent}-{mode}-{rung.fights}-{rung.seed}"
    cache = run.ship_dir / "rung" / f"{key}.json"
    row = read_json(cache, None)
    if isinstance(row, dict):
        return row
    torch.manual_seed(rung.seed)  # sampling play draws from torch's generator: the same seed, the same row
    model = load_model_file(candidate.path)

    def act(obs: np.ndarray, masks: np.ndarray, deterministic: bool) -> np.ndarray:
        return np.asarray(model.act(obs, masks.astype(np.float32), deterministic=deterministic))

    side = None
    if model.member_count > 1:  # each fight's member drawn by its seed, as `fight` seats a mixture
        from functools import partial

        from osrs_rllib.evaluation import ModelSide

        side = partial(ModelSide, model, deterministic=mode == "deterministic")
    t0 = time.perf_counter()
    (result,) = evaluate(
        act,
        [rung.opponent],
        rung.fights,
        side=side,
        params=dict(fight_rules_of(model).training_options),
        deterministic=mode == "deterministic",
        seed=rung.seed,
        frame_stack=model.frame_stack,
        engine=run.cfg.env.engine,
        parallel=64,
    )
    row = {**result.to_dict(), "seconds": time.perf_counter() - t0}
    write_json_atomic(cache, row)
    return row


def exploit_runs(
    run: ShipRun, candidate: Candidate, echo: Callable[[str], None], stopped: Callable[[], bool]
) -> list[dict[str, Any]] | None:
    """The candidate's exploit runs (one per seed and model mode), each run or resumed until it has its final
    figure; None when a stop came first (the runs keep their checkpoints: ``ship`` again continues them)."""
    from osrs_rllib.exploit import EXPLOIT_FILE, run_exploit

    probe = run.cfg.ship.exploit  # type: ignore[union-attr]
    assert probe is not None
    out = []
    root = run.ship_dir / "exploit"
    for mode in probe.model_modes:
        for seed in probe.seeds:
            name = f"{candidate.label}-{PLAY_MODES[mode]}-seed{seed}-{probe.env_steps}"
            exp = Experiment(root, name)
            report = read_json(exp.dir / EXPLOIT_FILE, None)
            if not finished_exploit(report):
                if stopped():
                    return None
                resume = exp.latest_checkpoint() is not None
                echo(f"exploit {candidate.label} ({PLAY_MODES[mode]} play), seed {seed}: {exp.dir}")
                overrides = [*probe.overrides, f"seed={seed}", f"experiments_dir={json.dumps(str(root))}"]
                run_exploit([str(candidate.path)], None, probe.config, name, overrides, final_fights(probe,
                            candidate), resume, not resume, _fail, echo, env_steps=probe.env_steps,
                            model_sampling=mode == "stochastic")  # fmt: skip
                report = read_json(exp.dir / EXPLOIT_FILE, None)
                if not finished_exploit(report):
                    return None  # stopped inside the run
            out.append(exploit_figure(report, mode, seed, exp.dir))
    return out


def final_fights(probe: Any, candidate: Candidate) -> int:
    """Fights per build of an exploit run's final evaluation: ``final_fights``, shared by a mixture's members (each
    plays the same fights, pooled: `osrs_rllib.evaluation.policy_fights.evaluate_vs_model`), so that a mixture's figure
    rests on as many fights as a single model's and its run ends in the same time."""
    from policies.model_file import read_model_meta

    if not candidate.is_mixture:
        return int(probe.final_fights)
    members = len((read_model_meta(candidate.path).get("mixture") or {}).get("members") or []) or 1
    return max(1, -(-int(probe.final_fights) // members))


def finished_exploit(report: Any) -> bool:
    """Whether an exploit run's report holds its budget's figure. A run stopped by one signal still plays its final
    evaluation and records a figure, but at the env steps it had reached (state ``stopped``): taking that as the
    budget's figure would understate exploitability, so only a ``finished`` run counts and a stopped one resumes."""
    return isinstance(report, dict) and report.get("state") == "finished" and bool(report.get("exploitability"))


def exploit_figure(report: dict[str, Any], mode: str, seed: int, where: Path) -> dict[str, Any]:
    """One exploit run's final figure (the better of its exploiter's modes) and curve, from its report."""
    ex = report["exploitability"]
    return {
        "model_mode": mode,
        "seed": seed,
        "win_rate": ex["win_rate"],
        "win_rate_low": ex["win_rate_low"],
        "win_rate_high": ex["win_rate_high"],
        "fights": ex.get("fights"),
        "budget_env_steps": ex.get("budget_env_steps"),
        "steps_to_pass_half": ex.get("steps_to_pass_half"),
        "curve": [[e["env_steps"], e["win_rate"]] for e in report.get("series", [])],
        "report": portable(where),
    }


def _fail(message: str) -> Exception:
    return ShipError(message)


# ---------------------------------------------------------------------------------------------------------
# The rule
# ---------------------------------------------------------------------------------------------------------


def score(rows: dict[str, dict[str, Any]]) -> float:
    """A candidate's score against the rung: the mean of its modes' win rates (each the mean of the builds)."""
    return sum(float(r["win_rate"]) for r in rows.values()) / len(rows)


def exploitability(runs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """A finalist's exploitability from its runs: per model mode the worst run (the highest exploiter win rate),
    and the model's figure its better mode's, which is the mode it should be seated in."""
    by_mode: dict[str, dict[str, Any]] = {}
    for r in runs:
        if r["model_mode"] not in by_mode or r["win_rate"] > by_mode[r["model_mode"]]["win_rate"]:
            by_mode[r["model_mode"]] = r
    best_mode = min(by_mode, key=lambda m: (by_mode[m]["win_rate"], m != "deterministic"))
    return {
        "by_mode": {m: r["win_rate"] for m, r in by_mode.items()},
        "win_rate": by_mode[best_mode]["win_rate"],
        "mode": best_mode,
    }


def floor_misses(rung: dict[str, dict[str, Any]], floor: ShipFloorConfig | None) -> list[str]:
    """What a candidate's rung rows (mode -> `EvalResult.to_dict()`) miss of ``ship.rung.floor``, one phrase each
    (``greedy ZERKER 81.0% < 87.0%``); [] when it clears the floor or there is none."""
    if floor is None:
        return []
    misses = []
    for mode, row in rung.items():
        if row["win_rate"] < floor.mean:
            misses.append(f"{PLAY_MODES[mode]} {row['win_rate']:.1%} < {floor.mean:.1%}")
        for build, split in row["by_build"].items():
            if split["win_rate"] < floor.every_build:
                misses.append(f"{PLAY_MODES[mode]} {build} {split['win_rate']:.1%} < {floor.every_build:.1%}")
    return misses


def finalists(candidates: Sequence[Candidate], rows: dict[str, dict[str, Any]], count: int) -> list[Candidate]:
    """The candidates the probe measures: the mixture and the average (if any) and the `count` best checkpoints by
    score (ties to the later), of those that clear the rung's floor (``floor_misses`` empty in their row)."""
    clear = [c for c in candidates if not rows[c.label]["floor_misses"]]
    ranked = sorted((c for c in clear if not c.always_probed), key=lambda c: (rows[c.label]["score"], c.iteration),
                    reverse=True)  # fmt: skip
    return [*(c for c in clear if c.always_probed), *ranked[:count]]


def pick(rows: list[dict[str, Any]]) -> tuple[dict[str, Any], str]:
    """The candidate that ships and why, from the measured rows (`measure`'s): of those that clear the rung's floor,
    the lowest exploitability among the probed finalists, ties to the higher score; without a probe, the highest
    score (ties to the later one).

    Raises:
        ShipError: No candidate clears the floor (what each missed is named).
    """
    clear = [r for r in rows if not r.get("floor_misses")]
    if not clear:
        missed = "; ".join(f"{r['label']}: {', '.join(r['floor_misses'])}" for r in rows)
        raise ShipError(f"no candidate clears ship.rung.floor, so nothing ships ({missed}); the measurements "
                        "are kept for a ship of the run trained further")  # fmt: skip
    rows = clear
    probed = [r for r in rows if r.get("exploitability") is not None]
    if probed:
        best = min(probed, key=lambda r: (r["exploitability"]["win_rate"], -r["score"], -r["iteration"]))
        why = (f"the lowest exploitability of the {len(probed)} finalist(s) by the rung: "
               f"{best['exploitability']['win_rate']:.1%}")  # fmt: skip
        return best, why
    best = max(rows, key=lambda r: (r["score"], r["iteration"]))
    return best, f"the highest score against the rung of {len(rows)} candidate(s): {best['score']:.1%}"


# ---------------------------------------------------------------------------------------------------------
# Measuring, writing, the command's entry point
# ---------------------------------------------------------------------------------------------------------


def measure(
    run: ShipRun, candidates: list[Candidate], echo: Callable[[str], None], stopped: Callable[[], bool]
) -> list[dict[str, Any]] | None:
    """Every candidate's rung rows and score, and the finalists' exploit runs, as rows in `candidates`' order; None
    when a stop came first. The finalists are the best checkpoints by score, the mixture (``ship.mixture``) and the
    average (``ship.average``). Those two are measured first, their probes included: each is a finalist whatever
    the checkpoints score (if it clears the rung's floor), so their figures need not wait for the checkpoints' (a
    stopped ``ship`` has them first)."""
    ship = run.cfg.ship
    assert ship is not None
    rows: dict[str, dict[str, Any]] = {}

    def probe(c: Candidate) -> bool:
        runs = exploit_runs(run, c, echo, stopped)
        if runs is None:
            return False
        rows[c.label]["exploit_runs"] = runs
        rows[c.label]["exploitability"] = exploitability(runs)
        return True

    for c in sorted(candidates, key=lambda c: not c.always_probed):  # stable: the checkpoints keep their order
        rung: dict[str, dict[str, Any]] = {}
        for mode in ship.rung.modes:
            if stopped():
                return None
            rung[mode] = rung_row(run, c, mode)
        row = {"label": c.label, "iteration": c.iteration, "env_steps": c.env_steps,
               "file": portable(c.path, run.exp.dir), "tensor_sha256": c.tensor_sha256, "rung": rung,
               "score": score(rung), "exploitability": None,
               "exploit_runs": [], "floor_misses": floor_misses(rung, ship.rung.floor)}  # fmt: skip
        if c.is_mixture:
            row["members"] = mixture_metadata(c.path)
        rows[c.label] = row
        rates = ", ".join(f"{PLAY_MODES[m]} {r['win_rate']:.1%}" for m, r in rung.items())
        missed = f"; under the floor: {', '.join(row['floor_misses'])}" if row["floor_misses"] else ""
        echo(f"{c.label} ({c.env_steps:,} env steps) against {ship.rung.opponent}: {rates}{missed}")
        if c.always_probed and ship.exploit is not None and not row["floor_misses"] and not probe(c):
            return None
    if ship.exploit is not None:
        for c in finalists(candidates, rows, ship.exploit.finalists):
            if not c.always_probed and not probe(c):
                return None
    return [rows[c.label] for c in candidates]


def write_model(src: Path, dst: Path, metadata: dict[str, Any]) -> dict[str, Any]:
    """`src`'s network, unchanged, at `dst` (atomically) with `metadata` added to its own; returns the file's meta.

    The TorchScript archive is saved again rather than edited as a zip: `torch.jit.save` writes the same module and
    the new metadata entry in one file, and `load_model_file` checks the weights' checksum on the way back."""
    import warnings

    import torch

    from common.atomic_files import atomic_path
    from policies.model_file import CONTRACT_ENTRY, META_ENTRY, load_model_file, read_model_meta

    meta = read_model_meta(src)
    meta["metadata"] = {**meta.get("metadata", {}), **metadata}
    extra = {CONTRACT_ENTRY: ""}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        module = torch.jit.load(str(src), map_location="cpu", _extra_files=extra)
        with atomic_path(dst) as tmp:
            files = {META_ENTRY: json.dumps(meta, sort_keys=True, indent=1), CONTRACT_ENTRY: extra[CONTRACT_ENTRY]}
            torch.jit.save(module, str(tmp), _extra_files=files)
    return load_model_file(dst).meta


def recipe_metadata(run: ShipRun) -> dict[str, Any]:
    """What the shipped file says about the run that made it (``recipe`` in its metadata)."""
    ship = run.cfg.ship
    assert ship is not None
    phases = [{k: p.get(k) for k in ("name", "iterations", "env_steps", "init")} for p in run.phases]
    latest = run.output.latest_checkpoint()
    total = sum(int(p["env_steps"] or 0) for p in phases) if phases else (latest.env_steps if latest else 0)
    return {
        "config": run.recipe.get("config"),
        "command": run.recipe.get("command"),
        "commit": run.recipe.get("commit"),
        "dirty": run.recipe.get("dirty"),
        "resumed_with": run.recipe.get("resumed_with", []),
        "experiment": run.exp.name,
        "resolved": run.cfg.to_dict(),
        "phases": phases,
        "env_steps": total,
        "seeds": {
            "training": run.cfg.seed,
            "rung": ship.rung.seed,
            "exploit": list(ship.exploit.seeds) if ship.exploit else [],
        },
    }


def ship_run(
    experiment: str,
    name: str,
    out: Path,
    *,
    force: bool = False,
    experiments_dir: str = "experiments",
    detach_argv: Sequence[str] | None = None,
    echo: Callable[[str], None] = print,
    command: str | None = None,
) -> int:
    """`osrs-rllib ship`: measure the run's candidates by its rule, write ``<out>/<name>.nhmodel`` and its card.

    Returns 0 (shipped, or stopped with the measurements so far kept) or 130 (a second stop signal).

    Raises:
        ShipError: Bad input (checked before anything is written) or a failed measurement.
    """
    from common.stops import HARD_STOP_EXIT, StopRequest
    from osrs_rllib.shipping.card import card_markdown
    from osrs_rllib.training import command_line, git_state

    if not _NAME.match(name):
        raise ShipError(f"--name {name!r}: expected letters, digits, '.', '_' or '-' (it names models/<name>.nhmodel)")
    target = out / f"{name}.nhmodel"
    if target.exists() and not force:
        raise ShipError(f"{target} exists; ship under another --name, or --force to replace it")
    run = open_run(experiment, experiments_dir)
    candidates_of(run)  # a run without a model to ship fails here, before anything is written
    mixture_members(run)  # and so does a mixture the rule cannot make
    average_source(run)  # and an average the run did not keep
    if detach_argv is not None:
        from common.processes import start_cli_detached

        log = run.ship_dir / "ship.log"
        pid = start_cli_detached("ship", detach_argv, log)
        echo(f"shipping {run.exp.name} as {target} in the background (pid {pid}); log: {log}")
        return 0
    stop = StopRequest().install()
    try:
        extra = [c for c in (mixture_candidate(run), average_candidate(run)) if c is not None]
        rows = measure(run, [*copy_candidates(run), *extra], echo, lambda: stop.requested)
        if rows is None:
            echo(f"stopped: the measurements so far are kept in {run.ship_dir}; ship again to continue")
            return 0
        picked, why = pick(rows)
        mode = picked["exploitability"]["mode"] if picked.get("exploitability") else "deterministic"
        record = {
            "name": name, "experiment": run.exp.name, "rule": run.cfg.ship.model_dump(mode="json"),  # type: ignore[union-attr]
            "candidates": rows, "picked": picked["label"], "why": why, "play_mode": PLAY_MODES[mode],
            "command": command or command_line(), **{f"ship_{k}": v for k, v in git_state().items()},
        }  # fmt: skip
        meta = write_model(run.exp.dir / picked["file"], target, {"recipe": recipe_metadata(run), "ship": record,
                                                          "play_mode": PLAY_MODES[mode]})  # fmt: skip
        record["shipped"] = {"file": portable(target), "tensor_sha256": meta["tensor_sha256"]}
        write_json_atomic(run.ship_dir / SHIP_FILE, record)
        card = card_markdown(target, record)
        from common.atomic_files import write_text_atomic

        write_text_atomic(out / f"{name}.card.md", card)
        echo(f"shipped {picked['label']} as {target} ({why}); card: {out / f'{name}.card.md'}")
        return 0
    except KeyboardInterrupt:
        echo(f"stopped at once: the finished measurements are kept in {run.ship_dir}; ship again to continue")
        return HARD_STOP_EXIT
    finally:
        stop.uninstall()
