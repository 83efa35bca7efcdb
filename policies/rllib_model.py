"""RLlib adapter of the NH policy network (old API stack): a `TorchModelV2`, its action distribution,
the callbacks that keep the normalisation statistics in step, and model-file export of a trained policy.

It and the RLlib policies built on it (`fixed_policy.py`, `scripted.py`, `model_file_policy.py`) are the modules of
`policies/` that import Ray; the network, its config and model files do not (STYLE "How these apply" 1).

How it fits RLlib's PPO without changing the algorithm:

* `NHTorchModel.forward` runs the actor trunk and returns ``[features, env_mask]`` as the "distribution
  inputs"; `value_function` runs the critic on the full-state input (`critic` key of the observation,
  spec §15.3, or the actor observation when the environment provides none).
* `NHActionDistribution` samples the 12 heads autoregressively through the model's network, recording each
  head's log-probability as it samples, and its `logp(actions)` is the network's teacher-forced evaluation of
  the same masked softmax, so PPO's ratio starts at 1 to float rounding (~1e-6; tested to 1e-5).
* Normalisation statistics change only between training iterations (`NormalizerCallbacks`): rollout
  workers accumulate the moments of what they sampled, and after each iteration's update the driver
  merges them into the learner's network and pushes the weights (buffers included) back out. A batch is
  therefore always evaluated in the loss with the statistics it was sampled with.

How to use::

    from policies.rllib_model import model_config, register
    register()  # safe to call again, e.g. after every ray.init()
    config.training(model=model_config(NetworkConfig()))
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from ray.rllib.algorithms.callbacks import DefaultCallbacks
from ray.rllib.models import ModelCatalog
from ray.rllib.models.modelv2 import ModelV2, restore_original_dimensions
from ray.rllib.models.torch.torch_action_dist import TorchDistributionWrapper
from ray.rllib.models.torch.torch_modelv2 import TorchModelV2
from ray.rllib.policy.sample_batch import SampleBatch
from torch import Tensor, nn

from envs.nh.contract import NUM_HEADS, NUM_LOGITS
from policies.head_weights import head_weight_vector
from policies.model_file import save_model_file
from policies.network import NHPolicyNetwork, batch_moments, combine_moments
from policies.network_config import NetworkConfig

MODEL_NAME = "osrs_rllib_nh_policy"
"""Name of `NHTorchModel` in RLlib's ModelCatalog."""
DIST_NAME = "osrs_rllib_nh_autoregressive"
"""Name of `NHActionDistribution` in RLlib's ModelCatalog."""
OBS_KEY = "observations"
MASK_KEY = "action_mask"
CRITIC_KEY = "critic"


def register() -> None:
    """Register the model and distribution with RLlib's ModelCatalog (idempotent).

    RLlib keeps custom classes in Ray's internal key-value store once Ray is up, so a fresh `ray.init()`
    starts without them; calling this again after every init is safe and cheap.
    """
    ModelCatalog.register_custom_model(MODEL_NAME, NHTorchModel)
    ModelCatalog.register_custom_action_dist(DIST_NAME, NHActionDistribution)


def model_config(
    network: NetworkConfig | Mapping[str, Any] | None = None,
    head_entropy_weights: Mapping[str, float] | None = None,
) -> dict[str, Any]:
    """The `model` entry of an RLlib algorithm config that selects this network.

    `head_entropy_weights` (``ppo.head_entropy_weights``) rides along in the model config because PPO's loss
    asks the action distribution for its entropy and the distribution only sees the model.
    """
    cfg = network if isinstance(network, NetworkConfig) else NetworkConfig.from_dict(network)
    return {
        "custom_model": MODEL_NAME,
        "custom_action_dist": DIST_NAME,
        "custom_model_config": {
            "network": cfg.to_dict(),
            "head_entropy_weights": head_weight_vector(head_entropy_weights),
        },
    }


def _network_config(model_cfg: Mapping[str, Any]) -> NetworkConfig:
    return NetworkConfig.from_dict((model_cfg.get("custom_model_config") or {}).get("network"))


