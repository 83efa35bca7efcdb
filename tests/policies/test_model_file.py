"""Model files: round trip, a fresh process without Ray, and clear errors for foreign or damaged files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch

from envs.nh.contract import CONTRACT_VERSION, CRITIC_SIZE, MAX_HEAD_SIZE, NUM_HEADS, NUM_LOGITS, OBS_SIZE
from policies.model_file import (
    META_ENTRY,
    MODEL_FORMAT,
    ModelFileError,
    load_model_file,
    read_model_meta,
    save_model_file,
)
from policies.network import NHPolicyNetwork
from policies.network_config import NetworkConfig

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def trained() -> NHPolicyNetwork:
    torch.manual_seed(4)
    net = NHPolicyNetwork(OBS_SIZE, CRITIC_SIZE, NetworkConfig(actor_hidden=(48, 48), critic_hidden=(32,)))
    rng = np.random.default_rng(0)
    net.update_normalizers(
        torch.as_tensor(rng.normal(1.0, 2.0, (300, OBS_SIZE)), dtype=torch.float32),
        torch.as_tensor(rng.normal(0.0, 1.0, (300, CRITIC_SIZE)), dtype=torch.float32),
        torch.zeros(300, NUM_HEADS, dtype=torch.long),
    )
    return net


@pytest.fixture(scope="module")
def model_path(trained: NHPolicyNetwork, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("models") / "main.nhmodel"
    save_model_file(trained, path, metadata={"iteration": 12, "env_steps": 34_000, "config": {"ppo": {"lr": 3e-4}}})
    return path


def inputs(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    obs = rng.normal(0, 2, (n, OBS_SIZE)).astype(np.float32)
    masks = (rng.random((n, NUM_LOGITS)) < 0.6).astype(np.float32)
    return obs, masks


def test_round_trip_actions_and_metadata(trained: NHPolicyNetwork, model_path: Path) -> None:
    model = load_model_file(model_path)
    obs, masks = inputs(256, 1)
    with torch.no_grad():
        expected, _ = trained(torch.as_tensor(obs), torch.as_tensor(masks), True)
        noise = torch.rand(256, NUM_HEADS, MAX_HEAD_SIZE)
        sampled, _ = trained(torch.as_tensor(obs), torch.as_tensor(masks), False, noise)
    np.testing.assert_array_equal(model.act(obs, masks, deterministic=True), expected.numpy())
    np.testing.assert_array_equal(model.act(obs, masks, deterministic=False, noise=noise.numpy()), sampled.numpy())
    np.testing.assert_array_equal(model.act(obs, masks, False, seed=5), model.act(obs, masks, False, seed=5))
    assert model.act(obs[0], masks[0]).shape == (NUM_HEADS,)
    assert model.meta["contract_version"] == CONTRACT_VERSION
    assert model.meta["format"] == MODEL_FORMAT
    assert model.metadata == {"iteration": 12, "env_steps": 34_000, "config": {"ppo": {"lr": 3e-4}}}
    assert model.obs_size == OBS_SIZE and model.critic_size == CRITIC_SIZE
    assert model.contract["version"] == CONTRACT_VERSION
    assert NetworkConfig.from_dict(model.meta["network"]) == trained.config
    critic = torch.randn(4, CRITIC_SIZE)
    with torch.no_grad():
        assert torch.allclose(model.module.value(critic), trained.value(critic), atol=1e-6)
    assert not list(model_path.parent.glob("*.tmp")), "the atomic write must not leave temporary files"


def test_loads_in_a_fresh_process_without_ray(trained: NHPolicyNetwork, model_path: Path, tmp_path: Path) -> None:
    obs, masks = inputs(32, 2)
    np.save(tmp_path / "obs.npy", obs)
    np.save(tmp_path / "masks.npy", masks)
    script = f"""
import sys, json
import numpy as np
sys.modules["ray"] = None  # any import of Ray now fails
from policies.model_file import load_model_file
model = load_model_file({str(model_path)!r})
actions = model.act(np.load({str(tmp_path / "obs.npy")!r}), np.load({str(tmp_path / "masks.npy")!r}))
print(json.dumps({{"actions": actions.tolist(), "ray": [m for m in sys.modules if m.startswith("ray")]}}))
"""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=REPO, timeout=120)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout.strip().splitlines()[-1])
    with torch.no_grad():
        expected, _ = trained(torch.as_tensor(obs), torch.as_tensor(masks), True)
    assert result["actions"] == expected.tolist()
    assert result["ray"] == ["ray"]  # only the blocker placed above


def rewrite_meta(src: Path, dst: Path, **changes: object) -> None:
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename.endswith("/extra/" + META_ENTRY):
                meta = json.loads(data)
                meta.update(changes)
                data = json.dumps(meta).encode()
            zout.writestr(item, data)


def test_other_contract_version_is_a_clear_error(model_path: Path, tmp_path: Path) -> None:
    other = tmp_path / "old.nhmodel"
    rewrite_meta(model_path, other, contract_version="nh-contract/0")
    with pytest.raises(ModelFileError) as err:
        load_model_file(other)
    message = str(err.value)
    assert f"expected contract {CONTRACT_VERSION}, found 'nh-contract/0'" in message
    assert str(other) in message and "\n" not in message


def test_other_format_version_is_a_clear_error(model_path: Path, tmp_path: Path) -> None:
    other = tmp_path / "future.nhmodel"
    rewrite_meta(model_path, other, format="osrs-rllib-model/99")
    with pytest.raises(
        ModelFileError,
        match=r"expected file format osrs-rllib-model/1 \(or osrs-rllib-mixture/1\), found 'osrs-rllib-model/99'",
    ):
        load_model_file(other)


@pytest.mark.parametrize("damage", ["truncated", "garbage", "empty", "missing", "plain-torchscript", "bad-json"])
def test_damaged_or_foreign_files_fail_with_one_message(
    damage: str, trained: NHPolicyNetwork, model_path: Path, tmp_path: Path
) -> None:
    path = tmp_path / f"{damage}.nhmodel"
    data = model_path.read_bytes()
    if damage == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif damage == "garbage":
        path.write_bytes(np.random.default_rng(0).bytes(4096))
    elif damage == "empty":
        path.write_bytes(b"")
    elif damage == "plain-torchscript":
        torch.jit.save(torch.jit.script(trained), str(path))
    elif damage == "bad-json":
        with zipfile.ZipFile(model_path) as zin, zipfile.ZipFile(path, "w") as zout:
            for item in zin.infolist():
                payload = b"{not json" if item.filename.endswith(META_ENTRY) else zin.read(item.filename)
                zout.writestr(item, payload)
    with pytest.raises(ModelFileError) as err:
        load_model_file(path)
    message = str(err.value)
    assert message.startswith(f"cannot load model file {path}")
    assert "expected" in message or "not valid JSON" in message
    assert "\n" not in message


def test_truncated_tensor_data_is_reported_not_crashed(model_path: Path, tmp_path: Path) -> None:
    """A zip whose metadata is intact but whose tensors are cut off fails in torch; that is a ModelFileError too."""
    path = tmp_path / "cut.nhmodel"
    with zipfile.ZipFile(model_path) as zin, zipfile.ZipFile(path, "w") as zout:
        for item in zin.infolist():
            payload = zin.read(item.filename)
            if "/data/" in item.filename:
                payload = payload[: len(payload) // 3]
            zout.writestr(item, payload)
    assert read_model_meta(path)["format"] == MODEL_FORMAT
    with pytest.raises(ModelFileError, match="expected weights with checksum"):
        load_model_file(path)
