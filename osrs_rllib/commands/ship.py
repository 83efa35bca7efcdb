"""`osrs-rllib ship EXPERIMENT --name NAME`: write a finished run's shipped model and card by its config's rule.

The rule (``ship:`` in the run's config), the measurements and the files are `osrs_rllib.shipping.ship.ship_run`'s; this
command turns its flags into the arguments and prints what it raises.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from osrs_rllib.commands import fail


def ship(
    experiment: Annotated[
        str, typer.Argument(metavar="EXPERIMENT", help="A finished run: its directory, or its name in experiments/.")
    ],
    name: Annotated[str, typer.Option(help="The shipped model's name: writes OUT/NAME.nhmodel and OUT/NAME.card.md.")],
    out: Annotated[Path, typer.Option(help="Where the model and its card go.")] = Path("models"),
    force: Annotated[bool, typer.Option("--force", help="Replace an existing OUT/NAME.nhmodel.")] = False,
    experiments_dir: Annotated[
        str, typer.Option(help="Where EXPERIMENT is looked up by name (a training config's experiments_dir).")
    ] = "experiments",
    detach: Annotated[
        bool, typer.Option("--detach", help="Run in the background (log: EXPERIMENT/ship/ship.log).")
    ] = False,
) -> None:
    """Measure the run's candidates by the rule its config states (ship:), pick one, and write it with its card.

    Every measurement is kept in EXPERIMENT/ship/, so a stopped ship continues where it was when run again
    (exploit runs resume from their checkpoints). See docs/recipes.md.
    """
    from osrs_rllib.shipping import ShipError, ship_run

    detach_argv = None
    if detach:  # the child runs this command again (without --detach), with the arguments as typed
        detach_argv = sys.argv[2:] if len(sys.argv) > 2 and sys.argv[1] == "ship" else [experiment, "--name", name]
    try:
        code = ship_run(
            experiment,
            name,
            out,
            force=force,
            experiments_dir=experiments_dir,
            detach_argv=detach_argv,
            echo=typer.echo,
        )
    except ShipError as exc:
        raise fail(str(exc)) from None
    raise typer.Exit(code=code)


def register(app: typer.Typer) -> None:
    """Add ``ship`` to the main command line."""
    app.command()(ship)
