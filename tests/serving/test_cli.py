"""`osrs-rllib serve` and `osrs-rllib export` as a user runs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from envs.nh.contract import NUM_LOGITS, OBS_SIZE
from osrs_rllib.cli import app
from policies.model_file import load_model_file
from serving.detached import resolve_models_dir
from serving.runtime import free_port
from tests.serving.conftest import write_model

REPO = Path(__file__).resolve().parents[2]
runner = CliRunner()


def test_serve_needs_something_to_serve(tmp_path: Path) -> None:
    result = runner.invoke(app, ["serve", str(tmp_path / "nothing"), "--experiments-dir", str(tmp_path)])
    assert result.exit_code == 2
    assert str(tmp_path / "nothing") in result.output  # names what it cannot serve


def test_status_and_stop_without_a_detached_server(tmp_path: Path) -> None:
    result = runner.invoke(app, ["serve", "status", "--state-dir", str(tmp_path), "--json"])
    assert result.exit_code == 0 and json.loads(result.output) == []  # no detached server recorded
    result = runner.invoke(app, ["serve", "stop", "--port", "9123", "--state-dir", str(tmp_path)])
    assert result.exit_code == 2 and "9123" in result.output  # names the port it found no server on


def test_models_dir_resolution(tmp_path: Path) -> None:
    exp = tmp_path / "exps" / "nh"
    (exp / "models").mkdir(parents=True)
    assert resolve_models_dir(exp) == exp / "models"
    assert resolve_models_dir("nh", tmp_path / "exps") == tmp_path / "exps" / "nh" / "models"
    flat = tmp_path / "flat"
    write_model(flat / "a.nhmodel", 1)
    assert resolve_models_dir(flat) == flat


def test_export_from_a_checkpoint(tmp_path: Path) -> None:
    ckpt = tmp_path / "nh" / "checkpoints" / "iter-000003"
    written = write_model(ckpt / "main.nhmodel", 3)
    out = tmp_path / "out" / "nh-3.nhmodel"
    result = runner.invoke(app, ["export", str(ckpt), "-o", str(out)])
    assert result.exit_code == 0, result.output
    exported = load_model_file(out)
    assert (exported.metadata["iteration"], exported.metadata["env_steps"]) == (3, 3000)
    assert all(str(fact) in result.output for fact in (out, 3, 3000))  # names the file and the checkpoint's counts
    assert exported.meta["tensor_sha256"] == load_model_file(written).meta["tensor_sha256"]
    bad = runner.invoke(app, ["export", str(ckpt), "-o", str(tmp_path / "x.pt")])
    assert bad.exit_code == 2 and str(tmp_path / "x.pt") in bad.output and ".nhmodel" in bad.output  # the suffix
    missing = runner.invoke(app, ["export", str(tmp_path / "none"), "-o", str(out)])
    assert missing.exit_code == 2 and str(tmp_path / "none") in missing.output  # names the missing directory


def test_export_a_league_snapshot(tmp_path: Path) -> None:
    """A past self (`league/<id>.npz`, the weights the league stores, keys ``net.*`` as `get_weights` gives them)
    becomes a model file that plays exactly those weights and records the run's config (its fight rules)."""
    import torch

    from envs.nh.contract import CRITIC_SIZE
    from league.players import Snapshot
    from osrs_rllib.config.schema import dump_config, load_config
    from policies.network import NHPolicyNetwork

    cfg = load_config(REPO / "configs" / "smoke.yml")
    exp = tmp_path / "smoke"
    (exp / "league").mkdir(parents=True)
    (exp / "config.yml").write_text(dump_config(cfg))
    torch.manual_seed(4)
    net = NHPolicyNetwork(OBS_SIZE, CRITIC_SIZE, cfg.model)
    np.savez(exp / "league" / "main@v2.npz", **{f"net.{k}": v.numpy() for k, v in net.state_dict().items()})
    # the league's record of the snapshot, as the run's last checkpoint keeps it (league/callback.py)
    snap = Snapshot("main@v2", "main", 2, training_steps=4096, iteration=10, created_at=0.0, env_steps=8192)
    (exp / "checkpoints" / "iter-000012").mkdir(parents=True)
    league_state = {"league": {"snapshots": [snap.to_dict()]}}
    (exp / "checkpoints" / "iter-000012" / "league.json").write_text(json.dumps(league_state))
    out = tmp_path / "v2.nhmodel"
    result = runner.invoke(app, ["export", str(exp), "--snapshot", "main@v2", "-o", str(out)])
    assert result.exit_code == 0, result.output
    model = load_model_file(out)
    assert model.metadata["snapshot"] == "main@v2" and model.metadata["config"]["env"] == cfg.to_dict()["env"]
    # counted as a final model counts (the run's env steps), and the source's own share beside it
    md = model.metadata
    assert (md["iteration"], md["env_steps"], md["training_steps"]) == (10, 8192, 4096)
    assert "init" not in md  # a run from fresh networks records no warm start
    obs = np.random.default_rng(0).normal(size=(5, OBS_SIZE)).astype(np.float32)
    mask = np.ones((5, NUM_LOGITS), dtype=np.float32)
    with torch.no_grad():
        expected = net(torch.as_tensor(obs), torch.as_tensor(mask), deterministic=True)[0].numpy()
    assert (model.act(obs, mask, deterministic=True) == expected).all()
    missing = runner.invoke(app, ["export", str(exp), "--snapshot", "main@v9", "-o", str(out)])
    assert missing.exit_code == 2 and "'main@v9'" in missing.output and "main@v2" in missing.output  # asked, kept
    # a warm-started run's past self descends from the init model, as its final file does (train.py records it)
    provenance = {"model": "/somewhere/parent.nhmodel", "sha256": "ab" * 32, "critic": True, "policies": ["main"]}
    (exp / "init.json").write_text(json.dumps(provenance))
    warm = runner.invoke(app, ["export", str(exp), "--snapshot", "main@v2", "-o", str(out)])
    assert warm.exit_code == 0, warm.output
    assert load_model_file(out).metadata["init"] == provenance


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_detached_server_status_and_stop(tmp_path: Path) -> None:
    """The real CLI in a subprocess: --detach, a request, status with training steps, stop."""
    from serving.client import ServeClient

    models = tmp_path / "models"
    write_model(models / "latest.nhmodel", 5)
    port, state = free_port(), tmp_path / "state"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "osrs_rllib.cli", *args], cwd=REPO, env=env, text=True,
                              capture_output=True, timeout=300, check=False)

    started = cli("serve", str(models), "--detach", "--port", str(port), "--state-dir", str(state),
                  "--num-cpus", "1", "--dashboard-port", str(free_port()), "--cpus-per-replica", "0")
    assert started.returncode == 0, started.stderr
    try:
        # --detach returns once a request would succeed: no waiting here
        ready = [ln for ln in started.stdout.splitlines() if ln.startswith("ready:")]
        assert len(ready) == 1, started.stdout
        with ServeClient("127.0.0.1", port, retries=0) as client:
            assert len(client.act("latest", np.zeros(OBS_SIZE), np.ones(NUM_LOGITS, dtype=bool)).action) == 12
        rows = json.loads(cli("serve", "status", "--json", "--state-dir", str(state)).stdout)
        assert [r["state"] for r in rows] == ["running"] and rows[0]["models"], rows
        latest = {m["name"]: m for m in rows[0]["models"]}["latest"]
        assert latest["envSteps"] == 5000 and latest["iteration"] == 5
    finally:
        stopped = cli("serve", "stop", "--port", str(port), "--state-dir", str(state))
    assert stopped.returncode == 0 and "stopped" in stopped.stdout, stopped.stdout + stopped.stderr
    assert json.loads(cli("serve", "status", "--json", "--state-dir", str(state)).stdout) == []


@pytest.mark.timeout(300)
def test_a_detached_start_that_fails_leaves_no_record(tmp_path: Path) -> None:
    """The background server dies before it is up (its dashboard port is taken): `--detach` says so, exit 2,
    and no record is left claiming a server that is starting."""
    import socket

    models = tmp_path / "models"
    write_model(models / "latest.nhmodel", 5)
    port, state = free_port(), tmp_path / "state"
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        taken = held.getsockname()[1]
        started = subprocess.run(
            [sys.executable, "-m", "osrs_rllib.cli", "serve", str(models), "--detach", "--port", str(port),
             "--state-dir", str(state), "--dashboard", "--dashboard-port", str(taken)],
            cwd=REPO, env={**os.environ, "PYTHONUNBUFFERED": "1"}, text=True, capture_output=True, timeout=240,
            check=False)
    assert started.returncode == 2, started.stdout + started.stderr
    assert not list(state.glob("serve-*.json")), [p.read_text() for p in state.glob("serve-*.json")]
    assert f"--dashboard-port {taken}" in started.stderr
