"""The rules a model plays by: the one place that says which reset options are rules, reads them from a model
file, and settles them for a fight.

A model learns under its training config's mask options (spec §13.1, §14.3): with
``only_switch_prayer_when_about_to_attack: false`` it switches prayers whenever it likes, and the same file
judged under the spec's default masks plays a game it never saw (the 60-minute ``nh.yml`` model wins 85.8 %
against the expert under its own rules and 70.3 % under the defaults). So every door that seats a model file
(`osrs-rllib fight`, ``rate``, ``exploit``, ``outcome``, replays, the analysis API, serving's fight client) asks
this module for the rules instead of starting from the defaults, and training's evaluation reports the rules of
its config the same way.

Which reset option (`envs.nh.params.FightParams`, spec §13.1) is what:

================  ==========================================================  ===================================
kind              keys                                                        who decides
================  ==========================================================  ===================================
rules             ``only_switch_prayer_when_about_to_attack``,                the model file's training config;
                  ``only_switch_gear_when_attack_soon``, ``allow_smite``,     the spec's defaults when no side is
                  ``allow_redemption``, ``allow_moving_if_can_attack``        a model; a command's override
                  (the §14.3 masks), ``death_match`` (how a fight ends,       (``--set``) wins. One set per fight:
                  §16.3)                                                      both seats play by it.
frames            ``frame_stack`` (§15.3, a model file's input)               each model file, always; no command
                                                                              can change it
settings          ``account_build``, ``randomize_build``,                     the command: ``--build``, ``--set``,
                  ``random_build_options``, ``random_build_weights``,         its defaults (``rate`` and
                  ``randomize_gear``, ``randomize_fight_type``,               ``outcome`` default to the model's
                  ``fight_type``, ``training``, ``max_episode_ticks``,        training settings); seeds are the
                  ``agent``, ``target``, ``episode_id``                       command's arguments
seating           ``opponent``, ``first_player_baseline``,                    who sits where (the sides given)
                  ``include_opponent_observation``, ``extra``
================  ==========================================================  ===================================

Why ``death_match`` is a rule and ``max_episode_ticks`` a setting: a model trained without death match has learnt
that running out of food ends the fight, which changes what it does with its food; a tick limit only cuts off
fights that drag on. Two model files whose rules differ cannot share a fight (the masks are one set for both
seats), so `resolve_fight_rules` refuses to choose for the user and names the keys and the override that
settles them.

`fight_rules_of` reads one model file (or a training config); `resolve_fight_rules` settles a fight's rules from
the model sides and the command's overrides. Both need the simulator's parameter table only, so serving may use
them too (it may not import the application).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from envs.nh.contract import frame_offsets
from envs.nh.params import FightParams, ParamError, option_name

RULE_KEYS: tuple[str, ...] = (
    "only_switch_prayer_when_about_to_attack",
    "only_switch_gear_when_attack_soon",
    "allow_smite",
    "allow_redemption",
    "allow_moving_if_can_attack",
    "death_match",
)
"""The reset options that are the rules a model plays by (module table): they follow the model file."""
SETTING_KEYS: tuple[str, ...] = (
    "account_build",
    "randomize_build",
    "random_build_options",
    "random_build_weights",
    "randomize_gear",
    "randomize_fight_type",
    "fight_type",
    "training",
    "max_episode_ticks",
    "agent",
    "target",
    "episode_id",
)
"""The reset options a command chooses for each fight (builds, fight type, randomisation, spawns, length)."""
SEATING_KEYS: tuple[str, ...] = ("opponent", "first_player_baseline", "include_opponent_observation", "extra")
"""What the seating of the sides decides; never taken from a model file."""

DEFAULT = "spec default"
"""`FightRules.origin` of a rule no model and no override set: the §13.1 default."""
MODEL = "model"
"""`FightRules.origin` of a rule read from the model sides' training config."""
OVERRIDE = "override"
"""`FightRules.origin` of a rule the command's overrides set."""


class RulesConflict(ValueError):
    """Two model sides were trained under different rules and the command did not choose; the message names
    the keys, each side's value, and the override that settles them."""


@dataclass(frozen=True)
class ModelRules:
    """What one model file (or training config) records about the game it was trained in.

    Attributes:
        name: The side's label in messages and summaries.
        rules: Every `RULE_KEYS` value it trained under (defaults filled in as training filled them), or None
            when the file records no training config (exported without one): its rules are then unknown.
        frame_stack: The frame offsets its network reads (§15.3).
        training_options: Every reset option of its training config except the seating ones, as written
            (the fights it trained in: what ``rate`` and ``outcome`` play by default).
    """

    name: str
    rules: Mapping[str, Any] | None
    frame_stack: tuple[int, ...] = (0,)
    training_options: Mapping[str, Any] = field(default_factory=dict)


