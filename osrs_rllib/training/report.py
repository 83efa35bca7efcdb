"""What a training run reports: RLlib's result dict as TensorBoard tags, the summary figures, and the
terminal views (one line per iteration, or a live table).

Why apart from the trainer loop: `osrs-rllib jobs`, ``status.json`` and the tests read the same figures and
lines without a trainer.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from osrs_rllib.config import TrainConfig
from osrs_rllib.evaluation import format_split
from osrs_rllib.training.run_state import RunState

if TYPE_CHECKING:
    from policies.fight_rules import FightRules


def env_steps_of(result: Mapping[str, Any]) -> int:
    for key in ("num_env_steps_sampled_lifetime", "num_env_steps_sampled", "timesteps_total"):
        value = result.get(key)
        if value is None:
            value = (result.get("env_runners") or {}).get(key)
        if value is not None:
            return int(value)
    counters = result.get("counters") or {}
    return int(counters.get("num_env_steps_sampled", 0))


_SKIP_KEYS = ("hist_stats", "config", "sampler_perf_per_env", "episode_media", "connector_metrics")


def flatten_result(result: Mapping[str, Any], prefix: str = "") -> dict[str, float]:
    """Numeric leaves of RLlib's result dict as ``a/b/c`` keys (lists, histograms and config dropped)."""
    out: dict[str, float] = {}
    for key, value in result.items():
        if key in _SKIP_KEYS:
            continue
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.update(flatten_result(value, name + "/"))
        elif isinstance(value, bool):
            continue
        elif isinstance(value, int | float | np.integer | np.floating):
            v = float(value)
            if math.isfinite(v):
                out[name] = v
    return out


def tensorboard_tag(key: str) -> str:
    """Readable TensorBoard groups: our fight metrics under ``fight/``, the learner under ``learner/``."""
    if key.startswith("league/"):
        return key
    if key.startswith("env_runners/custom_metrics/"):
        return "fight/" + key[len("env_runners/custom_metrics/") :]
    if key.startswith("info/learner/"):
        stat = key[len("info/learner/") :].replace("learner_stats/", "")
        # main's magnet (`osrs_rllib/training/learner/ppo_policy.py`): magnet/kl/<head>, magnet/coeff
        magnet = stat.find("/magnet/")
        return stat[magnet + 1 :] if magnet >= 0 else "learner/" + stat
    if key.startswith("custom_metrics/"):
        return "train/" + key[len("custom_metrics/") :]
    return "rllib/" + key


PROBE_PREFIX = "league/probe/"
"""The league's exploitability probe in an iteration's metrics (`league.league.League.probe_metrics`)."""


def summary_figures(
    metrics: Mapping[str, float], steps_per_s: float, state: RunState, cfg: TrainConfig
) -> dict[str, Any]:
    """The handful of figures the terminal view, ``status.json`` and ``osrs-rllib jobs`` show."""
    learner = "info/learner/main/learner_stats/"
    win_rates = {
        key.split("win_vs_")[1].rsplit("_mean", 1)[0]: value
        for key, value in metrics.items()
        if key.startswith("env_runners/custom_metrics/win_vs_") and key.endswith("_mean")
    }
    eta = None
    if cfg.stop.minutes is not None:
        eta = max(0.0, cfg.stop.minutes * 60 - state.train_seconds)
    if cfg.stop.iterations is not None and state.iteration > 0:
        per_iteration = state.train_seconds / state.iteration
        left = max(0, cfg.stop.iterations - state.iteration) * per_iteration
        eta = left if eta is None else min(eta, left)
    if cfg.stop.env_steps is not None and steps_per_s > 0:
        left = max(0.0, (cfg.stop.env_steps - state.env_steps) / steps_per_s)
        eta = left if eta is None else min(eta, left)
    last_eval = state.last_eval.get("results") or []
    weakest = None
    if last_eval and last_eval[0].get("by_build"):
        head = last_eval[0]
        trained = [b for b in head.get("builds", []) if b in head["by_build"]]
        if trained:
            name = min(trained, key=lambda b: head["by_build"][b]["win_rate"])
            weakest = {"build": name, "win_rate": head["by_build"][name]["win_rate"]}
    return {
        "iteration": state.iteration,
        "env_steps": state.env_steps,
        "steps_per_s": steps_per_s,
        "train_minutes": state.train_seconds / 60,
        "episode_return_mean": metrics.get("env_runners/episode_return_mean"),
        "episode_len_mean": metrics.get("env_runners/episode_len_mean"),
        "win_rate_train": metrics.get("env_runners/custom_metrics/won_mean"),
        "win_rate_by_opponent": win_rates,
        "policy_loss": metrics.get(learner + "policy_loss"),
        "vf_loss": metrics.get(learner + "vf_loss"),
        "entropy": metrics.get(learner + "entropy"),
        "eval_win_rate": last_eval[0]["win_rate"] if last_eval else None,
        "eval_builds": len(last_eval[0].get("builds", [])) if last_eval else None,
        "eval_weakest_build": weakest,
        "eval_iteration": state.last_eval.get("iteration"),
        "best_eval_win_rate": state.best_eval_win_rate,
        "eta_seconds": eta,
        "exploitability_probe": _probe(metrics),
    }


