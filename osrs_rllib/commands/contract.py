"""`osrs-rllib contract export PATH`: the action and observation contract as JSON (`envs.nh.contract`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from osrs_rllib.commands import fail

contract_app = typer.Typer(no_args_is_help=True, help="The action and observation contract (spec §14, §15).")


@contract_app.command("export")
def contract_export(
    path: Annotated[
        Path, typer.Argument(help="Where to write the contract JSON ('-': standard output).", dir_okay=False)
    ],
) -> None:
    """Write the action/observation contract (heads, dependencies, observation layout) as JSON."""
    from envs.nh.contract import contract_json, export_contract_json

    if str(path) == "-":
        typer.echo(contract_json())
        return
    try:
        written = export_contract_json(path)
    except OSError as exc:
        raise fail(f"cannot write {path}: {exc.strerror or exc}") from None
    typer.echo(f"wrote contract to {written}")


def register(app: typer.Typer) -> None:
    """Add the ``contract`` group to the main command line."""
    app.add_typer(contract_app, name="contract")
