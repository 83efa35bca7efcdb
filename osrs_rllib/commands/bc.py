"""`osrs-rllib bc REPLAYS... -o OUT`: behaviour cloning from recorded fights
(`osrs_rllib.training.bc.learn.bc_command`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from osrs_rllib.commands import fail


def behaviour_cloning(
    replays: Annotated[
        list[Path], typer.Argument(metavar="REPLAYS...", help="Replay files or directories of them (fight --record).")
    ],
    out: Annotated[Path, typer.Option("-o", "--out", help="The model file to write (*.nhmodel).")],
    config: Annotated[str, typer.Option(help="The training config whose network learns (shape, rules).")] = (
        "configs/nh.yml"
    ),
    set_: Annotated[
        list[str] | None, typer.Option("--set", help="Override key.path=value of the config; repeatable.")
    ] = None,
    player: Annotated[
        list[str] | None,
        typer.Option(help="Learn only this seat (0, 1) or player name (e.g. expert); repeatable. Default: every "
                     "seat that acted (not the in-simulator baseline)."),
    ] = None,
    epochs: Annotated[int | None, typer.Option(min=1, help="Passes over the training fights (default 6).")] = None,
    batch_size: Annotated[int | None, typer.Option(min=1, help="Samples per step (default 1024).")] = None,
    lr: Annotated[float | None, typer.Option(help="Adam's learning rate, annealed to a tenth (default 1e-3).")] = None,
    holdout: Annotated[float | None, typer.Option(help="Share of whole fights held out (default 0.1).")] = None,
    seed: Annotated[int | None, typer.Option(min=0, help="Split and initialisation seed (default: the config's).")] = (
        None
    ),
    logdir: Annotated[Path | None, typer.Option(help="TensorBoard directory (default: OUT's stem + .tensorboard).")] = (
        None
    ),
    init: Annotated[Path | None, typer.Option(help="Start from this model file's weights (same shape).")] = None,
    engine: Annotated[str, typer.Option(help="Simulator that re-runs the fights: auto, core or python.")] = "auto",
) -> None:
    """Behaviour cloning: train the config's policy network on recorded fights (every head, teacher-forced under
    the masks) and write a model file; held-out fights give per-head accuracy (osrs_rllib/training/bc/learn.py)."""
    from osrs_rllib.training import bc_command

    settings = {"epochs": epochs, "batch_size": batch_size, "lr": lr, "holdout": holdout, "seed": seed}
    raise typer.Exit(
        code=bc_command(replays, out, config, set_ or [], player, settings, logdir, init, engine, typer.echo, fail)
    )


def register(app: typer.Typer) -> None:
    """Add ``bc`` to the main command line."""
    app.command("bc")(behaviour_cloning)
