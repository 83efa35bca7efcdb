"""Behaviour cloning: a tiny end-to-end clone from recorded fights, the dataset the replays
re-run into, the split by fight, the player filter, and one clear error with nothing written for bad input.

The demonstrations are real `osrs-rllib fight --record` replays (`run_fights(record=...)`) of short fights
between two acting ladder rungs under `configs/nh.yml`'s rules. What each rung saw is captured independently
by playing the same fights again through the fight loop with seats that keep their observations, so the
re-run dataset and the normalisation are checked against what the players were actually shown.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

from envs.nh.contract import CRITIC_SIZE, OBS_SIZE
from envs.nh.loadouts import Build
from osrs_rllib.cli import app
from osrs_rllib.config.schema import load_config
from osrs_rllib.evaluation.batched import LadderSeat, play_fights, seat_seed
from osrs_rllib.evaluation.fight import plan_matchup, run_fights
from osrs_rllib.evaluation.stratified import spread
from osrs_rllib.training.bc import learn as bc
from policies.fight_rules import fight_rules_of
from policies.model_file import load_model_file, save_model_file
from policies.network import NHPolicyNetwork
from policies.network_config import NetworkConfig

REPO = Path(__file__).resolve().parents[2]
CONFIG = str(REPO / "configs" / "nh.yml")
SMALL = ["--set", "model.actor_hidden=[32]", "--set", "model.critic_hidden=[16]", "--set", "model.head_hidden=8"]
"""A network small enough for a test; the config is otherwise nh.yml."""
FIGHTS = 6
BUILDS = (Build.PURE, Build.MED, Build.LMS_ZERKER)
SIDES = ("expert", "veteran")


def _options() -> dict:
    """nh.yml's rules and settings, with fights short enough for a test."""
    cfg = load_config(CONFIG)
    rules = fight_rules_of(cfg.to_dict()).rules
    return {**rules, "randomize_gear": True, "randomize_fight_type": True, "training": True, "max_episode_ticks": 60}


