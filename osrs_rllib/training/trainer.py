"""`osrs-rllib train`: RLlib PPO (old API stack) on the NH fight, with experiments on disk.

The loop, in the order it runs (CleanRL's "paper order", with the plumbing named):

1. **Ray**: start an embedded Ray with its dashboard on 127.0.0.1, or join ``--address``.
2. **Algorithm**: `build_algorithm_config` turns the typed config into one fluent RLlib `PPOConfig` (every
   hyperparameter explicit), with `TrainingEnv` (opponent drawn from the mix at reset), the policy of
   `policies/`, the scripted ladder policies and `policy_mapping_fn`.
3. **Resume** (``--resume``): restore the newest complete checkpoint: weights, optimiser, normalisation
   statistics, RLlib's counters (schedules follow them) and our own counters (iteration, time, best).
4. **Iterate**: ``algo.train()`` (sample + PPO update + normaliser sync), then reward-schedule progress
   for the environments, metrics to TensorBoard and the terminal, evaluation every
   `evaluation.interval`, a checkpoint every `checkpoint.interval`, until a stop limit or a stop request
   (SIGTERM / SIGINT / `osrs-rllib stop`), which ends with a final checkpoint.

A SIGKILL at any moment loses at most the iterations since the last checkpoint: checkpoints are written
into a temporary directory, marked complete and renamed into place (see `osrs_rllib/experiments/layout.py`), and
``--resume`` takes the newest complete one. What a resume restores, and what it re-derives instead of
restoring bit for bit, is listed in docs/training.md ("Stopping, killing and resuming").
"""

from __future__ import annotations

import logging
import signal
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from common import stops
from common.atomic_files import copy_atomic, write_json_atomic, write_text_atomic
from osrs_rllib.config import TrainConfig, dump_config
from osrs_rllib.experiments import (
    AVERAGE_MODEL_NAME,
    MODEL_NAME,
    STATE_FILE,
    CheckpointInfo,
    Experiment,
    checkpoint_problem,
    kill_point,
    read_json,
)
from osrs_rllib.training.algorithm import (
    build_algorithm_config,
    fixed_policies,
    make_league,
    register_everything,
)
from osrs_rllib.training.milestones import keep_milestone
from osrs_rllib.training.parts import Evaluator, RunHooks, ScriptedEvaluator, StopLimits, StopRule, runner_shards
from osrs_rllib.training.ray_cluster import TrainingError, start_ray
from osrs_rllib.training.report import (
    env_steps_of,
    flatten_result,
    make_view,
    summary_figures,
    tensorboard_tag,
)
from osrs_rllib.training.run_state import (
    RunState,
    driver_rng_state,
    restore_exact_weights,
    set_driver_rng_state,
    stream_seed,
)
from osrs_rllib.training.sampling.opponent_mix import LEARNER_POLICY
from osrs_rllib.training.time_account import TimeAccount, accounted, format_table

logger = logging.getLogger("osrs_rllib.training.trainer")


class _DropScriptedPolicyWarning(logging.Filter):
    """RLlib warns at every checkpoint that `ScriptedRLlibPolicy` has no "durable name"; it needs none (it
    has no weights and is rebuilt from the config on restore), so the warning is noise."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "durable policy name" not in record.getMessage()


logging.getLogger("ray.rllib.policy.policy").addFilter(_DropScriptedPolicyWarning())

LEAGUE_FILE = "league.json"
"""The league's state inside a checkpoint directory (snapshot weights live in ``experiments/<name>/league/``)."""
RNG_FILE = "rng_state.json"
"""The driver's random generators (numpy's and Python's global ones, torch's) inside a checkpoint directory:
they shuffle PPO's minibatches and, with no env runners, sample the actions."""
RLLIB_CHECKPOINT_FILE = "rllib_checkpoint.json"


# ---------------------------------------------------------------------------------------------------------
# The training run
# ---------------------------------------------------------------------------------------------------------


