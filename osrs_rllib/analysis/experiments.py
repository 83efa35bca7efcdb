"""Reading an experiment directory (``experiments/<name>/``) into DataFrames, without Ray or TensorBoard.

`osrs_rllib.experiments.layout.Experiment` knows the layout; this module turns it into what a notebook wants to
look at: the resolved config, one row per kept checkpoint with its counters and evaluation figures, the
model files, the league's snapshots and ratings, and TensorBoard's scalars as a tidy table.
"""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from envs.nh.contract import CONTRACT_VERSION
from osrs_rllib.analysis.policies import AnalysisError
from osrs_rllib.experiments import MODEL_NAME, STATE_FILE, Experiment, read_json
from osrs_rllib.training import MILESTONES_DIR, list_milestones
from policies.model_file import ModelFileError, read_model_meta

LEAGUE_FILE = "league.json"
"""The league's state inside a checkpoint directory (written by training, see `osrs_rllib.training.trainer`)."""


@dataclass
class ExperimentView:
    """What `open_experiment` found; plain data, safe to keep in a notebook while training continues.

    Attributes:
        path: The experiment directory.
        name: Its name (the directory's).
        config: The resolved training config (``config.yml``) as a dict.
        checkpoints: One row per kept checkpoint, oldest first: ``iteration``, ``env_steps``,
            ``train_seconds``, ``saved`` (wall time of the save), ``eval_win_rate`` (headline),
            ``best``, ``contract_version``, ``contract_ok``, ``path`` (checkpoint directory), ``model``
            (its model file), and ``eval/<opponent>/<mode>/{win_rate,win_rate_low,win_rate_high}`` where
            the checkpoint's iteration was evaluated.
        models: Model files by name (``latest``, ``best``, and ``milestones/main-<env steps>`` for each milestone
            the run kept: `checkpoint.milestone_env_steps`).
        league_snapshots: The league's frozen snapshots at the newest checkpoint (empty without a league).
        ratings: Elo and openskill ratings of the league's players at the newest checkpoint, best first.
        status: The latest figures of the run (``status.json``).
    """

    path: Path
    name: str
    config: dict[str, Any]
    checkpoints: pd.DataFrame
    models: dict[str, Path] = field(default_factory=dict)
    league_snapshots: pd.DataFrame = field(default_factory=pd.DataFrame)
    ratings: pd.DataFrame = field(default_factory=pd.DataFrame)
    status: dict[str, Any] = field(default_factory=dict)

    @property
    def fight_options(self) -> dict[str, Any]:
        """The run's reset options (``env.params``) as evaluation used them: pass them to `play` to fight
        the fights the agent trained on (builds, gear randomisation, fight length; the rules, which `play` takes
        from a model side anyway). Read by `policies.fight_rules.fight_rules_of`, like a model file's."""
        from policies.fight_rules import fight_rules_of

        params = dict(fight_rules_of(self.config, name=str(self.path)).training_options)
        if params.get("randomize_build"):
            params.pop("account_build", None)
        return params

    @property
    def tensorboard_dir(self) -> Path:
        return self.path / "tensorboard"

    def checkpoint(self, which: int | str = "latest") -> Path:
        """A checkpoint directory by iteration, or ``latest`` / ``earliest`` / ``best``.

        Raises:
            AnalysisError: No such checkpoint (the message lists the kept iterations).
        """
        cps = self.checkpoints
        if cps.empty:
            raise AnalysisError(f"experiment {self.path} has no complete checkpoint yet; train longer or wait")
        if which == "latest":
            return Path(cps.iloc[-1]["path"])
        if which == "earliest":
            return Path(cps.iloc[0]["path"])
        if which == "best":
            best = cps[cps["best"]]
            if best.empty:
                raise AnalysisError(f"experiment {self.path} has no best checkpoint (no evaluation ran yet)")
            return Path(best.iloc[0]["path"])
        rows = cps[cps["iteration"] == which]
        if rows.empty:
            raise AnalysisError(
                f"experiment {self.path} keeps no checkpoint of iteration {which!r}; kept: "
                f"{list(cps['iteration'])} (or 'latest', 'earliest', 'best')"
            )
        return Path(rows.iloc[0]["path"])


