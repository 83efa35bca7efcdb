"""A model file carrying the `winrate` extension, served by the real stack and asked through the TCP
proxy: the extension's answer equals the file's own `extension_winrate`, and the file's actions stay its policy's.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from envs.nh.contract import NUM_HEADS, NUM_LOGITS, OBS_SIZE
from policies.model_file import load_model_file, save_model_file
from policies.outcome import WINRATE, OutcomeNetwork, attach_winrate
from serving.client import ServeClient, ServeReplyError
from serving.models import ModelRegistry
from serving.protocol import Request
from tests.serving.conftest import Stack, write_model

pytestmark = pytest.mark.timeout(600)


def _winrate_model(path: Path, scratch: Path, frame_stack: tuple[int, ...] = (0,)) -> Path:
    """A small policy plus an outcome network with non-trivial weights, written like `outcome train` writes it."""
    plain = load_model_file(write_model(scratch / f"plain{len(frame_stack)}.nhmodel", 7, frame_stack=frame_stack))
    torch.manual_seed(3)
    outcome = OutcomeNetwork(plain.obs_size, (16,))
    with torch.no_grad():
        outcome.platt_a.fill_(1.7)
        outcome.platt_b.fill_(-0.2)
    network = attach_winrate(plain.module, plain.meta, outcome)
    return save_model_file(network, path, frame_stack=plain.frame_stack, metadata=plain.metadata,
                           extensions={WINRATE: {"train_seeds": [0, 10]}})


def _wait_for(predicate: Any, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.1)


def test_registry_answers_winrate_for_single_and_stacked_frames(tmp_path: Path) -> None:
    """The replica's code without Ray: one batch mixing two models, the stacked one given its whole history."""
    served = tmp_path / "models"
    served.mkdir()
    _winrate_model(served / "single.nhmodel", tmp_path)
    _winrate_model(served / "stacked.nhmodel", tmp_path, frame_stack=(0, 2))
    registry = ModelRegistry(served, ladder=False)
    rng = np.random.default_rng(9)
    history = rng.normal(0, 3, (4, 3, OBS_SIZE)).astype(np.float32)  # newest first
    masks = rng.random((4, NUM_LOGITS)) < 0.6
    masks[:, 0] = True
    det = (True,) * NUM_HEADS
    requests = [Request(model="single", obs=history[i, :1], mask=masks[i], deterministic=det, extensions=(WINRATE,))
                for i in range(4)]
    requests += [Request(model="stacked", obs=history[i], mask=masks[i], deterministic=det, extensions=(WINRATE,))
                 for i in range(4)]
    replies = registry.answer(requests)
    single, stacked = load_model_file(served / "single.nhmodel"), load_model_file(served / "stacked.nhmodel")
    want = [*single.extension(WINRATE, history[:, 0]), *stacked.extension(WINRATE, history[:, [0, 2]].reshape(4, -1))]
    for reply, p in zip(replies, want, strict=True):
        assert "error" not in reply, reply
        assert reply["extensionResults"] == [pytest.approx(float(p), abs=1e-6)]


def test_winrate_through_the_proxy(stack: Stack, tmp_path: Path) -> None:
    path = stack.models_dir / "with_winrate.nhmodel"
    _winrate_model(path, tmp_path)
    model = load_model_file(path)
    rng = np.random.default_rng(5)
    obs = rng.normal(0, 3, (6, OBS_SIZE)).astype(np.float32)
    masks = rng.random((6, NUM_LOGITS)) < 0.6
    masks[:, 0] = True
    want = model.extension(WINRATE, obs)
    want_actions = model.act(obs, masks.astype(np.float32)).tolist()
    try:
        with ServeClient(stack.host, stack.port, timeout_s=60) as client:
            _wait_for(lambda: any(m["name"] == "with_winrate" for m in client.models()))
            row = {m["name"]: m for m in client.models()}["with_winrate"]
            assert row["extensions"] == [WINRATE]
            for i in range(len(obs)):
                reply = client.act("with_winrate", obs[i], masks[i], extensions=[WINRATE], return_log_prob=True)
                (p,) = reply.extensionResults
                assert 0.0 <= p <= 1.0
                assert p == pytest.approx(float(want[i]), abs=1e-6)
                assert reply.action == want_actions[i]
            assert len({round(float(w), 6) for w in want}) > 1  # the answers depend on the observation
            # A model without the extension still says so.
            with pytest.raises(ServeReplyError, match="has no extension 'winrate'"):
                client.act("latest", obs[0], masks[0], extensions=[WINRATE])
    finally:
        path.unlink(missing_ok=True)
