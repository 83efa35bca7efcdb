"""What a training run takes as objects: how it evaluates, when it stops, and what it reports besides.

`osrs_rllib.training.trainer.Trainer` runs the loop (Ray, the algorithm, resume, checkpoints, TensorBoard); what differs
between runs is handed to it instead of being overridden in a subclass:

* an **evaluator** (`Evaluator`): the learner's network in, result rows out; `ScriptedEvaluator` (the config's
  evaluation opponents) unless the run gives another, e.g. ``exploit``'s evaluation against its frozen model;
* a **stop rule** (`StopLimits`: the config's ``stop`` limits);
* **hooks** (`RunHooks`): told when the algorithm is built, restored, evaluated, logged and when the loop ends,
  e.g. to keep a report of their own (``exploit.json``) or to play a final evaluation; `RunFacts` records the
  run's rules and the checkpoint a resume continued from in ``run.json``.

The trainer's private methods stay private: a run composes these objects and the trainer calls them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from osrs_rllib.config import StopConfig, TrainConfig
from osrs_rllib.experiments import Experiment
from osrs_rllib.training.run_state import RunState

Rows = list[dict[str, Any]]
"""Evaluation rows (`osrs_rllib.evaluation.policy_fights.EvalResult.to_dict()`-shaped), one per opponent and mode."""


class Evaluator(Protocol):
    """Plays the learner's network (in evaluation mode) and returns its rows; `fights` overrides the config's
    fights per build (a final evaluation), None keeps them. `shards` (`osrs_rllib.evaluation.policy_fights.Shards`) may
    play the fights in parts elsewhere (the run's idle env runners); an evaluator may also play them all itself."""

    def __call__(self, network: Any, fights: int | None = None, shards: Any = None) -> Rows: ...


def runner_shards(algo: Any) -> Any:
    """`osrs_rllib.evaluation.policy_fights.Shards` over the algorithm's remote env runners, one shard each (None
    without any).

    Between two training iterations the env runners wait for the next sampling call while the driver evaluates
    alone: on a laptop one core of two. Dealing the evaluation fights over the runners uses every core. Each
    runner plays with its own torch random state left as it was (`torch.random.fork_rng`), so a sampling
    evaluation does not shift the training draws that follow.
    """
    group = getattr(algo, "env_runner_group", None)
    ids = list(group.healthy_env_runner_ids()) if group is not None else []
    if not ids:
        return None

    def shards(job: Callable[[int, int], Any]) -> list[Any]:
        def on_runner(i: int) -> Callable[[Any], Any]:
            def run(_runner: Any) -> Any:
                import torch

                with torch.random.fork_rng():
                    return job(i, len(ids))

            return run

        return group.foreach_env_runner(
            [on_runner(i) for i in range(len(ids))], local_env_runner=False, remote_worker_ids=ids
        )

    return shards


class ScriptedEvaluator:
    """Training's evaluation: the config's evaluation opponents (baseline, ladder), in every mode it asks for,
    the unseen builds too (`osrs_rllib.evaluation.policy_fights.evaluate`)."""

    def __init__(self, cfg: TrainConfig) -> None:
        self.cfg = cfg

    def __call__(self, network: Any, fights: int | None = None, shards: Any = None) -> Rows:
        from envs.nh.loadouts import Build
        from osrs_rllib.evaluation import evaluate, network_act_fn

        ev = self.cfg.evaluation
        rows: Rows = []
        for mode in evaluation_modes(self.cfg):
            results = evaluate(
                network_act_fn(network),
                ev.opponents,
                fights or ev.fights,
                params={k: v for k, v in self.cfg.env.params.items() if k != "include_opponent_observation"},
                deterministic=mode == "deterministic",
                seed=ev.seed,
                frame_stack=self.cfg.env.frame_stack,
                unseen_builds=[Build(b) for b in ev.unseen_builds],
                engine=self.cfg.env.engine,
                shards=shards,
            )
            rows += [r.to_dict() for r in results]
        return rows


def evaluation_modes(cfg: TrainConfig) -> list[str]:
    """The modes the config evaluates the learner in, greedy first."""
    ev = cfg.evaluation
    return [m for m, on in (("deterministic", ev.deterministic), ("stochastic", ev.stochastic)) if on]


class StopRule(Protocol):
    """Why the run should stop now (None: go on), from its counters."""

    def __call__(self, state: RunState) -> str | None: ...


class StopLimits:
    """The config's ``stop`` limits: iterations, env steps, training minutes; the first one reached ends the run."""

    def __init__(self, stop: StopConfig) -> None:
        self.stop = stop

    def __call__(self, state: RunState) -> str | None:
        stop = self.stop
        if stop.iterations is not None and state.iteration >= stop.iterations:
            return f"reached {stop.iterations} iterations"
        if stop.env_steps is not None and state.env_steps >= stop.env_steps:
            return f"reached {stop.env_steps:,} env steps"
        if stop.minutes is not None and state.train_seconds >= stop.minutes * 60:
            return f"reached {stop.minutes:g} minutes of training"
        return None


class Run(Protocol):
    """What hooks see of the trainer (`osrs_rllib.training.trainer.Trainer`): its public state and methods."""

    cfg: TrainConfig
    exp: Experiment
    resume: bool
    state: RunState
    algo: Any
    writer: Any
    stop: Any
    """The stop request: ``stop.requested`` is true once a stop was asked for."""
    echo: Callable[[str], None]
    resume_from: Any
    """The checkpoint a resume continues from (`osrs_rllib.experiments.layout.CheckpointInfo`), None for a new run."""
    league_runner: Any
    """The run's league (`league.callback.LeagueRunner`), None without one."""

    def evaluate(self, fights: int | None = None) -> Rows: ...

    def limit_reached(self) -> str | None: ...


class RunHooks:
    """What a run adds around the loop; every method does nothing unless a run's hooks say otherwise.

    They are called with the trainer, whose public state they read (``cfg``, ``exp``, ``algo``, ``state``,
    ``writer``, ``stop``, ``echo``) and whose public methods they may call (`Trainer.evaluate`,
    `Trainer.limit_reached`).
    """

    def built(self, trainer: Run) -> None:
        """The algorithm is built (before a resume restores it)."""

    def restored(self, trainer: Run) -> None:
        """A resume has loaded its checkpoint (``trainer.state`` holds the restored counters)."""

    def evaluated(self, trainer: Run, rows: Rows) -> None:
        """An evaluation returned `rows` (``trainer.state.last_eval`` holds them)."""

    def logged(self, trainer: Run, metrics: dict[str, float], figures: dict[str, Any], rows: Rows) -> None:
        """An iteration's figures went to TensorBoard and the terminal."""

    def ended(self, trainer: Run) -> None:
        """The loop ended (a limit or a stop request) and its final checkpoint is written."""


class RunFacts(RunHooks):
    """Writes into ``run.json`` what a person reads off a run's first lines, so that tools and tests read a field
    instead of parsing a sentence: the fight rules the run trains and is evaluated by (``rules``: a
    `policies.fight_rules.FightRules` dict, as the commands' ``--json`` give theirs), the number format the learner
    computes in (``learner_precision``, ``auto`` resolved on this machine) and, for a resume, the
    checkpoint it continued from (``resumed_from``: its directory's name, iteration, env steps and league
    snapshots). ``run.json`` is the current process's record, so a new run holds no ``resumed_from``."""

    def built(self, trainer: Run) -> None:
        from osrs_rllib.training.learner.precision import resolve
        from osrs_rllib.training.report import training_rules

        trainer.exp.write_run(
            rules=training_rules(trainer.cfg).to_dict(), learner_precision=resolve(trainer.cfg.ppo.learner_precision)
        )

    def restored(self, trainer: Run) -> None:
        league = trainer.league_runner
        resumed_from = {
            "checkpoint": trainer.resume_from.path.name,
            "iteration": trainer.state.iteration,
            "env_steps": trainer.state.env_steps,
            "league_snapshots": len(league.league.snapshots) if league is not None else None,
        }
        trainer.exp.write_run(resumed_from=resumed_from)