def _dict_space(obs_space: gym.Space) -> gym.spaces.Dict:
    original = getattr(obs_space, "original_space", obs_space)
    if not isinstance(original, gym.spaces.Dict) or OBS_KEY not in original.spaces or MASK_KEY not in original.spaces:
        raise ValueError(
            f"NHTorchModel needs a Dict observation space with {OBS_KEY!r} and {MASK_KEY!r} (and optionally "
            f"{CRITIC_KEY!r}) entries, as envs.rllib_env.NHMultiAgentEnv provides; got {original}"
        )
    mask_shape = original.spaces[MASK_KEY].shape
    if mask_shape != (NUM_LOGITS,):
        raise ValueError(f"{MASK_KEY!r} must have shape ({NUM_LOGITS},) (spec §14.3), got {mask_shape}")
    return original


class NHTorchModel(TorchModelV2, nn.Module):
    """`TorchModelV2` around `NHPolicyNetwork` (see the module docstring for the data flow)."""

    def __init__(
        self,
        obs_space: gym.Space,
        action_space: gym.Space,
        num_outputs: int,
        model_config: dict[str, Any],
        name: str,
        **kwargs: Any,
    ) -> None:
        TorchModelV2.__init__(self, obs_space, action_space, num_outputs, model_config, name)
        nn.Module.__init__(self)
        space = _dict_space(obs_space)
        obs_size = int(np.prod(space.spaces[OBS_KEY].shape))
        critic_space = space.spaces.get(CRITIC_KEY)
        critic_size = int(np.prod(critic_space.shape)) if critic_space is not None else obs_size
        self.has_critic_input = critic_space is not None
        self.net = NHPolicyNetwork(obs_size, critic_size, _network_config(model_config))
        expected = self.net.feature_size + NUM_LOGITS
        if num_outputs != expected:
            raise ValueError(
                f"NHTorchModel produces {expected} distribution inputs but RLlib asked for {num_outputs}: "
                f"use model_config() so that custom_action_dist is {DIST_NAME!r}"
            )
        self._critic_in: Tensor | None = None
        self._features: Tensor | None = None
        self._actor_in: Tensor | None = None
        self._env_mask: Tensor | None = None
        """The last forward's actor input and env mask: a magnet network evaluates the same rows (`ppo_policy`)."""
        self._head_log_probs: Tensor | None = None
        """The last `logp` call's per-head log-probabilities (B, 12, MAX), with their gradient: the magnet's KL."""
        self._head_entropy: Tensor | None = None
        weights = (model_config.get("custom_model_config") or {}).get("head_entropy_weights")
        self.head_entropy_weights = torch.tensor(
            weights if weights is not None else head_weight_vector(None), dtype=torch.float32
        )
        """Multiplier of each head's entropy in the loss's entropy bonus (1 each unless configured)."""
        self._pending: dict[str, tuple[float, np.ndarray, np.ndarray]] = {}

    def forward(
        self, input_dict: dict[str, Any], state: list[Tensor], seq_lens: Tensor | None
    ) -> tuple[Tensor, list[Tensor]]:
        obs = input_dict["obs"]
        actor_in = obs[OBS_KEY].float()
        features = self.net.features(actor_in)
        self._features = features
        self._actor_in, self._env_mask = actor_in, obs[MASK_KEY].float()
        self._critic_in = obs[CRITIC_KEY].float() if self.has_critic_input else actor_in
        return torch.cat([features, self._env_mask], dim=-1), state

    def fresh_state(self, seed: int) -> dict[str, Tensor]:
        """The state dict of a newly built twin of this model (same class, spaces and config): the weights and
        empty observation normaliser a learner starts a run with. Drawn under `seed` inside a forked torch
        generator, so a fresh exploiter reset is reproducible and moves no other draw in the process. The
        league calls it by name (it knows no torch), which is why it lives on the model."""
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            twin = type(self)(self.obs_space, self.action_space, self.num_outputs, self.model_config, self.name)
        return twin.state_dict()

    def inference_network(self) -> Any:
        """A TorchScript twin of the network for sampling without gradients (about 20 % faster per call).

        `torch.jit.script` shares the parameter and buffer tensors with the eager module, and RLlib's
        `set_weights` copies into them in place, so the twin always sees the current weights. It is kept
        out of the module's registry (no duplicate parameters, nothing extra in checkpoints).
        """
        scripted = self.__dict__.get("_scripted_net")
        if scripted is None:
            import warnings

            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                try:
                    scripted = torch.jit.script(self.net)
                except Exception:  # scripting is an optimisation only; fall back to eager
                    scripted = self.net
            self.__dict__["_scripted_net"] = scripted
        return scripted

    def act(self, flat_obs: np.ndarray, explore: bool, trainable: bool) -> dict[str, np.ndarray]:
        """Actions for a batch of flattened observations without RLlib's per-call machinery.

        `Policy.compute_actions_from_input_dict` spends about as long on its own bookkeeping (view requirements,
        exploration, tensor conversion, extra fetches) as the network spends acting on a 32-row batch, and a
        sampler calls it once per policy per tick. This is the same computation (the same random draws,
        hence the same actions) on the TorchScript twin: ``actions`` always; for a `trainable` policy also the
        columns PPO's batch needs (``action_logp``, ``vf_preds``, ``action_dist_inputs``). For a frozen opponent
        neither its critic nor the log-probability pass is run. A trainable policy's log-probability is read off the
        heads as they are sampled (`NHPolicyNetwork.sample_with_logp`): the loss's teacher-forced value to float
        rounding, without a second pass over the 12 heads.
        """
        with torch.no_grad():
            net = self.inference_network()
            device = self.net.head_out_bias.device  # a GPU learner sampling in the driver: arrays in, arrays out
            obs = restore_original_dimensions(torch.from_numpy(flat_obs).to(device), self.obs_space, "torch")
            actor_in = obs[OBS_KEY].float()
            mask = obs[MASK_KEY].float()
            features = net.features(actor_in)
            if not trainable:
                return {SampleBatch.ACTIONS: net.sample_actions(features, mask, not explore, None).cpu().numpy()}
            actions, logp = net.sample_with_logp(features, mask, not explore, None)
            critic_in = obs[CRITIC_KEY].float() if self.has_critic_input else actor_in
            value = net.value(critic_in, features if self.net.share_trunk else None)
            return {
                SampleBatch.ACTIONS: actions.cpu().numpy(),
                SampleBatch.ACTION_LOGP: logp.cpu().numpy(),
                SampleBatch.VF_PREDS: value.cpu().numpy(),
                SampleBatch.ACTION_DIST_INPUTS: torch.cat([features, mask], dim=-1).cpu().numpy(),
            }

    def value_function(self) -> Tensor:
        if self._critic_in is None:
            raise RuntimeError("value_function() called before forward()")
        return self.net.value(self._critic_in, self._features if self.net.share_trunk else None)

    def metrics(self) -> dict[str, Any]:
        """Mean entropy of each head in the last loss evaluation (learner stats → TensorBoard)."""
        if self._head_entropy is None:
            return {}
        from envs.nh.contract import Head

        means = self._head_entropy.detach().mean(0).cpu().numpy()
        return {f"entropy_{Head(h).name.lower()}": float(means[h]) for h in range(NUM_HEADS)}

    # -- normalisation statistics ------------------------------------------------------------------
    def accumulate(self, obs: Mapping[str, np.ndarray], actions: np.ndarray | None) -> None:
        """Add sampled inputs to the pending moments (rollout side; merged by `sync_normalizers`)."""
        parts = {"obs": obs[OBS_KEY], "critic": obs[CRITIC_KEY] if self.has_critic_input else None}
        if actions is not None:
            taken = torch.as_tensor(np.asarray(actions), dtype=torch.long, device=self.net.head_offsets.device)
            parts["context"] = self.net._onehot(taken).cpu().numpy()
        for key, value in parts.items():
            if value is None or len(value) == 0:
                continue
            new = batch_moments(value)
            old = self._pending.get(key)
            self._pending[key] = new if old is None else combine_moments([old, new])

    def pop_pending(self) -> dict[str, tuple[float, np.ndarray, np.ndarray]]:
        pending, self._pending = self._pending, {}
        return pending

    def merge_pending(self, parts: Iterable[Mapping[str, tuple[float, np.ndarray, np.ndarray]]]) -> int:
        """Merge moments gathered from workers into the network's running statistics; returns samples added."""
        norms = self.net.normalizers()
        parts = list(parts)
        added = 0
        for key, norm in norms.items():
            triples = [p[key] for p in parts if key in p and p[key][0] > 0]
            if not triples:
                continue
            count, mean, var = combine_moments(triples)
            norm.merge(count, torch.tensor(np.array(mean)), torch.tensor(np.array(var)))
            if key == "obs":
                added = int(count)
        return added


