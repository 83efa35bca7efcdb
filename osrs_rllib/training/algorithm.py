"""The RLlib side of a training run: the algorithm config built from a `TrainConfig`, the league's fixed
players, and the env and model registrations.

Why apart from the trainer loop (`osrs_rllib/training/trainer.py`): benchmarks, the league's tests and serving build or
register the same pieces without running a trainer.
"""

from __future__ import annotations

from typing import Any

from osrs_rllib.config import BASELINE, MachineChoice, TrainConfig, choose, local_choice
from osrs_rllib.training.sampling.opponent_mix import LEAGUE_KINDS, LEARNER_POLICY, OpponentMix

ENV_NAME = "osrs_rllib_nh_training"
"""Name under which `TrainingEnv` is registered with Ray Tune's env registry."""


def env_config(cfg: TrainConfig) -> dict[str, Any]:
    """The `TrainingEnv` config of a training config (also what evaluation builds its fights from)."""
    return {
        "params": dict(cfg.env.params),
        "reward_weights": dict(cfg.env.reward_weights),
        "frame_stack": cfg.env.frame_stack,
        "opponent_mix": cfg.opponents.normalized(),
        "mix_seed": cfg.seed,
        "league": cfg.league_enabled,
        "scripted_in_env": cfg.opponents.scripted_in_env,
        "engine": cfg.env.engine,
        # the optional training options reach the envs only when on, so a config without them builds the same envs
        **({"novelty": cfg.env.novelty.model_dump(mode="json")} if cfg.env.novelty.enabled else {}),
        **({"observation_noise": cfg.env.observation_noise.model_dump(mode="json")}
           if cfg.env.observation_noise.enabled else {}),
    }


def make_league(cfg: TrainConfig) -> Any:
    """A new league for a config: its mix is ``opponents.mix``; baseline and ladder rungs join as fixed players."""
    import dataclasses

    from league.league import League

    league = League(dataclasses.replace(cfg.league, opponent_mix=cfg.league_mix()))
    league.add_baseline()
    for name in league_rungs(cfg.opponents.scripted_in_env):
        league.add_scripted(name)
    for path in cfg.opponents.targets:
        league.add_target(path)
    return league


def league_rungs(scripted_in_env: bool) -> list[str]:
    """Ladder rungs that join the league as fixed players: every rung, except those that must see the other
    seat's action first (``prescient``) when rungs play as RLlib policies, where no host can show it."""
    from envs.opponents import LADDER, needs_opponent_action

    return [name for name in LADDER if scripted_in_env or not needs_opponent_action(name)]


def fixed_policies(scripted_in_env: bool = True, targets: tuple[str, ...] | list[str] = ()) -> dict[str, str | None]:
    """Who plays each fixed league player: None where the environment plays it itself (the baseline, and the
    ladder rungs with `scripted_in_env`), else the RLlib policy of the rung; a target model file is played by
    the policy of the same id (`policies/model_file_policy.py`)."""
    from league.players import target_id
    from policies.scripted import scripted_policy_id

    rungs = league_rungs(scripted_in_env)
    return {
        BASELINE: None,
        **{scripted_policy_id(n): None if scripted_in_env else scripted_policy_id(n) for n in rungs},
        **{target_id(p): target_id(p) for p in targets},
    }



def machine_choice(cfg: TrainConfig) -> MachineChoice:
    """What the config's `auto` settings become on the Ray this process runs (`osrs_rllib/config/machine.py`): the
    cluster's CPUs once joined, the embedded Ray's once started, else what an embedded Ray would get here."""
    import ray

    if ray.is_initialized():
        cpus = int(ray.cluster_resources().get("CPU", 1))
        return choose(cfg.runners.num_env_runners, cfg.learner.device, cpus, on_cluster=cfg.ray.address is not None)
    return local_choice(cfg.ray.num_cpus, cfg.runners.num_env_runners, cfg.learner.device)


