"""A recipe's sections of the training config: ``phases:`` (training in stages) and ``ship:`` (which model ships).

Why apart from the job's sections (`osrs_rllib/config/schema.py`): these say how runs follow one another and how one of
their files becomes ``models/<name>.nhmodel``, not how one run trains. A config without them trains exactly as
before (`phases` empty, `ship` null).

**Phases.** An ordered list; each phase is a mapping with a ``name``, a budget (``stop``, required: it *replaces*
the config's ``stop``, so a phase never inherits a wall-clock limit it did not state), ``init_from`` (which file of
the previous phase the next starts from: ``latest`` or ``best``) and any section of the config to change for that
phase (``opponents``, ``ppo``, ``league``, ``evaluation``, ...). A phase's settings merge over the config as an
``extends:`` child merges over its parent: mappings key by key, anything else replaces (so a phase removes an
opponent from the mix by giving it weight 0). `phase_config` builds one phase's config and validates it like any
config: a bad key names the phase, the key and the file (``nh-main.yml: phases.expert.ppo.lrr: unknown key; ...``).

**Ship.** The rule `osrs_rllib/shipping/ship.py` applies: the candidates (the last checkpoints of the last phase), the
scripted rung that judges them on held-out seeds in each mode of play (with an optional floor a candidate must
clear), and an optional exploitability probe (``osrs-rllib exploit`` runs of a given budget and seeds) that picks
among the best of them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field, ValidationError, field_validator, model_validator

from common.validation import Invalid, render
from envs.opponents import LADDER
from osrs_rllib.config.errors import ConfigError
from osrs_rllib.config.types import NonNegativeInt, PositiveInt, _Section

PHASE_KEYS: tuple[str, ...] = ("name", "init_from")
"""A phase's own keys; every other key of a phase is a config section it changes."""
NOT_PER_PHASE: tuple[str, ...] = ("name", "experiments_dir", "phases", "ship")
"""Sections a phase may not change: the experiment's identity and the recipe itself."""
_PHASE_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
MODES: tuple[str, ...] = ("deterministic", "stochastic")
"""Modes of play: greedy (how ``fight`` and ``play`` seat a model) and sampling (``fight --model-sampling``)."""
JUDGE_SEED = 3_000_000
"""Seeds of the shipping rung's fights: held out from training (0...), its evaluation (1,000,000...) and the cards
(2,000,000...), so a candidate is not picked on the fights that describe it."""


class PhaseSpec(_Section):
    """One phase of a recipe: a name, a budget and the sections it changes (the module docstring)."""

    name: str
    """The phase's name (lower case, digits, '-' and '_'): its directory is ``phases/<k>-<name>/``."""
    init_from: Literal["latest", "best"] = "latest"
    """Which file of the previous phase this one starts from (``models/latest.nhmodel`` or ``best.nhmodel``); the
    first phase starts from the config's own ``init.model`` (none: from scratch)."""
    settings: dict[str, Any] = Field(default_factory=dict)
    """The sections this phase changes (``stop`` among them, required), as written inline in the phase."""

    @model_validator(mode="before")
    @classmethod
    def _inline_sections(cls, value: Any) -> Any:
        """A phase is written flat (``{name: expert, stop: ..., ppo: ...}``): everything but its own keys is a
        setting. ``settings:`` written out (as `dump_config` does) is read the same way."""
        if not isinstance(value, Mapping):
            return value
        own = {k: v for k, v in value.items() if k in (*PHASE_KEYS, "settings")}
        inline = {k: v for k, v in value.items() if k not in (*PHASE_KEYS, "settings")}
        settings = dict(own.get("settings") or {})
        return {**{k: v for k, v in own.items() if k != "settings"}, "settings": {**settings, **inline}}

    @field_validator("name")
    @classmethod
    def _check_name(cls, name: str) -> str:
        if not _PHASE_NAME.match(name):
            raise Invalid(f"got {name!r}", "lower-case letters, digits, '-' or '_' (it names a directory)")
        return name

    @field_validator("settings")
    @classmethod
    def _check_settings(cls, settings: dict[str, Any]) -> dict[str, Any]:
        for key in settings:
            if key in NOT_PER_PHASE:
                raise Invalid("cannot change per phase", "a section of the job (ppo, opponents, stop, ...)", field=key)
        if not isinstance(settings.get("stop"), Mapping) or not settings["stop"]:
            raise Invalid("a phase without a budget", "stop: {env_steps: N} (or minutes, iterations)", field="stop")
        return settings

    @property
    def stop(self) -> dict[str, Any]:
        """The phase's budget as a whole ``stop`` section: the limits it does not state are off."""
        return {"iterations": None, "env_steps": None, "minutes": None, **self.settings["stop"]}


