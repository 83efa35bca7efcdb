"""The typed training configuration: YAML presets, ``extends:`` inheritance and ``--set`` overrides.

A training job is described by one YAML file (``configs/nh.yml`` and friends) whose sections mirror the
models below: `TrainConfig` holds `RayConfig`, `EnvConfig`, `OpponentsConfig`, the policy network's
`NetworkConfig`, `PPOConfig`, `RunnersConfig`, `EvaluationConfig`, `CheckpointConfig`, `StopConfig` and
`LoggingConfig`. Every field has a default and a one-line docstring (CleanRL's ``Args``), and every model
forbids unknown keys, because RLlib's own defaults differ from what works for NH fights and a silently
ignored typo trains the wrong thing for an hour.

How a file is resolved (`resolve_config_dict`), in this order:

1. The file is read. If it says ``extends: other.yml`` (a path relative to the file), ``other.yml`` is
   resolved first, recursively, and this file is deep-merged over it: mappings merge key by key, while
   lists and scalars replace the parent's value. A child cannot delete an inherited key, so it removes
   an opponent from the mix by giving it weight 0, and turns a limit off with ``null`` where that is valid.
2. Each ``--set key.path=value`` override is applied in order. The value is read as YAML
   (``ppo.lr=1e-4``, ``model.actor_hidden=[64,64]``, ``opponents.mix={baseline: 1}``) and *replaces*
   the value at that path; missing intermediate mappings are created.
3. ``name`` defaults to the stem of the file named on the command line (``smoke`` for ``smoke.yml``).

`load_config` then validates the result against `TrainConfig`. Every problem is a `ConfigError` whose
message is one line naming the file the offending key came from (``extends`` is tracked, and a bad
override says ``--set``), the key path, what was wrong and what was expected, with the closest valid key
for a typo::

    configs/smoke.yml: ppo.minibatch_sise: unknown key; expected one of clip_param, ... (did you mean
    'minibatch_size'?)

Numbers: YAML 1.1, which PyYAML implements, reads ``1e-4`` as a *string*; this loader also reads it as a
float (YAML 1.2), so exponent notation works in files and in ``--set``. An integral float such as
``1e6`` is accepted wherever a count is expected.

Example:
    >>> cfg = load_config("configs/nh.yml", ["ppo.lr=1e-4"])  # doctest: +SKIP
    >>> cfg.ppo.lr.to_rllib()
    (0.0001, None)
"""

from __future__ import annotations

import enum
import os
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, PlainValidator, ValidationError, field_validator, model_validator

from common.suggest import closest
from common.validation import Invalid, one_of
from envs.nh.loadouts import Build
from envs.nh.params import OPPONENT_BASELINE, FightOptions, FightParams
from envs.nh.rewards import RewardWeights, WeightOptions
from envs.opponents import LADDER, needs_opponent_action
from league.config import LeagueConfig
from osrs_rllib.config.errors import ConfigError, config_error
from osrs_rllib.config.files import SET_SOURCE, _reject_non_finite, _resolve, to_yaml
from osrs_rllib.config.machine import LearnerConfig
from osrs_rllib.config.options import InitConfig, MixtureConfig, NoveltyConfig, ObservationNoiseConfig
from osrs_rllib.config.ppo import PPOConfig
from osrs_rllib.config.recipe import PhaseSpec, ShipConfig, check_phases, phase_key
from osrs_rllib.config.types import (
    LOG_LEVELS,
    NonNegativeInt,
    PositiveInt,
    StepSchedule,
    _experiment_name,
    _frame_stack,
    _known_once,
    _log_level,
    _Section,
)
from policies.network_config import NetworkConfig

__all__ = [
    "EVAL_OPPONENTS",
    "LOG_LEVELS",
    "OPPONENT_KINDS",
    "SET_SOURCE",
    "CheckpointConfig",
    "ConfigError",
    "EnvConfig",
    "EvaluationConfig",
    "LoggingConfig",
    "OpponentsConfig",
    "PPOConfig",
    "RayConfig",
    "RunnersConfig",
    "StepSchedule",
    "StopConfig",
    "TrainConfig",
    "dump_config",
    "load_config",
    "resolve_config_dict",
]

