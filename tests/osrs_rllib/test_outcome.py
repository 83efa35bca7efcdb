"""The outcome model: metrics pinned on hand-computed examples, the by-fight split, training on a few
real fights of a small model, the `winrate` extension stored in the model file (loadable by torch alone, old files
still valid), held-out seeds enforced, and the CLI."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch

from envs.nh.contract import CRITIC_SIZE, NUM_LOGITS, OBS_SIZE
from osrs_rllib.evaluation.outcome import (
    OutcomeError,
    allocate,
    brier_score,
    check_winrate,
    collect,
    default_output,
    expected_calibration_error,
    parse_mix,
    reliability_table,
    roc_auc,
    split_fights,
    summarize,
    train_winrate,
)
from policies.model_file import load_model_file, save_model_file
from policies.network import NHPolicyNetwork
from policies.network_config import NetworkConfig
from policies.outcome import WINRATE, OutcomeConfig, OutcomeNetwork, fit_outcome
from serving.models import model_extensions

REPO = Path(__file__).resolve().parents[2]
FIGHT_PARAMS = {"max_episode_ticks": 100, "randomize_build": True, "random_build_options": ["PURE", "MED"]}
"""Short fights in two builds: an untrained network still wins, loses and ties some of them."""
MIX = {"self": 0.5, "tribrid": 0.25, "noop": 0.25}
FIGHTS = 40
TINY = OutcomeConfig(hidden=(16,), epoch_ticks=2048, max_epochs=3, patience=2)


# ---------------------------------------------------------------------------------------------------------
# Metrics, by hand
# ---------------------------------------------------------------------------------------------------------
def test_ece_by_hand() -> None:
    # Bins: 0.05 → [0, .1) observed 0; 0.15 → [.1, .2) observed 1; two at 0.95 → [.9, 1] observed 1/2.
    p, y = [0.05, 0.15, 0.95, 0.95], [0, 1, 1, 0]
    assert expected_calibration_error(p, y) == pytest.approx(0.25 * 0.05 + 0.25 * 0.85 + 0.5 * 0.45)
    assert expected_calibration_error([0.3, 0.3], [0, 1]) == pytest.approx(0.2)  # one bin: |0.5 − 0.3|
    assert expected_calibration_error([0.0, 1.0], [0, 1]) == 0.0
    # Weights count like repeated samples.
    assert expected_calibration_error(p, y, [1, 1, 2, 1]) == pytest.approx(
        expected_calibration_error([*p, 0.95], [*y, 1])
    )


def test_reliability_bins_edges() -> None:
    rows = reliability_table([0.0, 0.1, 0.999, 1.0], [0, 0, 1, 1])
    assert len(rows) == 10 and rows[0]["low"] == 0.0 and rows[-1]["high"] == 1.0
    assert [r["count"] for r in rows] == [1, 1, 0, 0, 0, 0, 0, 0, 0, 2]  # 0.1 opens bin 1; 1.0 closes bin 9
    assert rows[2]["mean_predicted"] is None and rows[9]["observed"] == 1.0
    assert rows[9]["mean_predicted"] == pytest.approx(0.9995)


def test_brier_by_hand() -> None:
    assert brier_score([0.2, 0.8], [0, 1]) == pytest.approx(0.04)
    assert brier_score([0.5] * 4, [0, 1, 1, 0]) == pytest.approx(0.25)
    assert brier_score([0.2, 0.8], [0, 0], [3, 1]) == pytest.approx((3 * 0.04 + 0.64) / 4)


def test_auc_by_hand_with_ties() -> None:
    assert roc_auc([0.1, 0.4, 0.35, 0.8], [0, 0, 1, 1]) == pytest.approx(0.75)  # 0.35 beats only 0.1
    assert roc_auc([0.5, 0.5, 0.5, 0.9], [0, 1, 0, 1]) == pytest.approx(0.75)  # a tie counts one half
    assert roc_auc([0.3] * 4, [0, 1, 0, 1]) == pytest.approx(0.5)
    assert roc_auc([0.9, 0.1], [0, 1]) == 0.0 and roc_auc([0.1, 0.9], [0, 1]) == 1.0
    assert roc_auc([0.2, 0.7], [1, 1]) is None and roc_auc([0.2, 0.7], [0, 0]) is None


def test_auc_equals_pair_counting_and_weights_repeat_samples() -> None:
    rng = np.random.default_rng(3)
    p = np.round(rng.random(60), 1)  # many ties
    y = (rng.random(60) < 0.4).astype(float)
    pos, neg = p[y == 1], p[y == 0]
    pairs = [1.0 if a > b else 0.5 if a == b else 0.0 for a, b in itertools.product(pos, neg)]
    assert roc_auc(p, y) == pytest.approx(np.mean(pairs))
    w = rng.integers(1, 4, 60)
    assert roc_auc(p, y, w) == pytest.approx(roc_auc(np.repeat(p, w), np.repeat(y, w)))
    s = summarize(p, y)
    assert s["samples"] == 60 and s["auc"] == pytest.approx(np.mean(pairs))
    assert s["win_rate"] == pytest.approx(y.mean()) and s["mean_predicted"] == pytest.approx(p.mean())


@pytest.mark.parametrize(
    ("p", "y", "w", "message"),
    [
        ([0.1, 1.2], [0, 1], None, r"in \[0, 1\]"),
        ([0.1, float("nan")], [0, 1], None, "finite"),
        ([0.1, 0.2], [0, 2], None, "labels must be 0 or 1"),
        ([0.1, 0.2], [0], None, "one of each"),
        ([], [], None, "no samples"),
        ([0.1, 0.2], [0, 1], [0, 0], "not all zero"),
        ([0.1, 0.2], [0, 1], [1, -1], "non-negative"),
    ],
)
def test_metrics_reject_bad_input(p: list[float], y: list[int], w: list[float] | None, message: str) -> None:
    for fn in (expected_calibration_error, brier_score, roc_auc):
        with pytest.raises(ValueError, match=message):
            fn(p, y, w)


def test_mix_and_allocation() -> None:
    assert parse_mix("self=2,noop=1,random=1") == {"self": 0.5, "noop": 0.25, "random": 0.25}
    assert sum(allocate(101, {"self": 0.45, "baseline": 0.3, "tribrid": 0.25}).values()) == 101
    assert allocate(10, {"self": 0.55, "noop": 0.45}) == {"self": 6, "noop": 4}
    for text, message in (("selfplay=1", "unknown opponent 'selfplay'"), ("self=x", "bad share"),
                          ("self=-1", ">= 0"), ("self=0", "no opponent a positive share")):
        with pytest.raises(OutcomeError, match=message):
            parse_mix(text)


def test_fit_learns_a_separable_signal_and_rejects_bad_input() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(0, 1, (4000, 8)).astype(np.float32)
    y = (x[:, 0] + 0.3 * rng.normal(0, 1, 4000) > 0).astype(np.float32)
    w = np.ones(4000)
    cfg = OutcomeConfig(hidden=(16,), learning_rate=3e-3, batch_size=256, epoch_ticks=4096, max_epochs=10, patience=3)
    fit = fit_outcome(x[:3000], y[:3000], w[:3000], x[3000:], y[3000:], w[3000:], cfg)
    with torch.no_grad():
        p = fit.network(torch.from_numpy(x[3000:])).numpy()
    assert roc_auc(p, y[3000:]) > 0.95 and 0 <= p.min() and p.max() <= 1
    assert fit.best_epoch >= 0 and len(fit.val_loss) == fit.epochs
    with pytest.raises(ValueError, match="labels must be 0 or 1"):
        fit_outcome(x[:10], y[:10] + 1, w[:10], x[:10], y[:10], w[:10], cfg)
    with pytest.raises(ValueError, match="give one each"):
        fit_outcome(x[:10], y[:9], w[:10], x[:10], y[:10], w[:10], cfg)
    with pytest.raises(ValueError, match="weights must be positive"):
        fit_outcome(x[:10], y[:10], w[:10] * 0, x[:10], y[:10], w[:10], cfg)


def test_outcome_network_checks_its_input() -> None:
    net = OutcomeNetwork(5, (4,))
    assert net(torch.zeros(3, 5)).shape == (3,) and net(torch.zeros(5)).shape == ()
    with pytest.raises(ValueError, match=r"shape \(B, 5\)"):
        net(torch.zeros(2, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # TorchScript is deprecated in torch 2.13 (docs/policy.md)
        scripted = torch.jit.script(net)
    with pytest.raises(Exception, match=r"shape \(B, 5\)"):
        scripted(torch.zeros(2, 4))


# ---------------------------------------------------------------------------------------------------------
# Real fights of a small model
# ---------------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An untrained network saved as a model file, with training fight parameters in its metadata."""
    torch.manual_seed(1)
    net = NHPolicyNetwork(OBS_SIZE, CRITIC_SIZE, NetworkConfig(actor_hidden=(32,), critic_hidden=(16,)))
    path = tmp_path_factory.mktemp("outcome") / "small.nhmodel"
    return save_model_file(net, path, metadata={"iteration": 3, "config": {"env": {"params": FIGHT_PARAMS}}})