class ShipFloorConfig(_Section):
    """The least a candidate must win against the rung to compete at all: a model that loses to the rung more
    often than this is not shipped however rarely an exploiter beats it, since the exploit probe only ranks the
    candidates that already fight well. Held in every mode of ``rung.modes`` (the model is seated in one by
    default and the other is a flag away)."""

    mean: float = Field(0.0, ge=0, le=1)
    """The win rate as the mean of the trained builds (each build's share of the fights is equal)."""
    every_build: float = Field(0.0, ge=0, le=1)
    """The win rate of each trained build alone: a mean can hide one build the rung beats."""


class ShipRungConfig(_Section):
    """The scripted rung that judges the candidates: what `osrs-rllib ship` plays each of them against."""

    opponent: str = "expert"
    """The rung (``baseline`` or a ladder name): the hardest one that still separates models."""
    fights: PositiveInt = 500
    """Fights per trained build and mode (the shipped-model bar's count: about ±2 points near 95 %)."""
    seed: NonNegativeInt = JUDGE_SEED
    """Base seed of the fights: held out from training, its evaluation and the cards (`JUDGE_SEED`)."""
    modes: list[Literal["deterministic", "stochastic"]] = Field(default_factory=lambda: list(MODES))
    """Modes each candidate plays in; its score is the mean of their win rates (mean of the trained builds)."""
    floor: ShipFloorConfig | None = None
    """The least a candidate must win in each mode to be a finalist or ship (`ShipFloorConfig`); null: none. When
    no candidate clears it, ``ship`` writes nothing and says what each missed."""

    @field_validator("opponent")
    @classmethod
    def _check_opponent(cls, opponent: str) -> str:
        valid = ("baseline", *LADDER)
        if opponent not in valid:
            raise Invalid(f"got {opponent!r}", f"one of {', '.join(valid)}")
        return opponent

    @field_validator("modes")
    @classmethod
    def _check_modes(cls, modes: list[str]) -> list[str]:
        if not modes or len(set(modes)) != len(modes):
            raise Invalid(f"got {modes!r}", "one or both of deterministic, stochastic, none repeated")
        return modes


class ShipExploitConfig(_Section):
    """The exploitability probe: fresh learners (`osrs-rllib exploit`) trained against a finalist alone."""

    finalists: PositiveInt = 1
    """The best candidates by the rung that are probed; the one an exploiter beats least ships (1: the probe only
    measures the pick, for its card)."""
    env_steps: PositiveInt = 4_000_000
    """Each exploit run's budget in exploiter env steps (4M: the figure of the cards and the bars)."""
    seeds: list[NonNegativeInt] = Field(default_factory=lambda: [0, 1])
    """One exploit run per seed and model mode: one run is not a measurement."""
    model_modes: list[Literal["deterministic", "stochastic"]] = Field(default_factory=lambda: list(MODES))
    """How the finalist plays the exploiter: greedy, and sampling (``exploit --model-sampling``)."""
    final_fights: PositiveInt = 600
    """Fights of each run's final evaluation (`osrs-rllib exploit --final-fights`)."""
    config: str = "configs/exploit.yml"
    """The exploiter's training config (relative to the working directory, as `exploit --config`)."""
    overrides: list[str] = Field(default_factory=list)
    """``key.path=value`` overrides of that config (``exploit --set``), e.g. a smaller learner in a test."""

    @field_validator("seeds", "model_modes")
    @classmethod
    def _not_empty(cls, values: list[Any]) -> list[Any]:
        if not values or len(set(values)) != len(values):
            raise Invalid(f"got {values!r}", "at least one, none repeated")
        return values


class ShipConfig(_Section):
    """The rule that picks the shipped model of a run (`osrs_rllib/shipping/ship.py`)."""

    candidates: PositiveInt = 3
    """The last checkpoints of the last phase (or of the run) that compete; at most ``checkpoint.keep_last``."""
    rung: ShipRungConfig = ShipRungConfig()
    """The scripted rung that scores them."""
    exploit: ShipExploitConfig | None = None
    """The exploitability probe of the finalists; null: none."""
    mixture: bool = False
    """The last phase's per-fight mixture competes too: its models chosen by its ``mixture:`` rule
    (`osrs_rllib.training.mixture`), written under ``ship/candidates/``, scored on the rung with a member drawn per
    fight, and probed whatever the checkpoints score if it clears the rung's floor (an exploiter facing several late
    models is what the mixture is for, so its rung score alone would not say whether it should ship)."""
    average: bool = False
    """The running average of main's parameters (``ppo.average``) at the last phase's newest checkpoint competes too,
    probed whatever the checkpoints score if it clears the rung's floor: it is there to be harder to exploit than
    the last iterate, which its rung score alone would not show."""