SELF_PLAY = "self_play"
BASELINE = OPPONENT_BASELINE
EVAL_OPPONENTS: tuple[str, ...] = (BASELINE, *LADDER)
"""Opponents an evaluation can fight: the in-simulator baseline (spec §18) and every scripted ladder rung."""
TARGET = "target"
"""Mix kind of the frozen model files in `OpponentsConfig.targets` (the league's fixed ``target_<slug>`` players)."""
LEAGUE_KINDS: tuple[str, ...] = ("latest", "prioritized", "pfsp", "exploiters", "exploiters_pfsp", TARGET)
"""Mix kinds the league draws (`league/`): its frozen snapshots (the newest one, prioritized past-self as in
OpenAI Five, PFSP as in AlphaStar, the exploiters' snapshots uniformly or by PFSP) and the fixed model files of
``opponents.targets``."""
OPPONENT_KINDS: tuple[str, ...] = (SELF_PLAY, *EVAL_OPPONENTS, *LEAGUE_KINDS)
"""Valid keys of `OpponentsConfig.mix`. Extend this tuple (e.g. with league kinds) to admit new kinds."""
_RESERVED_PARAMS: dict[str, str] = {
    "opponent": "the trainer picks each episode's opponent from opponents.mix",
    "first_player_baseline": "a tools-only switch that would put a scripted bot in the agent's seat",
}
"""§13.1 reset options that a training config may not set, with the reason shown in the error."""


# ---------------------------------------------------------------------------------------------------------
# Sections
# ---------------------------------------------------------------------------------------------------------


class RayConfig(_Section):
    """Where Ray runs: an embedded local instance (the laptop default) or an existing cluster."""

    address: str | None = None
    """None starts an embedded local Ray; ``auto`` or ``HOST:PORT`` joins a running cluster."""
    num_cpus: PositiveInt | Literal["auto"] | None = None
    """CPUs the embedded Ray may use: ``auto`` the cores this process may run on (`osrs_rllib/config/machine.py`);
    None lets Ray count them itself (ignored on a cluster)."""
    include_dashboard: bool = True
    """Start Ray's dashboard with an embedded Ray (the live view of actors and resources)."""
    dashboard_host: str = "127.0.0.1"
    """Interface the dashboard binds to; loopback so a laptop run is not exposed to the network."""
    dashboard_port: int | None = Field(None, ge=1, le=65535)
    """Dashboard port. None: Ray's usual 8265, or the next free port (said on the terminal) when another Ray on
    the machine holds it; a port set here must be free."""
    start_timeout_s: float = Field(180.0, gt=0)
    """Seconds an embedded Ray may take to start before the run gives up (a line every 10 s says it is waiting).
    A quiet laptop needs 5-10 s; one busy with other work a minute or more (`serving/ray_start.py`)."""


class EnvConfig(_Section):
    """The NH environment: §13.1 reset parameters, §17 reward weights and §15.3 frame stacking."""

    params: FightOptions = Field(default_factory=FightOptions)
    """§13.1 reset options given to every episode, as set (`FightParams`' names and checks); empty keeps the
    simulator defaults, the presets write out the §13.3 core training values."""
    reward_weights: WeightOptions = Field(default_factory=WeightOptions)
    """§17 reward weights, as set (`RewardWeights` names; a number or ``[a, b, n]`` = linear a→b over n training
    iterations); empty keeps the §17.3 environment defaults, the presets write out §17.4."""
    frame_stack: Annotated[int | list[int], PlainValidator(_frame_stack)] = 1
    """Frames the policy sees: a count n (offsets 0..n-1) or a list of offsets; 1 as in §13.3."""
    engine: Literal["auto", "core", "python"] = "auto"
    """Simulator engine of the training envs: ``core`` the compiled core (`envs/nh/core`, bit-identical to the
    Python engine and ~40× faster; an error where it is not built), ``python`` the Python reference, ``auto``
    the core where it is built, else Python with one log line."""
    novelty: NoveltyConfig = NoveltyConfig()
    """A novelty reward for the learner (off by default; docs/training.md, "Novelty reward")."""
    observation_noise: ObservationNoiseConfig = ObservationNoiseConfig()
    """Noise on the learner's observation (off by default; docs/training.md, "Observation noise")."""

    @field_validator("params", mode="before")
    @classmethod
    def _no_reserved_params(cls, params: Any) -> Any:
        for key in params if isinstance(params, Mapping) else ():
            if key in _RESERVED_PARAMS:
                problem = f"cannot be set in a training config: {_RESERVED_PARAMS[key]}"
                raise Invalid(problem, "one of the other §13.1 reset options", field=key)
        return params

    def to_fight_params(self) -> FightParams:
        """`params` as the simulator's validated `FightParams` (defaults filled in)."""
        return self.params.model  # type: ignore[no-any-return]

    def to_reward_weights(self) -> RewardWeights:
        """`reward_weights` as a `RewardWeights` (schedules as tuples, defaults filled in)."""
        return self.reward_weights.model  # type: ignore[no-any-return]


