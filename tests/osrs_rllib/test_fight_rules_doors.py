"""Every door that seats a model file plays it by its training rules: `fight`, `rate`, the analysis API,
`exploit`'s config, serving's model list and training's evaluation, with the rules printed and in the JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

from envs.nh.contract import CRITIC_SIZE, OBS_SIZE
from envs.nh.params import FightParams
from osrs_rllib.cli import app
from osrs_rllib.evaluation.fight import plan_matchup, run_fights
from policies.fight_rules import RULE_KEYS, RulesConflict
from policies.model_file import save_model_file
from policies.network import NHPolicyNetwork
from policies.network_config import NetworkConfig

CORE_RULES = {  # spec §13.3, the masks configs/nh.yml trains under (not the spec's defaults)
    "only_switch_prayer_when_about_to_attack": False,
    "only_switch_gear_when_attack_soon": False,
    "allow_smite": False,
    "allow_redemption": False,
    "allow_moving_if_can_attack": False,
    "death_match": True,
}
SPELLED_OUT = [arg for key, value in CORE_RULES.items() for arg in ("--set", f"{key}={str(value).lower()}")]


def _model(path: Path, params: dict[str, Any]) -> Path:
    torch.manual_seed(0)
    net = NHPolicyNetwork(OBS_SIZE, CRITIC_SIZE, NetworkConfig(actor_hidden=(16,), critic_hidden=(16,)))
    return save_model_file(net, path, metadata={"config": {"env": {"params": params}}})


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The same network trained (on paper) under the core rules and under the spec's defaults."""
    root = tmp_path_factory.mktemp("rules")
    return _model(root / "core.nhmodel", CORE_RULES), _model(root / "spec.nhmodel", {})


