"""``auto`` on the machine at hand: the CPUs, the env runners and the learner's device a run chooses, what ``config
show`` says it would choose, and what a real algorithm is built with."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from osrs_rllib.config import ConfigError, load_config, local_choice, usable_cores
from osrs_rllib.config.machine import cuda_present, env_runners_for, learner_device

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(("cpus", "runners"), [(1, 1), (2, 2), (3, 2), (4, 3), (16, 15), (64, 63)])
def test_auto_runners_leave_the_driver_a_cpu_past_two(cpus: int, runners: int) -> None:
    assert env_runners_for(cpus) == runners


def test_usable_cores_follow_the_affinity_mask(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    if not hasattr(os, "sched_getaffinity"):
        pytest.skip("no affinity masks on this OS")
    assert usable_cores() == len(os.sched_getaffinity(0))
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {0, 3, 5})  # a container given three cores
    assert usable_cores() == 3 and local_choice("auto", "auto", "cpu").num_env_runners == 2


def test_the_learner_is_on_the_gpu_only_where_there_is_one() -> None:
    assert learner_device("cpu") == "cpu"
    if cuda_present():
        assert learner_device("auto") == "cuda"
    else:
        assert learner_device("auto") == "cpu"
        with pytest.raises(ValueError, match=r"learner\.device is cuda but torch sees no CUDA device"):
            learner_device("cuda")


def test_the_main_job_says_auto_and_config_show_resolves_it_here() -> None:
    cfg = load_config(REPO / "configs" / "nh.yml")
    assert (cfg.ray.num_cpus, cfg.runners.num_env_runners, cfg.learner.device) == ("auto", "auto", "auto")
    out = subprocess.run([sys.executable, "-m", "osrs_rllib.cli", "config", "show", "configs/nh.yml"], cwd=REPO,
                         capture_output=True, text=True, timeout=120, check=True).stdout  # fmt: skip
    cores = usable_cores()
    device = "cuda" if cuda_present() else "cpu"
    assert (f"# on this machine ({cores} usable cores): ray.num_cpus auto -> {cores}, runners.num_env_runners auto -> "
            f"{env_runners_for(cores)}, learner.device auto -> {device}") in out
    assert "num_env_runners: auto" in out  # the YAML keeps `auto`: it loads the same on any machine
    with pytest.raises(ConfigError) as err:
        load_config(REPO / "configs" / "nh.yml", ["learner.device=tpu"])
    assert "learner.device" in str(err.value)
    with pytest.raises(ConfigError) as err:
        load_config(REPO / "configs" / "nh.yml", ["runners.num_env_runners=many"])
    assert "runners.num_env_runners" in str(err.value)


@pytest.mark.usefixtures("ray_session")
def test_a_ray_of_two_cpus_builds_two_runners_and_a_cpu_learner() -> None:
    """The algorithm a run builds from the main job on the tests' Ray (two CPUs): today's settings."""
    from osrs_rllib.training import build_algorithm_config
    from osrs_rllib.training.algorithm import machine_choice

    cfg = load_config(REPO / "configs" / "nh.yml")
    algo_config = build_algorithm_config(cfg)
    assert algo_config.num_env_runners == 2 and algo_config.num_gpus == 0
    assert machine_choice(cfg).to_json() == {"cpus": 2, "num_env_runners": 2, "learner_device": "cpu",
                                             "on_cluster": False}  # fmt: skip
