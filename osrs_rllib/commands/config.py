"""`osrs-rllib config show FILE [--set key.path=value ...]`: a training config fully resolved
(`osrs_rllib.config.schema`)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from osrs_rllib.commands import fail

config_app = typer.Typer(no_args_is_help=True, help="Training configs: YAML presets with extends and --set.")


@config_app.command("show")
def config_show(
    file: Annotated[str, typer.Argument(metavar="FILE", help="A YAML training config, e.g. configs/nh.yml.")],
    set_: Annotated[
        list[str] | None,
        typer.Option("--set", help="Override key.path=value (value read as YAML, e.g. ppo.lr=1e-4); repeatable."),
    ] = None,
    phase: Annotated[
        str | None, typer.Option(help="Print this phase of a recipe as the whole config its run trains with.")
    ] = None,
) -> None:
    """Print FILE fully resolved (extends merged, overrides applied, defaults filled in) as YAML.

    The output is itself a valid config: saving it and loading it gives the same configuration. A recipe's
    phases are listed on top (each one's budget and start); --phase NAME prints one phase resolved.
    """
    from osrs_rllib.config import ConfigError, dump_config, load_config, phase_config, phase_lines, usable_cores

    overrides = set_ or []
    try:
        cfg = load_config(file, overrides)
        names = [p.name for p in cfg.phases]
        if phase is not None and phase not in names:
            raise fail(f"{file}: phases: no phase {phase!r}; the phases are {', '.join(names) or 'none'}")
        if phase is not None:
            k = names.index(phase)
            init = f"<phase {k}'s {cfg.phases[k].init_from}.nhmodel>" if k else None
            cfg = phase_config(
                cfg, k, file, experiments_dir=f"{cfg.experiments_dir}/{cfg.name}/phases", init_model=init
            )
    except ConfigError as exc:
        raise fail(str(exc)) from None
    command = " ".join(["osrs-rllib config show", file, *(f"--set {o}" for o in overrides)])
    header = f"{command}\nresolved: extends merged, overrides applied, defaults filled in"
    if phase is not None:
        header += f"\nphase {phase!r} of the recipe: the config its run trains with"
    header = "\n".join([header, *machine_lines(cfg, usable_cores()), *phase_lines(cfg)])
    typer.echo(dump_config(cfg, header=header), nl=False)


def machine_lines(cfg: Any, cores: int) -> list[str]:
    """What the config's ``auto`` settings become on this machine, as a run started here would choose them
    (`osrs_rllib/config/machine.py`); the YAML keeps ``auto``, so that it loads the same anywhere."""
    from osrs_rllib.config import local_choice

    if cfg.ray.address:
        runners = cfg.runners.num_env_runners
        said = "the cluster's CPUs less one, read when the run joins" if runners == "auto" else str(runners)
        return [f"on a cluster ({cfg.ray.address}): env runners: {said}; learner.device: {cfg.learner.device}"]
    try:
        choice = local_choice(cfg.ray.num_cpus, cfg.runners.num_env_runners, cfg.learner.device)
    except ValueError as exc:  # learner.device cuda on a machine without one
        return [f"on this machine ({cores} usable cores): {exc}"]
    return [
        f"on this machine ({cores} usable cores): ray.num_cpus {cfg.ray.num_cpus} -> {choice.cpus}, "
        f"runners.num_env_runners {cfg.runners.num_env_runners} -> {choice.num_env_runners}, "
        f"learner.device {cfg.learner.device} -> {choice.device}"
    ]


def register(app: typer.Typer) -> None:
    """Add the ``config`` group to the main command line."""
    app.add_typer(config_app, name="config")
