"""A frozen model file (``*.nhmodel``) as a non-trainable RLlib policy (old API stack).

Why: training against a fixed agent (`osrs-rllib exploit`, or a ``target`` share in any opponent mix) puts
that agent in seat 1 of the multi-agent episode. Loading the TorchScript file itself, rather than copying
its weights into a fresh `NHTorchModel`, keeps the opponent exactly the file: any network config, its own
normalisation statistics, no optimiser, nothing PPO could update. `get_weights` returns nothing, so no weight
sync or checkpoint restore can overwrite it either.

The opponent plays as deployed by default: every head takes its most likely legal value (``deterministic``),
as `osrs-rllib fight` and `rate` play model files. Each env runner loads the file from its path, so on a
cluster the path must exist on every node.

How to use::

    from policies.model_file_policy import model_file_policy_spec
    policies = {"main": PolicySpec(), "target_best": model_file_policy_spec("experiments/nh/models/best.nhmodel")}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import numpy as np
from ray.rllib.policy.policy import PolicySpec

from policies.fixed_policy import FixedPolicy
from policies.model_file import ModelFile, load_model_file, tensor_checksum

MODEL_PATH_KEY = "model_file"
DETERMINISTIC_KEY = "model_file_deterministic"


def model_file_policy_spec(path: str, deterministic: bool = True) -> PolicySpec:
    """A `PolicySpec` playing the model file at `path` (spaces are inferred from the environment)."""
    return PolicySpec(
        policy_class=ModelFilePolicy, config={MODEL_PATH_KEY: str(path), DETERMINISTIC_KEY: bool(deterministic)}
    )


class ModelFilePolicy(FixedPolicy):
    """A model file behind RLlib's `Policy` interface; never trained, no weights to sync.

    Raises (at construction):
        ModelFileError: The file is missing, damaged or written for another contract.
        ValueError: The file expects a different observation size (frame stacking) than the environment gives.
    """

    def __init__(self, observation_space: gym.Space, action_space: gym.Space, config: dict[str, Any]) -> None:
        super().__init__(observation_space, action_space, config)
        path = config.get(MODEL_PATH_KEY)
        if not path:
            raise ValueError(f"ModelFilePolicy needs the {MODEL_PATH_KEY!r} config key (use model_file_policy_spec)")
        self.model: ModelFile = load_model_file(path).single("a frozen league opponent (opponents.targets)")
        self.deterministic = bool(config.get(DETERMINISTIC_KEY, True))
        original = getattr(observation_space, "original_space", observation_space)
        if isinstance(original, gym.spaces.Dict) and "observations" in original.spaces:
            env_size = int(np.prod(original.spaces["observations"].shape))
            if env_size != self.model.obs_size:
                raise ValueError(
                    f"model file {path} expects {self.model.obs_size} observation entries (frame stack "
                    f"{self.model.frame_stack}), the environment gives {env_size}: set env.frame_stack to the "
                    "model's frame stacking"
                )

    def act_batch(self, obs: Mapping[str, np.ndarray]) -> np.ndarray:
        observations = np.asarray(obs["observations"], dtype=np.float32)
        masks = np.asarray(obs["action_mask"], dtype=np.float32)
        return self.model.act(observations, masks, deterministic=self.deterministic)

    def checksum(self) -> str:
        """SHA-256 of the weights this policy plays with (equal to the file's recorded ``tensor_sha256``)."""
        return tensor_checksum(self.model.module)

    def get_state(self) -> dict[str, Any]:
        state = super().get_state()
        state[MODEL_PATH_KEY] = str(self.model.path)
        return state