class OpponentsConfig(_Section):
    """Who the learning agent fights during training: each opponent kind's share of the episodes."""

    mix: dict[str, float] = Field(default_factory=lambda: {BASELINE: 1.0})
    """Episode share per kind (``self_play``, ``baseline``, a ladder name, or a league kind: ``latest``,
    ``prioritized``, ``pfsp``), normalised to sum to 1; the spec's baseline alone is the simplest curriculum
    that still teaches NH basics."""
    scripted_in_env: bool = True
    """Run ladder rungs inside the environment (one agent per env step, the faster path) rather than as RLlib
    policies in seat 1 (`policies/scripted.py`); both play identically."""
    league_slots: PositiveInt = 4
    """Frozen league snapshots each env runner holds at once (weights are swapped in every iteration), so
    worker memory stays bounded however large the league grows; at least one per snapshot kind of the mix and one
    per league exploiter (checked when the config loads)."""
    targets: Annotated[list[str], _known_once(None, "model file", "a")] = Field(default_factory=list)
    """Frozen model files (``*.nhmodel``) the ``target`` kind draws from, uniformly; each plays seat 1 as
    deployed and is never trained (`policies/model_file_policy.py`). `osrs-rllib exploit` sets it."""
    targets_deterministic: bool = True
    """How the target files play: greedy (every head its most likely legal value, as `fight` and `serve` play by
    default), or, false, sampling their action distributions (`osrs-rllib exploit --model-sampling`)."""

    @model_validator(mode="after")
    def _check_targets(self) -> OpponentsConfig:
        if not self.scripted_in_env:
            for name, weight in self.mix.items():
                if weight > 0 and name in LADDER and needs_opponent_action(name):
                    raise Invalid(
                        f"{name!r} must see the learner's action of the tick, which only the environment can show it",
                        "scripted_in_env: true, or no share for this rung",
                        field="scripted_in_env",
                    )
        if self.mix.get(TARGET, 0) > 0 and not self.targets:
            raise Invalid(
                "the mix gives 'target' a share but opponents.targets is empty",
                "model files in opponents.targets (e.g. [experiments/nh/models/best.nhmodel])",
                field="targets",
            )
        return self

    @field_validator("mix")
    @classmethod
    def _check_mix(cls, mix: dict[str, float]) -> dict[str, float]:
        for name, weight in mix.items():
            if name not in OPPONENT_KINDS:
                suggestion = closest(name, OPPONENT_KINDS)
                raise Invalid("unknown opponent kind", one_of(OPPONENT_KINDS), field=name, suggestion=suggestion)
            if weight < 0:
                raise Invalid(f"got {weight!r}", "a share ≥ 0", field=name)
        if not any(w > 0 for w in mix.values()):
            raise Invalid(f"every share is zero ({mix})", "at least one opponent kind with a share > 0")
        return mix

    def normalized(self) -> dict[str, float]:
        """The kinds with a positive share, mapped to their probability (the shares sum to 1)."""
        total = sum(self.mix.values())
        return {name: w / total for name, w in self.mix.items() if w > 0}


