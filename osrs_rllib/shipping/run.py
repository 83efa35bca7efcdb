"""A run about to ship: the finished experiment and its rule (`open_run`), and the candidates the rule names (its
last checkpoints, the last phase's per-fight mixture, the running average of main's parameters), each copied under
``<experiment>/ship/candidates/`` so that every measurement names a file that does not move. `ship` measures them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from common.atomic_files import copy_atomic
from osrs_rllib.config import TrainConfig
from osrs_rllib.experiments import AVERAGE_MODEL_NAME, MODEL_NAME, CheckpointInfo, Experiment, read_json

SHIP_DIR = "ship"
SHIP_FILE = "ship.json"
"""The measurement record of the last ``ship`` (what the card is printed from)."""
MIXTURE_LABEL = "mixture"
"""The label (and ``ship/candidates/<label>.nhmodel``) of the last phase's per-fight mixture (``ship.mixture``)."""
AVERAGE_LABEL = "average"
"""The label of the running average of main's parameters at the newest checkpoint (``ship.average``)."""


class ShipError(Exception):
    """Shipping cannot start or go on: no such run, not finished, no rule, a bad name; one line."""


@dataclass(frozen=True)
class Candidate:
    """One checkpoint's model that competes, copied where its measurements can name it."""

    label: str
    """``iter-NNNNNN``: the checkpoint it came from; ``mixture`` for the last phase's per-fight mixture, ``average``
    for the running average of main's parameters."""
    iteration: int
    env_steps: int
    path: Path
    """The copy under ``ship/candidates/``."""
    tensor_sha256: str

    @property
    def is_mixture(self) -> bool:
        return self.label == MIXTURE_LABEL

    @property
    def always_probed(self) -> bool:
        """A finalist whatever the checkpoints score (if it clears the floor): the rung cannot show what it is for."""
        return self.label in (MIXTURE_LABEL, AVERAGE_LABEL)


@dataclass(frozen=True)
class ShipRun:
    """A finished run, ready to ship: its experiment, config, the experiment of its last phase and its facts."""

    exp: Experiment
    cfg: TrainConfig
    output: Experiment
    """Where the candidates are: the last phase's experiment, or the run's own."""
    phases: list[dict[str, Any]]
    recipe: dict[str, Any]

    @property
    def ship_dir(self) -> Path:
        return self.exp.dir / SHIP_DIR


def open_run(experiment: str, experiments_dir: str = "experiments") -> ShipRun:
    """The experiment `experiment` (a directory, or a name under `experiments_dir`), checked: it exists, its config
    states a ``ship:`` rule, it is not running and it finished (every phase). Writes nothing.

    Raises:
        ShipError: What is wrong, naming the experiment and what to do.
    """
    from osrs_rllib.config import ConfigError, load_config
    from osrs_rllib.training import PHASES_FILE, RECIPE_FILE, PhasedRun

    path = Path(experiment)
    if not (path / "config.yml").is_file():
        path = Path(experiments_dir) / experiment
    exp = Experiment(path.parent, path.name)
    if not exp.config_path.is_file():
        raise ShipError(f"no experiment {experiment!r}: expected a directory with a config.yml (or a name under "
                        f"{experiments_dir}/)")  # fmt: skip
    try:
        cfg = load_config(exp.config_path)
    except ConfigError as exc:
        raise ShipError(f"the experiment's config does not load: {exc}") from None
    if cfg.ship is None:
        raise ShipError(f"{exp.config_path}: ship: none stated; expected the rule that picks the shipped model "
                        "(a ship: section, see docs/recipes.md)")  # fmt: skip
    state = exp.effective_state()
    phases: list[dict[str, Any]] = []
    output = exp
    if cfg.phases:
        record = read_json(exp.dir / PHASES_FILE, {}) or {}
        state = state if state in ("dead", "running", "starting", "stopping") else str(record.get("state"))
        phases = PhasedRun(cfg, exp).finished()
        output = PhasedRun(cfg, exp).last_output()
        if len(phases) < len(cfg.phases):
            state = state if state != "finished" else "unfinished"
    if state != "finished":
        raise ShipError(f"experiment {exp.name!r} has not finished (state {state}): ship a finished run (`osrs-rllib "
                        f"train ... --resume` finishes it)")  # fmt: skip
    recipe = read_json(exp.dir / RECIPE_FILE, None)
    if not isinstance(recipe, dict):
        raise ShipError(f"experiment {exp.name!r} has no {RECIPE_FILE}: it predates recorded recipes, so a model "
                        "shipped from it could not name its config, command and commit; train it again")  # fmt: skip
    return ShipRun(exp, cfg, output, phases, recipe)