def _probe(metrics: Mapping[str, float]) -> dict[str, float] | None:
    """The league's exploitability probe (`league.league.League.probe_metrics`); None without main exploiters."""
    probe = {k.removeprefix(PROBE_PREFIX): v for k, v in metrics.items() if k.startswith(PROBE_PREFIX)}
    return probe or None


# ---------------------------------------------------------------------------------------------------------
# Terminal view
# ---------------------------------------------------------------------------------------------------------
def _fmt(value: Any, spec: str, none: str = "–") -> str:
    return none if value is None else format(value, spec)


def _weakest_note(f: Mapping[str, Any]) -> str:
    """`` (6 builds, weakest ZERKER 94%)`` after the evaluation headline, so a mean never hides a build."""
    weakest, builds = f.get("eval_weakest_build"), f.get("eval_builds")
    if not weakest or not builds or builds < 2:
        return ""
    return f" ({builds} builds, weakest {weakest['build']} {weakest['win_rate']:.0%})"


def format_line(f: Mapping[str, Any]) -> str:
    """One line per iteration (logs, detached runs, non-TTY terminals)."""
    eta = f.get("eta_seconds")
    by_opp = " ".join(f"{k}:{v:.0%}" for k, v in sorted((f.get("win_rate_by_opponent") or {}).items()))
    probe = (f.get("exploitability_probe") or {}).get("exploiter_win_rate")
    probed = "" if probe is None else f" | exploiters beat main {probe:.0%}"  # the league's probe, when it runs
    return (
        f"iter {f['iteration']:>5} | {f['env_steps']:>11,} steps | {f['steps_per_s']:>7,.0f}/s | "
        f"return {_fmt(f.get('episode_return_mean'), '+.3f')} | win {_fmt(f.get('win_rate_train'), '.0%')} "
        f"[{by_opp}] | eval {_fmt(f.get('eval_win_rate'), '.0%')}{_weakest_note(f)}{probed} | "
        f"pi {_fmt(f.get('policy_loss'), '+.3f')} vf {_fmt(f.get('vf_loss'), '.3f')} "
        f"ent {_fmt(f.get('entropy'), '.2f')} | ETA {_fmt(None if eta is None else eta / 60, '.0f')}m"
    )


def format_eval_line(row: Mapping[str, Any]) -> str:
    """An evaluation result: the trained-build headline, then every build and fight type on its own."""
    builds = row.get("builds") or []
    over = f"mean of {len(builds)} builds" if len(builds) > 1 else (builds[0] if builds else "all fights")
    line = (
        f"  eval vs {row['opponent']} ({row['mode']}): {over} {row['win_rate']:.1%} "
        f"[{row['win_rate_low']:.1%}, {row['win_rate_high']:.1%}] ({row['wins']}/{row['fights']}), "
        f"{row['mean_fight_ticks']:.0f} ticks"
    )
    if row.get("by_build"):
        line += "\n    " + format_split(row, row.get("unseen_builds") or ())
    return line