@pytest.fixture(scope="module")
def trained(plain: Path) -> Path:
    result = train_winrate(plain, FIGHTS, seed=100, mix=MIX, config=TINY, parallel=16)
    assert result.path == default_output(plain) == plain.with_name("small.winrate.nhmodel")
    assert result.info["splits"]["train"] > 0 and result.info["splits"]["test"] > 0
    return result.path


def test_collect_labels_each_seat_and_splits_by_fight(plain: Path) -> None:
    model = load_model_file(plain)
    data = collect(model, 12, 7, {"self": 0.5, "noop": 0.5}, FIGHT_PARAMS, parallel=4)
    assert data.obs.shape == (len(data.won), OBS_SIZE) and data.trajectories == 6 * 2 + 6
    for t in range(data.trajectories):  # every tick of a trajectory carries its seat's outcome, ticks 0..n-1
        rows = data.traj == t
        assert (data.won[rows] == float(data.outcome[t] == "won")).all()
        assert data.tick[rows].tolist() == list(range(data.length[t]))
    for k in range(6):  # self-play: both seats recorded, outcomes mirror each other
        seats = [t for t, f in enumerate(data.fight) if f == k]
        assert sorted(data.seat[t] for t in seats) == [0, 1]
        won = [data.outcome[t] == "won" for t in seats]
        assert sum(won) <= 1
    assert set(data.fight) == set(range(12)) and {"PURE", "MED"} == set(data.build)
    parts = split_fights(data, 0)
    assert sorted(np.concatenate(parts).tolist()) == list(range(data.trajectories))
    fights_of = [{data.fight[t] for t in part} for part in parts]
    assert all(not (a & b) for a, b in itertools.combinations(fights_of, 2))  # a fight is in one split only
    weights = data.tick_weights()
    assert np.bincount(data.traj, weights) == pytest.approx(np.ones(data.trajectories))


