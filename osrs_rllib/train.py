"""`osrs-rllib train`: RLlib PPO (old API stack) on the NH fight, with experiments on disk.

The loop, in the order it runs (CleanRL's "paper order", with the plumbing named):

1. **Ray**: start an embedded Ray with its dashboard on 127.0.0.1, or join ``--address``.
2. **Algorithm**: `build_ppo_config` turns the typed config into one fluent `PPOConfig` (every
   hyperparameter explicit), with `TrainingEnv` (opponent drawn from the mix at reset), the policy of
   `policies/`, the scripted ladder policies and `policy_mapping_fn`.
3. **Resume** (``--resume``): restore the newest complete checkpoint: weights, optimiser, normalisation
   statistics, RLlib's counters (schedules follow them) and our own counters (iteration, time, best).
4. **Iterate**: ``algo.train()`` (sample + PPO update + normaliser sync), then reward-schedule progress
   for the environments, metrics to TensorBoard and the terminal, evaluation every
   `evaluation.interval`, a checkpoint every `checkpoint.interval`, until a stop limit or a stop request
   (SIGTERM / SIGINT / `osrs-rllib stop`), which ends with a final checkpoint.

A SIGKILL at any moment loses at most the iterations since the last checkpoint: checkpoints are written
into a temporary directory, marked complete and renamed into place (see `osrs_rllib/experiment.py`), and
``--resume`` takes the newest complete one. What a resume restores, and what it re-derives instead of
restoring bit for bit, is listed in docs/training.md ("Stopping, killing and resuming").
"""

from __future__ import annotations

import logging
import math
import os
import random
import signal
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from common.atomic_files import copy_atomic, write_json_atomic, write_text_atomic
from osrs_rllib.builds import format_split
from osrs_rllib.config import TrainConfig, dump_config
from osrs_rllib.experiment import (
    MODEL_NAME,
    STATE_FILE,
    CheckpointInfo,
    Experiment,
    checkpoint_problem,
    kill_point,
    read_json,
)
from osrs_rllib.opponents import LEAGUE_KINDS, LEARNER_POLICY, OpponentMix

logger = logging.getLogger("osrs_rllib.train")


class _DropScriptedPolicyWarning(logging.Filter):
    """RLlib warns at every checkpoint that `ScriptedRLlibPolicy` has no "durable name"; it needs none (it
    has no weights and is rebuilt from the config on restore), so the warning is noise."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "durable policy name" not in record.getMessage()


logging.getLogger("ray.rllib.policy.policy").addFilter(_DropScriptedPolicyWarning())

ENV_NAME = "osrs_rllib_nh_training"
"""Name under which `TrainingEnv` is registered with Ray Tune's env registry."""
LEAGUE_FILE = "league.json"
"""The league's state inside a checkpoint directory (snapshot weights live in ``experiments/<name>/league/``)."""
RNG_FILE = "rng_state.json"
"""The driver's random generators (numpy's and Python's global ones, torch's) inside a checkpoint directory:
they shuffle PPO's minibatches and, with no env runners, sample the actions."""
RLLIB_CHECKPOINT_FILE = "rllib_checkpoint.json"


RAY_START_ATTEMPTS = 2
"""How often a local Ray is started before giving up. Ray's start-up limits are fixed (the raylet waits about 15 s
for its dashboard agent, the driver 30 s for the raylet, `ray._private.node`), and on a 2-core machine busy with
other work the agent's imports alone can take longer: one more try costs little next to a run that never starts."""
RAY_START_TIMEOUT_MESSAGE = "timed out during startup"


def _end_processes(procs: list[Any], grace_s: float = 5.0) -> None:
    """SIGTERM, then SIGKILL what is left after `grace_s`: what a failed `ray.init` started must not linger."""
    import psutil

    for proc in procs:
        try:
            proc.terminate()
        except psutil.Error:
            pass
    _, alive = psutil.wait_procs(procs, timeout=grace_s)
    for proc in alive:
        try:
            proc.kill()
        except psutil.Error:
            pass


class TrainingError(Exception):
    """Training cannot start (bad experiment state, unreachable cluster); the message says why."""


