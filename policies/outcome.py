"""The outcome model: P(win) from the agent's own observation, stored in a model file as the `winrate` extension.

A serving client sends only its own observation (the 176-entry actor vector of spec §15, stacked as the model
stacks it), so the classifier reads exactly that, never the critic's full state. It is a small MLP with its own
input standardisation (buffers fitted on the training ticks) and a Platt calibration of its logit (two buffers
fitted on the validation fights), so the scripted module needs nothing but its own tensors.

Stored in a model file: `PolicyWithWinrate` is the policy network (`NHPolicyNetwork`, every weight and buffer
unchanged) plus this classifier and one exported TorchScript method, ``extension_winrate(obs) -> Tensor``
(probabilities in [0, 1], one per row), which is what `serving.models.model_extensions` looks for. The file
still loads with torch alone and every method of the policy keeps its behaviour; `attach_winrate` rebuilds the
eager policy from a loaded model file so that a file can gain (or replace) the extension.

Training (`fit_outcome`) is plain torch on arrays the caller provides: weighted binary cross-entropy (the
caller weights ticks so that long fights do not dominate), Adam, early stopping on the validation loss, then
Platt scaling on the validation set. Collecting fights and splitting them is `osrs_rllib/evaluation/outcome.py`'s job.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from torch import Tensor, nn

from policies.network import NHPolicyNetwork
from policies.network_config import NetworkConfig

WINRATE = "winrate"
"""Name of the extension (serving protocol `extensions`, model-file metadata, TorchScript method suffix)."""
INPUT_CLIP = 10.0
"""Standardised inputs are clipped to ±this many standard deviations, as the policy's `RunningNorm` does."""
STD_FLOOR = 1e-3
"""Entries that never vary in the training ticks get this standard deviation instead of zero."""


