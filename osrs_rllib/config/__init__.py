"""Configuration: a YAML file (with ``extends:`` and ``--set``) becomes one typed, checked `TrainConfig`.

It owns the schema of every section (`schema`, with the field types of `types`, the ``ppo:`` section in `ppo` and
the optional sections of `options` and `recipe`), how files are read and overridden (`files`), how a bad key is
reported (`errors`, one line naming the key and the file or ``--set`` that wrote it), and what ``auto`` means on the
machine at hand (`machine`: the CPUs, the env runners, the learner's device). Nothing here runs anything: the
training, exploit and shipping packages read a `TrainConfig`, never a YAML file.
"""

from __future__ import annotations

from common.lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "BASELINE": "schema",
    "ConfigError": "schema",
    "LEAGUE_KINDS": "schema",
    "OPPONENT_KINDS": "schema",
    "SELF_PLAY": "schema",
    "SET_SOURCE": "schema",
    "TARGET": "schema",
    "RayConfig": "schema",
    "StopConfig": "schema",
    "TrainConfig": "schema",
    "dump_config": "schema",
    "load_config": "schema",
    "resolve_config_dict": "schema",
    "StepSchedule": "types",
    "AverageConfig": "ppo",
    "MagnetConfig": "ppo",
    "PPOConfig": "ppo",
    "MixtureConfig": "options",
    "NOISE_ENTRIES": "options",
    "NOVELTY_ENTRIES": "options",
    "OBS_IDS": "options",
    "ShipFloorConfig": "recipe",
    "phase_config": "recipe",
    "phase_lines": "recipe",
    "to_yaml": "files",
    "LearnerConfig": "machine",
    "MachineChoice": "machine",
    "choose": "machine",
    "local_choice": "machine",
    "ray_cpus": "machine",
    "usable_cores": "machine",
}
__all__ = sorted(_EXPORTS)
__getattr__ = lazy_exports(__name__, _EXPORTS)