CLUSTER_CONNECT_TIMEOUT_S = 5.0
"""How long joining a cluster may take to open a TCP connection to its head before we give up with a clear
message; `ray.init` itself would retry for minutes with only its own time-out lines."""


def check_port_free(host: str, port: int) -> None:
    """The dashboard's port must be free before Ray starts: Ray's own error names its options, not ours.

    Raises:
        TrainingError: Something listens on ``host:port``; the message names ``ray.dashboard_port``.
    """
    import socket

    with socket.socket() as s:
        try:
            s.bind((host, port))
        except OSError:
            raise TrainingError(
                f"ray.dashboard_port {port} on {host} is in use (another Ray or program): pick another with "
                f"--set ray.dashboard_port={port + 1}, or turn the dashboard off with --set ray.include_dashboard=false"
            ) from None


def check_cluster_reachable(address: str, timeout: float = CLUSTER_CONNECT_TIMEOUT_S) -> None:
    """Fail fast, naming `address`, when no Ray head answers there (``auto``: the one this machine knows of).

    Raises:
        TrainingError: No cluster address is known (``auto``), the address is malformed, or nothing accepts
            a TCP connection on it within `timeout` seconds.
    """
    import socket

    target = address
    if address == "auto":
        target = os.environ.get("RAY_ADDRESS", "")
        if not target:
            current = Path(os.environ.get("RAY_TMPDIR", "/tmp")) / "ray" / "ray_current_cluster"
            target = current.read_text(encoding="utf-8").strip() if current.exists() else ""
        if not target:
            raise TrainingError(
                "--address auto: no running Ray cluster is known on this machine (no RAY_ADDRESS and no "
                "`ray start --head` here); start one, or give HOST:PORT of the head node"
            )
    host, sep, port = target.removeprefix("ray://").rpartition(":")
    if not sep or not host or not port.isdigit():
        raise TrainingError(
            f"--address {address!r}: expected HOST:PORT of a Ray head node (e.g. 10.0.0.5:6379) or auto"
        )
    try:
        with socket.create_connection((host, int(port)), timeout=timeout):
            pass
    except OSError as exc:
        reason = "timed out" if isinstance(exc, TimeoutError) else (exc.strerror or str(exc))
        raise TrainingError(
            f"cannot reach a Ray cluster at {target} ({reason} after at most {timeout:g} s): is `ray start --head` "
            "running there and the port open?"
        ) from None


# ---------------------------------------------------------------------------------------------------------
# RLlib configuration
# ---------------------------------------------------------------------------------------------------------
def env_config(cfg: TrainConfig) -> dict[str, Any]:
    """The `TrainingEnv` config of a training config (also what evaluation builds its fights from)."""
    return {
        "params": dict(cfg.env.params),
        "reward_weights": dict(cfg.env.reward_weights),
        "frame_stack": cfg.env.frame_stack,
        "opponent_mix": cfg.opponents.normalized(),
        "mix_seed": cfg.seed,
        "league": cfg.league_enabled,
        "scripted_in_env": cfg.opponents.scripted_in_env,
        "engine": cfg.env.engine,
        # issue 25's training options reach the envs only when on, so a config without them builds the same envs
        **({"novelty": cfg.env.novelty.model_dump(mode="json")} if cfg.env.novelty.enabled else {}),
        **({"observation_noise": cfg.env.observation_noise.model_dump(mode="json")}
           if cfg.env.observation_noise.enabled else {}),
    }


def make_league(cfg: TrainConfig) -> Any:
    """A new league for a config: its mix is ``opponents.mix``; baseline and ladder rungs join as fixed players."""
    import dataclasses

    from league.league import League

    league = League(dataclasses.replace(cfg.league, opponent_mix=cfg.league_mix()))
    league.add_baseline()
    for name in league_rungs(cfg.opponents.scripted_in_env):
        league.add_scripted(name)
    for path in cfg.opponents.targets:
        league.add_target(path)
    return league


def league_rungs(scripted_in_env: bool) -> list[str]:
    """Ladder rungs that join the league as fixed players: every rung, except those that must see the other
    seat's action first (``prescient``) when rungs play as RLlib policies, where no host can show it."""
    from envs.opponents import LADDER, needs_opponent_action

    return [name for name in LADDER if scripted_in_env or not needs_opponent_action(name)]