def test_trained_file_carries_winrate_and_keeps_the_policy(plain: Path, trained: Path) -> None:
    old, new = load_model_file(plain), load_model_file(trained)
    assert old.extensions == [] and new.extensions == [WINRATE]
    assert new.meta["extensions"] == [WINRATE] and new.metadata == old.metadata
    info = new.extension_info(WINRATE)
    assert info["train_seeds"] == [100, 100 + FIGHTS] and info["mix"] == MIX
    assert info["policy_sha256"] == old.meta["tensor_sha256"] and info["fight_params"] == FIGHT_PARAMS
    rng = np.random.default_rng(2)
    obs = rng.normal(0, 3, (32, OBS_SIZE)).astype(np.float32)
    masks = (rng.random((32, NUM_LOGITS)) < 0.6).astype(np.float32)
    masks[:, 0] = 1
    assert (old.act(obs, masks) == new.act(obs, masks)).all()
    p = new.extension(WINRATE, obs)
    assert p.shape == (32,) and ((0 <= p) & (p <= 1)).all()
    assert new.extension(WINRATE, obs[0]).shape == ()
    assert set(model_extensions(new)) == {WINRATE} and model_extensions(old) == {}
    with pytest.raises(KeyError, match="no extension 'winrate'"):
        old.extension(WINRATE, obs)
    with pytest.raises(ValueError, match="this model expects"):
        new.extension(WINRATE, obs[:, :10])


