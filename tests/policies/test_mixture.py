"""Per-fight mixtures: one model file holding several networks, one of them drawn per fight by the fight's seed."""

from __future__ import annotations

import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from envs.nh.contract import CRITIC_SIZE, MAX_HEAD_SIZE, NUM_HEADS, NUM_LOGITS, OBS_SIZE
from osrs_rllib.evaluation.fight import run_fights
from policies.mixture import save_mixture_file, write_member_file
from policies.mixture_draw import fight_member, fight_members
from policies.model_file import MIXTURE_FORMAT, ModelFileError, load_model_file, read_model_meta, save_model_file
from policies.network import NHPolicyNetwork
from policies.network_config import NetworkConfig

REPO = Path(__file__).resolve().parents[2]
TINY = NetworkConfig(actor_hidden=(16,), critic_hidden=(16,), head_hidden=8)


def tiny(path: Path, seed: int, frame_stack: tuple[int, ...] = (0,), params: dict | None = None) -> Path:
    torch.manual_seed(seed)
    net = NHPolicyNetwork(OBS_SIZE * len(frame_stack), CRITIC_SIZE * len(frame_stack), TINY)
    config = {"env": {"params": params if params is not None else {"death_match": True}}}
    metadata = {"experiment": "tiny", "env_steps": 1000 * seed, "config": config}
    return save_model_file(net, path, frame_stack=frame_stack, metadata=metadata)


