"""What a config leaves to the machine it runs on: ``ray.num_cpus: auto``, ``runners.num_env_runners: auto`` and
``learner.device: auto``, and how each resolves on the machine at hand.

Why `auto`: a config written on a 2-core laptop should use every core of a 16-core workstation and its GPU without
being edited, and a run must still say what it chose. The rules:

* **CPUs** (`usable_cores`): the cores this process may run on (its CPU affinity, which containers and ``taskset``
  narrow), not every core the machine has.
* **Env runners** (`env_runners_for`): with two CPUs or fewer, one per CPU. PPO on RLlib's old API stack alternates:
  the runners sample while the driver waits, then the driver learns while the runners wait, so on a laptop both
  cores sample and the learner gets them back between rounds (today's 2-core setting, measured in
  docs/training.md). With more CPUs, one is left to the driver: it gathers the runners' batches, runs the league's
  bookkeeping and feeds a GPU learner, work that overlaps the next sample. On a cluster the CPUs are the cluster's.
* **Learner device** (`learner_device`): the GPU when torch sees one (CUDA), else the CPU. The env runners always
  sample on CPUs.

The batch per iteration does not change with the machine: ``ppo.rollout_fragment_length: auto`` is the train batch
over all the envs, so more runners take fewer steps each (rounded up, so an iteration may take up to one step per env
more than the batch). A run prints what it chose and writes it to ``run.json`` (``machine``).
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from typing import Any, Literal

from osrs_rllib.config.types import _Section

AUTO = "auto"
Device = Literal["auto", "cpu", "cuda"]


class LearnerConfig(_Section):
    """Where PPO's update runs (the driver's process; the env runners sample on CPUs whatever this says)."""

    device: Device = "auto"
    """``auto``: the GPU when torch sees a CUDA device, else the CPU; ``cpu``; ``cuda`` (refused at start on a machine
    without one). Checkpoints and model files are the same either way: a model trained on a GPU fights on a CPU."""


def usable_cores() -> int:
    """CPUs this process may run on (its affinity mask where the OS has one, else the machine's count)."""
    affinity = getattr(os, "sched_getaffinity", None)
    if affinity is not None:
        return max(1, len(affinity(0)))
    return max(1, os.cpu_count() or 1)


def env_runners_for(cpus: int) -> int:
    """``runners.num_env_runners: auto`` on `cpus` CPUs: one per CPU up to two, else one CPU left to the driver."""
    return max(1, cpus if cpus <= 2 else cpus - 1)


def cuda_present() -> bool:
    """Whether torch sees a CUDA device. Without NVIDIA's driver on the machine torch is not imported at all: `config
    show` and the other quick commands must not pay for it."""
    if shutil.which("nvidia-smi") is None and not os.path.exists("/dev/nvidia0"):
        return False
    import torch

    return bool(torch.cuda.is_available())


def learner_device(setting: str) -> Literal["cpu", "cuda"]:
    """The device of ``learner.device``: ``auto`` is ``cuda`` where torch sees one, else ``cpu``.

    Raises:
        ValueError: ``cuda`` asked for on a machine where torch sees no CUDA device.
    """
    if setting == AUTO:
        return "cuda" if cuda_present() else "cpu"
    if setting == "cuda" and not cuda_present():
        raise ValueError("learner.device is cuda but torch sees no CUDA device here; set learner.device=auto or cpu")
    return "cpu" if setting == "cpu" else "cuda"


@dataclass(frozen=True)
class MachineChoice:
    """What a run's `auto` settings became, and from what."""

    cpus: int
    """The CPUs of the Ray the run uses: the embedded one's, or the cluster's."""
    num_env_runners: int
    device: str
    on_cluster: bool

    def line(self) -> str:
        where = "the cluster's" if self.on_cluster else "this machine's"
        return f"machine: {self.cpus} CPUs ({where}): {self.num_env_runners} env runners, the learner on {self.device}"

    def to_json(self) -> dict[str, Any]:
        return {"cpus": self.cpus, "num_env_runners": self.num_env_runners, "learner_device": self.device,
                "on_cluster": self.on_cluster}


def ray_cpus(num_cpus: int | str | None) -> int | None:
    """The CPUs an embedded Ray is started with: ``auto`` is `usable_cores`; None lets Ray count them itself."""
    return usable_cores() if num_cpus == AUTO else num_cpus  # type: ignore[return-value]


def choose(num_env_runners: int | str, learner: str, cpus: int, on_cluster: bool = False) -> MachineChoice:
    """A run's choices on a Ray of `cpus` CPUs (the embedded Ray's, or the cluster's once joined)."""
    runners = env_runners_for(cpus) if num_env_runners == AUTO else int(num_env_runners)
    return MachineChoice(int(cpus), runners, learner_device(learner), on_cluster)


def local_choice(num_cpus: int | str | None, num_env_runners: int | str, learner: str) -> MachineChoice:
    """What a run started here, with an embedded Ray, would choose (`osrs-rllib config show` prints it)."""
    return choose(num_env_runners, learner, ray_cpus(num_cpus) or usable_cores())
