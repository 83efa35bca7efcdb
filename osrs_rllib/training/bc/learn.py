"""Behaviour cloning: train a training config's policy network on recorded fights.

``osrs-rllib bc REPLAYS... -o MODEL.nhmodel [--config configs/nh.yml] [--player expert]`` reads replay files
(``osrs-rllib fight A B --record DIR``, docs/replays.md), learns every head of the chosen seats' actions and
writes an ordinary model file that every tool seats (`fight`, `rate`, `serve`, PPO's targets, ...).

How to run it (docs/training.md, section Behaviour cloning, has the measured figures)::

    osrs-rllib fight expert baseline --n 2000 --build LMS_PURE,LMS_ZERKER,LMS_MED,PURE,ZERKER,MED \\
        --set only_switch_prayer_when_about_to_attack=false ... --record demos/     # nh.yml's rules
    osrs-rllib bc demos/ -o bc-expert.nhmodel --player expert
    osrs-rllib fight bc-expert.nhmodel baseline --n 3000 --build LMS_PURE,LMS_ZERKER,LMS_MED,PURE,ZERKER,MED

The pieces, in the order the command runs them:

* **Demonstrations** (`load_demonstrations`). A replay stores the seed, the fight parameters and each acting
  seat's actions and masks, not observations. The fight is re-run on the engine from its seed with the
  recorded actions (as `osrs_rllib.replay.verify` does) and each chosen seat's observation is read before
  every step, frame-stacked as the config's ``env.frame_stack`` says: exactly the vector the env hands the
  policy, at no cost in file size. The re-run is checked against the file as it goes (every mask the seat
  acted on, and the outcome), so a replay that no longer re-runs on this simulator is refused, not learnt.
* **Player filter.** ``--player`` picks seats by index (``0``/``1``) or player name (``expert``, a model
  file's name); by default every seat that acted through the action interface (the in-simulator baseline
  has no actions to learn).
* **Split by fight.** A seeded shuffle holds out whole fights (ticks of one fight are near copies of each
  other, so a split by tick would measure memory, not generalisation).
* **Normalisation from the replays.** Before training, the network's running mean and variance of the actor
  input, the critic input and the heads' one-hot context are set from the demonstrations (every sample,
  held-out fights included: they are statistics of the data, not of the labels); they stay fixed while
  training, as PPO keeps them fixed within an iteration.
* **Loss** (`head_log_probs` below): the negative log-likelihood of every head along the recorded action,
  teacher-forced through the autoregressive order with the env mask and the §14.2 dependencies applied, by
  the network's own `NHPolicyNetwork.head_log_probs`, the computation behind `evaluate` that PPO's loss
  uses. A head left with one legal value (head 8 always, heads 1-3 and 10 whenever the attack or movement
  decides them) has log-probability exactly 0: it adds nothing to the loss or its gradient, so forced heads
  never dominate it. Accuracy counts a head only where it was a choice (two or more legal values).
* **Output.** The network of the epoch with the lowest held-out loss, as a model file whose metadata holds
  the training config (so the fight tools play it by its rules, `policies.fight_rules`) and a ``bc`` record
  (replays, fights, samples, epochs, held-out per-head accuracy and loss). Its critic is untrained (cloning
  has no returns to fit); only its input statistics are set.

Bad input gives one `BCError` naming the file and the problem, raised before anything is written: a replay
of another contract version or another format, a cut-off or damaged replay, a replay played under other
fight rules than the config's, a replay that does not re-run, a filter that selects nothing, an ``--init``
model file of another shape.
"""

from __future__ import annotations

import copy
import dataclasses
import logging
import math
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import torch
from pydantic import ConfigDict, Field, Strict
from pydantic.dataclasses import dataclass as settings_dataclass