@pytest.fixture(scope="module")
def members(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    folder = tmp_path_factory.mktemp("members")
    return [tiny(folder / f"m{i}.nhmodel", seed=i + 1) for i in range(3)]


@pytest.fixture(scope="module")
def mixture(members: list[Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("mixture") / "mix.nhmodel"
    return save_mixture_file([load_model_file(p) for p in members], out)


def inputs(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.normal(0, 2, (n, OBS_SIZE)).astype(np.float32), (rng.random((n, NUM_LOGITS)) < 0.6).astype(np.float32)


def test_each_row_is_played_by_its_member_exactly(members: list[Path], mixture: Path) -> None:
    mix = load_model_file(mixture)
    singles = [load_model_file(p) for p in members]
    assert read_model_meta(mixture)["format"] == MIXTURE_FORMAT and mix.member_count == 3
    assert [mix.member(i).meta for i in range(3)] == [m.meta for m in singles]  # members keep their metadata
    obs, masks = inputs(60, 1)
    rows = np.arange(60) % 3
    noise = np.random.default_rng(2).random((60, NUM_HEADS, MAX_HEAD_SIZE)).astype(np.float32)
    for deterministic in (True, False):
        got = mix.act(obs, masks, deterministic, noise=noise, members=rows)
        for i, single in enumerate(singles):
            want = single.act(obs[rows == i], masks[rows == i], deterministic, noise=noise[rows == i])
            assert np.array_equal(got[rows == i], want)
    assert np.array_equal(mix.act(obs[0], masks[0], members=2), singles[2].act(obs[0], masks[0]))
    with pytest.raises(ValueError, match="per-fight mixture of 3 models: pass members="):
        mix.act(obs, masks)
    with pytest.raises(ValueError, match=r"one index in 0\.\.2 per row"):
        mix.act(obs[:2], masks[:2], members=[0, 3])
    assert pickle.loads(pickle.dumps(mix)).member_count == 3  # travels to Ray workers as loaded
    with pytest.raises(ModelFileError, match="needs a single model"):
        mix.single("the analysis API")


def test_torch_alone_plays_a_mixture(mixture: Path, members: list[Path]) -> None:
    """A program with torch and no osrs-rllib plays the archive by passing each row's member."""
    script = (
        "import torch, sys\n"
        f"m = torch.jit.load({str(mixture)!r})\n"
        f"obs = torch.zeros(3, {OBS_SIZE}); mask = torch.ones(3, {NUM_LOGITS})\n"
        "a, _ = m(obs, mask, True, None, torch.tensor([0, 1, 2]))\n"
        "print(m.member_count(), a.shape[0])\n"
        "try:\n    m(obs, mask, True, None)\n"
        "except Exception as e:\n    print('refused' if 'members' in str(e) else e)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=REPO)
    assert out.stdout.split() == ["3", "3", "refused"]


def test_a_member_written_out_is_its_original_file(mixture: Path, members: list[Path], tmp_path: Path) -> None:
    out = write_member_file(load_model_file(mixture), 1, tmp_path / "one.nhmodel")
    assert load_model_file(out).meta == load_model_file(members[1]).meta  # the checksum checks on load


def test_the_draw_is_uniform_fixed_by_the_seed_and_independent_of_the_build() -> None:
    """Fight k of a `fight` run plays build k % 6 with seed base + k; the members must spread over every build."""
    seeds = range(2_000_000, 2_006_000)
    drawn = fight_members(seeds, 3)
    counts = np.bincount(drawn, minlength=3)
    assert abs(counts - 2000).max() < 5 * np.sqrt(6000 * (1 / 3) * (2 / 3)), counts  # 5 sigma
    table = np.zeros((3, 6), dtype=int)
    for k, member in enumerate(drawn):
        table[member, k % 6] += 1
    assert table.min() > 250, table  # ~333 each: no build is left to one member
    assert [fight_member(s, 3) for s in seeds[:50]] == list(drawn[:50])  # the same seed, the same member
    assert set(fight_members(range(100), 2)) == {0, 1}
    with pytest.raises(ValueError):
        fight_member(1, 0)


def test_a_fight_plays_the_member_its_seed_draws(mixture: Path, members: list[Path]) -> None:
    """`fight` seats a mixture: each fight is the fight its member plays alone at that seed, batched or not."""
    options = {"max_episode_ticks": 60}
    seeds = list(range(7, 13))
    alone = []
    for s in seeds:
        member = members[fight_member(s, 3)]
        one = run_fights(str(mixture), "random", n=1, seed=s, options=options)
        want = run_fights(str(member), "random", n=1, seed=s, options=options)
        assert (one.mean_damage_dealt, one.mean_damage_received, one.mean_ticks) == (
            want.mean_damage_dealt,
            want.mean_damage_received,
            want.mean_ticks,
        )
        alone.append(one)
    together = run_fights(str(mixture), "random", n=len(seeds), seed=seeds[0], options=options)
    assert together.mean_damage_dealt == pytest.approx(np.mean([f.mean_damage_dealt for f in alone]))
    assert sorted({fight_member(s, 3) for s in seeds}) != [0]  # the fights met more than one member
    drawn = np.bincount(fight_members(seeds, 3), minlength=3)
    assert [together.by_member[f"m{i}"]["fights"] for i in range(3)] == drawn.tolist()
    assert sum(row["wins"] for row in together.by_member.values()) == together.wins
    assert alone[0].to_dict()["by_member"] and not run_fights("random", "random", n=1, options=options).by_member


def test_bad_members_are_refused_and_nothing_is_written(members: list[Path], tmp_path: Path) -> None:
    out = tmp_path / "bad.nhmodel"
    one = load_model_file(members[0])
    cases = {
        "2 to 16 members": [one],
        "hold the same weights": [one, load_model_file(members[0])],
        "read the same observations": [one, load_model_file(tiny(tmp_path / "s.nhmodel", 9, frame_stack=(0, 1)))],
        "different fight rules": [one, load_model_file(tiny(tmp_path / "r.nhmodel", 8, params={"death_match": False}))],
    }
    for message, given in cases.items():
        with pytest.raises(ModelFileError, match=message):
            save_mixture_file(given, out)
        assert not out.exists()
    mix = save_mixture_file([one, load_model_file(members[1])], tmp_path / "mix.nhmodel")
    with pytest.raises(ModelFileError, match="is itself a mixture"):
        save_mixture_file([load_model_file(mix), load_model_file(members[2])], out)
    assert not out.exists()