class NHActionDistribution(TorchDistributionWrapper):
    """Autoregressive distribution over the 12 heads, computed by the model's `NHPolicyNetwork`.

    `entropy()` is the sum of the heads' conditional entropies along the batch's own actions (those given
    to `logp`, which PPO's loss calls first), each weighted by the model's `head_entropy_weights` (all 1
    unless ``ppo.head_entropy_weights`` says otherwise; the learner's ``entropy`` metric is this weighted sum,
    ``entropy_<head>`` the unweighted parts); `kl()` is the sum of per-head KL divergences along the same
    actions. Both distributions of a KL use the current head weights (the stored inputs are trunk
    features), so the KL is an approximation; the configs keep `kl_coeff` at 0 and PPO's clipped ratio,
    which is exact, does the work.
    """

    def __init__(self, inputs: Tensor, model: ModelV2) -> None:
        super().__init__(inputs, model)
        assert isinstance(model, NHTorchModel), "NHActionDistribution needs NHTorchModel"
        self.net: NHPolicyNetwork = model.net
        self.features = self.inputs[..., : self.net.feature_size]
        self.mask = self.inputs[..., self.net.feature_size :]
        self._sample_logp: Tensor | None = None
        self._eval_actions: Tensor | None = None
        self._eval_log_probs: Tensor | None = None
        self._head_entropy: Tensor | None = None

    @staticmethod
    def required_model_output_shape(action_space: gym.Space, model_config: dict[str, Any]) -> int:
        if not isinstance(action_space, gym.spaces.MultiDiscrete) or action_space.shape != (NUM_HEADS,):
            raise ValueError(f"NHActionDistribution needs MultiDiscrete of {NUM_HEADS} heads, got {action_space}")
        return _network_config(model_config).actor_hidden[-1] + NUM_LOGITS

    def _remember(self, actions: Tensor, log_probs: Tensor) -> None:
        self._eval_actions = actions
        self._eval_log_probs = log_probs
        self._head_entropy = None
        model = self.model
        if isinstance(model, NHTorchModel):
            model._head_entropy = self._path_entropy()
            model._head_log_probs = log_probs  # the magnet's KL reads the loss's own (`training/learner/ppo_policy.py`)

    def _path_entropy(self) -> Tensor:
        """Each head's entropy along the remembered actions (B, 12), computed once per `logp` call: the loss's
        bonus and the learner's per-head metrics read the same tensor."""
        log_probs = self._path_log_probs()
        if self._head_entropy is None:
            self._head_entropy = -(log_probs.exp() * log_probs).sum(-1)
        return self._head_entropy

    def logp(self, actions: Tensor) -> Tensor:
        actions = actions.long()
        log_probs = self.net.head_log_probs(self.features, self.mask, actions)
        self._remember(actions, log_probs)
        return log_probs.gather(-1, actions.unsqueeze(-1)).squeeze(-1).sum(-1)

    def _path_log_probs(self) -> Tensor:
        if self._eval_log_probs is None:
            with torch.no_grad():
                actions, _, _ = self.net.sample_from_features(self.features, self.mask)
            self.logp(actions)
        assert self._eval_log_probs is not None
        return self._eval_log_probs

    def entropy(self) -> Tensor:
        per_head = self._path_entropy()
        assert isinstance(self.model, NHTorchModel)
        return (per_head * self.model.head_entropy_weights.to(per_head)).sum(-1)

    def kl(self, other: TorchDistributionWrapper) -> Tensor:
        assert isinstance(other, NHActionDistribution)
        q = other._path_log_probs()
        assert other._eval_actions is not None
        p = self.net.head_log_probs(self.features, self.mask, other._eval_actions)
        return (p.exp() * (p - q)).sum(-1).sum(-1)

    def _sampler(self) -> Any:
        model = self.model
        if not torch.is_grad_enabled() and isinstance(model, NHTorchModel):
            return model.inference_network()
        return self.net

    def sample(self) -> Tensor:
        actions, logp = self._sampler().sample_with_logp(self.features, self.mask, False, None)
        self.last_sample = actions
        self._sample_logp = logp
        return actions

    def deterministic_sample(self) -> Tensor:
        actions, logp = self._sampler().sample_with_logp(self.features, self.mask, True, None)
        self.last_sample = actions
        self._sample_logp = logp
        return actions

    def sampled_action_logp(self) -> Tensor:
        if self._sample_logp is None:
            raise RuntimeError("sampled_action_logp() called before sample()")
        return self._sample_logp


