"""Warm starts: ``osrs-rllib train --init MODEL.nhmodel`` (or ``init.model`` in a config).

Every trainable policy (main, and the league's exploiters) starts from a model file's weights instead of a fresh
initialisation: pre-training for RL from a behaviour-cloned file (`osrs_rllib/training/bc/learn.py`), or fine-tuning a
shipped model against a new opponent mix. What is loaded:

* always: the actor (trunk, frame encoder, the 12 heads) and its running normalisation statistics (the actor
  input's and the heads' one-hot context's), since the weights were learnt on inputs normalised with them;
* with ``init.critic`` (on by default, see `osrs_rllib.config.schema.InitConfig` for why): the critic's trunk, value
  head and critic-input statistics; off, the critic is the run's fresh (seeded) one.

The optimiser starts fresh (a model file has no Adam moments), and so do RLlib's counters: the schedules
(learning rate, entropy, rewards) start at step 0, as in any new run.

The file is checked before anything is written: one that does not load, or whose network shape (input sizes,
`model` section) is not the config's, is one error line naming both shapes (`bc.init_network`'s check, shared
with ``bc --init``), and the experiment directory is not created or touched. The weights are loaded the way a
resume loads them (`Trainer._restore_exact_weights`): with ``load_state_dict`` into the learner, dtype for dtype,
since RLlib's ``set_weights`` would round the float64 statistics to float32; the env runners then get them
through RLlib's weight sync (their inference buffers are float32 anyway).

``--resume`` continues from the checkpoint's weights and never applies ``init`` (the CLI refuses ``--init`` with
``--resume``); the run records where it came from: ``init.model`` in its ``config.yml``, and path, sha256 and
whether the critic was taken in ``init.json`` of the experiment and in the metadata of every model file it
writes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from osrs_rllib.config import TrainConfig

INIT_FILE = "init.json"
"""The warm start's provenance inside the experiment directory (kept across resumes)."""
CRITIC_PREFIXES: tuple[str, ...] = ("critic_norm.", "critic_trunk.", "value_head.")
"""State-dict keys of `NHPolicyNetwork`'s critic: what ``init.critic: false`` leaves fresh. With
``model.share_trunk`` the value head also reads the actor's features, which are always loaded."""
TRAIN_FIX = "train from a model file of the config's network, or set model.* (--set) to the file's shape"
"""What the shape error tells a `train` user to do."""


class WarmStartError(ValueError):
    """The init model cannot be used (missing, not a model file, another network shape); one line."""


@dataclass(frozen=True)
class InitModel:
    """A model file checked against a config, ready to load into the trainable policies."""

    path: Path
    sha256: str
    """Of the file's bytes: what `sha256sum` prints, so a run names exactly the file it started from."""
    weights: dict[str, torch.Tensor]
    """The state dict to load: the whole network's, or the actor's only (`critic` off)."""
    critic: bool

    member: int | None = None
    """The member of a per-fight mixture file it started from (``init.member``); None: a single model."""

    def provenance(self) -> dict[str, Any]:
        """What a run records about its start (``init.json``, model file metadata)."""
        member = {} if self.member is None else {"member": self.member}
        return {"model": str(self.path), "sha256": self.sha256, "critic": self.critic, **member}


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def load_init(cfg: TrainConfig) -> InitModel | None:
    """The config's init model (``init.model``), shape-checked; None when the config has none.

    Raises:
        WarmStartError: The file is missing or not a model file, or its network shape is not the config's (the
            message names the differing sizes, the file's and the config's).
    """
    from osrs_rllib.training.bc.learn import BCError, init_network

    if cfg.init.model is None:
        return None
    path = Path(cfg.init.model).expanduser().resolve()
    if not path.is_file():
        raise WarmStartError(f"--init {cfg.init.model}: no such model file")
    try:
        network = init_network(cfg, path, fix=TRAIN_FIX, member=cfg.init.member)
    except BCError as exc:
        raise WarmStartError(str(exc)) from None
    weights = {k: v.detach().clone() for k, v in network.state_dict().items()}
    if not cfg.init.critic:
        weights = {k: v for k, v in weights.items() if not k.startswith(CRITIC_PREFIXES)}
    return InitModel(path, file_sha256(path), weights, cfg.init.critic, cfg.init.member)


def apply_init(algo: Any, init: InitModel, policy_ids: Iterable[str]) -> list[str]:
    """Load `init` into each trainable policy of `algo` (exactly, see the module docstring), then push the weights
    to the env runners. Returns the policies loaded."""
    loaded = []
    for pid in policy_ids:
        policy = algo.get_policy(pid)
        net = getattr(getattr(policy, "model", None), "net", None)
        if net is None:
            continue
        missing, unexpected = net.load_state_dict(init.weights, strict=False)
        if unexpected or (init.critic and missing):
            raise WarmStartError(f"--init {init.path}: the file's weights do not fit policy {pid!r} "
                                 f"(missing {sorted(missing)[:4]}, unexpected {sorted(unexpected)[:4]})")  # fmt: skip
        reset_twins = getattr(policy, "reset_twins", None)
        if reset_twins is not None:  # an EMA magnet and an average start at the model the run starts from
            reset_twins()
        loaded.append(pid)
    group = getattr(algo, "env_runner_group", None)
    if loaded and group is not None and group.num_remote_env_runners() > 0:
        group.sync_weights(policies=loaded)
    return loaded


def start_from(algo: Any, init: InitModel, exp_dir: Path, echo: Any) -> None:
    """The trainer's warm start before the first iteration: load every trainable policy, record the provenance
    (``init.json``), say so in one line."""
    from common.atomic_files import write_json_atomic

    loaded = apply_init(algo, init, algo.config.policies_to_train or ())
    write_json_atomic(exp_dir / INIT_FILE, {**init.provenance(), "policies": loaded})
    critic = "actor and critic" if init.critic else "actor only (fresh critic)"
    echo(f"warm start: {', '.join(loaded)} from {init.path} ({critic}; sha256 {init.sha256[:12]}…)")
