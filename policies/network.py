"""The NH policy network: an actor with 12 autoregressive masked action heads and a full-state critic.

This module is plain torch (no RLlib, no Ray) so that the same network trains under RLlib
(`policies/rllib_model.py` wraps it), is scripted with `torch.jit.script` and saved as a model file
(`policies/model_file.py`), and is served by anything that has torch.

Shape of the network (sizes from `NetworkConfig` and the contract of `envs/nh/contract.py`)::

    obs (B, F·176) ─ RunningNorm ─ [frame encoder, shared per frame] ─ actor MLP ─ features (B, T)
    features ─ Linear ─ per-head trunk part (B, 12, H)
    head h:  hidden_h = act(trunk_part_h + ctx_h @ W1c[h] + b1[h]);  logits_h = hidden_h @ W2[h] + b2[h]
             ctx_h = clip(RunningNorm(one-hot of all 45 choices)) with the entries of heads ≥ h zeroed
             legal_h = env_mask_h AND not forbidden by §14.2 given heads < h; nothing legal → value 0
    critic (B, F·269) ─ RunningNorm ─ critic MLP [+ actor features] ─ Linear ─ value (B,)

Why these choices:

* **Autoregressive heads.** "Melee special only if melee" is a dependency between heads (§14.2); a head
  that sees the earlier choices can learn it, and the dependency mask makes illegal combinations
  impossible rather than merely unlikely. The §14.2 table is applied as one (45, 45) matrix
  (`DEP_FORBIDS`): after choosing logit `l`, row `l` lists what it forbids.
* **One batched computation for teacher forcing.** The PPO loss evaluates given actions, so all 12
  heads are computed at once with `einsum` over stacked per-head weights; sampling has to go head by
  head. Both paths share the per-head weights and the masking rules, so the log-probability recorded at
  sampling time equals the one the loss recomputes (tested to 1e-5): `sample_from_features` recomputes it
  by the loss's own pass, `sample_with_logp` (the training sampler's) reads it off each head as it samples.
* **Normalisation lives in buffers.** Running mean and variance of the actor input, the critic input
  and the one-hot head context are module buffers, so a checkpoint or a model file carries them and an
  exported policy normalises exactly as in training. They change only through `update_normalizers`,
  which the trainer calls with the observations it sampled (never inside `forward`), so a batch is
  always evaluated with the statistics it was sampled with.
* **Sampling is Gumbel-max** over masked logits with optional caller-supplied uniform noise: the same
  noise gives the same actions in eager mode, in TorchScript and in a served model.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import torch
from torch import Tensor, nn

from envs.nh.contract import DEP_FORBIDS, HEAD_OFFSETS, HEAD_SIZES, MAX_HEAD_SIZE, NUM_HEADS, NUM_LOGITS
from policies.network_config import NetworkConfig

MASKED_LOGIT = -1.0e9
"""Logit given to illegal values: finite (so 0 · log p stays 0 in the entropy) and far below any real one. When a
head has nothing legal, every entry is this value and the Gumbel perturbation (within [−16.7, 3.2] for uniforms
in [0, 1)) is below half of float32's spacing at 1e9 (64), so the argmax is the first entry: value 0, as §14.2
forces, with no correction step in the sampling loop (tested)."""
UNIFORM_EPS = 1e-10
"""Uniform noise is clamped into [eps, 1 − eps] before the Gumbel transform, so log(0) never happens."""


def _activation(name: str) -> nn.Module:
    return {"relu": nn.ReLU, "tanh": nn.Tanh, "gelu": nn.GELU, "silu": nn.SiLU, "elu": nn.ELU}[name]()


def _mlp(in_size: int, sizes: Sequence[int], activation: str) -> tuple[nn.Sequential, int]:
    """A stack of Linear + activation; orthogonal init with gain √2 as in the PPO implementation details."""
    layers: list[nn.Module] = []
    for width in sizes:
        linear = nn.Linear(in_size, width)
        nn.init.orthogonal_(linear.weight, math.sqrt(2.0))
        nn.init.zeros_(linear.bias)
        layers += [linear, _activation(activation)]
        in_size = width
    return nn.Sequential(*layers), in_size


class RunningNorm(nn.Module):
    """Per-entry running mean and variance (Chan et al. parallel update) with clipping.

    Accumulators are float64 so that millions of samples do not lose precision; `shift` and `scale` are
    float32 copies derived after each update, which is all `forward` reads.
    """

    def __init__(self, size: int, clip: float, epsilon: float, enabled: bool = True) -> None:
        super().__init__()
        self.size = size
        self.clip = float(clip)
        self.epsilon = float(epsilon)
        self.enabled = enabled
        self.register_buffer("count", torch.zeros((), dtype=torch.float64))
        self.register_buffer("mean", torch.zeros(size, dtype=torch.float64))
        self.register_buffer("var", torch.ones(size, dtype=torch.float64))
        self.register_buffer("shift", torch.zeros(size))
        self.register_buffer("scale", torch.ones(size))

    def forward(self, x: Tensor) -> Tensor:
        if not self.enabled:
            return x
        return torch.clamp((x - self.shift) * self.scale, -self.clip, self.clip)

    @torch.jit.ignore
    def update(self, batch: Tensor) -> None:
        """Merge the statistics of `batch` (N, size) into the running ones."""
        with torch.no_grad():
            x = batch.detach().to(torch.float64).reshape(-1, self.size)
            if x.shape[0] == 0:
                return
            self.merge(float(x.shape[0]), x.mean(0), x.var(0, unbiased=False))

    @torch.jit.ignore
    def merge(self, count: float, mean: Tensor, var: Tensor) -> None:
        """Merge precomputed moments (count, mean, population variance), e.g. gathered from workers."""
        with torch.no_grad():
            if count <= 0:
                return
            mean = mean.to(self.mean.device, torch.float64)  # gathered on CPUs, merged where the learner is
            var = var.to(self.mean.device, torch.float64)
            total = self.count + count
            delta = mean - self.mean
            new_mean = self.mean + delta * (count / total)
            m2 = self.var * self.count + var * count + delta.pow(2) * (self.count * count / total)
            self.mean.copy_(new_mean)
            self.var.copy_(m2 / total)
            self.count.copy_(total)
            self.shift.copy_(self.mean.to(torch.float32))
            self.scale.copy_(torch.rsqrt(self.var + self.epsilon).to(torch.float32))


def _static_tables() -> dict[str, Tensor]:
    """Index and mask tables derived from the contract, shared by every instance (registered as buffers)."""
    pad_index = np.full((NUM_HEADS, MAX_HEAD_SIZE), NUM_LOGITS, dtype=np.int64)  # NUM_LOGITS = "always false"
    valid = np.zeros((NUM_HEADS, MAX_HEAD_SIZE), dtype=np.bool_)
    prefix = np.zeros((NUM_HEADS, NUM_LOGITS), dtype=np.float32)
    for h, (off, size) in enumerate(zip(HEAD_OFFSETS, HEAD_SIZES, strict=True)):
        pad_index[h, :size] = np.arange(off, off + size)
        valid[h, :size] = True
        prefix[h, :off] = 1.0  # head h sees the choices of heads 0 … h−1 only
    return {
        "pad_index": torch.from_numpy(pad_index),
        "valid": torch.from_numpy(valid),
        "prefix": torch.from_numpy(prefix),
        "dep_forbids": torch.from_numpy(DEP_FORBIDS.astype(np.float32)),
        "head_offsets": torch.tensor(HEAD_OFFSETS, dtype=torch.long),
        # forbid_after[k]: the padded (12, MAX) values struck out once flat logit k is chosen (§14.2 forbids)
        "forbid_after": torch.from_numpy(np.pad(DEP_FORBIDS, ((0, 0), (0, 1)))[:, pad_index]),
    }


class NHPolicyNetwork(nn.Module):
    """Actor (12 autoregressive masked heads) and critic; see the module docstring for the shape.

    Args:
        obs_size: Length of the actor input (176 × number of stacked frames).
        critic_size: Length of the critic input (269 × frames with the opponent's partial entries, or the
            actor input's length when the environment provides no critic input).
        config: Layer sizes and normalisation options.
    """

    def __init__(self, obs_size: int, critic_size: int, config: NetworkConfig | None = None) -> None:
        super().__init__()
        cfg = config or NetworkConfig()
        self.config = cfg
        self.obs_size = int(obs_size)
        self.critic_size = int(critic_size)
        self.num_heads = NUM_HEADS
        self.max_head_size = MAX_HEAD_SIZE
        self.num_logits = NUM_LOGITS
        self.head_hidden = int(cfg.head_hidden)
        self.masked_logit = MASKED_LOGIT  # TorchScript reads module attributes, not module globals
        self.head_offset_list: list[int] = [int(o) for o in HEAD_OFFSETS]  # plain ints: no tensor op per head
        self.uniform_eps = UNIFORM_EPS
        for name, table in _static_tables().items():
            self.register_buffer(name, table, persistent=False)

        self.obs_norm = RunningNorm(self.obs_size, cfg.obs_clip, cfg.norm_epsilon, cfg.normalize_obs)
        self.critic_norm = RunningNorm(self.critic_size, cfg.obs_clip, cfg.norm_epsilon, cfg.normalize_obs)
        self.context_norm = RunningNorm(NUM_LOGITS, cfg.obs_clip, cfg.norm_epsilon, True)

        # Optional per-frame feature extractor (weights shared across stacked frames).
        self.frame_size = 0
        self.num_frames = 1
        trunk_in = self.obs_size
        if cfg.frame_encoder:
            from envs.nh.contract import OBS_SIZE

            if self.obs_size % OBS_SIZE != 0:
                raise ValueError(f"frame_encoder needs a stack of {OBS_SIZE}-entry frames, got {self.obs_size}")
            self.frame_size = OBS_SIZE
            self.num_frames = self.obs_size // OBS_SIZE
            self.frame_encoder, enc_out = _mlp(OBS_SIZE, cfg.frame_encoder, cfg.activation)
            trunk_in = enc_out * self.num_frames
        else:
            self.frame_encoder = nn.Sequential()
        self.actor_trunk, self.feature_size = _mlp(trunk_in, cfg.actor_hidden, cfg.activation)

        # Heads: the first layer is split into a trunk part (one Linear for all heads) and a context part
        # (one (45, H) matrix per head); see the module docstring.
        width = self.head_hidden if self.head_hidden > 0 else MAX_HEAD_SIZE
        self.head_trunk = nn.Linear(self.feature_size, NUM_HEADS * width)
        self.head_context = nn.Parameter(torch.zeros(NUM_HEADS, NUM_LOGITS, width))
        nn.init.orthogonal_(self.head_trunk.weight, 1.0 if self.head_hidden > 0 else 0.01)
        nn.init.zeros_(self.head_trunk.bias)
        nn.init.normal_(self.head_context, std=0.01 if self.head_hidden == 0 else 1.0 / math.sqrt(NUM_LOGITS))
        if self.head_hidden > 0:
            self.head_out_weight = nn.Parameter(torch.empty(NUM_HEADS, self.head_hidden, MAX_HEAD_SIZE))
            for h in range(NUM_HEADS):
                nn.init.orthogonal_(self.head_out_weight.data[h], 0.01)  # near-uniform initial policy
        else:  # linear heads: no second layer; a buffer keeps the attribute typed for TorchScript
            self.register_buffer("head_out_weight", torch.zeros(NUM_HEADS, 1, MAX_HEAD_SIZE), persistent=False)
        self.head_out_bias = nn.Parameter(torch.zeros(NUM_HEADS, MAX_HEAD_SIZE))
        self.head_activation = _activation(cfg.activation)

        # Critic.
        self.critic_trunk, critic_out = _mlp(self.critic_size, cfg.critic_hidden, cfg.activation)
        self.share_trunk = bool(cfg.share_trunk)
        self.value_head = nn.Linear(critic_out + (self.feature_size if self.share_trunk else 0), 1)
        nn.init.orthogonal_(self.value_head.weight, 1.0)
        nn.init.zeros_(self.value_head.bias)

    # ------------------------------------------------------------------------------------------------
    # Actor trunk and critic
    # ------------------------------------------------------------------------------------------------
    def features(self, obs: Tensor) -> Tensor:
        """Actor trunk output (B, feature_size) for a batch of (stacked) observations."""
        x = self.obs_norm(obs)
        if self.frame_size > 0:
            b = x.shape[0]
            x = self.frame_encoder(x.reshape(b * self.num_frames, self.frame_size)).reshape(b, -1)
        return self.actor_trunk(x)

    @torch.jit.export
    def value(self, critic_obs: Tensor, features: Tensor | None = None) -> Tensor:
        """State value (B,) from the full-state critic input (spec §15.3)."""
        h = self.critic_trunk(self.critic_norm(critic_obs))
        if self.share_trunk:
            if features is None:
                raise ValueError("share_trunk needs the actor features: pass features=network.features(obs)")
            h = torch.cat([h, features], dim=-1)
        return self.value_head(h).squeeze(-1).float()  # float32 even under a bfloat16 autocast (learner_precision)

    # ------------------------------------------------------------------------------------------------
    # Heads
    # ------------------------------------------------------------------------------------------------
    def _pad(self, flat: Tensor) -> Tensor:
        """(B, 45) → (B, 12, MAX_HEAD_SIZE), padding entries read as 0."""
        padded = torch.cat([flat, torch.zeros_like(flat[:, :1])], dim=1)
        return padded[:, self.pad_index]

    def _legal(self, env_mask: Tensor, forbidden: Tensor) -> Tensor:
        """(B, 12, MAX) legal values given the env mask and the §14.2 forbids; nothing legal → value 0."""
        legal = (self._pad(env_mask) > 0.5) & (self._pad(forbidden) < 0.5) & self.valid
        none = ~legal.any(dim=-1)
        legal[:, :, 0] = legal[:, :, 0] | none
        return legal

    def _head_trunk(self, features: Tensor) -> Tensor:
        """The trunk part of every head's first layer (B, 12, width), shared by sampling and evaluation."""
        return self.head_trunk(features).reshape(features.shape[0], self.num_heads, -1)

    def _all_head_logits(self, trunk: Tensor, onehot: Tensor) -> Tensor:
        """Logits of all heads at once (B, 12, MAX) given the one-hot of the actions (teacher forcing)."""
        ctx = self.context_norm(onehot).unsqueeze(1) * self.prefix  # (B, 12, 45)
        pre = trunk + torch.einsum("bhk,hkj->bhj", ctx, self.head_context)
        if self.head_hidden > 0:
            hidden = self.head_activation(pre)
            return torch.einsum("bhj,hjv->bhv", hidden, self.head_out_weight) + self.head_out_bias
        return pre + self.head_out_bias

    def _context_tables(self) -> tuple[Tensor, Tensor]:
        """Fold the context normalisation into the per-head context weights for the sampling loop.

        The normalised, clipped one-hot of logit k is `v0[k]` when not chosen and `v1[k]` when chosen, so
        ``ctx_h @ W_h = v0·prefix_h @ W_h + onehot @ ((v1 − v0)·prefix_h ⊗ W_h)``: a constant per head
        (returned as (12, width)) plus one product with the raw one-hot (weights returned as (12, 45, width)).
        """
        v0 = self.context_norm(torch.zeros_like(self.context_norm.shift))
        v1 = self.context_norm(torch.ones_like(self.context_norm.shift))
        weights = self.head_context * self.prefix.unsqueeze(-1)
        base = torch.einsum("k,hkj->hj", v0, weights)
        return base, weights * (v1 - v0).unsqueeze(-1)

    def _onehot(self, actions: Tensor) -> Tensor:
        """(B, 12) head values → (B, 45) one-hot over the flat logit layout."""
        onehot = torch.zeros(actions.shape[0], self.num_logits, device=actions.device)
        return onehot.scatter_(1, actions.long() + self.head_offsets, 1.0)

    @torch.jit.export
    def sample_from_features(
        self, features: Tensor, env_mask: Tensor, deterministic: bool = False, noise: Tensor | None = None
    ) -> tuple[Tensor, Tensor, Tensor]:
        """Sample the 12 heads in order.

        Args:
            features: Actor trunk output (B, feature_size).
            env_mask: The 45 environment-mask entries (B, 45), 0/1 (spec §14.3).
            deterministic: Take the most probable legal value of each head instead of sampling.
            noise: Optional uniforms in [0, 1) of shape (B, 12, MAX_HEAD_SIZE); drawn with `torch.rand`
                when omitted. The same noise gives the same actions.

        Returns:
            actions (B, 12) int64, their log-probability (B,) and each head's entropy along the sampled
            path (B, 12). The last two come from `evaluate_from_features` on the sampled actions, i.e. from
            the very computation the PPO loss repeats, so they agree with it exactly.
        """
        head_trunk = self._head_trunk(features)
        actions = self._sample_heads(head_trunk, env_mask, deterministic, noise, False)[0]
        per_head, entropy = self._evaluate(head_trunk, env_mask, actions)
        return actions, per_head.sum(-1), entropy

    @torch.jit.export
    def sample_actions(
        self, features: Tensor, env_mask: Tensor, deterministic: bool = False, noise: Tensor | None = None
    ) -> Tensor:
        """The actions `sample_from_features` takes (the same draws from the same noise or random stream), without
        the log-probability pass over all heads: for a player that only acts, such as a frozen opponent."""
        return self._sample_heads(self._head_trunk(features), env_mask, deterministic, noise, False)[0]

    @torch.jit.export
    def sample_with_logp(
        self, features: Tensor, env_mask: Tensor, deterministic: bool = False, noise: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        """The actions `sample_from_features` takes and their log-probability (B,), read off each head as it is
        sampled instead of by a second, teacher-forced pass over all heads: what a learner's sampler records, at
        about three quarters of the cost (a 64-row call: 0.96 ms against 1.12-1.28 ms). The same function of the
        same logits and masks as the loss's evaluation, computed in another order, so the two agree to float
        rounding (~1e-6), not bit for bit."""
        return self._sample_heads(self._head_trunk(features), env_mask, deterministic, noise, True)

    def _sample_heads(
        self, head_trunk: Tensor, env_mask: Tensor, deterministic: bool, noise: Tensor | None, with_logp: bool
    ) -> tuple[Tensor, Tensor]:
        """The head-by-head loop. It runs once per tick per policy with a few rows, so its cost is the number of
        small tensor operations per head, not arithmetic: everything that does not depend on earlier heads is
        computed once before the loop (the Gumbel perturbation of every head, the values the env mask rules out,
        each head's slices of the weights), a head's two products each take one `addmm` with the bias or the
        trunk part folded in, and the values a choice forbids are struck out of the padded (B, 12, MAX) table
        with one precomputed row per flat logit (`forbid_after`), so a head reads its illegal values as a slice."""
        b = head_trunk.shape[0]
        device = head_trunk.device
        base, context_weights = self._context_tables()
        trunks = (head_trunk + base).unbind(1)
        context_rows = context_weights.unbind(0)
        out_weights = self.head_out_weight.unbind(0)
        out_biases = self.head_out_bias.unbind(0)
        onehot = torch.zeros(b, self.num_logits, device=device)
        illegal = ~((self._pad(env_mask) > 0.5) & self.valid)  # the complement of `_legal`'s env-mask test
        gumbels: list[Tensor] = []
        if not deterministic:
            if noise is None:
                noise = torch.rand(b, self.num_heads, self.max_head_size, device=device)
            gumbels = torch.log(-torch.log(noise.clamp(self.uniform_eps, 1.0 - self.uniform_eps))).unbind(1)
        choices: list[Tensor] = []
        logp = torch.zeros(b, device=device)
        for h in range(self.num_heads):
            pre = trunks[h]
            if h > 0:
                pre = torch.addmm(pre, onehot, context_rows[h])
            if self.head_hidden > 0:
                logits = torch.addmm(out_biases[h], self.head_activation(pre), out_weights[h])
            else:
                logits = pre + out_biases[h]
            blocked = illegal[:, h]  # a view: only head h reads this row, so the fix below may write into it
            if with_logp:  # nothing legal forces value 0 (§14.2); the choice needs no fix (MASKED_LOGIT)
                blocked[:, 0] = blocked[:, 0] & ~blocked.all(dim=-1)  # not `&=`: TorchScript drops that silently
            masked = logits.masked_fill(blocked, self.masked_logit)
            choice = masked.argmax(dim=-1) if deterministic else (masked - gumbels[h]).argmax(dim=-1)
            choices.append(choice)
            if with_logp:  # as `_head_log_probs`: the softmax over the masked logits (float32 here)
                logp = logp + torch.log_softmax(masked, dim=-1).gather(1, choice.unsqueeze(1)).squeeze(1)
            flat = choice + self.head_offset_list[h]
            onehot.scatter_(1, flat.unsqueeze(1), 1.0)
            illegal = illegal | self.forbid_after[flat]
        return torch.stack(choices, dim=1), logp

    @torch.jit.export
    def evaluate_from_features(self, features: Tensor, env_mask: Tensor, actions: Tensor) -> tuple[Tensor, Tensor]:
        """Teacher-forced log-probabilities of given actions: (logp per head (B, 12), entropy per head (B, 12)).

        The masks are evaluated on the given actions exactly as sampling evaluates them on the sampled
        ones, so for actions this network sampled, ``logp.sum(-1)`` equals the sampling-time value.
        """
        return self._evaluate(self._head_trunk(features), env_mask, actions)

    def _evaluate(self, head_trunk: Tensor, env_mask: Tensor, actions: Tensor) -> tuple[Tensor, Tensor]:
        log_probs = self._head_log_probs(head_trunk, env_mask, actions)
        per_head = log_probs.gather(-1, actions.long().unsqueeze(-1)).squeeze(-1)
        entropy = -(log_probs.exp() * log_probs).sum(-1)
        return per_head, entropy

    @torch.jit.export
    def head_log_probs(self, features: Tensor, env_mask: Tensor, actions: Tensor) -> Tensor:
        """Masked log-probabilities of every value of every head (B, 12, MAX), conditioned on `actions`'
        earlier heads; padding and illegal values get ≈ −1e9."""
        return self._head_log_probs(self._head_trunk(features), env_mask, actions)

    def _head_log_probs(self, head_trunk: Tensor, env_mask: Tensor, actions: Tensor) -> Tensor:
        onehot = self._onehot(actions)
        logits = self._all_head_logits(head_trunk, onehot)
        legal = self._legal(env_mask, onehot @ self.dep_forbids)
        # logits in float32 even under a bfloat16 autocast (ppo.learner_precision): the softmax and everything PPO
        # computes from it stay exact; a no-op in float32
        return torch.log_softmax(logits.float().masked_fill(~legal, self.masked_logit), dim=-1)

    # ------------------------------------------------------------------------------------------------
    # Entry points on raw observations
    # ------------------------------------------------------------------------------------------------
    def forward(
        self, obs: Tensor, env_mask: Tensor, deterministic: bool = False, noise: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        """Act: (actions (B, 12) int64, log-probability (B,)) for a batch of observations and masks."""
        actions, logp, _ = self.sample_from_features(self.features(obs), env_mask, deterministic, noise)
        return actions, logp

    @torch.jit.export
    def evaluate(self, obs: Tensor, env_mask: Tensor, actions: Tensor) -> tuple[Tensor, Tensor]:
        """Teacher-forced (log-probability (B,), per-head entropy (B, 12)) of given actions."""
        per_head, entropy = self.evaluate_from_features(self.features(obs), env_mask, actions)
        return per_head.sum(-1), entropy

    @torch.jit.export
    def probabilities(self, obs: Tensor, env_mask: Tensor, actions: Tensor) -> Tensor:
        """Per-head probabilities (B, 12, MAX) along `actions`' path (e.g. the ones `forward` returned)."""
        return self.head_log_probs(self.features(obs), env_mask, actions).exp()

    # ------------------------------------------------------------------------------------------------
    # Normalisation statistics
    # ------------------------------------------------------------------------------------------------
    @torch.jit.ignore
    def update_normalizers(self, obs: Tensor, critic_obs: Tensor | None = None, actions: Tensor | None = None) -> None:
        """Fold a batch of sampled inputs into the running statistics (call between updates, not in forward)."""
        self.obs_norm.update(obs)
        if critic_obs is not None:
            self.critic_norm.update(critic_obs)
        if actions is not None:
            self.context_norm.update(self._onehot(actions))

    @torch.jit.ignore
    def normalizers(self) -> dict[str, RunningNorm]:
        return {"obs": self.obs_norm, "critic": self.critic_norm, "context": self.context_norm}


def batch_moments(x: Tensor | np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """(count, mean, population variance) of a (N, D) batch in float64, for `RunningNorm.merge`."""
    arr = np.asarray(x, dtype=np.float64)
    arr = arr.reshape(arr.shape[0], -1)
    if arr.shape[0] == 0:
        return 0.0, np.zeros(arr.shape[1]), np.ones(arr.shape[1])
    return float(arr.shape[0]), arr.mean(0), arr.var(0)


def combine_moments(parts: Sequence[tuple[float, np.ndarray, np.ndarray]]) -> tuple[float, np.ndarray, np.ndarray]:
    """Combine (count, mean, var) triples into one (the same parallel formula as `RunningNorm.merge`)."""
    parts = [p for p in parts if p[0] > 0]
    if not parts:
        raise ValueError("no samples to combine")
    count, mean, var = parts[0]
    mean, var = np.asarray(mean, np.float64), np.asarray(var, np.float64)
    for n, m, v in parts[1:]:
        total = count + n
        delta = np.asarray(m, np.float64) - mean
        m2 = var * count + np.asarray(v, np.float64) * n + delta**2 * (count * n / total)
        mean = mean + delta * (n / total)
        var = m2 / total
        count = total
    return count, mean, var