class RunnersConfig(_Section):
    """How sampling is spread over processes (RLlib env runners) and vectorised envs."""

    num_env_runners: NonNegativeInt | Literal["auto"] = 1
    """Sampling processes; 0 samples in the driver. ``auto``: one per CPU on two or fewer, else one fewer than the
    CPUs (the driver keeps one); a cluster's CPUs when joining one (`osrs_rllib/config/machine.py`)."""
    num_envs_per_env_runner: PositiveInt = 16
    """Envs stepped together per runner, so the policy runs on batches of 16 instead of 1."""
    num_cpus_per_env_runner: float = Field(1.0, ge=0)
    """CPUs Ray reserves per runner; one, as the simulator is single-threaded Python."""
    sample_timeout_s: float = Field(120.0, gt=0)
    """Seconds a sample call may take before RLlib gives up on a runner; generous for slow laptops."""
    sampler: Literal["lockstep", "rllib"] = "lockstep"
    """``lockstep``: `osrs_rllib/training/sampling/lockstep.py`, all envs of a runner step together and each policy acts
    once per tick on one batch (sampling ~1.7× faster here); ``rllib``: RLlib's generic `EnvRunnerV2`."""


class EvaluationConfig(_Section):
    """Periodic evaluation fights, the source of win rates (training-batch win rates are biased)."""

    interval: NonNegativeInt = 5
    """Training iterations between evaluations; 0 turns evaluation off."""
    fights: PositiveInt = 200
    """Fights per build per opponent per evaluation, spread evenly over fight types when those are randomised;
    the headline averages the trained builds (50 per build over six builds: about ±3 points at 95 %)."""
    unseen_builds: Annotated[list[str], _known_once([b.value for b in Build], "build", "a")] = Field(
        default_factory=list
    )
    """Builds also evaluated, `fights` each, as a check of how the agent does on a build it never trained on
    (e.g. MAXED for the §13.3 core builds); reported apart, outside the headline."""
    opponents: Annotated[list[str], _known_once(EVAL_OPPONENTS, "opponent", "an")] = Field(
        default_factory=lambda: [BASELINE]
    )
    """Opponents to evaluate against: ``baseline`` or ladder names (no self-play: it has no fixed target)."""
    deterministic: bool = True
    """Evaluate the greedy policy (most likely value of every head): what a deployed bot plays."""
    stochastic: bool = False
    """Also evaluate the sampling policy (what training sees); off by default as it doubles the cost."""
    seed: NonNegativeInt = 1_000_000
    """Base seed of evaluation fights, far from training seeds so the two never share an episode."""

    @model_validator(mode="after")
    def _check_enabled(self) -> EvaluationConfig:
        if self.interval > 0 and not self.opponents:
            raise Invalid(
                "no opponents while evaluation is on", "at least one opponent (or interval 0)", field="opponents"
            )
        if self.interval > 0 and not (self.deterministic or self.stochastic):
            raise Invalid(
                "both deterministic and stochastic are false while evaluation is on",
                "at least one of them true (or interval 0)",
                field="deterministic",
                related=("interval", "stochastic"),
            )
        return self


class CheckpointConfig(_Section):
    """When checkpoints are written and which are kept."""

    interval: NonNegativeInt = 5
    """Training iterations between checkpoints; 0 writes only the final one."""
    keep_last: PositiveInt = 3
    """Most recent checkpoints kept on disk (older ones are deleted); 3 bounds a laptop's disk use."""
    keep_best: bool = True
    """Also keep the checkpoint with the best evaluation win rate (needs evaluation.interval > 0)."""
    best_by: str | None = None
    """The evaluation opponent whose win rate (first mode, mean of the trained builds) picks the best checkpoint
    and ``best.nhmodel``; null = the first of `evaluation.opponents`. Pick the hardest opponent that still
    separates models: a saturated one (every model near 100 %) makes "best" a coin flip between checkpoints."""
    milestone_env_steps: PositiveInt | None = None
    """Keep main's model at the first checkpoint past every multiple of this many env steps (``models/milestones/``,
    never deleted): the fixed points ``osrs-rllib exploit-curve`` measures exploitability at. null = none kept."""


class StopConfig(_Section):
    """When training stops: at whichever set limit comes first (at least one must be set)."""

    iterations: PositiveInt | None = None
    """Training iterations; null = no limit."""
    env_steps: PositiveInt | None = None
    """Sampled env steps; null = no limit."""
    minutes: float | None = Field(60.0, gt=0)
    """Wall-clock minutes; an hour is a useful first laptop run."""

    @model_validator(mode="after")
    def _check_some_limit(self) -> StopConfig:
        if self.iterations is None and self.env_steps is None and self.minutes is None:
            raise Invalid("no limit is set", "at least one of stop.iterations, stop.env_steps, stop.minutes")
        return self