# -------------------------------------------------------------------------------------------------------
# Keeping normalisation statistics in step across workers
# -------------------------------------------------------------------------------------------------------
def nh_model_of(policy: Any) -> NHTorchModel | None:
    model = getattr(policy, "model", None)
    return model if isinstance(model, NHTorchModel) else None


def accumulate_batch(policy: Any, batch: SampleBatch) -> None:
    """Rollout side: add one postprocessed trajectory's inputs and actions to the policy's pending moments."""
    model = nh_model_of(policy)
    if model is None or batch.count == 0:
        return
    obs = restore_original_dimensions(np.asarray(batch[SampleBatch.OBS]), policy.observation_space, "numpy")
    model.accumulate(obs, np.asarray(batch[SampleBatch.ACTIONS]))


def sync_normalizers(algorithm: Any, policy_ids: Iterable[str]) -> dict[str, int]:
    """Driver side, after an update: fold every worker's pending moments into the learner's statistics and
    broadcast the weights (buffers included). Returns the samples added per policy."""
    ids = [pid for pid in policy_ids if nh_model_of(algorithm.get_policy(pid)) is not None]
    if not ids:
        return {}

    def pop(worker: Any) -> dict[str, Any]:
        out = {}
        for pid in ids:
            policy = worker.policy_map.get(pid) if hasattr(worker, "policy_map") else None
            model = nh_model_of(policy)
            if model is not None:
                out[pid] = model.pop_pending()
        return out

    group = algorithm.env_runner_group
    gathered = group.foreach_env_runner(pop, local_env_runner=True)
    added: dict[str, int] = {}
    for pid in ids:
        model = nh_model_of(algorithm.get_policy(pid))
        assert model is not None
        added[pid] = model.merge_pending(g[pid] for g in gathered if pid in g)
    if any(added.values()) and group.num_remote_env_runners() > 0:
        group.sync_weights(policies=ids)
    return added


