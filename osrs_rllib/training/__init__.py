"""Training: a config becomes a run, and a run becomes checkpoints and model files.

The loop is `trainer` (Ray, the algorithm, resume, evaluation, checkpoints, TensorBoard), read top to bottom; it
takes its evaluator, stop rule and hooks as objects (`parts`) and reports through `report` and `time_account`.
`algorithm` builds RLlib's PPO config from a `TrainConfig`; `learner/` holds the trainable policies' class (gradient
accumulation, the bfloat16 autocast, the magnet) and the thread chooser; `sampling/` the training environment, the
opponent mix and the lockstep sampler. Around the loop: `launch` (start, resume or detach a run), `phases` (a recipe
in stages), `warm_start`, `milestones`, `mixture` (a run's per-fight mixture), `league_snapshots`, `run_state` and
`bc/` (behaviour cloning, which trains the same network from recorded fights).
"""

from __future__ import annotations

from common.lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "Trainer": "trainer",
    "TrainingError": "trainer",
    "TrainRunError": "launch",
    "run_train": "launch",
    "Rows": "parts",
    "RunFacts": "parts",
    "RunHooks": "parts",
    "StopLimits": "parts",
    "evaluation_modes": "parts",
    "runner_shards": "parts",
    "RunState": "run_state",
    "register_everything": "algorithm",
    "build_algorithm_config": "algorithm",
    "env_config": "algorithm",
    "fixed_policies": "algorithm",
    "league_rungs": "algorithm",
    "make_league": "algorithm",
    "format_eval_line": "report",
    "format_line": "report",
    "make_view": "report",
    "summary_figures": "report",
    "driver_rng_state": "run_state",
    "set_driver_rng_state": "run_state",
    "stream_seed": "run_state",
    "PHASES_FILE": "phases",
    "RECIPE_FILE": "phases",
    "PhasedRun": "phases",
    "command_line": "phases",
    "git_state": "phases",
    "MILESTONES_DIR": "milestones",
    "Milestone": "milestones",
    "MILESTONE_KINDS": "milestones",
    "list_milestones": "milestones",
    "MixtureError": "mixture",
    "describe_mixture": "mixture",
    "run_members": "mixture",
    "write_run_mixture": "mixture",
    "SnapshotError": "league_snapshots",
    "export_snapshot": "league_snapshots",
    "WarmStartError": "warm_start",
    "load_init": "warm_start",
    "bc_command": "bc.learn",
}
__all__ = sorted(_EXPORTS)
__getattr__ = lazy_exports(__name__, _EXPORTS)
