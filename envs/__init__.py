"""NH fight environments: the simulator core (`envs.nh`), scripted opponents and env adapters.

Importing this package registers the gymnasium id ``osrs-rllib/NH-v0``; the RLlib adapter lives in
``envs.rllib_env`` so that the simulator itself never imports Ray.
"""

from envs.gym_env import ENV_ID, NHGymEnv, register

register()

__all__ = ["ENV_ID", "NHGymEnv", "register"]
