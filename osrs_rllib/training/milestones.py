"""Fixed points of a training run: main's model kept at every `checkpoint.milestone_env_steps` env steps.

Checkpoints rotate (`checkpoint.keep_last`), and ``best.nhmodel`` and ``latest.nhmodel`` are overwritten, so
without these files a finished run cannot say how exploitable it was at 5M env steps. A milestone is a copy of
a checkpoint's ``main.nhmodel`` (its metadata names the iteration and env steps), written once and never
deleted: ``osrs-rllib exploit-curve`` (`osrs_rllib.exploit.curve`) trains a short fresh exploiter against each,
during the run or after it. A run that keeps the running average of main's parameters (``ppo.average``) keeps the
checkpoint's ``average.nhmodel`` beside it at the same points, as ``average-<N>.nhmodel``
(``exploit-curve --twin average``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from common.atomic_files import copy_atomic

MILESTONES_DIR = "milestones"
"""Under the experiment's ``models/``."""
MILESTONE_KINDS = ("main", "average")
"""What a milestone is of: main's model, or the running average of its parameters."""


def milestone_name(kind: str = "main") -> re.Pattern[str]:
    return re.compile(rf"^{kind}-(\d+)\.nhmodel$")


@dataclass(frozen=True)
class Milestone:
    env_steps: int
    path: Path


def milestone_path(models_dir: Path, env_steps: int, kind: str = "main") -> Path:
    return models_dir / MILESTONES_DIR / f"{kind}-{env_steps}.nhmodel"


def list_milestones(models_dir: Path, kind: str = "main") -> list[Milestone]:
    """The milestones of `kind` on disk, oldest first (partial writes, dot-files of `copy_atomic`, are not
    listed)."""
    folder = models_dir / MILESTONES_DIR
    pattern = milestone_name(kind)
    found = []
    if folder.is_dir():
        for path in folder.iterdir():
            match = pattern.match(path.name)
            if match and path.is_file():
                found.append(Milestone(int(match.group(1)), path))
    return sorted(found, key=lambda m: m.env_steps)


def milestone_due(models_dir: Path, every: int, env_steps: int) -> bool:
    """Whether a checkpoint at `env_steps` is the first at or past a multiple of `every` not yet kept. A run
    resumed from a checkpoint older than a kept milestone keeps that file and does not write the multiple
    again: each multiple has one file, from the first run that reached it."""
    kept = list_milestones(models_dir)
    reached = max((m.env_steps // every for m in kept), default=0)
    return env_steps // every > reached


def keep_milestone(models_dir: Path, every: int | None, env_steps: int, model_file: Path,
                   average_file: Path | None = None) -> Path | None:
    """Copy `model_file` to its milestone path when one is due, and `average_file` (a checkpoint's running average,
    when it has one) beside it; returns main's new file, or None."""
    if every is None or not milestone_due(models_dir, every, env_steps):
        return None
    if average_file is not None and average_file.is_file():
        copy_atomic(average_file, milestone_path(models_dir, env_steps, "average"))
    return copy_atomic(model_file, milestone_path(models_dir, env_steps))