class _Capturing(LadderSeat):
    """A ladder rung that keeps every observation it is shown, per fight seed."""

    def __init__(self, name: str, seat: int) -> None:
        super().__init__(name, lambda fight_seed: seat_seed(fight_seed, seat))
        self.seen: dict[int, list[np.ndarray]] = {}

    def __call__(self, obs, masks, seeds, opponent_actions=None):  # type: ignore[no-untyped-def]
        for row, seed in zip(obs, seeds, strict=True):
            self.seen.setdefault(int(seed), []).append(np.array(row))
        return super().__call__(obs, masks, seeds, opponent_actions)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Replays of `FIGHTS` expert-vs-veteran fights, and the observations each seat was shown in them."""
    directory = tmp_path_factory.mktemp("bc-demos")
    options = _options()
    run_fights(*SIDES, n=FIGHTS, seed=0, options=options, builds=BUILDS, record=directory)
    plan = spread(plan_matchup(*SIDES, options).params, FIGHTS, BUILDS)
    seats = [_Capturing(name, seat) for seat, name in enumerate(SIDES)]
    play_fights(plan, list(range(FIGHTS)), seats[0].seat(), seats[1].seat(), parallel=1)
    shown = [np.concatenate([np.stack(s.seen[k]) for k in range(FIGHTS)]) for s in seats]
    return {"dir": directory, "shown": shown, "files": sorted(directory.glob("*.nhreplay"))}


def _cli(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(app, ["bc", *args, "--config", CONFIG, *SMALL])


def _assert_refused(result, out_dir: Path, *words: str) -> None:  # type: ignore[no-untyped-def]
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    for word in words:
        assert word in lines[0], lines[0]
    assert not out_dir.exists() or not any(out_dir.iterdir()), list(out_dir.iterdir())


# ---- end to end ------------------------------------------------------------------------------------------
def test_bc_writes_a_model_of_the_config_with_the_replays_statistics(recorded: dict, tmp_path: Path) -> None:
    out = tmp_path / "out" / "clone.nhmodel"
    result = _cli(str(recorded["dir"]), "-o", str(out), "--player", "expert", "--epochs", "2", "--holdout", "0.34")
    assert result.exit_code == 0, result.output

    model = load_model_file(out)
    assert (model.obs_size, model.critic_size) == (OBS_SIZE, CRITIC_SIZE)
    assert model.meta["network"]["actor_hidden"] == [32] and model.meta["network"]["head_hidden"] == 8
    # the fight tools read the clone's rules from its training config: nh.yml's, not the spec's defaults
    assert fight_rules_of(out).rules == fight_rules_of(load_config(CONFIG).to_dict()).rules
    info = model.metadata["bc"]
    assert info["fights"] == FIGHTS and info["heldout_fights"] == 2 and info["players"] == {"expert": info["samples"]}
    assert set(info["heldout"]["heads"]) == set(bc.HEAD_IDS)
    assert info["heldout"]["heads"]["attack"]["accuracy"] is not None
    assert info["heldout"]["heads"]["gear"]["accuracy"] is None  # head 8 is always forced (§14.2): never counted

    # normalisation: the mean of what the expert was shown, every fight included
    expert_obs = recorded["shown"][0].astype(np.float64)
    assert info["samples"] == len(expert_obs)
    np.testing.assert_allclose(model.module.obs_norm.mean.numpy(), expert_obs.mean(0), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(model.module.obs_norm.var.numpy(), expert_obs.var(0), rtol=1e-6, atol=1e-9)
    assert float(model.module.obs_norm.count) == len(expert_obs)

    # TensorBoard next to the output: per-head accuracy and loss of both splits, every epoch
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(tmp_path / "out" / "clone.tensorboard"))
    acc.Reload()
    tags = set(acc.Tags()["scalars"])
    for tag in ("heldout/loss", "heldout/action_accuracy", "heldout/accuracy_attack", "heldout/loss_prayer",
                "train/accuracy_attack", "train/loss"):
        assert tag in tags, sorted(tags)
        assert [e.step for e in acc.Scalars(tag)] == [1, 2]
    assert "heldout/accuracy_gear" not in tags

    # an ordinary model file: the fight command seats it
    summary = run_fights(str(out), "baseline", n=2, options={"max_episode_ticks": 30})
    assert summary.n == 2

    # the run is a function of its inputs and --seed (the config's by default)
    again = tmp_path / "again" / "clone.nhmodel"
    result = _cli(str(recorded["dir"]), "-o", str(again), "--player", "expert", "--epochs", "2", "--holdout", "0.34")
    assert result.exit_code == 0, result.output
    assert load_model_file(again).meta["tensor_sha256"] == model.meta["tensor_sha256"]


def test_the_loss_is_the_networks_own_log_probability(recorded: dict) -> None:
    """The cloned objective is -logp of `NHPolicyNetwork.evaluate` (the path PPO's loss takes); a forced head's
    log-probability is exactly 0, so it adds nothing to the loss."""
    cfg = load_config(CONFIG, ["model.actor_hidden=[32]", "model.head_hidden=8"])
    demos = bc.load_demonstrations([recorded["dir"]], cfg, ["expert"])
    net = bc.init_network(cfg)
    bc.set_normalization(net, demos)
    obs, masks, actions = (torch.from_numpy(demos.obs), torch.from_numpy(demos.masks.astype(np.float32)),
                           torch.from_numpy(demos.actions))
    with torch.no_grad():
        log_probs = bc.head_log_probs(net, obs, masks, actions)
        picked = log_probs.gather(-1, actions.unsqueeze(-1)).squeeze(-1)
        logp, _ = net.evaluate(obs, masks, actions)
    torch.testing.assert_close(picked.sum(-1), logp)
    forced = (log_probs > bc.LEGAL_LOG_PROB).sum(-1) < 2
    assert forced[:, bc.HEAD_IDS.index("gear")].all()
    assert torch.equal(picked[forced], torch.zeros_like(picked[forced]))


# ---- dataset, split, filter ----------------------------------------------------------------------------
def test_the_dataset_is_what_each_seat_was_shown_and_the_filter_picks_the_seat(recorded: dict) -> None:
    cfg = load_config(CONFIG)
    both = bc.load_demonstrations([recorded["dir"]], cfg)
    for seat, name in enumerate(SIDES):
        by_index = bc.load_demonstrations([recorded["dir"]], cfg, [str(seat)])
        by_name = bc.load_demonstrations([recorded["dir"]], cfg, [name])
        assert set(by_index.seat.tolist()) == {seat} and by_index.players == {name: len(by_index)}
        np.testing.assert_array_equal(by_index.obs, recorded["shown"][seat])
        np.testing.assert_array_equal(by_name.obs, by_index.obs)
        np.testing.assert_array_equal(by_name.actions, by_index.actions)
        np.testing.assert_array_equal(both.obs[both.seat == seat], by_index.obs)
    with pytest.raises(bc.BCError, match="expert, veteran"):
        bc.load_demonstrations([recorded["dir"]], cfg, ["tribrid"])


def test_the_held_out_split_is_by_fight(recorded: dict) -> None:
    demos = bc.load_demonstrations([recorded["dir"]], load_config(CONFIG))
    train, held = bc.split_by_fight(demos.fight, 0.34, seed=3)
    assert len(train) + len(held) == len(demos) and not set(train) & set(held)
    assert not set(demos.fight[train]) & set(demos.fight[held])
    assert len(set(demos.fight[held])) == 2 and len(set(demos.fight[train])) == FIGHTS - 2
    again = bc.split_by_fight(demos.fight, 0.34, seed=3)
    assert np.array_equal(again[1], held)
    with pytest.raises(bc.BCError, match="cannot be split"):
        bc.split_by_fight(demos.fight[demos.fight == 0], 0.5, seed=0)


# ---- bad input: one clear error each, nothing written ---------------------------------------------------
def _rewrite(src: Path, dst: Path, edit) -> Path:  # type: ignore[no-untyped-def]
    lines = [json.loads(line) for line in gzip.decompress(src.read_bytes()).decode().splitlines()]
    edit(lines)
    dst.write_bytes(gzip.compress("\n".join(json.dumps(x) for x in lines).encode()))
    return dst


def test_a_replay_of_another_contract_version_is_refused(recorded: dict, tmp_path: Path) -> None:
    def older(lines: list[dict]) -> None:
        lines[0]["contract_version"] = "nh-contract/0"

    bad = _rewrite(recorded["files"][0], tmp_path / "old.nhreplay", older)
    out = tmp_path / "out"
    result = _cli(str(recorded["files"][1]), str(bad), "-o", str(out / "m.nhmodel"))
    _assert_refused(result, out, "old.nhreplay", "nh-contract/0", "record the demonstrations again")


def test_a_truncated_replay_is_refused(recorded: dict, tmp_path: Path) -> None:
    raw = recorded["files"][0].read_bytes()
    cut = tmp_path / "cut.nhreplay"
    cut.write_bytes(raw[: len(raw) // 2])
    out = tmp_path / "out"
    _assert_refused(_cli(str(recorded["dir"]), str(cut), "-o", str(out / "m.nhmodel")), out, "cut.nhreplay")
    # cut at a line boundary instead: valid gzip, no end line
    whole = gzip.decompress(raw).decode().splitlines()
    cut.write_bytes(gzip.compress("\n".join(whole[:5]).encode()))
    _assert_refused(_cli(str(cut), "-o", str(out / "m.nhmodel")), out, "cut off")


def test_an_init_model_of_another_shape_is_refused(recorded: dict, tmp_path: Path) -> None:
    other = save_model_file(NHPolicyNetwork(OBS_SIZE, CRITIC_SIZE, NetworkConfig(actor_hidden=(16,))),
                            tmp_path / "other.nhmodel")
    out = tmp_path / "out"
    result = _cli(str(recorded["dir"]), "-o", str(out / "m.nhmodel"), "--init", str(other))
    _assert_refused(result, out, "another shape", "actor_hidden")
    # the same shape loads: every weight and statistic of the file
    cfg = load_config(CONFIG, [s for s in SMALL if s != "--set"])
    same = save_model_file(bc.init_network(cfg), tmp_path / "same.nhmodel")
    loaded = bc.init_network(cfg, same)
    for name, value in load_model_file(same).module.state_dict().items():
        if name in loaded.state_dict():
            assert torch.equal(loaded.state_dict()[name], value), name


def test_replays_played_under_other_rules_are_refused(recorded: dict, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = _cli(str(recorded["dir"]), "-o", str(out / "m.nhmodel"), "--set", "env.params.allow_smite=true")
    _assert_refused(result, out, "allow_smite", "--set allow_smite=true")


def test_an_output_without_the_model_suffix_is_refused(recorded: dict, tmp_path: Path) -> None:
    out = tmp_path / "out"
    _assert_refused(_cli(str(recorded["dir"]), "-o", str(out / "m.pt")), out, ".nhmodel")


# ---- the bar (slow: ~45 minutes on the 2-core machine) ----------------------------------------------------
TRAINED = "LMS_PURE,LMS_ZERKER,LMS_MED,PURE,ZERKER,MED"
SETTINGS = ["--set", "randomize_gear=true", "--set", "randomize_fight_type=true", "--set", "training=true"]


@pytest.mark.slow
def test_a_clone_of_2000_expert_fights_beats_the_baseline(tmp_path: Path) -> None:
    """The bar: cloned from 2,000 expert-vs-baseline fights under nh.yml's rules, the model alone wins
    ≥ 80 % against the baseline as the mean of the six trained builds (500 fights each, unseen seeds)."""
    runner = CliRunner()
    rules = [a for k, v in fight_rules_of(load_config(CONFIG).to_dict()).rules.items()
             for a in ("--set", f"{k}={str(v).lower()}")]
    demos = tmp_path / "demos"
    recorded = runner.invoke(app, ["fight", "expert", "baseline", "--n", "2000", "--build", TRAINED, *rules, *SETTINGS,
                                   "--record", str(demos), "--json"])
    assert recorded.exit_code == 0, recorded.output
    out = tmp_path / "clone.nhmodel"
    cloned = runner.invoke(app, ["bc", str(demos), "-o", str(out), "--player", "expert", "--epochs", "6"])
    assert cloned.exit_code == 0, cloned.output
    heldout = load_model_file(out).metadata["bc"]["heldout"]
    assert heldout["action_accuracy"] > 0.9
    fought = runner.invoke(app, ["fight", str(out), "baseline", "--n", "3000", "--seed", "100000", "--build", TRAINED,
                                 *SETTINGS, "--json"])
    assert fought.exit_code == 0, fought.output
    by_build = json.loads(fought.output)["by_build"]
    assert len(by_build) == 6 and all(v["fights"] == 500 for v in by_build.values())
    assert np.mean([v["win_rate"] for v in by_build.values()]) >= 0.8, by_build