def fixed_policies(scripted_in_env: bool = True, targets: tuple[str, ...] | list[str] = ()) -> dict[str, str | None]:
    """Who plays each fixed league player: None where the environment plays it itself (the baseline, and the
    ladder rungs with `scripted_in_env`), else the RLlib policy of the rung; a target model file is played by
    the policy of the same id (`policies/model_file_policy.py`)."""
    from league.players import target_id
    from osrs_rllib.config import BASELINE
    from policies.scripted import scripted_policy_id

    rungs = league_rungs(scripted_in_env)
    return {
        BASELINE: None,
        **{scripted_policy_id(n): None if scripted_in_env else scripted_policy_id(n) for n in rungs},
        **{target_id(p): target_id(p) for p in targets},
    }


def stream_seed(seed: int, iteration: int) -> int:
    """The seed of the env runners' random streams for a run started (or resumed) at `iteration`.

    A fresh run uses `seed` itself. A resumed run cannot continue the runners' streams (the episodes in
    flight at the kill are lost with them), and restarting them from `seed` would replay the episodes the
    run began with (the same builds, opponents and rolls) after every resume; so a resume draws new streams,
    derived from `seed` and the iteration: the same resume gives the same streams.
    """
    if iteration <= 0:
        return int(seed)
    return int(np.random.SeedSequence([int(seed), int(iteration)]).generate_state(1)[0] % 2**31)


def driver_rng_state() -> dict[str, Any]:
    """The driver's generators as JSON: numpy's and Python's global ones, and torch's CPU generator."""
    import torch

    kind, keys, pos, has_gauss, cached = np.random.get_state()
    version, internal, gauss = random.getstate()
    return {
        "numpy": [kind, [int(k) for k in keys], int(pos), int(has_gauss), float(cached)],
        "python": [version, list(internal), gauss],
        "torch": torch.get_rng_state().tolist(),
    }


def set_driver_rng_state(state: Mapping[str, Any]) -> None:
    """Put back what `driver_rng_state` saved (after the algorithm is built: building it seeds them)."""
    import torch

    kind, keys, pos, has_gauss, cached = state["numpy"]
    np.random.set_state((kind, np.asarray(keys, dtype=np.uint32), pos, has_gauss, cached))
    version, internal, gauss = state["python"]
    random.setstate((version, tuple(internal), gauss))
    torch.set_rng_state(torch.tensor(state["torch"], dtype=torch.uint8))