class LoggingConfig(_Section):
    """What a run reports while it trains."""

    tensorboard: bool = True
    """Write TensorBoard event files (``charts/``, ``losses/``, ``eval/`` scalars) in the experiment dir."""
    live: bool = True
    """Show the live terminal view; turn off in CI and on clusters where nobody watches a terminal."""
    log_level: Annotated[str, AfterValidator(_log_level)] = "INFO"
    """Python logging level of the application (DEBUG, INFO, WARNING, ERROR)."""


class TrainConfig(_Section):
    """One training job, as resolved from a YAML file (see the module docstring); `load_config` builds it."""

    name: Annotated[str, AfterValidator(_experiment_name)] = "nh"
    """Experiment name (the directory under experiments_dir); the loader defaults it to the file's stem."""
    seed: NonNegativeInt = 0
    """Base seed of the run (env runners, envs and the network derive theirs from it)."""
    experiments_dir: str = "experiments"
    """Where experiment directories are created, relative to the current directory."""
    ray: RayConfig = RayConfig()
    """Ray: local or cluster."""
    env: EnvConfig = EnvConfig()
    """The environment: reset parameters, reward weights, frame stacking."""
    opponents: OpponentsConfig = OpponentsConfig()
    """The training opponents' mix."""
    model: NetworkConfig = NetworkConfig()
    """Policy and value network sizes (`policies.network_config.NetworkConfig`)."""
    league: LeagueConfig = LeagueConfig()
    """The league (`league.config.LeagueConfig` without its mix): snapshots, qualities, PFSP, exploiters,
    ratings. It runs when opponents.mix has a league kind or there are exploiters."""
    ppo: PPOConfig = PPOConfig()
    """PPO hyperparameters."""
    runners: RunnersConfig = RunnersConfig()
    """Sampling processes and envs."""
    evaluation: EvaluationConfig = EvaluationConfig()
    """Evaluation cadence and opponents."""
    checkpoint: CheckpointConfig = CheckpointConfig()
    """Checkpoint cadence and retention."""
    stop: StopConfig = StopConfig()
    """Stop criteria."""
    logging: LoggingConfig = LoggingConfig()
    """TensorBoard, terminal view, log level."""
    learner: LearnerConfig = LearnerConfig()
    """Where PPO's update runs: the GPU or the CPU (``auto``: the GPU when there is one)."""
    init: InitConfig = InitConfig()
    """A warm start from a model file (``train --init``); none by default."""
    mixture: MixtureConfig = MixtureConfig()
    """The per-fight mixture of main's late models written when the run ends (``models/mixture.nhmodel``)."""
    phases: list[PhaseSpec] = Field(default_factory=list)
    """A recipe's stages, trained in order by one ``osrs-rllib train`` (`osrs_rllib/config/recipe.py`); none: a
    single run."""
    ship: ShipConfig | None = None
    """The rule ``osrs-rllib ship`` picks the shipped model by (`osrs_rllib/config/recipe.py`); null: none stated."""

    @field_validator("league", mode="before")
    @classmethod
    def _league_mix_is_elsewhere(cls, value: Any) -> Any:
        if isinstance(value, Mapping) and "opponent_mix" in value:
            problem = "the league's mix is opponents.mix"
            raise Invalid(problem, "no opponent_mix here", field="opponent_mix")
        return value

    @model_validator(mode="after")
    def _check_across_sections(self) -> TrainConfig:
        best_by = self.checkpoint.best_by
        if best_by is not None and best_by not in self.evaluation.opponents:
            raise Invalid(
                f"best_by {best_by!r} is not an evaluation opponent",
                f"one of evaluation.opponents {self.evaluation.opponents}, or null (the first)",
                field="checkpoint.best_by",
                related=("evaluation.opponents",),
            )
        if self.checkpoint.keep_best and self.evaluation.interval == 0:
            raise Invalid(
                "keep_best needs evaluation win rates but evaluation is off (evaluation.interval 0)",
                "keep_best false, or evaluation.interval > 0",
                field="checkpoint.keep_best",
                related=("evaluation.interval",),
            )
        exploiter_kinds = [k for k in ("exploiters", "exploiters_pfsp") if self.opponents.mix.get(k, 0) > 0]
        if exploiter_kinds and self.league.main_exploiters + self.league.league_exploiters == 0:
            raise Invalid(
                f"the mix gives {exploiter_kinds[0]!r} a share but the league has no exploiters to snapshot",
                "league.main_exploiters or league.league_exploiters > 0, or no share for it",
                field=f"opponents.mix.{exploiter_kinds[0]}",
                related=("league.main_exploiters",),
            )
        self._check_league_slots()
        return self

    def _check_league_slots(self) -> None:
        """The league fills one opponent slot at least per (learner, snapshot kind) once each has a snapshot to
        offer (`league.callback.LeagueRunner.plan`): too few slots would stop the run there, hours in, so the
        config says so before it starts."""
        snapshot_kinds = ("latest", "prioritized", "pfsp", "exploiters", "exploiters_pfsp")
        kinds = [k for k in snapshot_kinds if self.opponents.mix.get(k, 0) > 0]
        needed = len(kinds) + self.league.league_exploiters  # each league exploiter draws its own PFSP snapshots
        if self.league_enabled and self.opponents.league_slots < needed:
            raise Invalid(
                f"got {self.opponents.league_slots}; the league needs {needed} (one per snapshot kind of main's mix: "
                f"{', '.join(kinds) or 'none'}; one per league exploiter: {self.league.league_exploiters})",
                f"opponents.league_slots ≥ {needed}",
                field="opponents.league_slots",
            )

    @property
    def league_enabled(self) -> bool:
        """Whether training runs the league (a league kind in the mix, or exploiters)."""
        mix = self.opponents.normalized()
        return any(k in mix for k in LEAGUE_KINDS) or self.league.main_exploiters + self.league.league_exploiters > 0

    def league_mix(self) -> dict[str, float]:
        """`opponents.mix` in the league's vocabulary (ladder rungs become ``scripted_<name>``)."""
        return {(f"scripted_{k}" if k in LADDER else k): v for k, v in self.opponents.normalized().items()}

    def to_dict(self) -> dict[str, Any]:
        """Plain YAML/JSON-ready values (schedules and the network in their YAML form); loads back equal."""
        return _plain(self.model_dump(mode="python"))


