"""NH fight environments: the simulator core (`envs.nh`), scripted opponents and env adapters.

Importing ``envs.gym_env`` registers the gymnasium id ``osrs-rllib/NH-v0``; the RLlib adapter lives in
``envs.rllib_env``. Nothing is imported here eagerly, so that ``import envs.nh`` (the simulator) loads
neither gymnasium nor Ray; the adapter's names below are still reachable as ``envs.NHGymEnv`` etc.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["ENV_ID", "NHGymEnv", "register"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        return getattr(importlib.import_module("envs.gym_env"), name)
    raise AttributeError(f"module 'envs' has no attribute {name!r}")