@dataclass(frozen=True)
class OutcomeConfig:
    """How the classifier is shaped and trained; every field is recorded in the model file's metadata."""

    hidden: tuple[int, ...] = (128, 64)
    """Widths of the hidden layers (ReLU)."""
    learning_rate: float = 1e-3
    """Adam step size."""
    weight_decay: float = 1e-5
    """Adam (L2) weight decay."""
    batch_size: int = 1024
    """Ticks per minibatch."""
    epoch_ticks: int = 131072
    """Ticks drawn per epoch, with probability proportional to their weight (so long fights do not dominate,
    and an epoch costs the same whatever the number of fights; neighbouring ticks are near-duplicates anyway)."""
    dropout: float = 0.1
    """Dropout after each hidden layer while training: the observation identifies a fight (its gear and
    spawn), and without it the network memorises the training fights' outcomes."""
    max_epochs: int = 60
    """Upper bound on epochs."""
    patience: int = 6
    """Epochs without a better validation loss before training stops (the best epoch's weights are kept)."""
    seed: int = 0
    """Seed of the initial weights and the minibatch order."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "hidden": list(self.hidden),
            "learning_rate": self.learning_rate,
            "weight_decay": self.weight_decay,
            "batch_size": self.batch_size,
            "epoch_ticks": self.epoch_ticks,
            "dropout": self.dropout,
            "max_epochs": self.max_epochs,
            "patience": self.patience,
            "seed": self.seed,
        }


class OutcomeNetwork(nn.Module):
    """P(win) of the player whose observation this is: standardise → MLP → logit → Platt → sigmoid.

    Args:
        obs_size: Length of the (stacked) actor observation.
        hidden: Hidden layer widths.
        dropout: Dropout probability after each hidden layer (active in training mode only).
    """

    def __init__(self, obs_size: int, hidden: Sequence[int] = (128, 64), dropout: float = 0.0) -> None:
        super().__init__()
        if obs_size < 1:
            raise ValueError(f"obs_size must be >= 1, got {obs_size}")
        if not hidden or any(int(w) < 1 for w in hidden):
            raise ValueError(f"hidden layer widths must be positive, got {list(hidden)}")
        self.obs_size = int(obs_size)
        self.clip = INPUT_CLIP
        self.register_buffer("shift", torch.zeros(self.obs_size))
        self.register_buffer("scale", torch.ones(self.obs_size))
        self.register_buffer("platt_a", torch.ones(()))
        self.register_buffer("platt_b", torch.zeros(()))
        layers: list[nn.Module] = []
        width = self.obs_size
        for w in hidden:
            layers += [nn.Linear(width, int(w)), nn.ReLU(), nn.Dropout(dropout)]
            width = int(w)
        layers.append(nn.Linear(width, 1))
        self.mlp = nn.Sequential(*layers)

    def raw_logit(self, obs: Tensor) -> Tensor:
        """The uncalibrated logit, (B,)."""
        x = torch.clamp((obs - self.shift) * self.scale, -self.clip, self.clip)
        return self.mlp(x).squeeze(-1)

    def forward(self, obs: Tensor) -> Tensor:
        """P(win) in [0, 1] for observations (B, obs_size) → (B,), or (obs_size,) → ()."""
        single = obs.dim() == 1
        if single:
            obs = obs.unsqueeze(0)
        if obs.dim() != 2 or obs.shape[1] != self.obs_size:
            raise ValueError(
                "winrate expects observations of shape (B, "
                + str(self.obs_size)
                + "), got "
                + str(list(obs.shape))
            )
        p = torch.sigmoid(self.platt_a * self.raw_logit(obs.to(torch.float32)) + self.platt_b)
        return p.squeeze(0) if single else p

    @torch.jit.ignore
    def fit_standardisation(self, obs: np.ndarray, weights: np.ndarray | None = None) -> None:
        """Set the input shift and scale to the (weighted) mean and standard deviation of `obs`."""
        w = np.ones(len(obs)) if weights is None else np.asarray(weights, dtype=np.float64)
        w = w / w.sum()
        mean = (obs * w[:, None]).sum(0, dtype=np.float64)
        var = ((obs - mean) ** 2 * w[:, None]).sum(0, dtype=np.float64)
        with torch.no_grad():
            self.shift.copy_(torch.from_numpy(mean.astype(np.float32)))
            self.scale.copy_(torch.from_numpy((1.0 / np.maximum(np.sqrt(var), STD_FLOOR)).astype(np.float32)))


class PolicyWithWinrate(NHPolicyNetwork):
    """The policy network plus the outcome classifier, exported as ``extension_winrate`` (see module docstring).

    Every method of `NHPolicyNetwork` is inherited untouched, so actions, values and probabilities of the file
    are the original policy's.
    """

    def __init__(self, obs_size: int, critic_size: int, config: NetworkConfig, winrate: OutcomeNetwork) -> None:
        super().__init__(obs_size, critic_size, config)
        if winrate.obs_size != self.obs_size:
            raise ValueError(
                f"the outcome model reads {winrate.obs_size} entries but the policy's observation has {self.obs_size}"
            )
        self.winrate = winrate

    @torch.jit.export
    def extension_winrate(self, obs: Tensor) -> Tensor:
        """P(win) of the player observing `obs` (B, obs_size) → (B,) in [0, 1]; what serving answers."""
        with torch.no_grad():
            return self.winrate(obs)


def attach_winrate(module: torch.nn.Module, meta: dict[str, Any], winrate: OutcomeNetwork) -> PolicyWithWinrate:
    """An eager `PolicyWithWinrate` holding `module`'s policy weights (a loaded model file's scripted network and
    its metadata) and `winrate`; an outcome model already in `module` is replaced.

    Raises:
        ValueError: The metadata lacks the network config, or the weights do not fit it.
    """
    if not isinstance(meta.get("network"), dict):
        raise ValueError("the model file's metadata has no network config; re-export the model with this version")
    policy = NHPolicyNetwork(int(meta["obs_size"]), int(meta["critic_size"]), NetworkConfig.from_dict(meta["network"]))
    # A scripted module's state_dict also lists non-persistent buffers (the contract's index tables), which
    # the fresh network rebuilt itself; they must agree, or the file was written for another contract.
    wanted = policy.state_dict()
    found = {k: v for k, v in module.state_dict().items() if not k.startswith(f"{WINRATE}.")}
    for name, table in policy.named_buffers():
        if name not in wanted and name in found and not torch.equal(found.pop(name), table):
            raise ValueError(f"the model file's {name} table differs from this contract's; re-export the model")
    state = found
    policy.load_state_dict(state, strict=True)
    combined = PolicyWithWinrate(policy.obs_size, policy.critic_size, policy.config, copy.deepcopy(winrate))
    missing, unexpected = combined.load_state_dict(
        {**state, **{f"{WINRATE}.{k}": v for k, v in winrate.state_dict().items()}}, strict=True
    )
    assert not missing and not unexpected
    combined.eval()
    return combined


# ---------------------------------------------------------------------------------------------------------
# Training
# ---------------------------------------------------------------------------------------------------------
@dataclass
class FitResult:
    """The trained classifier and how training went."""

    network: OutcomeNetwork
    best_epoch: int
    epochs: int
    train_loss: list[float] = field(default_factory=list)
    """Weighted log-loss on the training ticks, per epoch."""
    val_loss: list[float] = field(default_factory=list)
    """Weighted log-loss on the validation ticks, per epoch (before calibration)."""
    platt: tuple[float, float] = (1.0, 0.0)
    val_loss_calibrated: float = math.nan


def _weighted_bce(logits: Tensor, y: Tensor, w: Tensor) -> Tensor:
    return (nn.functional.binary_cross_entropy_with_logits(logits, y, reduction="none") * w).sum() / w.sum()


def _logits(net: OutcomeNetwork, x: Tensor, batch: int = 65536) -> Tensor:
    with torch.no_grad():
        return torch.cat([net.raw_logit(x[i : i + batch]) for i in range(0, len(x), batch)])


def fit_platt(logits: Tensor, y: Tensor, w: Tensor, steps: int = 200) -> tuple[float, float]:
    """(a, b) minimising the weighted log-loss of sigmoid(a · logit + b): Platt scaling, by L-BFGS."""
    ab = torch.tensor([1.0, 0.0], requires_grad=True)
    opt = torch.optim.LBFGS([ab], lr=0.5, max_iter=steps, line_search_fn="strong_wolfe")

    def closure() -> Tensor:
        opt.zero_grad()
        loss = _weighted_bce(ab[0] * logits + ab[1], y, w)
        loss.backward()
        return loss

    opt.step(closure)
    a, b = (float(v) for v in ab.detach())
    if not (math.isfinite(a) and math.isfinite(b)):
        return 1.0, 0.0
    return a, b


def fit_outcome(
    x_train: np.ndarray,
    y_train: np.ndarray,
    w_train: np.ndarray,
    x_val: np.ndarray,
    y_val: np.ndarray,
    w_val: np.ndarray,
    config: OutcomeConfig | None = None,
) -> FitResult:
    """Train an `OutcomeNetwork` on observations `x` (N, D), labels `y` (1 won, 0 not) and tick weights `w`.

    Early stopping keeps the weights of the epoch with the lowest weighted validation log-loss; Platt scaling
    is then fitted on the validation ticks, which is why `osrs_rllib.evaluation.outcome` reports figures on fights that
    neither step saw.

    Raises:
        ValueError: Empty or mismatched arrays, labels outside {0, 1}, or non-positive weights.
    """
    cfg = config or OutcomeConfig()
    for name, (x, y, w) in {"training": (x_train, y_train, w_train), "validation": (x_val, y_val, w_val)}.items():
        if x.ndim != 2 or len(x) == 0:
            raise ValueError(f"{name} observations must be a non-empty (N, D) array, got shape {x.shape}")
        if len(y) != len(x) or len(w) != len(x):
            raise ValueError(f"{name} set: {len(x)} observations, {len(y)} labels, {len(w)} weights; give one each")
        if not np.isin(y, (0.0, 1.0)).all():
            raise ValueError(f"{name} labels must be 0 or 1")
        if not (np.asarray(w) > 0).all():
            raise ValueError(f"{name} weights must be positive")
    if x_val.shape[1] != x_train.shape[1]:
        raise ValueError(f"validation rows have {x_val.shape[1]} entries, training rows {x_train.shape[1]}")
    rng = np.random.default_rng(cfg.seed)
    torch.manual_seed(cfg.seed)
    net = OutcomeNetwork(x_train.shape[1], cfg.hidden, cfg.dropout)
    net.fit_standardisation(x_train, w_train)
    xt, yt = (torch.from_numpy(np.ascontiguousarray(a, dtype=np.float32)) for a in (x_train, y_train))
    xv, yv, wv = (torch.from_numpy(np.ascontiguousarray(a, dtype=np.float32)) for a in (x_val, y_val, w_val))
    draw_p = np.asarray(w_train, dtype=np.float64) / np.sum(w_train, dtype=np.float64)
    opt = torch.optim.Adam(net.parameters(), lr=cfg.learning_rate, weight_decay=cfg.weight_decay)
    result = FitResult(network=net, best_epoch=-1, epochs=0)
    best_loss, best_state, since_best = math.inf, copy.deepcopy(net.state_dict()), 0
    for epoch in range(cfg.max_epochs):
        net.train()
        order = torch.from_numpy(rng.choice(len(xt), size=cfg.epoch_ticks, p=draw_p))
        total = 0.0
        for i in range(0, len(order), cfg.batch_size):
            idx = order[i : i + cfg.batch_size]
            loss = nn.functional.binary_cross_entropy_with_logits(net.raw_logit(xt[idx]), yt[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += float(loss.detach()) * len(idx)
        net.eval()
        val = float(_weighted_bce(_logits(net, xv), yv, wv))
        result.train_loss.append(total / len(order))
        result.val_loss.append(val)
        result.epochs = epoch + 1
        if val < best_loss - 1e-5:
            best_loss, best_state, since_best, result.best_epoch = val, copy.deepcopy(net.state_dict()), 0, epoch
        else:
            since_best += 1
            if since_best >= cfg.patience:
                break
    net.load_state_dict(best_state)
    net.eval()
    val_logits = _logits(net, xv)
    a, b = fit_platt(val_logits, yv, wv)
    with torch.no_grad():
        net.platt_a.fill_(a)
        net.platt_b.fill_(b)
    result.platt = (a, b)
    result.val_loss_calibrated = float(_weighted_bce(a * val_logits + b, yv, wv))
    return result