def _plain(value: Any) -> Any:
    """Tuples to lists and enums to their names, recursively, so that YAML's safe dumper can write the
    value (`env.params` may hold `Build` members when a config is built in code)."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, enum.Enum):
        return value.name
    return value


# ---------------------------------------------------------------------------------------------------------
# Loading (the file rules live in osrs_rllib/config/files.py, the error wording in osrs_rllib/config/errors.py)
# ---------------------------------------------------------------------------------------------------------


def resolve_config_dict(path: str | os.PathLike[str], overrides: Sequence[str] = ()) -> dict[str, Any]:
    """The config mapping after ``extends`` and overrides, before validation (``name`` filled in).

    Raises:
        ConfigError: A missing or unreadable file, invalid YAML, a top level that is not a mapping, an
            ``extends`` cycle or a malformed override.
    """
    return _resolve(path, overrides, list(TrainConfig.model_fields)).data


def load_config(path: str | os.PathLike[str], overrides: Sequence[str] = ()) -> TrainConfig:
    """Resolve `path` (``extends``, then `overrides` in order) and validate it as a `TrainConfig`.

    Args:
        path: The YAML file.
        overrides: ``key.path=value`` strings (``--set``), the value read as YAML.

    Returns:
        The validated, frozen config.

    Raises:
        ConfigError: Anything wrong, as one line naming the file the bad key came from, the key path,
            the problem and what was expected.
    """
    resolved = _resolve(path, overrides, list(TrainConfig.model_fields))
    _reject_non_finite(resolved.data, (), resolved)
    try:
        cfg = TrainConfig.model_validate(resolved.data)
    except ValidationError as exc:
        raise phase_key(config_error(exc, TrainConfig, resolved.blame), resolved.data) from None
    if cfg.phases or cfg.ship is not None:  # each phase is a whole config: validated as one, its file named
        check_phases(cfg, resolved.blame(("phases",) if cfg.phases else ("ship",)))
    return cfg


def dump_config(cfg: TrainConfig, header: str | None = None) -> str:
    """`cfg` as YAML, every value written out; `load_config` of the text gives an equal config.

    Args:
        cfg: The config.
        header: Optional comment lines put on top (each prefixed with ``# ``).
    """
    return to_yaml(cfg.to_dict(), header)
