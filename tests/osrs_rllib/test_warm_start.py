"""``train --init MODEL`` starts every trainable policy from a model file, exactly, and refuses a
file of another shape with one line before anything is written."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from envs.nh.contract import frame_offsets
from osrs_rllib.config.schema import TrainConfig, load_config
from osrs_rllib.experiments.layout import MODEL_NAME, Experiment
from osrs_rllib.training import Trainer
from osrs_rllib.training.bc.learn import init_network
from osrs_rllib.training.warm_start import CRITIC_PREFIXES, INIT_FILE, load_init
from policies.model_file import load_model_file, save_model_file

REPO = Path(__file__).resolve().parents[2]
SMOKE = REPO / "configs" / "smoke.yml"
QUICK = ["stop.iterations=1", "evaluation.interval=0", "checkpoint.keep_best=false", "logging.tensorboard=false"]


def cli(*args: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "osrs_rllib.cli", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=timeout, check=False)  # fmt: skip


def write_model(cfg: TrainConfig, path: Path, seed: int = 11) -> Path:
    """A model file of `cfg`'s network whose weights no fresh initialisation has: moved parameters and float64
    normalisation statistics that float32 cannot hold (so an inexact load would show)."""
    torch.manual_seed(seed)
    net = init_network(cfg)
    with torch.no_grad():
        for p in net.parameters():
            p.add_(torch.randn_like(p) * 0.05)
        for norm in net.normalizers().values():
            size = norm.mean.shape[0]
            mean = torch.rand(size, dtype=torch.float64) + 1 / 3
            norm.merge(1234.5, mean, torch.rand(size, dtype=torch.float64) + 0.1)
    frames = frame_offsets(cfg.env.frame_stack)
    return save_model_file(net, path, frame_stack=frames, metadata={"config": cfg.to_dict()})


def file_weights(path: Path) -> dict[str, torch.Tensor]:
    """The file's weights and statistics (the scripted module also lists the contract's static tables: left out)."""
    persistent = init_network(load_config(SMOKE)).state_dict().keys()
    return {k: v.detach().clone() for k, v in load_model_file(path).module.state_dict().items() if k in persistent}


# -- the command line -----------------------------------------------------------------------------------------
def test_a_model_of_another_shape_is_one_line_and_nothing_is_written(tmp_path: Path) -> None:
    other = load_config(SMOKE, ["model.actor_hidden=[32, 32]"])
    model = write_model(other, tmp_path / "other.nhmodel")
    proc = cli("train", "configs/smoke.yml", "--init", str(model), "--set", f"experiments_dir={tmp_path / 'exp'}")
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert str(model) in lines[0] and "actor_hidden [32, 32] (config: [64, 64])" in lines[0]  # the file, the key
    assert not (tmp_path / "exp").exists()

    missing = cli("train", "configs/smoke.yml", "--init", str(tmp_path / "none.nhmodel"),
                  "--set", f"experiments_dir={tmp_path / 'exp'}")  # fmt: skip
    assert missing.returncode == 2 and str(tmp_path / "none.nhmodel") in missing.stderr  # names the missing file
    assert "Traceback" not in missing.stderr and not (tmp_path / "exp").exists()


def test_init_with_resume_is_refused(tmp_path: Path) -> None:
    proc = cli("train", "configs/smoke.yml", "--resume", "--init", str(tmp_path / "m.nhmodel"),
               "--set", f"experiments_dir={tmp_path}")  # fmt: skip
    assert proc.returncode == 2 and "--init" in proc.stderr and "--resume" in proc.stderr  # names both flags


@pytest.mark.integration
def test_train_init_from_the_command_line_records_where_the_run_came_from(tmp_path: Path) -> None:
    cfg = load_config(SMOKE)
    model = write_model(cfg, tmp_path / "start.nhmodel")
    sets = [a for o in [*QUICK, f"experiments_dir={tmp_path}"] for a in ("--set", o)]
    proc = cli("train", "configs/smoke.yml", "--init", str(model), "--no-init-critic", *sets)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    exp = Experiment(tmp_path, "smoke")
    sha = hashlib.sha256(model.read_bytes()).hexdigest()
    record = json.loads((exp.dir / INIT_FILE).read_text())  # main warm-started from the file, its actor only
    assert record == {"model": str(model.resolve()), "sha256": sha, "critic": False, "policies": ["main"]}
    assert str(model.resolve()) in proc.stdout  # and the run named the file it started from
    assert load_config(exp.config_path).init.model == str(model.resolve())
    latest = exp.latest_checkpoint()
    assert latest is not None
    assert load_model_file(latest.path / MODEL_NAME).metadata["init"]["sha256"] == sha


# -- the trainer ----------------------------------------------------------------------------------------------
class FirstWeights(Trainer):
    """The trainer, remembering the learner's weights as the first iteration is about to start."""

    train_too = False
    first: dict[str, torch.Tensor]

    def _loop(self) -> None:
        net = self.algo.get_policy("main").model.net
        self.first = {k: v.detach().clone() for k, v in net.state_dict().items()}
        if self.train_too:
            super()._loop()


def first_weights(tmp_path: Path, name: str, overrides: list[str], train: bool = False) -> FirstWeights:
    cfg = load_config(SMOKE, [*QUICK, f"experiments_dir={tmp_path}", f"name={name}", *overrides])
    trainer = FirstWeights(cfg, Experiment(tmp_path, name), echo=lambda line: None)
    trainer.train_too = train
    assert trainer.run() == 0
    return trainer