class _StoppedWhileStarting(Exception):
    """A stop arrived before the first iteration: end cleanly (state "stopped"), nothing to checkpoint."""


class StopRequest(stops.StopRequest):
    """SIGTERM/SIGINT set a flag; the loop finishes its iteration, checkpoints and exits 0. A second signal ends
    the run at once (`common.stops.HardStop`, a KeyboardInterrupt: exit 130 with the last checkpoint intact)."""

    def __init__(self) -> None:
        super().__init__(
            on_first=lambda signum: logger.warning(
                "stop requested (%s): finishing this iteration, then checkpointing; a second signal ends it now",
                signal.Signals(signum).name,
            )
        )


class Trainer:
    """One training run of an experiment (see the module docstring for the order of things)."""

    def __init__(
        self,
        cfg: TrainConfig,
        experiment: Experiment,
        *,
        resume: bool = False,
        echo: Callable[[str], None] = print,
        command: list[str] | None = None,
        evaluator: Evaluator | None = None,
        stop_rule: StopRule | None = None,
        hooks: Sequence[RunHooks] = (),
    ) -> None:
        self.cfg = cfg
        self.evaluator: Evaluator = evaluator or ScriptedEvaluator(cfg)
        """Plays the learner at every evaluation (`osrs_rllib.training.parts`)."""
        self.stop_rule: StopRule = stop_rule or StopLimits(cfg.stop)
        self.hooks = tuple(hooks)
        self.exp = experiment
        self.resume = resume
        self.echo = echo
        self.command = command or sys.argv
        self.state = RunState()
        self.account = TimeAccount.for_config(cfg)  # where the wall time goes (`osrs_rllib.training.time_account`)
        self.stop = StopRequest()
        self.algo: Any = None
        self.writer: Any = None
        self._ray_started = False
        self.dashboard_url: str | None = None
        self._view: Any = None
        self.league_runner: Any = None
        self.resume_from: CheckpointInfo | None = None
        """The checkpoint a resume continues from, chosen once (`_check_resumable`) before anything starts."""
        self.init_model: Any = None
        """The warm start's model (`osrs_rllib/training/warm_start.py`), checked in `run` before anything is written."""

    # -- setup ---------------------------------------------------------------------------------------
    def _start_ray(self) -> None:
        import ray

        if ray.is_initialized():
            return
        from serving.ray_start import RayStartStopped

        try:
            self.dashboard_url = start_ray(
                self.cfg.ray, self.echo, self.exp.record_ray_processes, should_stop=lambda: self.stop.requested
            )
        except RayStartStopped:
            raise _StoppedWhileStarting from None
        self._ray_started = True

    def _build(self) -> None:
        from osrs_rllib.training.algorithm import machine_choice, runner_nodes
        from osrs_rllib.training.learner.precision import describe
        from osrs_rllib.training.report import engine_line, rules_line

        machine = machine_choice(self.cfg)  # what `auto` became here (`osrs_rllib/config/machine.py`)
        self.echo(machine.line())
        self.account.env_runners = machine.num_env_runners
        self.echo(engine_line(self.cfg))
        self.echo(rules_line(self.cfg))
        self.echo(describe(self.cfg.ppo.learner_precision, machine.device))
        register_everything()
        learners: tuple[str, ...] = (LEARNER_POLICY,)
        if self.cfg.league_enabled:
            self.league_runner = self._league_runner()
            learners = tuple(self.league_runner.league.learners)
        resumed_at = self.resume_from.iteration if self.resume_from is not None else 0
        self.algo = build_algorithm_config(self.cfg, learners, seed=stream_seed(self.cfg.seed, resumed_at)).build_algo()
        self.exp.write_run(machine={**machine.to_json(), "runner_nodes": runner_nodes(self.algo)})
        for hook in self.hooks:
            hook.built(self)

    def _league_runner(self) -> Any:
        """The league of this run: restored from the checkpoint being resumed, or new."""
        from league.callback import LeagueRunner

        store, slots = self.exp.dir / "league", self.cfg.opponents.league_slots
        latest = self.resume_from
        state = read_json(latest.path / LEAGUE_FILE, None) if latest is not None else None
        if state is not None:
            return LeagueRunner.from_state(
                state,
                store,
                slots,
                fixed_policies(self.cfg.opponents.scripted_in_env, self.cfg.opponents.targets),
                seed=self.cfg.seed,
            )
        return LeagueRunner(
            make_league(self.cfg),
            store,
            slots,
            fixed_policies(self.cfg.opponents.scripted_in_env, self.cfg.opponents.targets),
            seed=self.cfg.seed,
        )

    # -- resume --------------------------------------------------------------------------------------------
    def _resume_error(self, ckpt: CheckpointInfo | None, problem: str) -> TrainingError:
        """One line: the experiment, the checkpoint, what is wrong with it and what to do."""
        problem = " ".join(problem.split())
        if len(problem) > 400:
            problem = problem[:400] + " …"
        if ckpt is None:
            return TrainingError(f"cannot resume experiment {self.exp.name!r}: {problem}")
        older = [c for c in self.exp.checkpoints() if c.iteration < ckpt.iteration]
        hint = (
            f"move {ckpt.path} elsewhere to resume from {older[-1].path.name} instead, or start over with --force"
            if older
            else "start over with --force"
        )
        return TrainingError(f"cannot resume experiment {self.exp.name!r} from {ckpt.path.name}: {problem}; {hint}")

    def _check_resumable(self) -> None:
        """Choose the newest complete checkpoint and check that what a resume loads from disk is there, before
        Ray starts: a resume that cannot work fails in a second with one line, not after building the algorithm.

        Raises:
            TrainingError: No complete checkpoint, or the chosen one (or a league snapshot it names) is damaged.
        """
        latest = self.exp.latest_checkpoint()
        skipped = [
            (path, why)
            for path, why in self.exp.incomplete_checkpoints()
            if latest is None or path.name > latest.path.name
        ]
        for path, why in skipped:
            self.echo(f"skipping {path.name}, it is not a complete checkpoint: {why}")
        if latest is None:
            raise self._resume_error(
                None,
                f"no complete checkpoint in {self.exp.checkpoints_dir} (start it again without --resume: a run "
                "without a checkpoint needs no --force)",
            )
        problem = checkpoint_problem(latest.path)
        for name in (RLLIB_CHECKPOINT_FILE, MODEL_NAME):
            if problem is None and not (latest.path / name).is_file():
                problem = f"{name} is missing"
        if problem is None and self.cfg.league_enabled and (latest.path / LEAGUE_FILE).exists():
            from league.callback import LeagueRunner

            state = read_json(latest.path / LEAGUE_FILE, None)
            if not isinstance(state, dict):
                problem = f"its {LEAGUE_FILE} is damaged"
            else:
                store = self.exp.dir / "league"
                missing = sorted(i for i in LeagueRunner.snapshot_ids_in(state) if not (store / f"{i}.npz").is_file())
                if missing:
                    problem = f"the league's snapshot weights {', '.join(missing)} are missing from {store}"
        if problem is not None:
            raise self._resume_error(latest, problem)
        self.resume_from = latest

    def _restore(self) -> None:
        """Load the chosen checkpoint into the built algorithm, then everything of ours it holds (see
        docs/training.md for what is restored bit for bit and what is re-derived)."""
        latest = self.resume_from
        if latest is None:
            raise self._resume_error(None, "no checkpoint was chosen")
        try:
            self.algo.load_checkpoint(str(latest.path))  # absolute: Experiment anchors its paths
        except Exception as exc:  # RLlib, torch and pyarrow raise anything: the user needs the cause, in one line
            raise self._resume_error(
                latest, f"RLlib cannot load it ({type(exc).__name__}: {exc}); did --set change the model or policies?"
            ) from None
        restore_exact_weights(self.algo, latest.path)
        self.state = RunState.from_json(read_json(latest.path / STATE_FILE, {}))
        # Trainable's counter behind the public, read-only `iteration`; load_checkpoint leaves it at 0 (pinned by
        # tests/osrs_rllib/test_framework_internals.py).
        self.algo._iteration = self.state.iteration
        rng = read_json(latest.path / RNG_FILE, None)
        if isinstance(rng, dict):
            set_driver_rng_state(rng)
        self._set_env_progress()  # the reward schedules' position, before the first resumed rollout
        self._sync_models(latest)
        league = ""
        if self.league_runner is not None:
            league = f", {len(self.league_runner.league.snapshots)} league snapshots"
        self.echo(
            f"resumed {self.exp.name} from {latest.path.name} (iteration {self.state.iteration}): "
            f"{self.state.env_steps:,} env steps{league}"
        )
        for hook in self.hooks:
            hook.restored(self)

    def _sync_models(self, latest: CheckpointInfo) -> None:
        """``models/latest.nhmodel`` and ``models/best.nhmodel`` as the checkpoints say, and the index rewritten
        from them: a kill between a checkpoint's rename and its bookkeeping leaves the model files one behind."""
        ck = self.cfg.checkpoint
        self.exp.record_checkpoint(latest, ck.keep_last, ck.keep_best)
        copy_atomic(latest.path / MODEL_NAME, self.exp.models_dir / "latest.nhmodel")
        if (latest.path / AVERAGE_MODEL_NAME).is_file():
            copy_atomic(latest.path / AVERAGE_MODEL_NAME, self.exp.models_dir / AVERAGE_MODEL_NAME)
        best = self.exp.best_checkpoint()
        if best is not None and (best.path / MODEL_NAME).is_file():
            copy_atomic(best.path / MODEL_NAME, self.exp.models_dir / "best.nhmodel")

    def _open_tensorboard(self) -> None:
        if not self.cfg.logging.tensorboard:
            return
        from torch.utils.tensorboard import SummaryWriter

        # purge_step drops events written after the checkpoint we resume from (e.g. before a SIGKILL), so
        # the curves continue from the restored iteration without a doubled tail.
        purge = self.state.iteration + 1 if self.resume else None
        self.writer = SummaryWriter(str(self.exp.tensorboard_dir), purge_step=purge)
        if not self.resume:
            self.writer.add_text("config", "```yaml\n" + dump_config(self.cfg) + "\n```", 0)

    # -- the loop ------------------------------------------------------------------------------------
    def run(self) -> int:
        """Train until a stop limit or a stop request; returns the process exit code."""
        started = self.account.start()
        state = "failed"
        if not self.resume:  # a bad init model fails here, before the experiment directory is touched
            from osrs_rllib.training.warm_start import load_init

            self.init_model = load_init(self.cfg)
        try:
            self.stop.install()
            if self.resume:
                self.exp.ensure_not_running()
                self._check_resumable()
            else:
                self.exp.prepare_new(force=True, keep=(self.exp.log_path.name, self.exp.run_path.name))
            reaped = self.exp.reap_leftover_ray()
            if reaped:
                self.echo(f"ended {len(reaped)} Ray processes the previous, killed run left behind")
            if not self.resume:
                write_text_atomic(self.exp.config_path, dump_config(self.cfg))
            self.exp.mark_started(self.command, resumed=self.resume)
            if self.stop.requested:
                raise _StoppedWhileStarting
            self._start_ray()
            # Ray's core worker installs its own SIGTERM handler in `ray.init` (it exits at once, skipping the
            # final checkpoint): ours goes back at once, and again after building (a safety net for libraries
            # that install theirs there).
            self.stop.install()
            if self.dashboard_url:
                self.exp.write_run(dashboard=self.dashboard_url)
            self._build()
            self.stop.install()
            if self.stop.requested:
                raise _StoppedWhileStarting
            if self.resume:
                self._restore()
                # only now: a resume that failed (say, a --set that no longer fits the checkpoint) must leave
                # the config the run was trained with, or the next plain --resume would fail the same way
                write_text_atomic(self.exp.config_path, dump_config(self.cfg))
            elif self.init_model is not None:
                from osrs_rllib.training.warm_start import start_from

                start_from(self.algo, self.init_model, self.exp.dir, self.echo)
            self._open_tensorboard()
            self._view = make_view(self.cfg, self.echo)
            if self.league_runner is not None:
                self.league_runner.plan(self.algo)
            self._loop()
            for hook in self.hooks:
                hook.ended(self)
            state = "stopped" if self.stop.requested else "finished"
            return 0
        except _StoppedWhileStarting:
            state = "stopped"
            self.echo("stop requested while starting: stopped before the first iteration (nothing to checkpoint)")
            return 0
        except KeyboardInterrupt:
            state = "stopped"
            latest = self.exp.latest_checkpoint()
            if latest is None:
                self.echo("interrupted before the first checkpoint: nothing to resume; start again (no --force needed)")
            else:
                self.echo(f"interrupted; the last checkpoint ({latest.path.name}) is intact: --resume continues")
            return 130
        finally:
            self.stop.uninstall()
            # The run's record first: after a second signal the process has seconds left (`common.stops`).
            self._record_run(state, started)
            if self._view is not None:
                self._view.close()
            if self.writer is not None:
                self.writer.close()
            if self.algo is not None and not self.stop.hard:  # its runners go with Ray either way
                self.algo.stop()
            if self._ray_started and self.stop.hard:  # seconds matter now: Ray's processes are killed
                from serving.ray_start import end_ray_now

                end_ray_now()
            elif self._ray_started:  # nothing of its Ray outlives the command
                from serving.ray_start import shutdown_own_ray

                shutdown_own_ray()

    def _record_run(self, state: str, started: float) -> None:
        """The run's record (``run.json``) with its time account; the account's table once it iterated."""
        spent = self.account.summary()
        self.exp.write_run(state=state, ended_unix=time.time(), wall_seconds=time.time() - started, time_account=spent)
        if self.account.iterations:
            self.echo(format_table(spent))

    def limit_reached(self) -> str | None:
        """Why the stop rule ends the run now, in words (None: it does not)."""
        return self.stop_rule(self.state)

    def _loop(self) -> None:
        cfg = self.cfg
        last_checkpointed = self.state.iteration if self.resume else -1
        reason = self.limit_reached()
        self.account.loop_started(self.algo)
        while reason is None and not self.stop.requested:
            t0 = time.perf_counter()
            result = self.algo.train()
            seconds = time.perf_counter() - t0
            self.account.algorithm_iteration(self.algo, result, seconds)
            self.state.iteration = int(self.algo.iteration)
            self.state.env_steps = int(env_steps_of(result))
            self.state.train_seconds += seconds
            self._set_env_progress()
            metrics = flatten_result(result)
            if self.league_runner is not None:
                with self.account.part("league"):
                    metrics.update(
                        self.league_runner.after_iteration(self.algo, self.state.iteration, self.state.env_steps)
                    )
                if metrics.get("league/events/snapshots"):
                    # the snapshot's weights are on disk, no checkpoint names it yet
                    kill_point("league-snapshot", self.state.iteration)
            eval_rows: list[dict[str, Any]] = []
            if cfg.evaluation.interval and self.state.iteration % cfg.evaluation.interval == 0:
                # evaluation writes nothing until it returns: a kill here is a kill at any moment of it
                kill_point("evaluation", self.state.iteration)
                eval_rows = self.evaluate()
            steps = metrics.get("num_env_steps_sampled_this_iter", float(cfg.ppo.train_batch_size))
            figures = summary_figures(metrics, steps / seconds if seconds > 0 else 0.0, self.state, cfg)
            self._log(metrics, figures, eval_rows)
            reason = self.limit_reached()
            due = cfg.checkpoint.interval and self.state.iteration % cfg.checkpoint.interval == 0
            if due or reason is not None or self.stop.requested:
                self._checkpoint(eval_rows)
                last_checkpointed = self.state.iteration
            with self.account.part("logging"):
                self.exp.write_status({**figures, "state": "running", "checkpoint_iteration": last_checkpointed})
            self.account.end_iteration(self.writer, self.state.iteration)
        if last_checkpointed != self.state.iteration:
            self._checkpoint([])
        self.echo(f"training ended: {reason or 'stop requested'} (iteration {self.state.iteration})")
        self.exp.write_status({**self.exp.read_status(), "state": "stopped" if self.stop.requested else "finished"})

    @accounted("sync")
    def _set_env_progress(self) -> None:
        """Reward schedules (spec §17.4) count completed training rollouts, i.e. iterations here."""
        progress, steps = float(self.state.iteration), float(self.state.env_steps)

        def apply(env: Any) -> None:
            if hasattr(env, "set_training_progress"):
                env.set_training_progress(progress)
            if hasattr(env, "set_env_steps"):  # the novelty and noise schedules (training/sampling/shaping.py)
                env.set_env_steps(steps)

        self.algo.env_runner_group.foreach_env(apply)

    # -- evaluation ----------------------------------------------------------------------------------
    @accounted("evaluation")
    def evaluate(self, fights: int | None = None) -> list[dict[str, Any]]:
        """Play the learner (in evaluation mode) through the run's evaluator and tell the hooks; `fights` per
        build instead of the config's (a final evaluation)."""
        net = self.algo.get_policy(LEARNER_POLICY).model.net
        if next(net.parameters()).device.type != "cpu":  # a GPU learner's: the fights feed it CPU arrays
            import copy

            net = copy.deepcopy(net).cpu()
        was_training = net.training
        net.eval()
        # Said before it starts: an evaluation can take minutes, and a stop meanwhile is easier to judge.
        self.echo(
            f"iteration {self.state.iteration}: evaluating "
            f"({fights or self.cfg.evaluation.fights} fights per build and opponent)"
        )
        try:
            rows = self.evaluator(net, fights, shards=runner_shards(self.algo))  # the idle runners play too
        finally:
            net.train(was_training)
        self.state.last_eval = {"iteration": self.state.iteration, "results": rows}
        for hook in self.hooks:
            hook.evaluated(self, rows)
        return rows

    def _headline_win_rate(self, rows: list[dict[str, Any]]) -> float | None:
        """Best-checkpoint criterion: against `checkpoint.best_by` (default: the first evaluation opponent),
        first mode, the mean win rate over the trained builds (each build weighs the same, so a build left
        unlearned shows)."""
        wanted = self.cfg.checkpoint.best_by
        chosen = [r for r in rows if wanted is None or r["opponent"] == wanted]
        return float(chosen[0]["win_rate"]) if chosen else None

    # -- checkpoints ---------------------------------------------------------------------------------
    @accounted("checkpoint")
    def _checkpoint(self, eval_rows: list[dict[str, Any]]) -> None:
        from policies.rllib_model import export_policy

        win_rate = self._headline_win_rate(eval_rows)
        is_best = win_rate is not None and (
            self.state.best_eval_win_rate is None or win_rate >= self.state.best_eval_win_rate
        )
        if is_best:
            self.state.best_eval_win_rate = win_rate
        policy = self.algo.get_policy(LEARNER_POLICY)
        metadata = {
            "experiment": self.exp.name,
            "iteration": self.state.iteration,
            "env_steps": self.state.env_steps,
            "eval_win_rate": win_rate,
            "config": self.cfg.to_dict(),
        }
        init = read_json(self.exp.dir / "init.json", None)  # a warm start's provenance (warm_start.INIT_FILE)
        if init:
            metadata["init"] = init
        # the marker (written last by `writing_checkpoint`, with the manifest) carries our counters and this
        # checkpoint's win rate, so the checkpoint describes itself even if the index write below never happens
        marker = {**self.state.to_json(), "eval_win_rate": win_rate}
        with self.exp.writing_checkpoint(self.state.iteration, marker=marker) as tmp:
            self.algo.save_checkpoint(str(tmp))
            export_policy(policy, tmp / MODEL_NAME, metadata=metadata)
            average = getattr(policy, "average", None)
            if average is not None:
                export_policy(policy, tmp / AVERAGE_MODEL_NAME, network=average.net,
                              metadata={**metadata, "average": {"decay": average.decay, "updates": average.updates}})
            if self.league_runner is not None:
                write_json_atomic(tmp / LEAGUE_FILE, self.league_runner.state_dict())
            write_json_atomic(tmp / RNG_FILE, driver_rng_state())
        final = self.exp.checkpoint_dir_for(self.state.iteration)
        kill_point("checkpoint-index", self.state.iteration)
        info = CheckpointInfo(self.state.iteration, final, self.state.env_steps, win_rate)
        self.exp.record_checkpoint(info, self.cfg.checkpoint.keep_last, self.cfg.checkpoint.keep_best)
        if self.league_runner is not None:
            named: set[str] = set()
            for kept in self.exp.checkpoints():
                named |= self.league_runner.snapshot_ids_in(read_json(kept.path / LEAGUE_FILE, {}) or {})
            self.league_runner.prune_store(named)
        copy_atomic(final / MODEL_NAME, self.exp.models_dir / "latest.nhmodel")
        if (final / AVERAGE_MODEL_NAME).is_file():
            copy_atomic(final / AVERAGE_MODEL_NAME, self.exp.models_dir / AVERAGE_MODEL_NAME)
        if is_best:
            copy_atomic(final / MODEL_NAME, self.exp.models_dir / "best.nhmodel")
        every = self.cfg.checkpoint.milestone_env_steps
        milestone = keep_milestone(self.exp.models_dir, every, self.state.env_steps, final / MODEL_NAME,
                                   final / AVERAGE_MODEL_NAME)
        best_note = f" (eval win rate {win_rate:.1%}, best)" if is_best else ""
        self.echo(f"checkpoint {final.name}{best_note}" + (f"; milestone {milestone.name}" if milestone else ""))

    # -- logging -------------------------------------------------------------------------------------
    @accounted("logging")
    def _log(self, metrics: dict[str, float], figures: dict[str, Any], eval_rows: list[dict[str, Any]]) -> None:
        it = self.state.iteration
        if self.writer is not None:
            for key, value in metrics.items():
                self.writer.add_scalar(tensorboard_tag(key), value, it)
            self.writer.add_scalar("charts/env_steps", self.state.env_steps, it)
            self.writer.add_scalar("charts/env_steps_per_s", figures["steps_per_s"], it)
            for row in eval_rows:
                base = f"eval/{row['opponent']}/{row['mode']}"
                for key in (
                    "win_rate",
                    "win_rate_low",
                    "win_rate_high",
                    "mean_fight_ticks",
                    "mean_damage_dealt",
                    "mean_damage_received",
                ):
                    self.writer.add_scalar(f"{base}/{key}", row[key], it)
                self.writer.add_scalar(f"{base}/loss_rate", row["losses"] / row["fights"], it)
                self.writer.add_scalar(f"{base}/tie_rate", row["ties"] / row["fights"], it)
                for group in ("by_build", "by_fight_type"):
                    for name, split in row.get(group, {}).items():
                        for key in ("win_rate", "win_rate_low", "win_rate_high"):
                            self.writer.add_scalar(f"eval/{row['opponent']}/{name}/{row['mode']}/{key}", split[key], it)
            self.writer.flush()
        self._view.update(figures, eval_rows)
        for hook in self.hooks:
            hook.logged(self, metrics, figures, eval_rows)