def build_ppo_config(
    cfg: TrainConfig, learners: tuple[str, ...] = (LEARNER_POLICY,), seed: int | None = None
) -> Any:
    """The RLlib `PPOConfig` (old API stack) for a training config; `learners` are the trainable policies
    (main, plus the league's exploiters); `seed` replaces ``cfg.seed`` for the env runners' streams and
    RLlib's seeding (a resumed run's, `stream_seed`)."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.policy.policy import PolicySpec

    from osrs_rllib.callbacks import TrainingCallbacks
    from osrs_rllib.lockstep_sampler import LockstepRolloutWorker
    from osrs_rllib.opponents import policy_mapping_fn
    from policies.rllib_model import model_config
    from policies.scripted import SCRIPTED_PREFIX, scripted_policy_spec

    mix = OpponentMix(
        # a mix of league kinds only (e.g. {target: 1}) has no fixed kinds: TrainingEnv falls back the same way
        {k: v for k, v in cfg.opponents.normalized().items() if k not in LEAGUE_KINDS} or {"baseline": 1.0},
        scripted_in_env=cfg.opponents.scripted_in_env,
    )
    from osrs_rllib.grad_accumulation import policy_spec

    policies: dict[str, Any] = {learner: policy_spec(cfg.ppo.grad_accumulation_steps) for learner in learners}
    scripted = set(mix.policy_ids())
    if cfg.league_enabled and not cfg.opponents.scripted_in_env:
        scripted |= {pid for pid in fixed_policies(False).values() if pid is not None}
    seed = cfg.seed if seed is None else seed
    for pid in sorted(scripted - {LEARNER_POLICY}):
        if pid.startswith(SCRIPTED_PREFIX):
            policies[pid] = scripted_policy_spec(pid[len(SCRIPTED_PREFIX) :], seed=seed)
    if cfg.league_enabled:
        from league.callback import slot_policy_id

        for i in range(cfg.opponents.league_slots):
            policies[slot_policy_id(i)] = PolicySpec()  # frozen: not in policies_to_train
        from league.players import target_id
        from policies.model_file_policy import model_file_policy_spec

        for path in cfg.opponents.targets:
            policies[target_id(path)] = model_file_policy_spec(path)  # frozen: the file itself, no weights
    lr, lr_schedule = cfg.ppo.lr.to_rllib()
    entropy, entropy_schedule = cfg.ppo.entropy_coeff.to_rllib()
    ppo = cfg.ppo
    runners = cfg.runners
    return (
        PPOConfig()
        .api_stack(enable_rl_module_and_learner=False, enable_env_runner_and_connector_v2=False)
        .framework("torch")
        .environment(ENV_NAME, env_config={**env_config(cfg), "mix_seed": seed}, disable_env_checking=True)
        .env_runners(
            num_env_runners=runners.num_env_runners,
            num_envs_per_env_runner=runners.num_envs_per_env_runner,
            num_cpus_per_env_runner=runners.num_cpus_per_env_runner,
            rollout_fragment_length=ppo.rollout_fragment_length,
            sample_timeout_s=runners.sample_timeout_s,
            batch_mode="truncate_episodes",
            env_runner_cls=LockstepRolloutWorker if runners.sampler == "lockstep" else None,
        )
        .training(
            gamma=ppo.gamma,
            lambda_=ppo.gae_lambda,
            clip_param=ppo.clip_param,
            vf_clip_param=ppo.vf_clip_param if ppo.vf_clip_param is not None else float("inf"),
            vf_loss_coeff=ppo.vf_loss_coeff,
            entropy_coeff=entropy,
            entropy_coeff_schedule=entropy_schedule,
            lr=lr,
            lr_schedule=lr_schedule,
            grad_clip=ppo.grad_clip,
            kl_coeff=ppo.kl_coeff,
            kl_target=ppo.kl_target,
            use_kl_loss=ppo.kl_coeff > 0,
            train_batch_size=ppo.train_batch_size,
            minibatch_size=ppo.minibatch_size,
            num_epochs=ppo.num_epochs,
            model=model_config(cfg.model),
        )
        .multi_agent(
            policies=policies,
            policy_mapping_fn=policy_mapping_fn,
            policies_to_train=list(learners),
        )
        .callbacks(TrainingCallbacks)
        .resources(num_gpus=0)
        .reporting(
            min_sample_timesteps_per_iteration=0, min_time_s_per_iteration=0, keep_per_episode_custom_metrics=False
        )
        .debugging(seed=seed, log_level="WARN")
    )


def register_everything() -> None:
    """Register the env and the model with Ray; idempotent, so safe after every `ray.init`."""
    from ray.tune.registry import register_env

    from osrs_rllib.opponents import TrainingEnv
    from policies.rllib_model import register

    register()
    register_env(ENV_NAME, lambda config: TrainingEnv(config))


# ---------------------------------------------------------------------------------------------------------
# The training run
# ---------------------------------------------------------------------------------------------------------
@dataclass
class RunState:
    """Our counters, stored in every checkpoint (``osrs_state.json``) next to RLlib's own."""

    iteration: int = 0
    env_steps: int = 0
    train_seconds: float = 0.0
    best_eval_win_rate: float | None = None
    last_eval: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "iteration": self.iteration,
            "env_steps": self.env_steps,
            "train_seconds": self.train_seconds,
            "best_eval_win_rate": self.best_eval_win_rate,
            "last_eval": self.last_eval,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RunState:
        return cls(
            iteration=int(data.get("iteration", 0)),
            env_steps=int(data.get("env_steps", 0)),
            train_seconds=float(data.get("train_seconds", 0.0)),
            best_eval_win_rate=data.get("best_eval_win_rate"),
            last_eval=dict(data.get("last_eval") or {}),
        )


class _StoppedWhileStarting(Exception):
    """A stop arrived before the first iteration: end cleanly (state "stopped"), nothing to checkpoint."""


