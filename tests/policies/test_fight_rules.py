"""`policies.fight_rules`: which reset options are rules, reading them from model files, settling a fight's rules."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import torch

from envs.nh.contract import CRITIC_SIZE, OBS_SIZE
from envs.nh.params import FightParams, ParamError
from policies.fight_rules import (
    DEFAULT,
    MODEL,
    OVERRIDE,
    RULE_KEYS,
    SEATING_KEYS,
    SETTING_KEYS,
    FightRules,
    RulesConflict,
    fight_rules_of,
    resolve_fight_rules,
    rule_overrides,
)
from policies.model_file import ModelFileError, load_model_file, read_model_meta, save_model_file
from policies.network import NHPolicyNetwork
from policies.network_config import NetworkConfig

CORE_RULES = {  # spec §13.3, the masks configs/nh.yml trains under
    "only_switch_prayer_when_about_to_attack": False,
    "only_switch_gear_when_attack_soon": False,
    "allow_smite": False,
    "allow_redemption": False,
}


def tiny(path: Path, config: dict | None, frame_stack: tuple[int, ...] = (0,)) -> Path:
    torch.manual_seed(0)
    net = NHPolicyNetwork(OBS_SIZE * len(frame_stack), CRITIC_SIZE * len(frame_stack),
                          NetworkConfig(actor_hidden=(8,), critic_hidden=(8,)))  # fmt: skip
    return save_model_file(net, path, frame_stack=frame_stack, metadata={} if config is None else {"config": config})


def test_every_reset_option_is_exactly_one_kind() -> None:
    """A new FightParams field must be classified here before any door can treat it right."""
    kinds = [set(RULE_KEYS), set(SETTING_KEYS), set(SEATING_KEYS)]
    assert set.union(*kinds) == {f.name for f in dataclasses.fields(FightParams)}
    assert sum(len(k) for k in kinds) == len(dataclasses.fields(FightParams))


def test_rules_are_read_from_every_form_of_a_model_file(tmp_path: Path) -> None:
    config = {"env": {"params": {"allowSmite": False, "randomize_build": True, "include_opponent_observation": True},
                      "frame_stack": 2}}  # fmt: skip
    path = tiny(tmp_path / "m.nhmodel", config, frame_stack=(0, 1))
    forms = [str(path), path, load_model_file(path), read_model_meta(path)]
    read = [fight_rules_of(f, name="m") for f in forms]
    assert all(r == read[0] for r in read)
    rules = read[0]
    assert rules.rules == {**{k: getattr(FightParams(), k) for k in RULE_KEYS}, "allow_smite": False}
    assert rules.frame_stack == (0, 1)
    assert rules.training_options == {"allowSmite": False, "randomize_build": True}  # seating left out
    assert fight_rules_of(config).rules == rules.rules  # a training config reads the same
    assert fight_rules_of(config).frame_stack == (0, 1)


def test_a_file_without_a_training_config_has_unknown_rules(tmp_path: Path) -> None:
    rules = fight_rules_of(tiny(tmp_path / "bare.nhmodel", None))
    assert rules.rules is None and rules.training_options == {}
    (tmp_path / "junk.nhmodel").write_bytes(b"junk")
    with pytest.raises(ModelFileError, match="cannot load model file"):
        fight_rules_of(tmp_path / "junk.nhmodel")
    with pytest.raises(ValueError, match=r"env\.params are invalid"):
        fight_rules_of({"env": {"params": {"allow_smite": "maybe"}}})


def test_resolution_prefers_overrides_then_models_then_the_spec() -> None:
    core = fight_rules_of({"env": {"params": CORE_RULES}}, name="core")
    spec = resolve_fight_rules([])
    assert spec.values == {k: getattr(FightParams(), k) for k in RULE_KEYS}
    assert set(spec.origin.values()) == {DEFAULT}
    assert "spec defaults" in spec.describe()
    played = resolve_fight_rules([core, core], {"allowSmite": True, "max_episode_ticks": 50})  # same file twice
    assert played.values == {**core.rules, "allow_smite": True}
    assert played.origin["allow_smite"] == OVERRIDE and played.origin["allow_redemption"] == MODEL
    assert played.models == ("core",)
    line = played.describe()
    assert line.startswith("rules (training config of core): ")
    assert "allow_smite=true (override)" in line and "allow_redemption=false," in line
    assert FightRules.from_dict(played.to_dict()) == played
    assert played.apply(FightParams()).allow_smite and not played.apply(FightParams()).allow_redemption
    with pytest.raises(ParamError, match="expected true or false"):
        resolve_fight_rules([core], {"allow_smite": "yes"})


def test_models_trained_under_different_rules_are_not_paired_silently() -> None:
    core = fight_rules_of({"env": {"params": CORE_RULES}}, name="core.nhmodel")
    spec = fight_rules_of({"env": {"params": {}}}, name="spec.nhmodel")
    with pytest.raises(RulesConflict) as err:
        resolve_fight_rules([core, spec])
    message = str(err.value)
    assert "\n" not in message
    for key in CORE_RULES:
        assert f"{key} (core.nhmodel: false, spec.nhmodel: true)" in message
        assert f"--set {key}=false" in message
    assert "allow_moving_if_can_attack" not in message and "death_match" not in message  # they agree
    settled = resolve_fight_rules([core, spec], dict.fromkeys(CORE_RULES, True))
    assert settled.values == {k: getattr(FightParams(), k) for k in RULE_KEYS}
    # A file that records nothing cannot disagree: the other side's rules apply, and the line says so.
    bare = dataclasses.replace(spec, name="bare.nhmodel", rules=None)
    mixed = resolve_fight_rules([core, bare])
    assert mixed.values == core.rules and mixed.unrecorded == ("bare.nhmodel",)
    assert "bare.nhmodel record(s) no training rules" in mixed.describe()


def test_rule_overrides_put_a_models_rules_into_a_training_config(tmp_path: Path) -> None:
    path = tiny(tmp_path / "core.nhmodel", {"env": {"params": CORE_RULES}})
    assert rule_overrides(path) == [
        "env.params.only_switch_prayer_when_about_to_attack=false",
        "env.params.only_switch_gear_when_attack_soon=false",
        "env.params.allow_smite=false",
        "env.params.allow_redemption=false",
        "env.params.allow_moving_if_can_attack=false",
        "env.params.death_match=true",
    ]
    assert rule_overrides(tiny(tmp_path / "bare.nhmodel", None)) == []
