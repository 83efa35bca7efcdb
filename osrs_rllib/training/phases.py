"""A recipe in phases: ``osrs-rllib train CONFIG`` runs a config's ``phases:`` in order, in one experiment.

A config with ``phases`` (`osrs_rllib/config/recipe.py`) is trained as a chain of ordinary training runs, one per
phase, each in its own sub-experiment so that TensorBoard, ``--resume`` and the checkpoints work as for any run::

    experiments/<name>/
      config.yml                   the recipe, resolved (phases included): what --resume reads back
      recipe.json                  where the run came from: config as given, command, git commit (`record_recipe`)
      phases.json                  which phases finished and what each produced (`PHASES_FILE`, written atomically)
      run.json                     the process training it (``osrs-rllib jobs``, ``osrs-rllib stop``)
      phases/1-<first>/            an ordinary experiment (config.yml, checkpoints/, models/, tensorboard/)
      phases/2-<second>/           warm-started from phase 1's models/<init_from>.nhmodel (its init.json says so)

Why sub-experiments rather than one long run with changing settings: a phase changes what RLlib builds (the
opponents, the league's exploiters, the entropy weights), which a running algorithm cannot take; a new run
warm-started from the previous phase's file (`osrs_rllib/training/warm_start.py`) is the same step a person took by
hand, now written down. The optimiser and RLlib's schedules start afresh in each phase, as in any warm start.

``--resume`` skips the phases ``phases.json`` lists as finished, resumes the current one from its last checkpoint
(mid-phase) or starts it when it has none, and goes on; ``--force`` starts over; a stop (SIGTERM, Ctrl-C,
``osrs-rllib stop``) ends the current phase cleanly (its checkpoint kept) and no later phase starts.
"""

from __future__ import annotations

import contextlib
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from common.atomic_files import write_json_atomic, write_text_atomic
from osrs_rllib.config import TrainConfig
from osrs_rllib.experiments import Experiment, ExperimentError, read_json
from osrs_rllib.training.parts import Run, RunFacts, RunHooks

PHASES_FILE = "phases.json"
RECIPE_FILE = "recipe.json"
PHASES_DIR = "phases"
FINISHED = "finished"


class PhaseError(Exception):
    """A phased run that cannot start, resume or go on; one line for the person who asked for it."""


# ---------------------------------------------------------------------------------------------------------
# Where a run came from
# ---------------------------------------------------------------------------------------------------------


CODE_ROOT = Path(__file__).resolve().parents[1]
"""The checkout this package runs from: its commit is the code's, whatever the working directory."""


def git_state(cwd: Path | None = None) -> dict[str, Any]:
    """The commit the code runs at and whether tracked files differ from it (None each outside a git checkout):
    what a shipped model names so that its training can be checked out and run again. `cwd` defaults to the
    checkout of this package, not the working directory, which may be anywhere."""
    cwd = cwd or CODE_ROOT

    def git(*args: str) -> str | None:
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=10, check=False)
            if done.returncode == 0:
                return done.stdout.strip()
        return None

    commit = git("rev-parse", "HEAD")
    status = git("status", "--porcelain", "--untracked-files=no") if commit else None
    return {"commit": commit, "dirty": None if status is None else bool(status)}


def command_line(argv: Sequence[str] | None = None) -> str:
    """The command as a user types it (``osrs-rllib train ...``), whatever script or module started it."""
    args = list(sys.argv if argv is None else argv)
    return shlex.join(["osrs-rllib", *args[1:]])


def record_recipe(exp_dir: Path, config: str, command: str, *, resumed: bool = False) -> dict[str, Any]:
    """Write ``recipe.json`` when the run starts (the config as given, the command, the git commit); a resume adds
    its command to ``resumed_with`` and keeps the start's facts, which are what made the run."""
    path = exp_dir / RECIPE_FILE
    recipe = read_json(path, None)
    if resumed and isinstance(recipe, dict) and recipe.get("command"):
        recipe["resumed_with"] = [*recipe.get("resumed_with", []), {"command": command, **git_state()}]
        write_json_atomic(path, recipe)
        return recipe
    recipe = {"config": config, "command": command, **git_state(), "started_unix": time.time()}
    write_json_atomic(path, recipe)
    return recipe


class RecipeHook(RunHooks):
    """Records where a plain (unphased) run came from once its directory is prepared (`record_recipe`)."""

    def __init__(self, config: str, command: str) -> None:
        self.config = config
        self.command = command

    def built(self, trainer: Run) -> None:
        record_recipe(trainer.exp.dir, self.config, self.command, resumed=trainer.resume)


class StatusMirror(RunHooks):
    """Copies the current phase's latest figures (``status.json``) to the recipe's experiment after every
    iteration, with the phase named, so ``osrs-rllib jobs`` shows a phased run's progress on its own line."""

    def __init__(self, exp: Experiment, phase: str) -> None:
        self.exp = exp
        self.phase = phase

    def logged(self, trainer: Run, metrics: dict[str, float], figures: dict[str, Any], rows: list[Any]) -> None:
        self.exp.write_status({**figures, "state": "running", "phase": self.phase})