def build_algorithm_config(
    cfg: TrainConfig, learners: tuple[str, ...] = (LEARNER_POLICY,), seed: int | None = None
) -> Any:
    """RLlib's algorithm config (old API stack, PPO) for a training config; `learners` are the trainable policies
    (main, plus the league's exploiters); `seed` replaces ``cfg.seed`` for the env runners' streams and RLlib's
    seeding (a resumed run's, `stream_seed`)."""
    from ray.rllib.policy.policy import PolicySpec

    from osrs_rllib.training.callbacks import TrainingCallbacks
    from osrs_rllib.training.learner import threads as learner_threads
    from osrs_rllib.training.learner.ppo_policy import magnet_settings, policy_spec
    from osrs_rllib.training.sampling.env import policy_mapping_fn
    from osrs_rllib.training.sampling.lockstep import LockstepRolloutWorker
    from policies.scripted import SCRIPTED_PREFIX, scripted_policy_spec

    machine = machine_choice(cfg)
    # this process learns (`osrs_rllib/training/learner/threads.py`); a GPU learner's CPU side is kernel launches and
    # batch copies, which one thread does: measuring threads there would only time the runners' contention
    learner_threads.configure(cfg.ppo.learner_threads if machine.device == "cpu" else 1)
    mix = OpponentMix(
        # a mix of league kinds only (e.g. {target: 1}) has no fixed kinds: TrainingEnv falls back the same way
        {k: v for k, v in cfg.opponents.normalized().items() if k not in LEAGUE_KINDS} or {BASELINE: 1.0},
        scripted_in_env=cfg.opponents.scripted_in_env,
    )
    ppo = cfg.ppo
    magnet = magnet_settings(ppo.magnet)  # main's alone: the exploiters are best responses by design
    average = ppo.average.decay if ppo.average.enabled else None  # main's too: the model that may ship
    policies: dict[str, Any] = {
        p: policy_spec(ppo.grad_accumulation_steps, ppo.learner_precision, magnet if p == LEARNER_POLICY else None,
                       machine.device, average if p == LEARNER_POLICY else None)
        for p in learners
    }
    scripted = set(mix.policy_ids())
    if cfg.league_enabled and not cfg.opponents.scripted_in_env:
        scripted |= {pid for pid in fixed_policies(False).values() if pid is not None}
    seed = cfg.seed if seed is None else seed
    for pid in sorted(scripted - {LEARNER_POLICY}):
        if pid.startswith(SCRIPTED_PREFIX):
            policies[pid] = scripted_policy_spec(pid[len(SCRIPTED_PREFIX) :], seed=seed)
    if cfg.league_enabled:
        from league.callback import MIRROR_POLICY, slot_policy_id, uses_mirror

        for i in range(cfg.opponents.league_slots):
            policies[slot_policy_id(i)] = PolicySpec()  # frozen: not in policies_to_train
        if uses_mirror(cfg.league):
            policies[MIRROR_POLICY] = PolicySpec()  # frozen main in the exploiters' games (league.callback)
        from league.players import target_id
        from policies.model_file_policy import model_file_policy_spec

        for path in cfg.opponents.targets:
            # frozen: the file itself, no weights
            policies[target_id(path)] = model_file_policy_spec(path, cfg.opponents.targets_deterministic)
    runners = cfg.runners
    return (
        _algorithm_config(cfg)
        .api_stack(enable_rl_module_and_learner=False, enable_env_runner_and_connector_v2=False)
        .framework("torch")
        .environment(ENV_NAME, env_config={**env_config(cfg), "mix_seed": seed}, disable_env_checking=True)
        .env_runners(
            num_env_runners=machine.num_env_runners,
            num_envs_per_env_runner=runners.num_envs_per_env_runner,
            num_cpus_per_env_runner=runners.num_cpus_per_env_runner,
            rollout_fragment_length=cfg.ppo.rollout_fragment_length,
            sample_timeout_s=runners.sample_timeout_s,
            batch_mode="truncate_episodes",
            env_runner_cls=LockstepRolloutWorker if runners.sampler == "lockstep" else None,
        )
        .multi_agent(
            policies=policies,
            policy_mapping_fn=policy_mapping_fn,
            policies_to_train=list(learners),
        )
        .callbacks(TrainingCallbacks)
        .resources(num_gpus=1 if machine.device == "cuda" else 0)  # the driver's learner; runners sample on CPUs
        .debugging(seed=seed, log_level="WARN")
    )


def _algorithm_config(cfg: TrainConfig) -> Any:
    """RLlib's `PPOConfig` with the ``ppo:`` settings: one iteration samples ``train_batch_size`` steps, then
    ``num_epochs`` passes of ``minibatch_size`` minibatches.

    Why PPO only: RLlib's APPO was built, fitted to the autoregressive heads and measured against it
    (docs/training.md "APPO"); on 2 cores it sampled at half PPO's rate and its hour missed 90 % in one build,
    the bar it had to meet to stay.
    """
    from ray.rllib.algorithms.ppo import PPOConfig as RLlibPPOConfig  # ours is osrs_rllib.config.schema.PPOConfig

    from policies.rllib_model import model_config

    ppo = cfg.ppo
    lr, lr_schedule = ppo.lr.to_rllib()
    entropy, entropy_schedule = ppo.entropy_coeff.to_rllib()
    return (
        RLlibPPOConfig()
        .training(
            gamma=ppo.gamma,
            lambda_=ppo.gae_lambda,
            clip_param=ppo.clip_param,
            vf_clip_param=ppo.vf_clip_param if ppo.vf_clip_param is not None else float("inf"),
            vf_loss_coeff=ppo.vf_loss_coeff,
            entropy_coeff=entropy,
            entropy_coeff_schedule=entropy_schedule,
            lr=lr,
            lr_schedule=lr_schedule,
            grad_clip=ppo.grad_clip,
            kl_coeff=ppo.kl_coeff,
            kl_target=ppo.kl_target,
            use_kl_loss=ppo.kl_coeff > 0,
            num_epochs=ppo.num_epochs,
            train_batch_size=ppo.train_batch_size,
            minibatch_size=ppo.minibatch_size,
            model=model_config(cfg.model, ppo.head_entropy_weights),
        )
        .reporting(
            min_sample_timesteps_per_iteration=0, min_time_s_per_iteration=0, keep_per_episode_custom_metrics=False
        )
    )


def register_everything() -> None:
    """Register the env and the model with Ray, and let checkpoints name the modules of before the package split
    (`legacy_modules`); idempotent, so safe after every `ray.init`."""
    from ray.tune.registry import register_env

    from osrs_rllib.training.legacy_modules import install_legacy_module_names
    from osrs_rllib.training.sampling.env import TrainingEnv
    from policies.rllib_model import register

    install_legacy_module_names()
    register()
    register_env(ENV_NAME, lambda config: TrainingEnv(config))


def runner_nodes(algo: Any) -> dict[str, int]:
    """How many env runners each Ray node holds (node id → count): where a run's sampling actually went."""
    import ray

    ids = algo.env_runner_group.foreach_env_runner(lambda _: ray.get_runtime_context().get_node_id(),
                                                   local_env_runner=False)
    counts: dict[str, int] = {}
    for node in ids:
        counts[node] = counts.get(node, 0) + 1
    return counts
