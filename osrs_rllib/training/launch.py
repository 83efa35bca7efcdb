"""Start, resume or detach a training run: what `osrs-rllib train` does once its options are parsed.

Why a function of the library and not of the command: the run's lifecycle (a new experiment, a resume, a
forced restart, a detached child) is the same whoever asks for it: the command line, a notebook, a study
script. The command only turns its flags into config overrides and prints what this raises.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from osrs_rllib.config import TrainConfig


class TrainRunError(Exception):
    """A run that cannot start or that failed, in one line for the person who asked for it."""


def run_train(
    config: str,
    overrides: Sequence[str],
    *,
    resume: bool = False,
    force: bool = False,
    detach_argv: Sequence[str] | None = None,
    echo: Callable[[str], None] = print,
) -> int:
    """Train the config's experiment in this process (or, given ``detach_argv``, in a detached child).

    Every check runs before anything is written: the config and its overrides, --resume against what the
    experiment holds, a live run of the same name, the warm-start model's shape. With ``resume`` the
    experiment's saved config is used (``config`` names the experiment), with ``overrides`` on top.

    Args:
        config: A YAML training config (or, with ``resume``, the experiment's name or config).
        overrides: ``key.path=value`` overrides, including those the command derives from its flags.
        resume: Continue the experiment from its latest checkpoint.
        force: Start over, deleting the experiment's checkpoints.
        detach_argv: Start ``osrs-rllib train`` with these arguments in the background instead, and return.
        echo: Where the run's progress lines go.

    Returns:
        The exit status of the run (0: done or stopped cleanly).

    Raises:
        TrainRunError: Bad config or flags, an experiment in the way, or a failed run.
    """
    from osrs_rllib.config import ConfigError, load_config
    from osrs_rllib.experiments import Experiment, ExperimentError
    from osrs_rllib.training.warm_start import WarmStartError, load_init

    try:
        cfg = load_config(config, list(overrides))
        if cfg.phases:  # a recipe: its phases in order, in one experiment (osrs_rllib/training/phases.py)
            return _run_phased(config, cfg, overrides, resume, force, detach_argv, echo)
        saved = []  # a resume's own config, read back before the experiment's state is checked
        exp = Experiment.open(
            cfg.experiments_dir,
            cfg.name,
            resume=resume,
            force=force,
            check_saved=lambda e: saved.append(
                load_config(e.config_path, [o for o in overrides if not o.startswith("name=")])
            ),
        )
        if resume:
            cfg = saved[0]
        else:
            load_init(cfg)  # a model file of another shape: one line, before anything is written
    except (ConfigError, WarmStartError, ExperimentError) as exc:
        raise TrainRunError(str(exc)) from None

    if detach_argv is not None:
        exp.detach(detach_argv, command="train", resume=resume, doing=f"training {cfg.name}", echo=echo)
        return 0

    from osrs_rllib.training.trainer import Trainer, TrainingError

    logging.basicConfig(level=cfg.logging.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    from osrs_rllib.training.mixture import MixtureHook
    from osrs_rllib.training.parts import RunFacts
    from osrs_rllib.training.phases import RecipeHook, command_line

    hooks = [RunFacts(), RecipeHook(config, command_line()), MixtureHook()]
    trainer = Trainer(cfg, exp, resume=resume, echo=echo, hooks=hooks)
    try:
        return trainer.run()
    except (TrainingError, ExperimentError, WarmStartError) as exc:
        raise TrainRunError(str(exc)) from None


def _run_phased(
    config: str,
    cfg: TrainConfig,
    overrides: Sequence[str],
    resume: bool,
    force: bool,
    detach_argv: Sequence[str] | None,
    echo: Callable[[str], None],
) -> int:
    from osrs_rllib.training.phases import PhaseError, run_phased

    try:
        return run_phased(config, cfg, overrides, resume=resume, force=force, detach_argv=detach_argv, echo=echo)
    except PhaseError as exc:
        raise TrainRunError(str(exc)) from None