from common.stops import StopRequest
from common.validation import Count, KeyedError, PositiveCount, PositiveNumber, expect, from_mapping
from envs.nh.contract import (
    CRITIC_SIZE,
    HEAD_OFFSETS,
    HEADS,
    NUM_HEADS,
    NUM_LOGITS,
    OBS_SIZE,
    FrameStack,
)
from envs.nh.core_engine import check_engine
from osrs_rllib.config import TrainConfig
from osrs_rllib.training.bc.data import BCError, Demonstrations, load_demonstrations, split_by_fight
from osrs_rllib.training.bc.data import replay_files as replay_files  # re-exported: the data side's old address
from osrs_rllib.training.bc.data import selected_seats as selected_seats
from policies.model_file import ModelFile, ModelFileError, load_model_file, save_model_file
from policies.network import MASKED_LOGIT, NHPolicyNetwork, batch_moments, combine_moments

logger = logging.getLogger(__name__)

HEAD_IDS: tuple[str, ...] = tuple(h.id for h in HEADS)
"""The heads' names in order: the per-head keys of metrics and TensorBoard tags."""
LEGAL_LOG_PROB = MASKED_LOGIT / 2
"""A value whose log-probability is above this was legal (illegal ones sit near `MASKED_LOGIT`)."""
# ---------------------------------------------------------------------------------------------------------
# Settings
# ---------------------------------------------------------------------------------------------------------
class BCSettingsError(KeyedError, BCError):
    """A cloning option is unknown or invalid; `key` names it (``lr: got -1.0; expected a positive number``)."""


@settings_dataclass(frozen=True, config=ConfigDict(extra="forbid", allow_inf_nan=False))
class BCSettings:
    """Hyperparameters of one cloning run (the command's options), checked by `common.validation`'s types."""

    epochs: PositiveCount = 6
    """Passes over the training fights' samples (2,000 expert fights: 6 epochs reach 98 % held-out action accuracy
    and a 93 % clone, docs/training.md)."""
    batch_size: PositiveCount = 1024
    """Samples per optimiser step."""
    lr: PositiveNumber = 1e-3
    """Adam's learning rate, annealed linearly to `lr_final_fraction` of it over the run."""
    lr_final_fraction: Annotated[float, Strict(), Field(gt=0, le=1), expect("a fraction in (0, 1]")] = 0.1
    """The learning rate of the last step, as a fraction of `lr`."""
    grad_clip: PositiveNumber = 1.0
    """Global gradient-norm clip."""
    holdout: Annotated[float, Strict(), Field(ge=0, lt=1), expect("a share of the fights in [0, 1)")] = 0.1
    """Share of the fights held out (whole fights); 0 trains on every fight and keeps the last epoch."""
    seed: Count = 0
    """Seed of the split, the network's initialisation and the minibatch order."""
    threads: PositiveCount = 1
    """Torch intra-op threads while training. One, because the batches are small and the laptop's other core
    is busy (simulating, serving): on a loaded 2-core machine two threads made a step 6× slower."""

    @classmethod
    def from_options(cls, values: dict[str, Any]) -> BCSettings:
        """Build from the command's options; the first bad one raises `BCSettingsError` naming it."""
        return from_mapping(cls, values, BCSettingsError)


DEFAULT_SETTINGS = BCSettings()
"""The settings of a run given none (the defaults above)."""


# ---------------------------------------------------------------------------------------------------------
# The network
# ---------------------------------------------------------------------------------------------------------
def network_sizes(cfg: TrainConfig) -> tuple[int, int]:
    """(actor input, critic input) of the network the config trains (as `policies.rllib_model` builds it)."""
    frames = len(FrameStack(cfg.env.frame_stack, 1).offsets)
    obs_size = frames * OBS_SIZE
    with_critic = cfg.env.to_fight_params().include_opponent_observation
    return obs_size, frames * CRITIC_SIZE if with_critic else obs_size


INIT_FIX = "pass the config it was trained with (--config, --set model.*=...) or leave out --init"
"""What `init_network`'s shape error tells a `bc` user to do (`osrs_rllib/training/warm_start.py` tells a `train`
user)."""