def _experiment_dir(experiment: ExperimentView | str | os.PathLike[str]) -> Path:
    path = experiment.path if isinstance(experiment, ExperimentView) else Path(experiment)
    if not path.is_dir():
        raise AnalysisError(
            f"no experiment at {path}: expected a directory written by `osrs-rllib train` (experiments/<name>/ "
            "with config.yml and checkpoints/), found nothing there"
        )
    if not (path / "config.yml").is_file() and not (path / "checkpoints").is_dir():
        raise AnalysisError(
            f"{path} is not an experiment: expected config.yml and checkpoints/ inside (osrs-rllib train writes "
            f"them to experiments/<name>/), found {sorted(p.name for p in path.iterdir())[:10]}"
        )
    return path


def open_experiment(path: str | os.PathLike[str]) -> ExperimentView:
    """Read an experiment directory: config, checkpoints, model files, league snapshots and ratings.

    Args:
        path: The experiment directory, e.g. ``experiments/nh``.

    Returns:
        An `ExperimentView`.

    Raises:
        AnalysisError: Nothing at `path`, or a directory that is not an experiment.

    Example:
        >>> exp = open_experiment("experiments/nh")  # doctest: +SKIP
        >>> exp.checkpoints[["iteration", "env_steps", "eval_win_rate"]].tail(3)  # doctest: +SKIP
    """
    root = _experiment_dir(path)
    exp = Experiment(root.parent, root.name)
    config: dict[str, Any] = {}
    try:
        if exp.config_path.is_file():
            config = yaml.safe_load(exp.config_path.read_text()) or {}
    except yaml.YAMLError as exc:
        raise AnalysisError(f"{exp.config_path} is not valid YAML ({exc}); the file is damaged") from None
    best = exp.read_index().get("best")
    rows = []
    for info in exp.checkpoints():
        state = read_json(info.path / STATE_FILE, {}) or {}
        model = info.path / MODEL_NAME
        try:
            meta = read_model_meta(model)
            contract = meta.get("contract_version")
        except ModelFileError:
            contract = None
        row: dict[str, Any] = {
            "iteration": info.iteration,
            "env_steps": info.env_steps,
            "train_seconds": float(state.get("train_seconds", float("nan"))),
            "saved": pd.Timestamp((info.path / STATE_FILE).stat().st_mtime, unit="s"),
            "eval_win_rate": info.eval_win_rate,
            "best": info.path.name == best,
            "contract_version": contract,
            "contract_ok": contract == CONTRACT_VERSION,
            "path": str(info.path),
            "model": str(model),
        }
        last_eval = state.get("last_eval") or {}
        if last_eval.get("iteration") == info.iteration:
            for r in last_eval.get("results", []):
                for key in ("win_rate", "win_rate_low", "win_rate_high"):
                    row[f"eval/{r['opponent']}/{r['mode']}/{key}"] = r.get(key)
        rows.append(row)
    columns = ["iteration", "env_steps", "train_seconds", "saved", "eval_win_rate", "best", "contract_version",
               "contract_ok", "path", "model"]  # fmt: skip
    checkpoints = pd.DataFrame(rows, columns=None if rows else columns)
    models = {p.stem: p for p in sorted(exp.models_dir.glob("*.nhmodel"))} if exp.models_dir.is_dir() else {}
    models |= {f"{MILESTONES_DIR}/{m.path.stem}": m.path for m in list_milestones(exp.models_dir)}
    snapshots, ratings = _league(exp)
    return ExperimentView(
        path=root,
        name=root.name,
        config=config,
        checkpoints=checkpoints,
        models=models,
        league_snapshots=snapshots,
        ratings=ratings,
        status=exp.read_status(),
    )


