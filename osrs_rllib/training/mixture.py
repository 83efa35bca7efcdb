"""A run's per-fight mixture: main's late models, chosen by the config's rule (``mixture:``), in one model file.

Why a rule and not a hand pick: an exploiter facing one of several policies per fight has to learn several sets
of holes at once, and it learns them worse the more the members differ (docs/league.md, "A per-fight mixture").
Which models make the mixture is part of the recipe, so it is written in the config (`MixtureConfig`) and
applied the same way when the run ends (`MixtureHook`) and by ``osrs-rllib mixture EXPERIMENT`` on a run that
already ended. The file is `policies.mixture`'s format, so `fight`, `play`, `serve` and `exploit` seat it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from osrs_rllib.training.milestones import list_milestones
from osrs_rllib.training.parts import Run, RunHooks

if TYPE_CHECKING:
    from osrs_rllib.config import MixtureConfig

MIXTURE_NAME = "mixture.nhmodel"
"""The run's mixture, beside ``latest.nhmodel`` and ``best.nhmodel`` in its ``models/``."""


class MixtureError(Exception):
    """No mixture can be written: the run has too few models that pass the rule, or a model file is damaged."""


@dataclass(frozen=True)
class Candidate:
    """One of the run's models, as the rule sees it."""

    label: str
    """``latest``, ``best`` or ``milestone``."""
    env_steps: int
    path: Path


def candidates(models_dir: Path) -> list[Candidate]:
    """The run's models in the rule's order of preference: the latest, the best, the milestones newest first."""
    from policies.model_file import read_model_meta

    found = []
    for label in ("latest", "best"):
        path = models_dir / f"{label}.nhmodel"
        if path.is_file():
            steps = (read_model_meta(path).get("metadata") or {}).get("env_steps")
            if isinstance(steps, int):
                found.append(Candidate(label, steps, path))
    found += [Candidate("milestone", m.env_steps, m.path) for m in reversed(list_milestones(models_dir))]
    return found


def choose_members(found: Sequence[Candidate], rule: MixtureConfig) -> list[Candidate]:
    """The candidates `rule` keeps, in order: late enough, far enough from every member kept before, at most
    ``rule.members``. The run's length is its latest model's env steps (else the newest candidate's). Two models
    of the same env steps are one checkpoint's (``best`` is often ``latest``): only the first is kept."""
    if not found:
        return []
    end = next((c.env_steps for c in found if c.label == "latest"), max(c.env_steps for c in found))
    chosen: list[Candidate] = []
    for c in found:
        late = c.env_steps >= rule.from_fraction * end
        apart = all(abs(c.env_steps - m.env_steps) >= max(rule.min_gap_env_steps, 1) for m in chosen)
        if late and apart and len(chosen) < rule.members:
            chosen.append(c)
    return chosen


def run_members(models_dir: Path, rule: MixtureConfig) -> list[Candidate]:
    """The members `rule` picks from the run's models in `models_dir` (`choose_members`), at least two.

    Raises:
        MixtureError: Fewer than two models pass the rule (the run's models listed, and what to change).
    """
    found = candidates(models_dir)
    chosen = choose_members(found, rule)
    if len(chosen) < 2:
        listed = ", ".join(f"{c.label} at {c.env_steps:,}" for c in found) or "none"
        raise MixtureError(
            f"{models_dir}: {len(chosen)} model(s) pass the mixture rule (from {rule.from_fraction:g} of the run, "
            f"{rule.min_gap_env_steps:,} env steps apart) and a mixture needs 2; the run's models: {listed}. "
            "Keep milestones (checkpoint.milestone_env_steps) or loosen mixture.min_gap_env_steps"
        )
    return chosen


def write_run_mixture(models_dir: Path, rule: MixtureConfig, out: Path | None = None) -> tuple[Path, list[Candidate]]:
    """Choose the members by `rule` and write them as one mixture (default ``models_dir/mixture.nhmodel``); the
    metadata is the latest model's (the run's config, experiment and env steps) plus the rule and the members.

    Raises:
        MixtureError: The rule is off, fewer than two models pass it, or a model file is damaged.
    """
    from policies.mixture import save_mixture_file
    from policies.model_file import ModelFileError, load_model_file

    if rule.members < 2:
        raise MixtureError("the config writes no mixture (mixture.members: 0); set mixture.members to 2 or more")
    try:
        chosen = run_members(models_dir, rule)
        models = [load_model_file(c.path) for c in chosen]
        metadata: dict[str, Any] = dict(models[0].metadata)
        metadata["mixture_rule"] = rule.model_dump()
        metadata["mixture_members"] = [{"label": c.label, "env_steps": c.env_steps} for c in chosen]
        return save_mixture_file(models, out or models_dir / MIXTURE_NAME, metadata=metadata), chosen
    except ModelFileError as exc:
        raise MixtureError(str(exc)) from None


def describe_mixture(chosen: Sequence[Candidate]) -> str:
    return ", ".join(f"{c.label} ({c.env_steps:,} env steps)" for c in chosen)


class MixtureHook(RunHooks):
    """Writes the run's mixture once its final checkpoint (and so its latest model) is on disk, if the config asks
    for one; a run with too few late models says so and ends as it would have."""

    def ended(self, trainer: Run) -> None:
        rule = trainer.cfg.mixture
        if rule.members < 2:
            return
        try:
            path, chosen = write_run_mixture(trainer.exp.models_dir, rule)
        except MixtureError as exc:
            trainer.echo(f"no mixture written: {exc}")
            return
        trainer.echo(f"mixture {path.name}: {describe_mixture(chosen)}, one drawn per fight")
