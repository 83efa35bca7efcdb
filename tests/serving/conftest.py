"""One real Ray Serve application and one real TCP proxy on 127.0.0.1, shared by the serving tests.

Serve takes seconds to start, so the stack is session-scoped; tests that change the models directory use
their own file names and put things back.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from envs.nh.contract import CRITIC_SIZE, NUM_HEADS, OBS_SIZE
from policies.model_file import save_model_file
from policies.network import NHPolicyNetwork
from policies.network_config import NetworkConfig

SMALL = NetworkConfig(actor_hidden=(64, 64), critic_hidden=(32,))


def make_network(seed: int, obs_size: int = OBS_SIZE, critic_size: int = CRITIC_SIZE) -> NHPolicyNetwork:
    """A freshly initialised network with non-trivial normalisation statistics (no training needed)."""
    torch.manual_seed(seed)
    net = NHPolicyNetwork(obs_size, critic_size, SMALL)
    rng = np.random.default_rng(seed)
    net.update_normalizers(
        torch.as_tensor(rng.normal(0.5, 2.0, (200, obs_size)), dtype=torch.float32),
        torch.as_tensor(rng.normal(0.0, 1.0, (200, critic_size)), dtype=torch.float32),
        torch.zeros(200, NUM_HEADS, dtype=torch.long),
    )
    with torch.no_grad():
        # A fresh network is nearly uniform (output gain 0.01): its argmax could flip on a float rounding
        # difference between batch sizes. Sharpen it so that "the same action" is a meaningful comparison.
        net.head_out_weight.mul_(1000.0)
    return net


def write_model(path: Path, seed: int, frame_stack: tuple[int, ...] = (0,), critic_size: int | None = None,
                **metadata: Any) -> Path:
    obs_size = OBS_SIZE * len(frame_stack)
    net = make_network(seed, obs_size, critic_size if critic_size is not None else CRITIC_SIZE * len(frame_stack))
    return save_model_file(net, path, frame_stack=frame_stack, metadata={"iteration": seed, "env_steps": 1000 * seed,
                                                                         **metadata})


@dataclass
class Stack:
    host: str
    port: int
    models_dir: Path
    proxy: Any
    handle: Any


@pytest.fixture(scope="session")
def models_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("served") / "models"
    d.mkdir()
    write_model(d / "latest.nhmodel", 1, experiment="test")
    write_model(d / "stacked.nhmodel", 2, frame_stack=(0, 2))
    write_model(d / "obsvalue.nhmodel", 3, critic_size=OBS_SIZE)
    return d


@pytest.fixture(scope="session")
def stack(ray_session: None, models_dir: Path) -> Iterator[Stack]:
    import ray
    from ray import serve

    from serving.app import AppOptions
    from serving.proxy import ProxyLimits
    from serving.runtime import deploy, start_proxy

    handle = deploy(AppOptions(models_dir=str(models_dir), cpus_per_replica=0, reload_s=0.3))
    # A generous deadline: these tests check answers under load, test_deadline.py checks the default one.
    limits = ProxyLimits(max_connections=64, idle_timeout_s=3.0, max_line_bytes=200_000, deadline_s=60.0)
    proxy, (host, port) = start_proxy("127.0.0.1", 0, limits)
    yield Stack(host, port, models_dir, proxy, handle)
    ray.kill(proxy, no_restart=True)
    serve.shutdown()
    shutil.rmtree(models_dir, ignore_errors=True)