# ---------------------------------------------------------------------------------------------------------
# The phased run
# ---------------------------------------------------------------------------------------------------------


class PhasedRun:
    """The phases of one experiment: their configs, their sub-experiments and the record of what finished."""

    def __init__(self, cfg: TrainConfig, exp: Experiment) -> None:
        self.cfg = cfg
        self.exp = exp

    @property
    def record_path(self) -> Path:
        return self.exp.dir / PHASES_FILE

    def read_record(self) -> dict[str, Any]:
        record = read_json(self.record_path, None)
        if not isinstance(record, dict) or not isinstance(record.get("phases"), list):
            record = {"phases": []}
        return record

    def finished(self) -> list[dict[str, Any]]:
        """The record's finished phases, in order (a phase counts only when every one before it finished too)."""
        out = []
        rows = self.read_record()["phases"]
        for k, phase in enumerate(self.cfg.phases):
            row = rows[k] if k < len(rows) and isinstance(rows[k], dict) else {}
            if row.get("name") != phase.name or row.get("state") != FINISHED:
                break
            out.append(row)
        return out

    def phase_exp(self, k: int) -> Experiment:
        return Experiment(self.exp.dir / PHASES_DIR, f"{k + 1}-{self.cfg.phases[k].name}")

    def config_of(self, k: int) -> TrainConfig:
        """Phase `k`'s config: the recipe with the phase's settings, warm-started from the previous phase's file."""
        from osrs_rllib.config import ConfigError, phase_config

        init = None
        if k > 0:
            init = str(self.phase_exp(k - 1).models_dir / f"{self.cfg.phases[k].init_from}.nhmodel")
        try:
            return phase_config(self.cfg, k, str(self.exp.config_path), experiments_dir=str(self.exp.dir / PHASES_DIR),
                                init_model=init)  # fmt: skip
        except ConfigError as exc:
            raise PhaseError(str(exc)) from None

    def has_work(self) -> bool:
        """Whether starting over would lose something: a finished phase or a phase's checkpoint."""
        return bool(self.finished()) or any(
            self.phase_exp(k).latest_checkpoint() is not None for k in range(len(self.cfg.phases))
        )

    def last_output(self) -> Experiment:
        """The last phase's experiment (the run's output)."""
        return self.phase_exp(len(self.cfg.phases) - 1)

    def write_record(self, state: str, rows: list[dict[str, Any]], current: int | None) -> None:
        write_json_atomic(
            self.record_path,
            {
                "experiment": self.exp.name,
                "state": state,
                "current": None if current is None else self.cfg.phases[current].name,
                "phases": rows,
                "updated_unix": time.time(),
            },
        )

    def phase_row(self, k: int, state: str, started: float) -> dict[str, Any]:
        """What phase `k` produced so far: its directory, counters, files and warm start."""
        pexp = self.phase_exp(k)
        latest = pexp.latest_checkpoint()
        best = pexp.best_checkpoint()
        return {
            "index": k + 1,
            "name": self.cfg.phases[k].name,
            "state": state,
            "dir": str(pexp.dir.relative_to(self.exp.dir)),
            "iterations": latest.iteration if latest else 0,
            "env_steps": latest.env_steps if latest else 0,
            "latest": str((pexp.models_dir / "latest.nhmodel").relative_to(self.exp.dir)),
            "best": str((pexp.models_dir / "best.nhmodel").relative_to(self.exp.dir)) if best else None,
            "init": read_json(pexp.dir / "init.json", None),
            "started_unix": started,
            "ended_unix": time.time(),
        }


def run_phased(
    config: str,
    cfg: TrainConfig,
    overrides: Sequence[str],
    *,
    resume: bool,
    force: bool,
    detach_argv: Sequence[str] | None,
    echo: Callable[[str], None],
    command: str | None = None,
) -> int:
    """Train `cfg`'s phases in order (module docstring); with `detach_argv`, in a detached child instead.

    Every check runs before anything is written, as for a plain run: a resume needs the experiment's saved recipe,
    a new run may not replace finished work without `force`, and the first phase's warm-start model must fit.

    Raises:
        PhaseError: Bad flags, an experiment in the way or nothing to resume, an invalid phase, a failed phase.
    """
    from osrs_rllib.config import ConfigError, load_config
    from osrs_rllib.training.warm_start import WarmStartError, load_init

    if resume and force:
        raise PhaseError("--resume and --force contradict each other: pick one")
    exp = Experiment(cfg.experiments_dir, cfg.name)
    try:
        if resume:
            if not exp.config_path.exists():
                raise PhaseError(f"experiment {cfg.name!r} not found at {exp.dir}: nothing to resume")
            cfg = load_config(exp.config_path, [o for o in overrides if not o.startswith("name=")])
            if not cfg.phases:
                raise PhaseError(f"experiment {cfg.name!r} at {exp.dir} was not trained in phases: resume it "
                                 "with the config it was trained with")  # fmt: skip
        run = PhasedRun(cfg, exp)
        exp.ensure_not_running()
        if not resume:
            if run.has_work() and not force:
                raise PhaseError(f"experiment {cfg.name!r} already exists at {exp.dir}; use --resume to continue "
                                 "it or --force to start over (deleting its phases)")  # fmt: skip
            load_init(run.config_of(0))  # a model file of another shape: one line, before anything is written
    except (ConfigError, WarmStartError, ExperimentError) as exc:
        raise PhaseError(str(exc)) from None
    if detach_argv is not None:
        done = len(run.finished()) if resume else 0
        exp.detach(detach_argv, command="train", resume=resume, echo=echo,
                   doing=f"training {cfg.name} (phase {done + 1} of {len(cfg.phases)})")  # fmt: skip
        return 0
    command = command or command_line()
    if not resume:
        _clear(exp)
        write_text_atomic(exp.config_path, _dump(cfg))
    record_recipe(exp.dir, config, command, resumed=resume)
    exp.mark_started(shlex.split(command), resumed=resume, phases=[p.name for p in cfg.phases])
    return _run_phases(run, resume, echo, command, config)