def candidates_of(run: ShipRun) -> list[tuple[str, int, int, Path]]:
    """The competing checkpoints (label, iteration, env steps, model file), oldest first: the last
    ``ship.candidates`` of the run's output that hold a model file.

    Raises:
        ShipError: The run's output has no checkpoint with a model file.
    """
    assert run.cfg.ship is not None
    kept = [c for c in run.output.checkpoints() if (c.path / MODEL_NAME).is_file()]
    if not kept:
        raise ShipError(f"{run.output.dir} has no checkpoint with a {MODEL_NAME}: nothing to ship")
    return [(c.path.name, c.iteration, c.env_steps, c.path / MODEL_NAME) for c in kept[-run.cfg.ship.candidates :]]


def copy_candidates(run: ShipRun) -> list[Candidate]:
    """Each candidate's model copied under ``ship/candidates/`` (kept across a resumed ``ship``)."""
    from policies.model_file import read_model_meta

    out = []
    for label, iteration, env_steps, src in candidates_of(run):
        dst = run.ship_dir / "candidates" / f"{label}.nhmodel"
        if not dst.is_file():
            copy_atomic(src, dst)
        out.append(Candidate(label, iteration, env_steps, dst, str(read_model_meta(dst)["tensor_sha256"])))
    return out


def average_source(run: ShipRun) -> CheckpointInfo | None:
    """The last phase's newest checkpoint, whose ``average.nhmodel`` is the running average of
    main's parameters that competes, or None without ``ship.average``.

    Raises:
        ShipError: The rule asks for it and the newest checkpoint holds none.
    """
    if not run.cfg.ship or not run.cfg.ship.average:
        return None
    newest = run.output.latest_checkpoint()
    if newest is None or not (newest.path / AVERAGE_MODEL_NAME).is_file():
        raise ShipError(f"ship.average: {run.output.dir}'s newest checkpoint has no {AVERAGE_MODEL_NAME} "
                        "(was it trained with ppo.average.decay > 0?)")  # fmt: skip
    return newest


def average_candidate(run: ShipRun) -> Candidate | None:
    """The running average (`average_source`) copied to ``ship/candidates/average.nhmodel`` (kept across a resumed
    ``ship``), or None without ``ship.average``."""
    from policies.model_file import read_model_meta

    newest = average_source(run)
    if newest is None:
        return None
    dst = run.ship_dir / "candidates" / f"{AVERAGE_LABEL}.nhmodel"
    if not dst.is_file():
        copy_atomic(newest.path / AVERAGE_MODEL_NAME, dst)
    sha = str(read_model_meta(dst)["tensor_sha256"])
    return Candidate(AVERAGE_LABEL, newest.iteration, newest.env_steps, dst, sha)


def mixture_members(run: ShipRun) -> list[Any]:
    """The members the last phase's ``mixture:`` rule picks from its models (`osrs_rllib.training.mixture`), checked
    before anything is written; [] when the rule does not ask for a mixture (``ship.mixture`` false).

    Raises:
        ShipError: The run's output has fewer than two models that pass the rule.
    """
    from osrs_rllib.config import load_config
    from osrs_rllib.training import MixtureError, run_members

    if not run.cfg.ship or not run.cfg.ship.mixture:
        return []
    try:
        return run_members(run.output.models_dir, load_config(run.output.config_path).mixture)
    except MixtureError as exc:
        raise ShipError(f"ship.mixture: {exc}") from None


def mixture_candidate(run: ShipRun) -> Candidate | None:
    """The last phase's per-fight mixture written by its rule to ``ship/candidates/mixture.nhmodel`` (kept across a
    resumed ``ship``, so every measurement names the same members), or None without ``ship.mixture``.

    Raises:
        ShipError: Too few models pass the rule, or a member's file is damaged.
    """
    from osrs_rllib.config import load_config
    from osrs_rllib.training import MixtureError, write_run_mixture
    from policies.model_file import read_model_meta

    if not mixture_members(run):
        return None
    dst = run.ship_dir / "candidates" / f"{MIXTURE_LABEL}.nhmodel"
    if not dst.is_file():
        try:
            write_run_mixture(run.output.models_dir, load_config(run.output.config_path).mixture, out=dst)
        except MixtureError as exc:
            raise ShipError(f"ship.mixture: {exc}") from None
    meta = read_model_meta(dst)
    trained = meta.get("metadata") or {}
    return Candidate(MIXTURE_LABEL, int(trained.get("iteration") or 0), int(trained.get("env_steps") or 0), dst,
                     str(meta["tensor_sha256"]))  # fmt: skip


def mixture_metadata(path: Path) -> list[dict[str, Any]]:
    """A mixture candidate's members as its record lists them: which model of the phase each is, its iteration,
    env steps and weights checksum, in member order."""
    from policies.model_file import read_model_meta

    meta = read_model_meta(path)
    chosen = (meta.get("metadata") or {}).get("mixture_members") or []
    out = []
    for i, member in enumerate((meta.get("mixture") or {}).get("members") or []):
        trained = member.get("metadata") or {}
        label = chosen[i].get("label") if i < len(chosen) else None
        out.append({"member": i, "label": label, "iteration": trained.get("iteration"),
                    "env_steps": trained.get("env_steps"), "tensor_sha256": member.get("tensor_sha256")})  # fmt: skip
    return out
