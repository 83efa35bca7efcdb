"""`osrs-rllib config show FILE [--set key.path=value ...]`: a training config fully resolved (`osrs_rllib.config`)."""

from __future__ import annotations

from typing import Annotated

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
) -> None:
    """Print FILE fully resolved (extends merged, overrides applied, defaults filled in) as YAML.

    The output is itself a valid config: saving it and loading it gives the same configuration.
    """
    from osrs_rllib.config import ConfigError, dump_config, load_config

    overrides = set_ or []
    try:
        cfg = load_config(file, overrides)
    except ConfigError as exc:
        raise fail(str(exc)) from None
    command = " ".join(["osrs-rllib config show", file, *(f"--set {o}" for o in overrides)])
    header = f"{command}\nresolved: extends merged, overrides applied, defaults filled in"
    typer.echo(dump_config(cfg, header=header), nl=False)


def register(app: typer.Typer) -> None:
    """Add the ``config`` group to the main command line."""
    app.add_typer(config_app, name="config")