@pytest.mark.usefixtures("ray_session")
def test_every_learner_starts_from_the_file_exactly_and_then_trains(tmp_path: Path) -> None:
    cfg = load_config(SMOKE)
    model = write_model(cfg, tmp_path / "start.nhmodel")
    want = file_weights(model)
    fresh = first_weights(tmp_path, "fresh", []).first
    warm = first_weights(tmp_path, "warm", [f"init.model={model}"], train=True)
    actor_only = first_weights(tmp_path, "actor", [f"init.model={model}", "init.critic=false"]).first

    assert want.keys() == warm.first.keys()
    for key, value in want.items():
        assert warm.first[key].dtype == value.dtype and torch.equal(warm.first[key], value), key  # bit for bit
        if key.startswith(CRITIC_PREFIXES):  # without the critic: the run's own fresh (seeded) critic
            assert torch.equal(actor_only[key], fresh[key]), key
        else:
            assert torch.equal(actor_only[key], value), key
    assert warm.first["obs_norm.mean"].dtype == torch.float64  # the statistics came back unrounded
    differ = [k for k in want if not torch.equal(fresh[k], want[k])]
    assert len(differ) >= len(want) - 2, "a fresh start must not already hold the file's weights"

    # the warm run then trained: its model file moved away from the start, and says where it started
    trained = load_model_file(warm.exp.models_dir / "latest.nhmodel")
    after = trained.module.state_dict()
    assert not torch.equal(after["actor_trunk.0.weight"], want["actor_trunk.0.weight"])
    assert trained.metadata["init"]["model"] == str(model.resolve())


def test_apply_init_loads_a_ppo_policy_exactly_with_or_without_the_critic(tmp_path: Path) -> None:
    """The loading step itself, on RLlib's real PPO policy of the smoke config (no Ray needed)."""
    from types import SimpleNamespace

    from ray.rllib.algorithms.ppo.ppo_torch_policy import PPOTorchPolicy
    from ray.rllib.models.preprocessors import get_preprocessor

    from osrs_rllib.training import build_algorithm_config, env_config
    from osrs_rllib.training.sampling import TrainingEnv
    from osrs_rllib.training.warm_start import apply_init
    from policies.rllib_model import register

    register()
    cfg = load_config(SMOKE)
    model = write_model(cfg, tmp_path / "m.nhmodel")
    want = file_weights(model)
    env = TrainingEnv({**env_config(cfg), "league": False, "opponent_mix": {"baseline": 1.0}})
    space = get_preprocessor(env.observation_space)(env.observation_space).observation_space
    for critic in (True, False):
        torch.manual_seed(0)
        policy = PPOTorchPolicy(space, env.action_space, build_algorithm_config(cfg).to_dict())
        fresh = {k: v.detach().clone() for k, v in policy.model.net.state_dict().items()}
        algo = SimpleNamespace(get_policy=lambda pid, p=policy: p, config=SimpleNamespace(policies_to_train=["main"]),
                               env_runner_group=None)  # fmt: skip
        init = load_init(load_config(SMOKE, [f"init.model={model}", f"init.critic={str(critic).lower()}"]))
        assert init is not None and apply_init(algo, init, ["main"]) == ["main"]
        now = policy.model.net.state_dict()
        for key, value in want.items():
            expected = fresh[key] if key.startswith(CRITIC_PREFIXES) and not critic else value
            assert now[key].dtype == expected.dtype and torch.equal(now[key], expected), (critic, key)
        assert not torch.equal(fresh["obs_norm.mean"], want["obs_norm.mean"])


def test_load_init_without_the_critic_leaves_its_keys_out(tmp_path: Path) -> None:
    cfg = load_config(SMOKE)
    model = write_model(cfg, tmp_path / "m.nhmodel")
    whole = load_init(load_config(SMOKE, [f"init.model={model}"]))
    actor = load_init(load_config(SMOKE, [f"init.model={model}", "init.critic=false"]))
    assert whole is not None and actor is not None and load_init(cfg) is None
    assert {k for k in whole.weights if k.startswith(CRITIC_PREFIXES)} == {
        k for k in whole.weights if k not in actor.weights
    } != set()
    assert whole.sha256 == hashlib.sha256(model.read_bytes()).hexdigest()




def test_a_mixture_warm_starts_from_the_member_init_member_names(tmp_path: Path) -> None:
    """A run trains one network: a per-fight mixture file starts it only from a named member (``init.member``),
    whose weights it then holds exactly; no member, or one the file does not hold, is an error naming the key."""
    from osrs_rllib.training.warm_start import WarmStartError
    from policies.mixture import save_mixture_file

    cfg = load_config(SMOKE)
    members = [write_model(cfg, tmp_path / f"m{i}.nhmodel", seed=20 + i) for i in range(2)]
    mixture = save_mixture_file([load_model_file(p) for p in members], tmp_path / "mix.nhmodel")
    with pytest.raises(WarmStartError, match=r"init\.member"):
        load_init(load_config(SMOKE, [f"init.model={mixture}"]))
    with pytest.raises(WarmStartError, match=r"init\.member 2"):
        load_init(load_config(SMOKE, [f"init.model={mixture}", "init.member=2"]))
    second = load_init(load_config(SMOKE, [f"init.model={mixture}", "init.member=1"]))
    assert second is not None and second.provenance()["member"] == 1
    expected = file_weights(members[1])
    assert set(expected) <= set(second.weights)
    assert all(torch.equal(second.weights[k], v) for k, v in expected.items())
    single = load_init(load_config(SMOKE, [f"init.model={members[0]}", "init.member=0"]))  # a single model is m0
    assert single is not None and all(torch.equal(single.weights[k], v) for k, v in file_weights(members[0]).items())
