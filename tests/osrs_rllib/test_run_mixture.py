"""A run's per-fight mixture: the config's rule picks main's late models, and `osrs-rllib mixture` writes them."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

from envs.nh.contract import CRITIC_SIZE, OBS_SIZE
from osrs_rllib.cli import app
from osrs_rllib.config.files import to_yaml
from osrs_rllib.config.options import MixtureConfig
from osrs_rllib.config.schema import ConfigError, load_config
from osrs_rllib.exploit.setup import MEMBERS_DIR, default_name, expand_mixtures, resolve_models
from osrs_rllib.training.milestones import milestone_path
from osrs_rllib.training.mixture import MIXTURE_NAME, Candidate, MixtureError, choose_members, write_run_mixture
from policies.model_file import load_model_file, save_model_file
from policies.network import NHPolicyNetwork
from policies.network_config import NetworkConfig

TINY = NetworkConfig(actor_hidden=(16,), critic_hidden=(16,), head_hidden=8)
M = 1_000_000


def model_at(path: Path, env_steps: int) -> Path:
    """A small network saved where a run keeps `path`, with the metadata a checkpoint gives it."""
    torch.manual_seed(env_steps % 10_007)
    net = NHPolicyNetwork(OBS_SIZE, CRITIC_SIZE, TINY)
    config = {"env": {"params": {"death_match": True}}}
    metadata = {"experiment": "run", "iteration": env_steps // 8192, "env_steps": env_steps, "config": config}
    return save_model_file(net, path, metadata=metadata)


def a_run(root: Path, latest: int, best: int, kept: list[int]) -> Path:
    """An experiment directory with a config, its latest and best models and milestones at `kept`."""
    exp = root / "run"
    models = exp / "models"
    model_at(models / "latest.nhmodel", latest)
    model_at(models / "best.nhmodel", best)
    for steps in kept:
        model_at(milestone_path(models, steps), steps)
    (exp / "config.yml").write_text(to_yaml(load_config("configs/nh.yml").model_dump(mode="json")))
    return exp


def test_the_rule_reproduces_the_hours_measured_mixtures() -> None:
    """The fifth and sixth hour runs' hand-measured mixtures (docs/league.md) are what the rule picks: latest, best,
    then milestones newest first, late in the run and 1M env steps apart."""
    rule = MixtureConfig(members=3)
    fifth = [
        Candidate("latest", 15_319_040, Path("l")),
        Candidate("best", 11_878_400, Path("b")),
        *(Candidate("milestone", s, Path(str(s))) for s in (15_155_200, 10_240_000, 5_324_800)),
    ]
    assert [c.env_steps for c in choose_members(fifth, rule)] == [15_319_040, 11_878_400, 10_240_000]
    sixth = [Candidate("latest", 14_630_912, Path("l")), Candidate("best", 13_516_800, Path("b"))]
    sixth += [Candidate("milestone", s, Path(str(s))) for s in (10_240_000, 5_324_800)]
    assert [c.env_steps for c in choose_members(sixth, rule)] == [14_630_912, 13_516_800, 10_240_000]
    # best == latest (one checkpoint) counts once; an early model is left out; members caps the count.
    same = [Candidate("latest", 8 * M, Path("l")), Candidate("best", 8 * M, Path("b"))]
    same += [Candidate("milestone", s, Path(str(s))) for s in (6 * M, 3 * M)]
    assert [c.label for c in choose_members(same, rule)] == ["latest", "milestone"]
    assert len(choose_members(same, MixtureConfig(members=2, from_fraction=0.0))) == 2
    everything = MixtureConfig(members=3, from_fraction=0.0)
    assert [c.env_steps for c in choose_members(same, everything)] == [8 * M, 6 * M, 3 * M]


def test_a_run_s_mixture_is_written_by_its_rule(tmp_path: Path) -> None:
    exp = a_run(tmp_path, latest=15 * M, best=12 * M, kept=[15 * M - 100_000, 10 * M, 5 * M])
    path, chosen = write_run_mixture(exp / "models", MixtureConfig(members=3))
    assert path == exp / "models" / MIXTURE_NAME
    mix = load_model_file(path)
    assert mix.member_count == 3
    assert [mix.member(i).metadata["env_steps"] for i in range(3)] == [15 * M, 12 * M, 10 * M]
    assert [c.label for c in chosen] == ["latest", "best", "milestone"]
    md = mix.metadata
    assert md["env_steps"] == 15 * M and md["experiment"] == "run"  # the run's latest model's metadata
    assert md["mixture_rule"] == MixtureConfig(members=3).model_dump()
    assert [m["env_steps"] for m in md["mixture_members"]] == [15 * M, 12 * M, 10 * M]


def test_too_few_models_or_no_rule_is_a_clear_error_and_writes_nothing(tmp_path: Path) -> None:
    exp = a_run(tmp_path, latest=10 * M, best=10 * M, kept=[2 * M])
    with pytest.raises(MixtureError, match=r"1 model\(s\) pass the mixture rule .* latest at 10,000,000"):
        write_run_mixture(exp / "models", MixtureConfig(members=3))
    with pytest.raises(MixtureError, match=r"mixture\.members: 0"):
        write_run_mixture(exp / "models", MixtureConfig())
    assert not (exp / "models" / MIXTURE_NAME).exists()


def test_mixture_members_of_one_is_refused_naming_the_key() -> None:
    with pytest.raises(ConfigError, match=r"mixture\.members.*at least 2"):
        load_config("configs/nh.yml", ["mixture.members=1"])
    with pytest.raises(ConfigError, match=r"mixture\.from_fraction"):
        load_config("configs/nh.yml", ["mixture.from_fraction=1.5"])


def test_the_command_writes_a_run_s_mixture_or_one_from_files(tmp_path: Path) -> None:
    runner = CliRunner()
    exp = a_run(tmp_path, latest=15 * M, best=12 * M, kept=[10 * M])
    off = runner.invoke(app, ["mixture", str(exp), "--set", "mixture.members=0"])
    assert off.exit_code == 2 and "mixture.members" in off.output and not (exp / "models" / MIXTURE_NAME).exists()
    by_rule = runner.invoke(app, ["mixture", str(exp)])  # the run's own rule: nh.yml's, 3 members
    assert by_rule.exit_code == 0, by_rule.output
    assert "latest (15,000,000 env steps), best (12,000,000 env steps), milestone (10,000,000" in by_rule.output
    assert load_model_file(exp / "models" / MIXTURE_NAME).member_count == 3
    done = runner.invoke(app, ["mixture", str(exp), "--set", "mixture.members=2"])
    assert done.exit_code == 0, done.output
    assert load_model_file(exp / "models" / MIXTURE_NAME).member_count == 2

    models = exp / "models"
    out = tmp_path / "hand.nhmodel"
    by_hand = runner.invoke(
        app, ["mixture", str(models / "best.nhmodel"), str(models / "latest.nhmodel"), "-o", str(out)]
    )
    assert by_hand.exit_code == 0, by_hand.output
    assert load_model_file(out).member(0).metadata["env_steps"] == 12 * M
    for bad, said in (
        (["mixture", str(models / "best.nhmodel"), "-o", str(tmp_path / "one.nhmodel")], "2 to 16 members"),
        (["mixture", str(models / "best.nhmodel"), str(models / "latest.nhmodel")], "-o OUT.nhmodel"),
        (["mixture", str(exp), "-o", str(tmp_path / "x.pt")], "end in .nhmodel"),
    ):
        result = runner.invoke(app, bad)
        assert result.exit_code == 2 and said in result.output, result.output
    assert not (tmp_path / "one.nhmodel").exists() and not (tmp_path / "x.pt").exists()


def test_exploiting_a_mixture_file_exploits_its_members(tmp_path: Path) -> None:
    """The league plays single models, one drawn per fight: a mixture file becomes its members' files, written once
    to a folder of the mixture's checksum, and the run keeps the mixture's name."""
    exp = a_run(tmp_path, latest=15 * M, best=12 * M, kept=[10 * M])
    path, _ = write_run_mixture(exp / "models", MixtureConfig(members=3))
    given = resolve_models([str(path)])
    assert default_name(given) == "exploit-run-mixture"
    expanded = expand_mixtures(given, tmp_path / "exps")
    assert len(expanded) == 3 and all(MEMBERS_DIR in str(p) for p in expanded)
    mix = load_model_file(path)
    assert [load_model_file(p).meta for p in expanded] == [mix.member(i).meta for i in range(3)]
    stamps = [p.stat().st_mtime_ns for p in expanded]
    assert expand_mixtures(given, tmp_path / "exps") == expanded  # a resume finds the same files, unwritten
    assert [p.stat().st_mtime_ns for p in expanded] == stamps
    single = exp / "models" / "best.nhmodel"
    assert expand_mixtures([single], tmp_path / "exps") == [single]