def _clear(exp: Experiment) -> None:
    """A new run's directory: everything of an earlier run removed but the log and run record a detached start
    wrote for this one."""
    if exp.dir.is_dir():
        for child in exp.dir.iterdir():
            if child.name in (exp.log_path.name, exp.run_path.name):
                continue
            if child.is_dir() and not child.is_symlink():
                shutil.rmtree(child)
            else:
                child.unlink()
    exp.dir.mkdir(parents=True, exist_ok=True)


def _dump(cfg: TrainConfig) -> str:
    from osrs_rllib.config import dump_config

    names = ", ".join(p.name for p in cfg.phases)
    return dump_config(cfg, header=f"a recipe in {len(cfg.phases)} phases ({names}); osrs_rllib/training/phases.py")


def _run_phases(run: PhasedRun, resume: bool, echo: Callable[[str], None], command: str, config: str) -> int:
    """The loop over the phases: skip the finished, resume or start the rest in order, record each one."""
    import logging

    from common.stops import StopRequest
    from osrs_rllib.training.mixture import MixtureHook
    from osrs_rllib.training.trainer import Trainer, TrainingError
    from osrs_rllib.training.warm_start import WarmStartError

    cfg, exp = run.cfg, run.exp
    rows = run.finished()
    stop = StopRequest().install()  # a stop between two phases: no next phase
    state, code = "failed", 1
    try:
        for k in range(len(rows), len(cfg.phases)):
            pcfg = run.config_of(k)
            pexp = run.phase_exp(k)
            again = resume and pexp.latest_checkpoint() is not None
            if stop.requested:
                state, code = "stopped", 0
                echo(f"stopped before phase {k + 1} ({cfg.phases[k].name}); --resume starts it")
                return code
            echo(f"phase {k + 1} of {len(cfg.phases)}: {cfg.phases[k].name} ({'resumed' if again else 'started'}; "
                 f"{pexp.dir})")  # fmt: skip
            started = time.time()
            exp.write_run(phase=cfg.phases[k].name)
            run.write_record("running", [*rows, run.phase_row(k, "running", started)], k)
            logging.basicConfig(level=pcfg.logging.log_level,
                                format="%(asctime)s %(levelname)s %(name)s: %(message)s")  # fmt: skip
            mirror = StatusMirror(exp, f"{k + 1}/{len(cfg.phases)} {cfg.phases[k].name}")
            hooks = [RunFacts(), mirror, MixtureHook()]
            trainer = Trainer(pcfg, pexp, resume=again, echo=echo, command=shlex.split(command), hooks=hooks)
            try:
                code = trainer.run()
            except (TrainingError, ExperimentError, WarmStartError) as exc:
                run.write_record("failed", [*rows, run.phase_row(k, "failed", started)], k)
                raise PhaseError(f"phase {k + 1} ({cfg.phases[k].name}): {exc}") from None
            phase_state = pexp.read_run().get("state")
            rows.append(run.phase_row(k, str(phase_state), started))
            if phase_state != FINISHED:
                state = "stopped" if phase_state == "stopped" else "failed"
                run.write_record(state, rows, k)
                echo(f"phase {k + 1} ({cfg.phases[k].name}) {phase_state}: `osrs-rllib train {config} --resume` "
                     "continues it")  # fmt: skip
                return code
            run.write_record("running", rows, k)
            if trainer.stop.requested:
                stop.request()
        state, code = FINISHED, 0
        run.write_record(FINISHED, rows, None)
        steps = sum(int(r["env_steps"]) for r in rows)
        echo(f"every phase finished ({steps:,} env steps); the run's output: {run.last_output().models_dir}")
        return code
    finally:
        stop.uninstall()
        exp.write_run(state=state, ended_unix=time.time())