class NormalizerCallbacks(DefaultCallbacks):
    """Callbacks that keep the running statistics of every `NHTorchModel` policy in step (see above).

    Compose with other callbacks by subclassing and calling `super()` in the two hooks.
    """

    def on_postprocess_trajectory(
        self,
        *,
        worker: Any,
        episode: Any,
        agent_id: Any,
        policy_id: str,
        policies: Mapping[str, Any],
        postprocessed_batch: SampleBatch,
        original_batches: Any,
        **kwargs: Any,
    ) -> None:
        if getattr(getattr(worker, "config", None), "in_evaluation", False):
            return  # evaluation fights must not move the training statistics
        is_trainable = getattr(worker, "is_policy_to_train", None)
        if callable(is_trainable) and not is_trainable(policy_id, postprocessed_batch):
            return  # frozen snapshots and scripted seats keep their statistics
        policy = policies.get(policy_id)
        accumulate_batch(policy, postprocessed_batch)

    def on_train_result(self, *, algorithm: Any, result: dict[str, Any], **kwargs: Any) -> None:
        ids = sorted(algorithm.env_runner.get_policies_to_train())
        added = sync_normalizers(algorithm, ids)
        result.setdefault("custom_metrics", {})
        for pid, n in added.items():
            result["custom_metrics"][f"normalizer_samples_added/{pid}"] = n


def export_policy(policy: Any, path: str | Path, metadata: Mapping[str, Any] | None = None,
                  network: Any = None) -> Path:
    """Write a trained RLlib policy's network (or `network`, a twin of it such as its parameter average) to a
    model file (see `policies/model_file.py`), with the policy's frame stack."""
    model = nh_model_of(policy)
    if model is None:
        raise TypeError(f"policy {policy!r} does not use NHTorchModel; nothing to export")
    frames = (policy.config.get("env_config") or {}).get("frame_stack", 1)
    from envs.nh.contract import frame_offsets

    net = model.net if network is None else network
    return save_model_file(net, path, frame_stack=frame_offsets(frames), metadata=metadata)