def test_torch_alone_loads_the_file_and_calls_the_extension(trained: Path) -> None:
    code = (
        "import sys, torch\n"
        f"m = torch.jit.load({str(trained)!r})\n"
        "p = m.extension_winrate(torch.zeros(3, 176))\n"
        "assert p.shape == (3,) and bool(((p >= 0) & (p <= 1)).all())\n"
        "assert not any(k.split('.')[0] in ('policies', 'osrs_rllib', 'envs', 'ray') for k in sys.modules)\n"
        "print(p.tolist())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd="/", capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    want = load_model_file(trained).extension(WINRATE, np.zeros((3, OBS_SIZE), np.float32))
    assert json.loads(out.stdout) == pytest.approx(want.tolist(), abs=1e-6)


def test_check_refuses_training_seeds_and_reports_held_out(trained: Path) -> None:
    with pytest.raises(OutcomeError, match=r"overlap the training seeds 100\.\.139"):
        check_winrate(trained, 10, seed=135)
    with pytest.raises(OutcomeError, match="overlap"):
        check_winrate(trained, 200, seed=0)
    rep = check_winrate(trained, 12, parallel=8)
    assert rep["seeds"] == [140, 152] and rep["train_seeds"] == [100, 140] and rep["mix"] == MIX
    assert rep["fights"] == 12 and set(rep["by_phase"]) == {"0-19", "20-49", "50-99", "100-199", "200+"}
    assert set(rep["by_opponent"]) == set(MIX) and len(rep["reliability"]) == 10
    assert rep["all_ticks"]["samples"] >= rep["bar"]["samples"] > 0
    assert set(rep["bars"]) == {"max_ece", "min_auc", "ece_ok", "auc_ok"}
    assert check_winrate(trained, 5, seed=95, parallel=5)["seeds"] == [95, 100]  # ends right before training's


def test_old_files_and_bad_requests(plain: Path, trained: Path, tmp_path: Path) -> None:
    with pytest.raises(OutcomeError, match="has no winrate extension; add one with `osrs-rllib outcome train"):
        check_winrate(plain, 5)
    with pytest.raises(OutcomeError, match="either --out or --in-place"):
        train_winrate(plain, FIGHTS, out=tmp_path / "x.nhmodel", in_place=True)
    with pytest.raises(OutcomeError, match="too few"):
        train_winrate(plain, 5)
    with pytest.raises(OutcomeError, match="unknown opponent"):
        train_winrate(plain, FIGHTS, mix={"nobody": 1.0})
    assert not (tmp_path / "x.nhmodel").exists()


def test_retraining_in_place_replaces_the_extension_atomically(trained: Path, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    copy = tmp_path / "again.nhmodel"
    copy.write_bytes(trained.read_bytes())
    copy.chmod(0o640)
    before = copy.read_bytes()

    def broken_save(*args: object, **kwargs: object) -> None:
        Path(args[1]).write_bytes(b"half a file")  # the temporary file, never the target
        raise OSError("disk full")

    monkeypatch.setattr(torch.jit, "save", broken_save)
    with pytest.raises(OSError, match="disk full"):
        train_winrate(copy, 20, in_place=True, seed=300, mix=MIX, config=TINY, parallel=16)
    assert copy.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["again.nhmodel"]
    monkeypatch.undo()
    train_winrate(copy, 20, in_place=True, seed=300, mix=MIX, config=TINY, parallel=16)
    again = load_model_file(copy)
    assert again.extensions == [WINRATE] and again.extension_info(WINRATE)["train_seeds"] == [300, 320]
    assert copy.stat().st_mode & 0o777 == 0o640  # rewriting in place keeps the file's permissions
    assert sum(k.startswith("winrate.") for k in again.module.state_dict()) == len(
        OutcomeNetwork(OBS_SIZE, TINY.hidden).state_dict()
    )


def test_cli_check_json_and_errors(trained: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    cli = [sys.executable, "-m", "osrs_rllib.cli", "outcome"]
    out = subprocess.run([*cli, "check", str(trained), "--fights", "6", "--json", "--parallel", "6"], cwd=REPO,
                         env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    rep = json.loads(out.stdout)
    assert rep["seeds"] == [140, 146] and rep["fights"] == 6 and 0 <= rep["bar"]["ece"] <= 1
    bad = subprocess.run([*cli, "check", str(trained), "--seed", "100"], cwd=REPO, env=env, capture_output=True,
                         text=True, timeout=600)
    assert bad.returncode == 2 and str(trained) in bad.stderr  # names the file whose training seeds it overlaps
    assert f"--seed {rep['seeds'][0]}" in bad.stderr  # and the first seed that is new (the default's)