def _league(exp: Experiment) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Snapshots and ratings from the newest checkpoint that holds league state."""
    for info in reversed(exp.checkpoints()):
        state = read_json(info.path / LEAGUE_FILE, None)
        if not isinstance(state, dict):
            continue
        league = state.get("league") or {}
        snaps = pd.DataFrame(league.get("snapshots") or [])
        if not snaps.empty:
            qualities = league.get("qualities") or {}
            snaps["quality"] = snaps["player_id"].map(qualities)
        players = (league.get("ratings") or {}).get("players") or {}
        ratings = pd.DataFrame(
            [
                {"player": p, "elo": v[0], "mu": v[1], "sigma": v[2], "games": v[3], "ordinal": v[1] - 3 * v[2]}
                for p, v in players.items()
            ],
            columns=["player", "elo", "mu", "sigma", "games", "ordinal"],
        )
        ratings = ratings.sort_values("elo", ascending=False, kind="stable").reset_index(drop=True)
        return snaps, ratings
    return pd.DataFrame(), pd.DataFrame(columns=["player", "elo", "mu", "sigma", "games", "ordinal"])


def scalars(experiment: ExperimentView | str | os.PathLike[str], tags: str | list[str] | None = None) -> pd.DataFrame:
    """TensorBoard scalars of an experiment as a tidy DataFrame, read from the event files directly.

    Args:
        experiment: An `ExperimentView` or an experiment directory.
        tags: Tags or glob patterns (``"eval/*/deterministic/win_rate*"``); None reads every scalar.

    Returns:
        Columns ``tag``, ``step`` (training iteration), ``wall_time`` (a Timestamp) and ``value``, sorted by
        tag and step. When a resumed run rewrote an iteration (the ones after its last checkpoint), the
        value written last wins, as TensorBoard shows it.

    Raises:
        AnalysisError: No experiment, no event files, or an exact tag that is not there (with the
            closest tags that are).

    Example:
        >>> curve = scalars("experiments/nh", ["fight/won_mean", "charts/env_steps"])  # doctest: +SKIP
        >>> curve.pivot(index="step", columns="tag", values="value")  # doctest: +SKIP
    """
    from tensorboard.backend.event_processing.event_accumulator import SCALARS, EventAccumulator

    root = _experiment_dir(experiment)
    tb = root / "tensorboard"
    if not tb.is_dir() or not any(tb.glob("events.out.tfevents.*")):
        raise AnalysisError(f"no TensorBoard event files in {tb}; training writes them once its first iteration ends")
    acc = EventAccumulator(str(tb), size_guidance={SCALARS: 0})
    acc.Reload()
    available = sorted(acc.Tags().get("scalars", []))
    wanted = [tags] if isinstance(tags, str) else list(tags) if tags is not None else ["*"]
    chosen: list[str] = []
    for pattern in wanted:
        if any(ch in pattern for ch in "*?["):
            chosen += [t for t in available if fnmatch.fnmatchcase(t, pattern) and t not in chosen]
        elif pattern in available:
            if pattern not in chosen:
                chosen.append(pattern)
        else:
            from common.suggest import closest_names

            close = closest_names(pattern, available, n=3)
            raise AnalysisError(
                f"no scalar {pattern!r} in {tb}; closest: {close or available[:5]} ({len(available)} tags in all; "
                "patterns like 'eval/*' work too)"
            )
    rows = [(tag, e.step, e.wall_time, e.value) for tag in chosen for e in acc.Scalars(tag)]
    frame = pd.DataFrame(rows, columns=["tag", "step", "wall_time", "value"])
    frame = frame.sort_values(["tag", "wall_time"], kind="stable").drop_duplicates(["tag", "step"], keep="last")
    frame["wall_time"] = pd.to_datetime(frame["wall_time"], unit="s")
    return frame.sort_values(["tag", "step"], kind="stable").reset_index(drop=True)