def init_network(
    cfg: TrainConfig, init: str | os.PathLike[str] | None = None, fix: str = INIT_FIX, member: int | None = None
) -> NHPolicyNetwork:
    """The config's network: freshly initialised, or holding the weights of the model file `init` (of its member
    `member` when the file is a per-fight mixture: a run trains one network, so a mixture needs one named).

    Raises:
        BCError: `init` cannot be loaded, is a mixture without `member` (or `member` is not one of its members), or
            its shape (input sizes, network config) is not the config's.
    """
    obs_size, critic_size = network_sizes(cfg)
    network = NHPolicyNetwork(obs_size, critic_size, cfg.model)
    if init is None:
        return network
    try:
        model = pick_member(load_model_file(init), member)
    except ModelFileError as exc:
        raise BCError(str(exc)) from None
    theirs = {"obs_size": model.obs_size, "critic_size": model.critic_size, **(model.meta.get("network") or {})}
    ours = {"obs_size": obs_size, "critic_size": critic_size, **cfg.model.to_dict()}
    differ = [k for k in ours if theirs.get(k) != ours[k]]
    if differ:
        detail = ", ".join(f"{k} {theirs.get(k)!r} (config: {ours[k]!r})" for k in differ)
        raise BCError(
            f"--init {init}: the model file has another shape than the config's network: {detail}; {fix}"
        )
    wanted = network.state_dict()
    network.load_state_dict({k: v for k, v in model.module.state_dict().items() if k in wanted}, strict=True)
    return network


def pick_member(model: ModelFile, member: int | None) -> ModelFile:
    """`model` itself, or its member `member` (`ModelFile.member`): what a warm start loads.

    Raises:
        ModelFileError: A mixture without `member`, or a `member` the file does not hold.
    """
    if member is None:
        return model.single("a warm start (set init.member to start from one of its members)")
    if not 0 <= member < model.member_count:
        raise ModelFileError(f"init.member {member}: {model.path} holds {model.member_count} member(s), "
                             f"0 to {model.member_count - 1}")  # fmt: skip
    return model.member(member)


def set_normalization(network: NHPolicyNetwork, demos: Demonstrations) -> None:
    """Set the running statistics of the actor input, critic input and one-hot head context from the
    demonstrations (replacing what the network held)."""
    parts = [batch_moments(demos.obs[i : i + 65536]) for i in range(0, len(demos), 65536)]
    obs_count, obs_mean, obs_var = combine_moments(parts)
    onehot = np.zeros((len(demos), NUM_LOGITS), dtype=np.float32)
    np.put_along_axis(onehot, demos.actions + np.asarray(HEAD_OFFSETS, dtype=np.int64), 1.0, axis=1)
    norms = network.normalizers()
    for name, (count, mean, var) in {
        "obs": (obs_count, obs_mean, obs_var),
        "critic": demos.critic_moments,
        "context": batch_moments(onehot),
    }.items():
        norm = norms[name]
        norm.count.zero_()
        norm.mean.zero_()
        norm.var.fill_(1.0)
        norm.merge(count, torch.as_tensor(mean), torch.as_tensor(var))


def head_log_probs(
    network: NHPolicyNetwork, obs: torch.Tensor, masks: torch.Tensor, actions: torch.Tensor
) -> torch.Tensor:
    """Masked log-probabilities of every value of every head (B, 12, MAX), teacher-forced along `actions`: the
    network's own `head_log_probs`, whose gathered values are the log-probabilities PPO's loss evaluates."""
    return network.head_log_probs(network.features(obs), masks, actions)


