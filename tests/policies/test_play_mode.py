"""A model file's default mode of play (metadata ``play_mode``) seats it in `fight`, `play` and `serve`, with the
other mode a flag (or a request field) away; a file without the key plays as before the key existed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

from envs.nh.contract import CRITIC_SIZE, NUM_HEADS, NUM_LOGITS, OBS_SIZE
from osrs_rllib.cli import app
from policies.model_file import load_model_file, save_model_file
from policies.network import NHPolicyNetwork
from policies.network_config import NetworkConfig
from policies.play_mode import play_mode_of, samples_by_default


def _model(path: Path, **metadata: Any) -> Path:
    torch.manual_seed(0)
    net = NHPolicyNetwork(OBS_SIZE, CRITIC_SIZE, NetworkConfig(actor_hidden=(16,), critic_hidden=(16,)))
    return save_model_file(net, path, metadata=metadata)


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The same network three times: stating sampling, stating greedy, stating nothing."""
    root = tmp_path_factory.mktemp("play-mode")
    return {
        "sampling": _model(root / "sampling.nhmodel", play_mode="sampling"),
        "greedy": _model(root / "greedy.nhmodel", play_mode="greedy"),
        "unstated": _model(root / "unstated.nhmodel"),
    }


def test_the_metadata_key() -> None:
    assert play_mode_of({"play_mode": "sampling"}) == "sampling" and play_mode_of({}) is None
    assert samples_by_default({"play_mode": "sampling"}) and not samples_by_default({"play_mode": "greedy"})
    assert not samples_by_default({}) and samples_by_default({}, unstated=True)
    with pytest.raises(ValueError, match="play_mode"):
        play_mode_of({"play_mode": "stochastic"})


# ---- fight ------------------------------------------------------------------------------------------------


def _fight(*args: str) -> dict[str, Any]:
    result = CliRunner().invoke(app, ["fight", *args, "--n", "4", "--set", "max_episode_ticks=40", "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _results(summary: dict[str, Any]) -> dict[str, Any]:
    """What the fights gave (not who was named, nor how: the side names and the mode differ between runs)."""
    return {k: v for k, v in summary.items() if k not in ("a", "b", "rules", "model_sampling")}


def test_fight_seats_a_model_in_its_default_mode(models: dict[str, Path]) -> None:
    sampling, greedy, unstated = (str(models[k]) for k in ("sampling", "greedy", "unstated"))
    by_default = _fight(sampling, "baseline")
    assert by_default["model_sampling"] is True
    assert _results(by_default) == _results(_fight(sampling, "baseline", "--model-sampling"))
    forced_greedy = _fight(sampling, "baseline", "--model-greedy")
    assert forced_greedy["model_sampling"] is False and _results(forced_greedy) != _results(by_default)
    assert _fight(greedy, "baseline")["model_sampling"] is False
    assert _fight(unstated, "baseline")["model_sampling"] is False  # as before the key existed
    assert _fight(unstated, "baseline", "--model-sampling")["model_sampling"] is True
    assert _results(forced_greedy) == _results(_fight(unstated, "baseline"))  # same network, same fights


def test_fight_between_models_of_different_modes_plays_each_its_own(models: dict[str, Path]) -> None:
    from osrs_rllib.commands.fight import default_sampling

    sampling, greedy, unstated = (str(models[k]) for k in ("sampling", "greedy", "unstated"))
    assert default_sampling(sampling, greedy) is None
    assert default_sampling(greedy, unstated) is False and default_sampling("baseline", "expert") is False
    mixed = _fight(sampling, greedy)
    assert mixed["model_sampling"] is None
    from osrs_rllib.evaluation.fight import resolve_side

    seated = [resolve_side(p, None)(0) for p in (sampling, greedy, unstated)]  # type: ignore[misc]
    assert [side.deterministic for side in seated] == [False, True, True]


# ---- play -------------------------------------------------------------------------------------------------


def test_play_seats_a_model_in_its_default_mode_unless_told(models: dict[str, Path]) -> None:
    from osrs_rllib.play.opponents import OpponentHost, resolve_opponents

    found = {o.name: o for o in resolve_opponents([str(p) for p in models.values()])}
    assert {name: o.sampling for name, o in found.items()} == {"sampling": True, "greedy": False, "unstated": False}

    def seated(name: str, model_sampling: bool | None = None) -> bool:
        host = OpponentHost(found[name], model_sampling)
        host.load()
        return host._side.deterministic  # type: ignore[union-attr]

    assert [seated(n) for n in ("sampling", "greedy", "unstated")] == [False, True, True]
    assert [seated(n, True) for n in ("sampling", "greedy", "unstated")] == [False, False, False]
    assert [seated(n, False) for n in ("sampling", "greedy", "unstated")] == [True, True, True]


def test_play_has_the_flags() -> None:
    result = CliRunner().invoke(app, ["play", "--help"])
    assert result.exit_code == 0 and "--model-sampling" in result.output and "--model-greedy" in result.output


# ---- serve ------------------------------------------------------------------------------------------------


def _request(model: str, obs: np.ndarray, mask: np.ndarray, deterministic: bool | None) -> Any:
    from serving.protocol import mask_to_heads, parse_request

    data: dict[str, Any] = {"model": model, "obs": obs.tolist(), "actionMasks": mask_to_heads(mask)}
    if deterministic is not None:
        data["deterministic"] = deterministic
    return parse_request(data)


def test_serve_answers_a_request_without_deterministic_in_the_model_s_mode(tmp_path: Path) -> None:
    from serving.models import ModelRegistry
    from tests.serving.conftest import write_model

    # one sharpened network (its argmax does not flip on rounding), four files that differ in their metadata only
    write_model(tmp_path / "sampling.nhmodel", 7, play_mode="sampling")
    write_model(tmp_path / "greedy.nhmodel", 7, play_mode="greedy")
    write_model(tmp_path / "unstated.nhmodel", 7)
    write_model(tmp_path / "bad.nhmodel", 7, play_mode="stochastic")
    registry = ModelRegistry(tmp_path, ladder=False)
    listed = {row["name"]: row.get("playMode") for row in registry.describe()}
    assert listed == {"greedy": "greedy", "sampling": "sampling", "unstated": None}  # bad.nhmodel is not served

    rng = np.random.default_rng(5)
    obs = rng.normal(0, 2, (200, 1, OBS_SIZE)).astype(np.float32)
    masks = rng.random((200, NUM_LOGITS)) < 0.6
    masks[:, 0] = True
    argmax = load_model_file(tmp_path / "greedy.nhmodel").act(obs[:, 0], masks.astype(np.float32), deterministic=True)

    def actions(name: str, deterministic: bool | None) -> np.ndarray:
        torch.manual_seed(0)
        replies = registry.answer([_request(name, obs[i], masks[i], deterministic) for i in range(200)])
        return np.array([r["action"] for r in replies])

    np.testing.assert_array_equal(actions("greedy", None), argmax)
    assert (actions("sampling", None) != argmax).any()  # sampled: differs from the argmax somewhere in 200 rows
    assert (actions("unstated", None) != argmax).any()  # as before the key: a request without the field samples
    np.testing.assert_array_equal(actions("sampling", True), argmax)  # the field still decides when given
    assert (actions("greedy", False) != argmax).any()
    assert _request("greedy", obs[0], masks[0], None).to_json()["deterministic"] is None
    assert _request("greedy", obs[0], masks[0], True).deterministic == (True,) * NUM_HEADS