def fight_rules_of(source: Any, name: str | None = None) -> ModelRules:
    """The rules recorded in a model file or a training config: the one reader of them (module docstring).

    Args:
        source: A model file path (``*.nhmodel``; only its metadata is read), a loaded
            `policies.model_file.ModelFile`, a model file's metadata dict (`read_model_meta`), or a training
            config as a dict (``{"env": {"params": ..., "frame_stack": ...}, ...}``, e.g. an experiment's
            ``config.yml``).
        name: The label; defaults to the path as given, or ``training config``.

    Returns:
        The `ModelRules`.

    Raises:
        ModelFileError: A model file that cannot be read.
        ValueError: Recorded training options the simulator rejects (the message names the source).
    """
    from policies.model_file import ModelFile, ModelFileError, read_model_meta

    if isinstance(source, str | os.PathLike):
        label, meta = name or str(source), read_model_meta(source)
    elif isinstance(source, ModelFile):
        label, meta = name or str(source.path), source.meta
    elif isinstance(source, Mapping) and "metadata" in source and "frame_stack" in source:
        label, meta = name or "model file", source
    elif isinstance(source, Mapping):
        return _from_config(source, name or "training config", None)
    else:
        raise TypeError(f"cannot read fight rules from {type(source).__name__}: give a model file or a config dict")
    try:
        frames = frame_offsets(meta.get("frame_stack") or [0])
    except (TypeError, ValueError) as exc:
        raise ModelFileError(f"model file {label} records an invalid frame stack: {exc}") from None
    return _from_config((meta.get("metadata") or {}).get("config"), label, frames)


def _from_config(config: Any, label: str, frames: tuple[int, ...] | None) -> ModelRules:
    env = config.get("env") if isinstance(config, Mapping) else None
    if frames is None:
        frames = frame_offsets((env or {}).get("frame_stack") or 1) if isinstance(env, Mapping) else (0,)
    if not isinstance(env, Mapping):
        return ModelRules(label, None, frames)
    recorded = env.get("params") or {}
    try:
        params = FightParams.from_options(recorded)
        options = {k: v for k, v in recorded.items() if option_name(k) not in SEATING_KEYS}
    except ParamError as exc:
        raise ValueError(f"{label}: its training config's env.params are invalid here ({exc})") from None
    return ModelRules(label, {k: getattr(params, k) for k in RULE_KEYS}, frames, options)