@dataclass
class HeadTally:
    """Sums over samples, per head, from which the loss and accuracy of a pass are read."""

    samples: int = 0
    nll: float = 0.0
    """Σ over samples of the summed per-head NLL (the objective × samples)."""
    exact: int = 0
    """Samples whose every head is the most probable value along the recorded path (the greedy action)."""
    head_nll: np.ndarray = field(default_factory=lambda: np.zeros(NUM_HEADS))
    head_correct: np.ndarray = field(default_factory=lambda: np.zeros(NUM_HEADS, dtype=np.int64))
    head_choices: np.ndarray = field(default_factory=lambda: np.zeros(NUM_HEADS, dtype=np.int64))
    """Samples in which the head had two or more legal values (the ones its accuracy counts)."""

    def add(self, log_probs: torch.Tensor, actions: torch.Tensor) -> None:
        with torch.no_grad():
            picked = log_probs.gather(-1, actions.unsqueeze(-1)).squeeze(-1)  # (B, 12)
            choice = (log_probs > LEGAL_LOG_PROB).sum(-1) >= 2
            correct = log_probs.argmax(-1) == actions
            self.samples += int(actions.shape[0])
            self.nll += float(-picked.sum())
            self.exact += int(correct.all(-1).sum())
            self.head_nll += (-(picked * choice)).sum(0).double().numpy()
            self.head_correct += (correct & choice).sum(0).numpy()
            self.head_choices += choice.sum(0).numpy()

    def metrics(self) -> dict[str, Any]:
        """``loss`` (mean summed NLL), ``action_accuracy``, and per head ``accuracy``, ``loss`` (mean NLL where
        the head was a choice) and ``choice_rate`` (how often it was one); None where a head never was."""
        n = max(self.samples, 1)
        per_head = {}
        for h, name in enumerate(HEAD_IDS):
            k = int(self.head_choices[h])
            per_head[name] = {
                "accuracy": None if k == 0 else float(self.head_correct[h] / k),
                "loss": None if k == 0 else float(self.head_nll[h] / k),
                "choice_rate": float(k / n),
            }
        return {"samples": self.samples, "loss": self.nll / n, "action_accuracy": self.exact / n, "heads": per_head}


def evaluate(
    network: NHPolicyNetwork, demos: Demonstrations, rows: np.ndarray, batch_size: int = 4096
) -> dict[str, Any]:
    """Loss and accuracies (`HeadTally.metrics`) of the network on the given rows, without training."""
    tally = HeadTally()
    was_training = network.training
    network.eval()
    with torch.no_grad():
        for start in range(0, len(rows), batch_size):
            idx = rows[start : start + batch_size]
            obs, masks, actions = _batch(demos, idx)
            tally.add(head_log_probs(network, obs, masks, actions), actions)
    network.train(was_training)
    return tally.metrics()


def _batch(demos: Demonstrations, idx: np.ndarray) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return (
        torch.from_numpy(demos.obs[idx]),
        torch.from_numpy(demos.masks[idx].astype(np.float32)),
        torch.from_numpy(demos.actions[idx]),
    )


def _check_legal(network: NHPolicyNetwork, demos: Demonstrations) -> None:
    """Every recorded head value must be legal for the network (env mask and §14.2), or its NLL is ~1e9."""
    with torch.no_grad():
        for start in range(0, len(demos), 8192):
            idx = np.arange(start, min(start + 8192, len(demos)))
            obs, masks, actions = _batch(demos, idx)
            picked = head_log_probs(network, obs, masks, actions).gather(-1, actions.unsqueeze(-1)).squeeze(-1)
            bad = (picked <= LEGAL_LOG_PROB).nonzero()
            if len(bad):
                row, head = int(idx[int(bad[0, 0])]), int(bad[0, 1])
                raise BCError(
                    f"{demos.files[int(demos.fight[row])]}: player {int(demos.seat[row])} chose {HEAD_IDS[head]}="
                    f"{int(demos.actions[row, head])}, which its mask and the §14.2 dependencies forbid; a replay "
                    "whose actions break the contract cannot be learnt"
                )


# ---------------------------------------------------------------------------------------------------------
# Training
# ---------------------------------------------------------------------------------------------------------
@dataclass
class BCResult:
    """What `train_bc` produced: the written model file and the figures recorded in it."""

    path: Path
    logdir: Path
    best_epoch: int
    train: dict[str, Any]
    heldout: dict[str, Any] | None
    info: dict[str, Any]
    """The ``bc`` record of the model file's metadata."""


def default_logdir(out: str | os.PathLike[str]) -> Path:
    """TensorBoard directory of a run writing `out`: ``<out's directory>/<out's stem>.tensorboard``."""
    out = Path(out)
    return out.parent / f"{out.stem}.tensorboard"


