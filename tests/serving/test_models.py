"""`ModelRegistry` in-process (no Ray): answers equal the model file's own, live reload keeps good models."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch

from envs.nh.contract import HEAD_SIZES, MAX_HEAD_SIZE, NUM_HEADS, NUM_LOGITS, OBS_SIZE
from envs.opponents import LADDER, PRESCIENT, make_opponent
from policies.model_file import load_model_file
from serving.models import ModelRegistry
from serving.protocol import REPLY_FIELDS, Request
from tests.serving.conftest import write_model


def inputs(n: int, seed: int, frames: int = 1) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    obs = rng.normal(0, 2, (n, frames, OBS_SIZE)).astype(np.float32)
    masks = rng.random((n, NUM_LOGITS)) < 0.6
    masks[:, 0] = True
    return obs, masks


def req(model: str, obs: np.ndarray, mask: np.ndarray, det: bool | tuple[bool, ...] = True, **flags: bool) -> Request:
    d = det if isinstance(det, tuple) else (det,) * NUM_HEADS
    return Request(model=model, obs=obs, mask=mask, deterministic=d, **flags)


@pytest.fixture(scope="module")
def local_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("registry")
    write_model(d / "latest.nhmodel", 11)
    write_model(d / "stacked.nhmodel", 12, frame_stack=(0, 2))
    write_model(d / "obsvalue.nhmodel", 13, critic_size=OBS_SIZE)
    return d


@pytest.fixture(scope="module")
def registry(local_dir: Path) -> ModelRegistry:
    return ModelRegistry(local_dir)


def test_deterministic_actions_equal_the_model_file(registry: ModelRegistry, local_dir: Path) -> None:
    model = load_model_file(local_dir / "latest.nhmodel")
    obs, masks = inputs(64, 1)
    replies = registry.answer([req("latest", obs[i], masks[i]) for i in range(64)])
    expected = model.act(obs[:, 0], masks.astype(np.float32), deterministic=True)
    assert [r["action"] for r in replies] == expected.tolist()
    assert all(list(r) == list(REPLY_FIELDS) for r in replies)
    assert all(r["logProb"] is None and r["probs"] is None for r in replies)


def test_statistics_match_the_network(registry: ModelRegistry, local_dir: Path) -> None:
    model = load_model_file(local_dir / "latest.nhmodel")
    obs, masks = inputs(8, 2)
    replies = registry.answer(
        [req("latest", obs[i], masks[i], return_log_prob=True, return_entropy=True, return_probs=True)
         for i in range(8)]
    )
    actions = torch.tensor([r["action"] for r in replies])
    o, m = torch.from_numpy(obs[:, 0]), torch.from_numpy(masks.astype(np.float32))
    with torch.no_grad():
        logp, entropy = model.module.evaluate(o, m, actions)
        probs = model.module.probabilities(o, m, actions)
    for i, r in enumerate(replies):
        assert r["logProb"] == pytest.approx(float(logp[i]), abs=1e-5)
        assert r["entropy"] == pytest.approx(entropy[i].tolist(), abs=1e-5)  # one entropy per head
        assert [len(p) for p in r["probs"]] == list(HEAD_SIZES)
        for h, size in enumerate(HEAD_SIZES):
            np.testing.assert_allclose(r["probs"][h], probs[i, h, :size].numpy(), atol=1e-6)
            assert sum(r["probs"][h]) == pytest.approx(1.0, abs=1e-4)


def test_per_head_determinism_and_sampling(registry: ModelRegistry, local_dir: Path) -> None:
    model = load_model_file(local_dir / "latest.nhmodel")
    obs, masks = inputs(200, 3)
    det_action = model.act(obs[:, 0], masks.astype(np.float32), deterministic=True)
    flags = tuple(h < 6 for h in range(NUM_HEADS))
    torch.manual_seed(0)
    replies = registry.answer([req("latest", obs[i], masks[i], det=flags) for i in range(200)])
    got = np.array([r["action"] for r in replies])
    # Heads before the first sampled one see identical inputs, so they take the deterministic choice.
    np.testing.assert_array_equal(got[:, :6], det_action[:, :6])
    sampled = np.array([r["action"] for r in registry.answer([req("latest", obs[i], masks[i], det=False)
                                                                  for i in range(200)])])
    assert (sampled != det_action).any(), "sampling must differ from the argmax somewhere in 200 rows"
    # Head 0 has no §14.2 dependency: every sampled value is legal under the environment mask.
    assert all(mask[row[0]] for row, mask in zip(sampled, masks, strict=True))


def test_mixed_batch_keeps_order_and_models_apart(registry: ModelRegistry, local_dir: Path) -> None:
    a = load_model_file(local_dir / "latest.nhmodel")
    b = load_model_file(local_dir / "obsvalue.nhmodel")
    obs, masks = inputs(30, 4)
    names = ["latest" if i % 3 else "obsvalue" for i in range(30)]
    names[5] = "nope"
    replies = registry.answer([req(n, obs[i], masks[i]) for i, n in enumerate(names)])
    for i, (name, reply) in enumerate(zip(names, replies, strict=True)):
        if name == "nope":
            assert "unknown model 'nope'" in reply["error"] and "latest" in reply["error"]
            continue
        model = a if name == "latest" else b
        assert reply["action"] == model.act(obs[i, 0], masks[i].astype(np.float32)).tolist()


def test_frames_at_offsets_or_full_history(registry: ModelRegistry, local_dir: Path) -> None:
    model = load_model_file(local_dir / "stacked.nhmodel")
    history, masks = inputs(4, 5, frames=3)  # frames t, t-1, t-2
    at_offsets = history[:, [0, 2]]
    expected = model.act(at_offsets.reshape(4, -1), masks.astype(np.float32)).tolist()
    for frames in (at_offsets, history):
        replies = registry.answer([req("stacked", frames[i], masks[i]) for i in range(4)])
        assert [r["action"] for r in replies] == expected
    (bad,) = registry.answer([req("stacked", history[0, :1], masks[0])])
    assert "offsets [0, 2]" in bad["error"] and "send 2 or 3 frames" in bad["error"]


def test_value_needs_an_observation_only_critic(registry: ModelRegistry, local_dir: Path) -> None:
    obs, masks = inputs(2, 6)
    (err,) = registry.answer([req("latest", obs[0], masks[0], return_value=True)])
    assert "full game state" in err["error"] and "opponent" in err["error"]
    model = load_model_file(local_dir / "obsvalue.nhmodel")
    (ok,) = registry.answer([req("obsvalue", obs[1], masks[1], return_value=True)])
    with torch.no_grad():
        expected = float(model.module.value(torch.from_numpy(obs[1])))
    assert ok["values"] == [pytest.approx(expected, abs=1e-5)]


def test_unknown_extension_names_what_the_file_has(registry: ModelRegistry) -> None:
    obs, masks = inputs(1, 7)
    (err,) = registry.answer([req("latest", obs[0], masks[0], extensions=("winrate",))])
    assert err["error"].endswith("has no extension 'winrate'; the extensions it carries: none")


@pytest.mark.parametrize("name", [n for n in LADDER if n not in PRESCIENT])  # prescient: test_graded_ladder.py
def test_scripted_opponents_answer_like_the_ladder(registry: ModelRegistry, name: str) -> None:
    obs, masks = inputs(5, 8)
    bot = make_opponent(name, 0)
    fresh = ModelRegistry(None)
    replies = fresh.answer([req(name, obs[i], masks[i]) for i in range(5)])
    assert [r["action"] for r in replies] == [bot.act(obs[i, 0], masks[i]).tolist() for i in range(5)]
    (err,) = registry.answer([req(name, obs[0], masks[0], return_log_prob=True)])
    assert "scripted ladder opponent" in err["error"] and "returnLogProb" in err["error"]


def test_live_reload_keeps_a_good_model_over_a_damaged_file(tmp_path: Path) -> None:
    path = write_model(tmp_path / "live.nhmodel", 21)
    reg = ModelRegistry(tmp_path)
    first = reg.models["live"].describe()
    obs, masks = inputs(1, 9)
    before = reg.answer([req("live", obs[0], masks[0])])[0]["action"]

    # A half-written copy (as `cp` would leave it midway) and then garbage: both are refused.
    good_bytes = path.read_bytes()
    for damaged in (good_bytes[: len(good_bytes) // 2], b"not a zip at all"):
        path.write_bytes(damaged)
        os.utime(path, ns=(os.stat(path).st_atime_ns, os.stat(path).st_mtime_ns + 1_000_000))
        events = reg.refresh()
        assert any("kept the served model 'live'" in e for e in events), events
        assert reg.models["live"].describe()["sha256"] == first["sha256"]
        assert reg.answer([req("live", obs[0], masks[0])])[0]["action"] == before

    # The new model written atomically replaces it; its training steps and checksum are visible.
    write_model(tmp_path / "live.nhmodel", 22)
    events = reg.refresh()
    assert any(e.startswith("reloaded model 'live'") and "iteration 22" in e for e in events), events
    now = reg.models["live"].describe()
    assert now["sha256"] != first["sha256"] and now["envSteps"] == 22_000 and now["iteration"] == 22

    # New files appear, removed ones go, hidden temporary files of atomic writes are ignored.
    shutil.copy(path, tmp_path / "copy.nhmodel")
    (tmp_path / ".copy.nhmodel.123.tmp").write_bytes(b"partial")
    path.unlink()
    events = reg.refresh()
    assert "copy" in reg.models and "live" not in reg.models
    assert reg.refresh() == []  # nothing changed: nothing reloaded


def test_missing_directory_serves_the_ladder_until_models_appear(tmp_path: Path) -> None:
    honest = [n for n in LADDER if n not in PRESCIENT]
    reg = ModelRegistry(tmp_path / "models")
    assert reg.names() == honest
    write_model(tmp_path / "models" / "latest.nhmodel", 31)
    reg.refresh()
    assert reg.names() == ["latest", *honest]


def test_a_prescient_rung_is_not_listed_and_says_why(registry: ModelRegistry) -> None:
    """A prescient rung needs the other seat's action, which no client has: listing it would promise a player
    that fails every request."""
    assert PRESCIENT and not PRESCIENT & {m["name"] for m in registry.describe()}
    obs, masks = inputs(1, 10)
    name = sorted(PRESCIENT)[0]
    (err,) = registry.answer([req(name, obs[0], masks[0])])
    assert f"model {name!r} is not served: it is a prescient ladder rung" in err["error"]


def test_noise_constant_gives_exact_argmax() -> None:
    """The per-head deterministic trick relies on −log(−log u) being exactly 0 for u = e^-1 in float32."""
    from serving.models import _DETERMINISTIC_UNIFORM

    u = torch.full((1, NUM_HEADS, MAX_HEAD_SIZE), _DETERMINISTIC_UNIFORM)
    assert torch.all(torch.log(-torch.log(u)) == 0)


def test_replies_hold_no_negative_zero(registry: ModelRegistry) -> None:
    """A head with one legal value has entropy 0, which the network computes as -0.0: a reply reads 0.0."""
    import math

    obs, masks = inputs(16, 5)
    masks[:, :] = False
    start = 0
    for size in HEAD_SIZES:  # one legal value per head: every head's entropy is zero
        masks[:, start] = True
        start += size
    replies = registry.answer([req("latest", obs[i], masks[i], det=False, return_entropy=True, return_log_prob=True,
                                   return_probs=True) for i in range(16)])
    numbers = [x for r in replies for x in [*r["entropy"], r["logProb"], *(p for head in r["probs"] for p in head)]]
    zeros = [x for x in numbers if x == 0.0]
    assert zeros and all(math.copysign(1.0, x) > 0 for x in zeros)


def test_a_mixture_is_served_member_by_member(tmp_path: Path) -> None:
    """A request is one tick and only the client knows its fight, so a mixture's members are served by name, the
    mixture is listed with them, and asking the mixture itself says what to ask instead."""
    from policies.mixture import save_mixture_file
    from serving.client import member_for_fight

    singles = [load_model_file(write_model(tmp_path / "src" / f"{i}.nhmodel", 40 + i)) for i in range(2)]
    save_mixture_file(singles, tmp_path / "served" / "mix.nhmodel")
    reg = ModelRegistry(tmp_path / "served")
    assert reg.mixtures == {"mix": ["mix.m0", "mix.m1"]}
    rows = {r["name"]: r for r in reg.describe()}
    assert rows["mix"] == {"name": "mix", "kind": "mixture", "members": ["mix.m0", "mix.m1"], "frameStack": [0]}
    assert rows["mix.m1"]["mixtureOf"] == "mix" and rows["mix.m1"]["sha256"] == singles[1].meta["tensor_sha256"]
    obs, masks = inputs(6, 3)
    for i, single in enumerate(singles):
        replies = reg.answer([req(f"mix.m{i}", obs[k], masks[k]) for k in range(6)])
        assert [r["action"] for r in replies] == single.act(obs[:, 0], masks.astype(np.float32)).tolist()
    (refused,) = reg.answer([req("mix", obs[0], masks[0])])
    assert "per-fight mixture of 2 models" in refused["error"] and "mix.m0, mix.m1" in refused["error"]
    drawn = {member_for_fight(rows["mix"], seed) for seed in range(40)}
    assert drawn == {"mix.m0", "mix.m1"} and member_for_fight(rows["mix.m0"], 5) == "mix.m0"

    # Replaced by a single model: the members go; removed: everything goes.
    write_model(tmp_path / "served" / "mix.nhmodel", 50)
    reg.refresh()
    assert "mix" in reg.models and not reg.mixtures and "mix.m0" not in reg.models
    (tmp_path / "served" / "mix.nhmodel").unlink()
    reg.refresh()
    assert not reg.models and not reg.mixtures