@dataclass(frozen=True)
class FightRules:
    """The rules a set of fights is played by, and where each one came from.

    Attributes:
        values: Every `RULE_KEYS` value, as reset options (snake_case).
        origin: Per key: `MODEL` (the model sides' training config), `OVERRIDE` (the command set it) or
            `DEFAULT` (the spec's §13.1 default), or another label for rules read elsewhere (`from_params`).
        models: The model sides whose recorded rules apply.
        unrecorded: Model sides whose files record no training config (their rules are unknown).
        frame_stack: Every model side's frame offsets, by name.
    """

    values: Mapping[str, Any]
    origin: Mapping[str, str]
    models: tuple[str, ...] = ()
    unrecorded: tuple[str, ...] = ()
    frame_stack: Mapping[str, tuple[int, ...]] = field(default_factory=dict)

    @classmethod
    def from_params(
        cls, params: FightParams, origin: str, frame_stack: Mapping[str, Sequence[int]] | None = None
    ) -> FightRules:
        """The rules of fights already parametrised (training's evaluation, a replay), labelled with `origin`."""
        return cls(
            values={k: getattr(params, k) for k in RULE_KEYS},
            origin=dict.fromkeys(RULE_KEYS, origin),
            frame_stack={k: tuple(v) for k, v in (frame_stack or {}).items()},
        )

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> FightRules:
        """The inverse of `to_dict` (a report read back from JSON)."""
        return cls(
            values=dict(data["values"]),
            origin=dict(data["origin"]),
            models=tuple(data.get("models") or ()),
            unrecorded=tuple(data.get("unrecorded") or ()),
            frame_stack={k: tuple(v) for k, v in (data.get("frame_stack") or {}).items()},
        )

    def options(self) -> dict[str, Any]:
        """The rules as reset options, to put under the command's own options (which may not change them)."""
        return dict(self.values)

    def apply(self, params: FightParams) -> FightParams:
        """`params` with these rules."""
        return dataclasses.replace(params, **self.values)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly dict (the ``rules`` object of the commands' ``--json``)."""
        return {
            "values": dict(self.values),
            "origin": dict(self.origin),
            "models": list(self.models),
            "unrecorded": list(self.unrecorded),
            "frame_stack": {k: list(v) for k, v in self.frame_stack.items()},
        }

    def describe(self) -> str:
        """One line for a summary: where the rules came from, every value (an override marked), the frames.

        Example: ``rules (training config of best.nhmodel): only_switch_prayer_when_about_to_attack=false, ...,
        allow_smite=true (override), death_match=true; frames: best.nhmodel [0]``.
        """
        custom = [o for o in self.origin.values() if o not in (MODEL, OVERRIDE, DEFAULT)]
        if self.models:
            main, main_origin = f"training config of {', '.join(self.models)}", MODEL
        elif custom:
            main = main_origin = custom[0]
        else:
            main, main_origin = "spec defaults, §13.1", DEFAULT
        items = []
        for key in RULE_KEYS:
            text = f"{key}={_yaml(self.values[key])}"
            if self.origin[key] != main_origin:
                text += f" ({self.origin[key]})"
            items.append(text)
        line = f"rules ({main}): {', '.join(items)}"
        if self.unrecorded:
            line += f"; {', '.join(self.unrecorded)} record(s) no training rules"
        if self.frame_stack:
            line += "; frames: " + ", ".join(f"{k} {list(v)}" for k, v in self.frame_stack.items())
        return line


def _yaml(value: Any) -> str:
    """A value as ``--set`` takes it (``false``, not ``False``)."""
    return str(value).lower() if isinstance(value, bool) else str(value)


def resolve_fight_rules(
    models: Sequence[ModelRules],
    overrides: Mapping[str, Any] | None = None,
    *,
    how_to_set: str = "--set {key}={value}",
) -> FightRules:
    """The rules of a fight between `models` (the model sides; scripted sides record none) and anyone else.

    Each rule is the command's override when it gives one, else the value every model side with a recorded
    training config agrees on, else the spec's default (no model side, or none recording its rules).

    Args:
        models: `fight_rules_of` of every model side (the same file twice is one side).
        overrides: The command's reset options (any spelling, e.g. ``allowSmite``); only `RULE_KEYS` matter here.
        how_to_set: How the command overrides one rule, for the conflict message (``{key}``, and ``{value}`` as
            YAML or ``{python}`` as a Python literal).

    Returns:
        The `FightRules`.

    Raises:
        RulesConflict: Model sides trained under different rules that the overrides do not settle.
        ParamError: An unknown override or an invalid value (spec §13.1).
    """
    default = FightParams()
    given: dict[str, Any] = {}
    for key, value in (overrides or {}).items():
        name = option_name(key)
        if name in RULE_KEYS:
            given[name] = getattr(FightParams.from_options({name: value}), name)
    unique: dict[str, ModelRules] = {}
    for m in models:
        unique.setdefault(m.name, m)
    recorded = [(m.name, m.rules) for m in unique.values() if m.rules is not None]
    values: dict[str, Any] = {}
    origin: dict[str, str] = {}
    differ: list[str] = []
    for key in RULE_KEYS:
        seen = {rules[key] for _, rules in recorded}
        if key in given:
            values[key], origin[key] = given[key], OVERRIDE
        elif len(seen) > 1:
            differ.append(key)
        elif seen:
            values[key], origin[key] = seen.pop(), MODEL
        else:
            values[key], origin[key] = getattr(default, key), DEFAULT
    if differ:
        first, first_rules = recorded[0]
        detail = "; ".join(
            f"{key} ({', '.join(f'{name}: {_yaml(rules[key])}' for name, rules in recorded)})" for key in differ
        )
        choose = " ".join(
            how_to_set.format(key=key, value=_yaml(first_rules[key]), python=repr(first_rules[key])) for key in differ
        )
        raise RulesConflict(
            f"{' and '.join(name for name, _ in recorded)} were trained under different fight rules: {detail}; "
            f"both seats play by one set of rules, so choose each differing one, e.g. {choose} (the rules of {first})"
        )
    return FightRules(
        values=values,
        origin=origin,
        models=tuple(name for name, _ in recorded),
        unrecorded=tuple(m.name for m in unique.values() if m.rules is None),
        frame_stack={m.name: m.frame_stack for m in unique.values()},
    )


def rule_overrides(source: str | os.PathLike[str], prefix: str = "env.params.") -> list[str]:
    """The model file's recorded rules as config overrides (``env.params.allow_smite=false``), for a command
    that builds a training config around a model (``exploit``); empty when the file records none.

    Raises:
        ModelFileError: The file cannot be read.
    """
    rules = fight_rules_of(Path(source)).rules
    return [f"{prefix}{key}={_yaml(value)}" for key, value in (rules or {}).items()]