def train_bc(
    demos: Demonstrations,
    cfg: TrainConfig,
    out: str | os.PathLike[str],
    settings: BCSettings = DEFAULT_SETTINGS,
    *,
    network: NHPolicyNetwork | None = None,
    logdir: str | os.PathLike[str] | None = None,
    players: Sequence[str] | None = None,
    normalize: bool = True,
    progress: Callable[[int, dict[str, Any], dict[str, Any] | None], None] | None = None,
) -> BCResult:
    """Clone `demos` into the config's network and write it to `out` as a model file.

    Args:
        demos: The demonstrations (`load_demonstrations`).
        cfg: The training config: the network's shape and the metadata the fight tools read its rules from.
        out: The model file to write (``*.nhmodel``).
        settings: Epochs, batch size, learning rate, held-out share, seed, threads.
        network: Start from this network (`init_network` with ``--init``); a fresh one of the config by default.
        logdir: TensorBoard directory (default `default_logdir`).
        players: The player filter used, recorded in the metadata.
        normalize: Set the input statistics from `demos` (False keeps the network's, e.g. an ``--init`` model's,
            whose weights were learnt with them).
        progress: Called after every epoch with (epoch, training metrics, held-out metrics or None).

    Raises:
        BCError: Too few fights to hold some out, or a recorded action the contract forbids (both before
            anything is written).
    """
    torch.manual_seed(settings.seed)
    train_rows, held_rows = split_by_fight(demos.fight, settings.holdout, settings.seed)
    net = network if network is not None else init_network(cfg)
    if normalize:
        set_normalization(net, demos)
    _check_legal(net, demos)  # the last check: nothing is written before it

    from torch.utils.tensorboard import SummaryWriter

    logdir = Path(logdir) if logdir is not None else default_logdir(out)
    writer = SummaryWriter(str(logdir))
    writer.add_text("config", "```\n" + str(cfg.to_dict()) + "\n```")
    writer.add_text("bc", f"replays: {len(demos.files)}, samples: {len(demos)}, {dataclasses.asdict(settings)}")
    threads = torch.get_num_threads()
    torch.set_num_threads(settings.threads)
    stop = StopRequest(on_first=lambda signum: logger.warning(
        "stop requested: finishing this epoch, then writing the best epoch so far; a second signal ends it now"))
    stop.install()
    try:
        best_epoch, best_train, best_held, epochs_run = _fit(net, demos, train_rows, held_rows, settings, writer,
                                                             progress, stop)
    except BaseException:
        stop.uninstall()
        raise
    finally:
        torch.set_num_threads(threads)
        writer.close()

    info = {
        "replays": len(demos.files),
        "fights": len(np.unique(demos.fight)),
        "heldout_fights": len(np.unique(demos.fight[held_rows])),
        "samples": len(demos),
        "train_samples": len(train_rows),
        "heldout_samples": len(held_rows),
        "players": dict(demos.players),
        "player_filter": list(players or []),
        "sources": sorted({str(Path(f).parent) for f in demos.files}),
        "settings": dataclasses.asdict(settings),
        "best_epoch": best_epoch,
        "epochs_run": epochs_run,
        "stopped": stop.signal_name if stop.requested else None,
        "stopped_hard": stop.hard,
        "not_trained": [] if epochs_run == settings.epochs else [f"epochs {epochs_run + 1}-{settings.epochs}"],
        "train": best_train,
        "heldout": best_held,
        "normalization": "replays" if normalize else "init model",
        "critic": "untrained (behaviour cloning fits the actor only)",
    }
    metadata = {"experiment": None, "iteration": 0, "env_steps": 0, "config": cfg.to_dict(), "bc": info}
    frames = FrameStack(cfg.env.frame_stack, 1).offsets
    try:
        with stop.shielded(raise_after=False):  # the best epoch is being written: a second Ctrl-C waits for it
            path = save_model_file(net, out, frame_stack=frames, metadata=metadata)
    finally:
        stop.uninstall()
    return BCResult(path=path, logdir=logdir, best_epoch=best_epoch, train=best_train, heldout=best_held, info=info)