def _fight(*args: str) -> dict[str, Any]:
    result = CliRunner().invoke(app, ["fight", *args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _results(summary: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in summary.items() if k not in ("options", "rules")}


def _implicit_equals_explicit(model: str, *args: str) -> dict[str, Any]:
    implicit = _fight(model, "expert", "--build", "all", *args)
    explicit = _fight(model, "expert", "--build", "all", *args, *SPELLED_OUT)
    assert _results(implicit) == _results(explicit)
    assert implicit["rules"]["values"] == explicit["rules"]["values"] == CORE_RULES
    assert set(implicit["rules"]["origin"].values()) == {"model"} and implicit["rules"]["models"] == [model]
    assert set(explicit["rules"]["origin"].values()) == {"override"}
    assert implicit["rules"]["frame_stack"] == {model: [0]}
    return implicit


def test_fight_plays_a_model_by_its_training_rules_like_the_rules_spelled_out(models: tuple[Path, Path]) -> None:
    """On short fights: a model's rules need not be spelled out, and they change the fights."""
    core = str(models[0])
    implicit = _implicit_equals_explicit(core, "--n", "7", "--set", "max_episode_ticks=60")
    spec_masks = [arg for key in CORE_RULES for arg in ("--set", f"{key}={str(getattr(FightParams(), key)).lower()}")]
    defaults = _fight(core, "expert", "--build", "all", "--n", "7", "--set", "max_episode_ticks=60", *spec_masks)
    assert _results(defaults) != _results(implicit)


@pytest.mark.slow
def test_issue_27_bar_fight_model_expert_all_builds(models: tuple[Path, Path]) -> None:
    """The bar as written: `fight MODEL expert --build all` with no --set equals the rules spelled out."""
    _implicit_equals_explicit(str(models[0]), "--n", "14")


def test_fight_prints_the_rules_and_scripted_fights_keep_the_spec_defaults(models: tuple[Path, Path]) -> None:
    shown = CliRunner().invoke(app, ["fight", str(models[0]), "tribrid", "--n", "2", "--set", "max_episode_ticks=30"])
    assert shown.exit_code == 0, shown.output
    assert f"rules (training config of {models[0]}): only_switch_prayer_when_about_to_attack=false" in shown.stdout
    scripted = run_fights("tribrid", "baseline", 2, options={"max_episode_ticks": 30})
    assert scripted.rules is not None and set(scripted.rules.origin.values()) == {"spec default"}
    assert scripted.rules.values == {k: getattr(FightParams(), k) for k in RULE_KEYS}


def test_two_models_under_different_rules_need_a_choice(models: tuple[Path, Path]) -> None:
    core, spec = (str(m) for m in models)
    refused = CliRunner().invoke(app, ["fight", core, spec, "--n", "1"])
    assert refused.exit_code == 2
    assert "--set allow_smite=false" in refused.output  # names the rule they differ in, and how to choose it
    assert "death_match" not in refused.output  # both trained with it on: not a difference
    chosen = _fight(core, spec, "--n", "1", "--set", "max_episode_ticks=20", *SPELLED_OUT)
    assert chosen["rules"]["values"] == CORE_RULES and chosen["rules"]["models"] == [core, spec]
    with pytest.raises(RulesConflict):
        plan_matchup(core, spec)


def test_rate_uses_the_models_rules_and_reports_them(models: tuple[Path, Path], tmp_path: Path) -> None:
    from osrs_rllib.evaluation.rate import resolve_players, tournament_params

    core, spec = (str(m) for m in models)
    result = CliRunner().invoke(app, [
        "rate", core, "tribrid", "--no-ladder", "--fights", "2", "--set", "max_episode_ticks=30",
        "--out", str(tmp_path), "--json",
    ])  # fmt: skip
    assert result.exit_code == 0, result.output
    table = json.loads(result.stdout)
    assert {r["name"] for r in table["ratings"]} == {"core", "tribrid"}
    assert table["rules"]["values"] == CORE_RULES
    assert json.loads((tmp_path / "ratings.json").read_text())["rules"] == table["rules"]
    with pytest.raises(RulesConflict):
        tournament_params(resolve_players([core, spec], with_ladder=False))
    params, rules = tournament_params(resolve_players(["tribrid", "noop"], with_ladder=False))
    assert params == FightParams() and set(rules.origin.values()) == {"spec default"}


def test_analysis_play_uses_the_models_rules_like_fight(models: tuple[Path, Path]) -> None:
    from osrs_rllib import analysis
    from osrs_rllib.analysis import AnalysisError

    core, spec = models
    frame = analysis.play(core, "tribrid", fights=3, seed=4, max_episode_ticks=60)
    assert frame.attrs["rules"]["values"] == CORE_RULES
    summary = run_fights(str(core), "tribrid", 3, seed=4, options={"max_episode_ticks": 60})
    assert int(frame.won.sum()) == summary.wins and frame.ticks.mean() == pytest.approx(summary.mean_ticks)
    with pytest.raises(AnalysisError, match="allow_smite=False"):
        analysis.play(core, spec, fights=1)


def test_exploit_config_and_serving_carry_the_models_rules(models: tuple[Path, Path]) -> None:
    from osrs_rllib.exploit.measure import exploit_config
    from policies.model_file import load_model_file
    from serving.models import ServedModel

    core = models[0]
    cfg = exploit_config("configs/smoke.yml", core, None, "x", env_steps=10)
    assert {k: cfg.env.params[k] for k in RULE_KEYS} == CORE_RULES
    assert not exploit_config("configs/smoke.yml", core, None, "x", ["env.params.death_match=false"],
                              env_steps=10).env.params["death_match"]  # fmt: skip
    assert ServedModel("core", load_model_file(core), (0, 0, 0)).describe()["fightRules"] == CORE_RULES


def test_training_evaluation_states_its_rules() -> None:
    from osrs_rllib.evaluation.policy_fights import evaluate

    def first_legal(obs: np.ndarray, masks: np.ndarray, deterministic: bool) -> np.ndarray:
        from envs.opponents import act_rows, make_opponent

        return act_rows([make_opponent("random", 0)] * len(obs), obs, masks)

    (result,) = evaluate(first_legal, ["baseline"], 1, params={**CORE_RULES, "max_episode_ticks": 20})
    assert result.rules["values"] == CORE_RULES and result.to_dict()["rules"] == result.rules
    assert set(result.rules["origin"].values()) == {"training config"}