def phase_config(base: Any, index: int, source: str, *, experiments_dir: str, init_model: str | None) -> Any:
    """Phase `index` of the `TrainConfig` `base` as a config of its own: `base` with the phase's settings merged
    over it (its ``stop`` replacing the config's), named ``<k>-<phase>``, in `experiments_dir`, starting from
    `init_model` (None keeps `base`'s ``init.model`` for the first phase, or starts fresh).

    Raises:
        ConfigError: The merged config is invalid; the key is ``phases.<phase>.<key>`` and the file is `source`.
    """
    schema = type(base)  # `TrainConfig`, taken from the value: the schema imports this module
    phase: PhaseSpec = base.phases[index]
    data = base.to_dict()
    data.pop("phases"), data.pop("ship")
    _merge(data, {k: v for k, v in phase.settings.items() if k != "stop"})
    data["stop"] = phase.stop
    data["name"] = f"{index + 1}-{phase.name}"
    data["experiments_dir"] = experiments_dir
    if init_model is not None:
        data["init"] = {**data["init"], "model": init_model}
    try:
        return schema.model_validate(data)
    except ValidationError as exc:
        loc, message, _ = render(exc.errors(include_url=False)[0], schema)
        raise ConfigError(source, ".".join(("phases", phase.name, *loc)), message) from None


def check_phases(cfg: Any, source: str) -> None:
    """Every phase of `cfg` builds a valid config, the names are unique, and the ship rule fits the last phase.

    Raises:
        ConfigError: The first problem, naming the phase, the key and `source` (the file that wrote ``phases``).
    """
    seen: set[str] = set()
    for k, phase in enumerate(cfg.phases):
        if phase.name in seen:
            raise ConfigError(source, f"phases.{phase.name}", "the name is used twice; expected one name per phase")
        seen.add(phase.name)
        phase_config(cfg, k, source, experiments_dir=cfg.experiments_dir, init_model=None)
    if cfg.ship is not None:
        last = cfg
        if cfg.phases:
            last = phase_config(cfg, len(cfg.phases) - 1, source, experiments_dir=".", init_model=None)
        where = f"the last phase ({cfg.phases[-1].name})" if cfg.phases else "the run"
        if cfg.ship.candidates > last.checkpoint.keep_last:
            problem = f"got {cfg.ship.candidates}, but {where} keeps {last.checkpoint.keep_last} checkpoints"
            raise ConfigError(source, "ship.candidates", f"{problem}; expected at most checkpoint.keep_last")
        if cfg.ship.mixture and last.mixture.members < 2:
            problem = f"true, but {where} writes no mixture (mixture.members: {last.mixture.members})"
            raise ConfigError(source, "ship.mixture", f"{problem}; expected a mixture: rule of 2 or more members")
        if cfg.ship.average and not last.ppo.average.enabled:
            problem = f"true, but {where} keeps no average of main's parameters (ppo.average.decay: 0)"
            raise ConfigError(source, "ship.average", f"{problem}; expected ppo.average.decay > 0")


def phase_key(error: ConfigError, data: Mapping[str, Any]) -> ConfigError:
    """`error` with a phase's key as the user wrote it: ``phases.<name>.stop`` rather than the schema's
    ``phases.0.settings.stop`` (a phase's sections are written inline, and its name is how the user knows it)."""
    parts = (error.key or "").split(".")
    if len(parts) < 2 or parts[0] != "phases" or not parts[1].isdigit():
        return error
    phases = data.get("phases")
    k = int(parts[1])
    phase = phases[k] if isinstance(phases, list) and k < len(phases) else None
    name = phase.get("name") if isinstance(phase, Mapping) else None
    rest = parts[3:] if parts[2:3] == ["settings"] else parts[2:]
    label = name if isinstance(name, str) and name and _PHASE_NAME.match(name) else str(k + 1)
    return ConfigError(error.file, ".".join(("phases", label, *rest)), error.message)


def phase_lines(cfg: Any) -> list[str]:
    """One line per phase (its number, name, budget and start), for the header of ``config show``."""
    lines = []
    for k, phase in enumerate(cfg.phases):
        budget = ", ".join(f"{key} {value:,}" for key, value in phase.stop.items() if value is not None)
        start = f"phase {k}'s {phase.init_from}.nhmodel" if k else (cfg.init.model or "scratch")
        changed = ", ".join(sorted(k for k in phase.settings if k != "stop")) or "nothing else"
        lines.append(f"phase {k + 1} {phase.name}: {budget}; from {start}; changes {changed}")
    return lines


def _merge(base: dict[str, Any], over: Mapping[str, Any]) -> None:
    """Deep-merge `over` into `base` in place as ``extends`` does: mappings merge, anything else replaces."""
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(base.get(key), Mapping):
            base[key] = dict(base[key])
            _merge(base[key], value)
        else:
            base[key] = value