def _fit(
    net: NHPolicyNetwork,
    demos: Demonstrations,
    train_rows: np.ndarray,
    held_rows: np.ndarray,
    settings: BCSettings,
    writer: Any,
    progress: Callable[[int, dict[str, Any], dict[str, Any] | None], None] | None,
    stop: StopRequest | None = None,
) -> tuple[int, dict[str, Any], dict[str, Any] | None, int]:
    """The epochs: Adam on the summed per-head NLL of shuffled minibatches, a held-out pass after each epoch;
    `net` ends with the weights of the epoch with the lowest held-out loss (the last without held-out fights).
    A stop request ends the epochs after the current one; a second signal (`HardStop`) abandons the current
    one, keeping the best finished epoch (none finished: the interrupt goes on to the caller).

    Returns:
        (that epoch, its training metrics, its held-out metrics or None, the epochs finished).
    """
    optimizer = torch.optim.Adam(net.parameters(), lr=settings.lr)
    total_steps = settings.epochs * max(1, math.ceil(len(train_rows) / settings.batch_size))
    fraction = settings.lr_final_fraction
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: 1.0 - (1.0 - fraction) * min(step, total_steps) / total_steps
    )
    rng = np.random.default_rng(settings.seed)
    best_score, best_state, best = math.inf, copy.deepcopy(net.state_dict()), (0, {}, None)
    net.train()
    epochs_run = 0
    for epoch in range(1, settings.epochs + 1):
        if stop is not None and stop.requested and epochs_run:
            break
        try:
            best_score, best_state, best = _epoch(net, demos, train_rows, held_rows, settings, writer, progress,
                                                  epoch, optimizer, schedule, rng, (best_score, best_state, best))
        except KeyboardInterrupt:
            if not epochs_run:
                raise
            logger.warning("epoch %d interrupted: not trained; keeping epoch %d", epoch, best[0])
            break
        epochs_run = epoch
    net.load_state_dict(best_state)
    net.eval()
    return (*best, epochs_run)


def _epoch(
    net: NHPolicyNetwork,
    demos: Demonstrations,
    train_rows: np.ndarray,
    held_rows: np.ndarray,
    settings: BCSettings,
    writer: Any,
    progress: Callable[[int, dict[str, Any], dict[str, Any] | None], None] | None,
    epoch: int,
    optimizer: Any,
    schedule: Any,
    rng: np.random.Generator,
    kept: tuple[float, Any, Any],
) -> tuple[float, Any, Any]:
    """One epoch of `_fit`; returns the best (score, weights, (epoch, train, held)) so far."""
    best_score, best_state, best = kept
    started = time.perf_counter()
    tally = HeadTally()
    order = rng.permutation(train_rows)
    for start in range(0, len(order), settings.batch_size):
        obs, masks, actions = _batch(demos, order[start : start + settings.batch_size])
        log_probs = head_log_probs(net, obs, masks, actions)
        loss = -log_probs.gather(-1, actions.unsqueeze(-1)).squeeze(-1).sum(-1).mean()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(net.parameters(), settings.grad_clip)
        optimizer.step()
        schedule.step()
        tally.add(log_probs.detach(), actions)
    rate = len(train_rows) / max(time.perf_counter() - started, 1e-9)
    train = tally.metrics()
    held = evaluate(net, demos, held_rows) if len(held_rows) else None
    _log_epoch(writer, epoch, train, held, optimizer.param_groups[0]["lr"], rate)
    score = held["loss"] if held is not None else -epoch  # no held-out fights: keep the last epoch
    if score < best_score:
        best_score, best_state, best = score, copy.deepcopy(net.state_dict()), (epoch, train, held)
    logger.info("epoch %d: loss %.4f, held-out loss %s", epoch, train["loss"],
                "-" if held is None else f"{held['loss']:.4f}")
    if progress is not None:
        progress(epoch, train, held)
    return best_score, best_state, best


def _log_epoch(
    writer: Any, epoch: int, train: dict[str, Any], held: dict[str, Any] | None, lr: float, samples_per_s: float
) -> None:
    """One epoch's scalars: ``<split>/loss``, ``<split>/action_accuracy``, ``<split>/accuracy_<head>``,
    ``<split>/loss_<head>`` for the ``train`` and ``heldout`` splits, and ``charts/``."""
    for split, metrics in (("train", train), ("heldout", held)):
        if metrics is None:
            continue
        writer.add_scalar(f"{split}/loss", metrics["loss"], epoch)
        writer.add_scalar(f"{split}/action_accuracy", metrics["action_accuracy"], epoch)
        for head, m in metrics["heads"].items():
            if m["accuracy"] is not None:
                writer.add_scalar(f"{split}/accuracy_{head}", m["accuracy"], epoch)
                writer.add_scalar(f"{split}/loss_{head}", m["loss"], epoch)
    writer.add_scalar("charts/learning_rate", lr, epoch)
    writer.add_scalar("charts/samples_per_s", samples_per_s, epoch)
    writer.flush()