class _LineView:
    def __init__(self, echo: Callable[[str], None]) -> None:
        self.echo = echo

    def update(self, figures: Mapping[str, Any], eval_rows: list[dict[str, Any]]) -> None:
        self.echo(format_line(figures))
        for row in eval_rows:
            self.echo(format_eval_line(row))

    def close(self) -> None:
        return None


class _RichView(_LineView):
    """A live-updating table in an interactive terminal (rich), plus the plain lines scrolling above it."""

    def __init__(self, echo: Callable[[str], None]) -> None:
        super().__init__(echo)
        from rich.live import Live

        self._live = Live(self._table({}), refresh_per_second=2, transient=True)
        self._live.start()

    def _table(self, f: Mapping[str, Any]) -> Any:
        from rich.table import Table

        table = Table(title="osrs-rllib train", show_header=False)
        rows = [
            ("iteration", _fmt(f.get("iteration"), "d")),
            ("env steps", _fmt(f.get("env_steps"), ",")),
            ("steps/s", _fmt(f.get("steps_per_s"), ",.0f")),
            ("episode return", _fmt(f.get("episode_return_mean"), "+.3f")),
            ("train win rate", _fmt(f.get("win_rate_train"), ".1%")),
            ("eval win rate", _fmt(f.get("eval_win_rate"), ".1%") + _weakest_note(f)),
            ("losses (pi / vf)", f"{_fmt(f.get('policy_loss'), '+.4f')} / {_fmt(f.get('vf_loss'), '.4f')}"),
            ("ETA", _fmt(None if f.get("eta_seconds") is None else f["eta_seconds"] / 60, ".1f") + " min"),
        ]
        for k, v in rows:
            table.add_row(k, v)
        return table

    def update(self, figures: Mapping[str, Any], eval_rows: list[dict[str, Any]]) -> None:
        self._live.console.print(format_line(figures))
        self._live.update(self._table(figures))

    def close(self) -> None:
        self._live.stop()


def make_view(cfg: TrainConfig, echo: Callable[[str], None]) -> _LineView:
    if cfg.logging.live and sys.stdout.isatty():
        return _RichView(echo)
    return _LineView(echo)


def engine_line(cfg: TrainConfig) -> str:
    """Which simulator the env runners step (`env.engine`); a forced core that is not built here is refused
    before any runner starts (on a cluster each node needs the core built the same way).

    Raises:
        TrainingError: ``env.engine: core`` without a compiled core.
    """
    from envs.nh.core_engine import core_available
    from osrs_rllib.training.ray_cluster import TrainingError

    engine, built = cfg.env.engine, core_available()
    if engine == "core" and not built:
        raise TrainingError("env.engine is core but the compiled simulator core is not built here: "
                            "`pip install -e .` builds it (needs a C compiler), or use env.engine: auto")
    if engine == "python" or not built:
        why = "env.engine: python" if engine == "python" else "the compiled core is not built (pip install -e .)"
        return f"simulator: the Python engine ({why})"
    return "simulator: the compiled core (envs/nh/core, bit-identical to the Python engine)"


def training_rules(cfg: TrainConfig) -> FightRules:
    """The fight rules the policy trains and is evaluated by (``run.json``'s ``rules``: `RunFacts`)."""
    from envs.nh.contract import frame_offsets
    from policies.fight_rules import FightRules

    policy = {"policy": frame_offsets(cfg.env.frame_stack)}
    return FightRules.from_params(cfg.env.to_fight_params(), "training config", policy)


def rules_line(cfg: TrainConfig) -> str:
    """The fight rules the policy trains and is evaluated by, as `fight` and `rate` print them: a figure read
    off the terminal can be reproduced under the same rules."""
    return f"fight {training_rules(cfg).describe()}"
