"""The learner's side of PPO: the trainable policies' class (`ppo_policy`: RLlib's PPO torch policy with gradient
accumulation, the bfloat16 autocast and the magnet), the number format (`precision`), the accumulation itself
(`accumulation`) and how many torch threads the learner uses (`threads`)."""