# ---------------------------------------------------------------------------------------------------------
# The command
# ---------------------------------------------------------------------------------------------------------
def bc_command(
    replays: Sequence[str | os.PathLike[str]],
    out: str | os.PathLike[str],
    config: str,
    overrides: Sequence[str],
    players: Sequence[str] | None,
    settings: dict[str, Any],
    logdir: str | os.PathLike[str] | None,
    init: str | os.PathLike[str] | None,
    engine: str,
    echo: Callable[[str], None],
    fail: Callable[[str], Exception],
) -> int:
    """``osrs-rllib bc``: check every input, load the demonstrations, train, write, report; 0 on success.

    Every check runs before anything is written (the output's suffix, the config, ``--init``'s shape, every
    replay), so bad input costs one error line (``fail``'s exception is raised) and leaves no file behind.
    """
    from osrs_rllib.config import ConfigError, load_config
    from policies.model_file import MODEL_SUFFIX

    if Path(out).suffix != MODEL_SUFFIX:
        raise fail(f"-o {out}: a model file must end in {MODEL_SUFFIX} (the fight tools recognise models by it)")
    try:
        cfg = load_config(config, list(overrides))
        run = BCSettings.from_options({"seed": cfg.seed, **{k: v for k, v in settings.items() if v is not None}})
        check_engine(engine)
        network = init_network(cfg, init) if init is not None else None  # fresh ones: seeded in train_bc
        started = time.perf_counter()
        demos = load_demonstrations(replays, cfg, players, engine)
    except (ConfigError, BCError, ValueError) as exc:
        raise fail(str(exc)) from None
    fights = len(np.unique(demos.fight))
    echo(f"{len(demos)} samples from {fights} fight(s) of {len(demos.files)} replay(s) "
         f"({', '.join(f'{k}: {v}' for k, v in sorted(demos.players.items()))}), re-run in "
         f"{time.perf_counter() - started:.0f} s")

    def report(epoch: int, train: dict[str, Any], held: dict[str, Any] | None) -> None:
        line = f"epoch {epoch}/{run.epochs}: loss {train['loss']:.4f}, action accuracy {train['action_accuracy']:.3f}"
        if held is not None:
            line += f"; held out: loss {held['loss']:.4f}, action accuracy {held['action_accuracy']:.3f}"
        echo(line)

    try:
        result = train_bc(demos, cfg, out, run, network=network, logdir=logdir, players=players,
                          normalize=init is None, progress=report)
    except BCError as exc:
        raise fail(str(exc)) from None
    except KeyboardInterrupt:  # a second stop signal before any epoch finished
        echo("interrupted during the first epoch: nothing trained, nothing written")
        return 130
    shown = result.heldout if result.heldout is not None else result.train
    echo(f"{'held-out' if result.heldout is not None else 'training'} accuracy per head (epoch {result.best_epoch}; "
         "counted where the head had a choice, share of samples in brackets):")
    for head, m in shown["heads"].items():
        figure = "-" if m["accuracy"] is None else f"{m['accuracy']:.3f}"
        echo(f"  {head:<18} {figure:>6}  ({m['choice_rate']:.0%})")
    echo(f"  {'whole action':<18} {shown['action_accuracy']:>6.3f}")
    from osrs_rllib.evaluation import trained_builds

    builds = ",".join(b.name for b in trained_builds(cfg.env.to_fight_params()))
    echo(f"wrote {result.path} (TensorBoard: {result.logdir}); try it: osrs-rllib fight {result.path} baseline "
         f"--build {builds}")
    if result.info["not_trained"]:
        echo(f"stopped ({result.info['stopped']}) after epoch {result.info['epochs_run']}: "
             f"{', '.join(result.info['not_trained'])} not trained")
        return 130 if result.info["stopped_hard"] else 0
    return 0