class StopRequest:
    """SIGTERM/SIGINT set a flag; the loop finishes its iteration, checkpoints and exits (a second
    SIGINT interrupts at once)."""

    def __init__(self) -> None:
        self.requested = False
        self._previous: dict[int, Any] = {}

    def install(self) -> None:
        """Idempotent: called before Ray starts (a stop during start-up is remembered, not fatal) and again after
        `ray.init`, which replaces SIGTERM handling; `uninstall` restores what was there before the first call."""
        for sig in (signal.SIGTERM, signal.SIGINT):
            previous = signal.signal(sig, self._handle)
            self._previous.setdefault(sig, previous)

    def uninstall(self) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)

    def _handle(self, signum: int, frame: Any) -> None:
        if self.requested and signum == signal.SIGINT:
            raise KeyboardInterrupt
        self.requested = True
        logger.warning("stop requested (signal %d): finishing this iteration, then checkpointing", signum)


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
    ) -> None:
        self.cfg = cfg
        self.exp = experiment
        self.resume = resume
        self.echo = echo
        self.command = command or sys.argv
        self.state = RunState()
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
        """The warm start's model (`osrs_rllib/warm_start.py`), checked in `run` before anything is written."""

    # -- setup ---------------------------------------------------------------------------------------
    def _start_ray(self) -> None:
        import ray

        rc = self.cfg.ray
        if ray.is_initialized():
            return
        kwargs: dict[str, Any] = {"log_to_driver": False, "configure_logging": False}
        if rc.address:
            check_cluster_reachable(rc.address)
            kwargs["address"] = rc.address
        else:
            if rc.include_dashboard:
                check_port_free(rc.dashboard_host, rc.dashboard_port)
            kwargs.update(
                num_cpus=rc.num_cpus,
                include_dashboard=rc.include_dashboard,
                dashboard_host=rc.dashboard_host,
                dashboard_port=rc.dashboard_port,
            )
        import psutil

        for attempt in range(1, RAY_START_ATTEMPTS + 1):
            before = {p.pid for p in psutil.Process().children(recursive=True)}
            try:
                context = ray.init(**kwargs)
                break
            except Exception as exc:  # Ray raises plain `Exception` too, e.g. when its node misses its start-up limit
                ray.shutdown()
                _end_processes([p for p in psutil.Process().children(recursive=True) if p.pid not in before])
                where = rc.address or "a local Ray"
                if rc.address or RAY_START_TIMEOUT_MESSAGE not in str(exc) or attempt == RAY_START_ATTEMPTS:
                    raise TrainingError(f"cannot start or join Ray at {where}: {exc}") from None
                self.echo(
                    f"Ray's node did not come up within Ray's fixed start-up limits (a busy machine?): starting it "
                    f"again ({attempt + 1}/{RAY_START_ATTEMPTS})"
                )
        self._ray_started = True
        if not rc.address:  # a Ray of our own: remember its processes, for the next start after a kill -9
            self.exp.record_ray_processes([p.pid for p in psutil.Process().children(recursive=True)])
        url = getattr(context, "dashboard_url", None)
        if url:
            self.dashboard_url = url if url.startswith("http") else f"http://{url}"
            self.echo(f"Ray dashboard: {self.dashboard_url}")
            from osrs_rllib.jobs import dashboard_login_hint

            self.echo(dashboard_login_hint())

    def _announce_engine(self) -> None:
        """Say which simulator the env runners step (`env.engine`), and refuse a forced core that is not built
        here before any runner starts (on a cluster each node needs the core built the same way)."""
        from envs.nh.core_engine import core_available

        engine, built = self.cfg.env.engine, core_available()
        if engine == "core" and not built:
            raise TrainingError("env.engine is core but the compiled simulator core is not built here: "
                                "`pip install -e .` builds it (needs a C compiler), or use env.engine: auto")
        if engine == "python" or not built:
            why = "env.engine: python" if engine == "python" else "the compiled core is not built (pip install -e .)"
            self.echo(f"simulator: the Python engine ({why})")
        else:
            self.echo("simulator: the compiled core (envs/nh/core, bit-identical to the Python engine)")

    def _build(self) -> None:
        self._announce_engine()
        register_everything()
        learners: tuple[str, ...] = (LEARNER_POLICY,)
        if self.cfg.league_enabled:
            self.league_runner = self._league_runner()
            learners = tuple(self.league_runner.league.learners)
        resumed_at = self.resume_from.iteration if self.resume_from is not None else 0
        self.algo = build_ppo_config(self.cfg, learners, seed=stream_seed(self.cfg.seed, resumed_at)).build_algo()

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
        """One line: the experiment, the checkpoint, what is wrong with it and what to do (issue 28)."""
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
        self._restore_exact_weights(latest)
        self.state = RunState.from_json(read_json(latest.path / STATE_FILE, {}))
        self.algo._iteration = self.state.iteration  # Trainable's counter; load_checkpoint leaves it at 0
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

    def _restore_exact_weights(self, latest: CheckpointInfo) -> None:
        """Load the trainable policies' weights again, dtype for dtype.

        Why: RLlib's ``set_weights`` casts every float64 array to float32 before ``load_state_dict`` copies it into
        the float64 buffer, so the normalisation statistics' accumulators (float64, `policies/network.py`) would
        come back rounded. The checkpoint holds them exactly; the inference buffers the runners use are float32
        anyway, so only the learner needs this.
        """
        import pickle

        import torch

        for pid in self.algo.config.policies_to_train or ():
            path = latest.path / "policies" / pid / "policy_state.pkl"
            policy = self.algo.get_policy(pid)
            if not path.is_file() or policy is None or getattr(policy, "model", None) is None:
                continue
            with open(path, "rb") as f:
                weights = pickle.load(f).get("weights") or {}
            policy.model.load_state_dict({k: torch.as_tensor(np.asarray(v)) for k, v in weights.items()})

    def _sync_models(self, latest: CheckpointInfo) -> None:
        """``models/latest.nhmodel`` and ``models/best.nhmodel`` as the checkpoints say, and the index rewritten
        from them: a kill between a checkpoint's rename and its bookkeeping leaves the model files one behind."""
        ck = self.cfg.checkpoint
        self.exp.record_checkpoint(latest, ck.keep_last, ck.keep_best)
        copy_atomic(latest.path / MODEL_NAME, self.exp.models_dir / "latest.nhmodel")
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
        started = time.time()
        state = "failed"
        if not self.resume:  # a bad init model fails here, before the experiment directory is touched
            from osrs_rllib.warm_start import load_init

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
                from osrs_rllib.warm_start import start_from

                start_from(self.algo, self.init_model, self.exp.dir, self.echo)
            self._open_tensorboard()
            self._view = make_view(self.cfg, self.echo)
            if self.league_runner is not None:
                self.league_runner.plan(self.algo)
            self._loop()
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
            if self._view is not None:
                self._view.close()
            if self.writer is not None:
                self.writer.close()
            if self.algo is not None:
                self.algo.stop()
            self.exp.write_run(state=state, ended_unix=time.time(), wall_seconds=time.time() - started)
            if self._ray_started:
                import ray

                ray.shutdown()

    def _limits_reached(self) -> str | None:
        stop = self.cfg.stop
        if stop.iterations is not None and self.state.iteration >= stop.iterations:
            return f"reached {stop.iterations} iterations"
        if stop.env_steps is not None and self.state.env_steps >= stop.env_steps:
            return f"reached {stop.env_steps:,} env steps"
        if stop.minutes is not None and self.state.train_seconds >= stop.minutes * 60:
            return f"reached {stop.minutes:g} minutes of training"
        return None

    def _loop(self) -> None:
        cfg = self.cfg
        last_checkpointed = self.state.iteration if self.resume else -1
        reason = self._limits_reached()
        while reason is None and not self.stop.requested:
            t0 = time.perf_counter()
            result = self.algo.train()
            seconds = time.perf_counter() - t0
            self.state.iteration = int(self.algo.iteration)
            self.state.env_steps = int(env_steps_of(result))
            self.state.train_seconds += seconds
            self._set_env_progress()
            metrics = flatten_result(result)
            if self.league_runner is not None:
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
                eval_rows = self._evaluate()
            steps = metrics.get("num_env_steps_sampled_this_iter", float(cfg.ppo.train_batch_size))
            figures = summary_figures(metrics, steps / seconds if seconds > 0 else 0.0, self.state, cfg)
            self._log(metrics, figures, eval_rows)
            reason = self._limits_reached()
            due = cfg.checkpoint.interval and self.state.iteration % cfg.checkpoint.interval == 0
            if due or reason is not None or self.stop.requested:
                self._checkpoint(eval_rows)
                last_checkpointed = self.state.iteration
            self.exp.write_status({**figures, "state": "running", "checkpoint_iteration": last_checkpointed})
        if last_checkpointed != self.state.iteration:
            self._checkpoint([])
        self.echo(f"training ended: {reason or 'stop requested'} (iteration {self.state.iteration})")
        self.exp.write_status({**self.exp.read_status(), "state": "stopped" if self.stop.requested else "finished"})

    def _set_env_progress(self) -> None:
        """Reward schedules (spec §17.4) count completed training rollouts, i.e. iterations here."""
        progress = float(self.state.iteration)

        steps = float(self.state.env_steps)

        def apply(env: Any) -> None:
            if hasattr(env, "set_training_progress"):
                env.set_training_progress(progress)
            if hasattr(env, "set_env_steps"):  # the novelty and noise schedules (osrs_rllib/shaping.py)
                env.set_env_steps(steps)

        self.algo.env_runner_group.foreach_env(apply)

    # -- evaluation ----------------------------------------------------------------------------------
    def _evaluate(self) -> list[dict[str, Any]]:
        from envs.nh.loadouts import Build
        from osrs_rllib.evaluation import evaluate, network_act_fn

        ev = self.cfg.evaluation
        net = self.algo.get_policy(LEARNER_POLICY).model.net
        was_training = net.training
        net.eval()
        rows: list[dict[str, Any]] = []
        try:
            modes = [m for m, on in (("deterministic", ev.deterministic), ("stochastic", ev.stochastic)) if on]
            for mode in modes:
                results = evaluate(
                    network_act_fn(net),
                    ev.opponents,
                    ev.fights,
                    params={k: v for k, v in self.cfg.env.params.items() if k != "include_opponent_observation"},
                    deterministic=mode == "deterministic",
                    seed=ev.seed,
                    frame_stack=self.cfg.env.frame_stack,
                    unseen_builds=[Build(b) for b in ev.unseen_builds],
                    engine=self.cfg.env.engine,
                )
                rows += [r.to_dict() for r in results]
        finally:
            net.train(was_training)
        self.state.last_eval = {"iteration": self.state.iteration, "results": rows}
        return rows

    def _headline_win_rate(self, rows: list[dict[str, Any]]) -> float | None:
        """Best-checkpoint criterion: against `checkpoint.best_by` (default: the first evaluation opponent),
        first mode, the mean win rate over the trained builds (each build weighs the same, so a build left
        unlearned shows)."""
        wanted = self.cfg.checkpoint.best_by
        chosen = [r for r in rows if wanted is None or r["opponent"] == wanted]
        return float(chosen[0]["win_rate"]) if chosen else None

    # -- checkpoints ---------------------------------------------------------------------------------
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
        if is_best:
            copy_atomic(final / MODEL_NAME, self.exp.models_dir / "best.nhmodel")
        self.echo(f"checkpoint {final.name}" + (f" (eval win rate {win_rate:.1%}, best)" if is_best else ""))

    # -- logging -------------------------------------------------------------------------------------
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


# ---------------------------------------------------------------------------------------------------------
# Result handling
# ---------------------------------------------------------------------------------------------------------
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
        return "learner/" + key[len("info/learner/") :].replace("learner_stats/", "")
    if key.startswith("custom_metrics/"):
        return "train/" + key[len("custom_metrics/") :]
    return "rllib/" + key


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
    }


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
    return (
        f"iter {f['iteration']:>5} | {f['env_steps']:>11,} steps | {f['steps_per_s']:>7,.0f}/s | "
        f"return {_fmt(f.get('episode_return_mean'), '+.3f')} | win {_fmt(f.get('win_rate_train'), '.0%')} "
        f"[{by_opp}] | eval {_fmt(f.get('eval_win_rate'), '.0%')}{_weakest_note(f)} | "
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
