"""The `osrs-rllib` command line."""

import typer

app = typer.Typer(no_args_is_help=True, help="Train, rate, analyse and serve OSRS NH PvP agents.")


@app.command()
def version() -> None:
    """Print the installed version."""
    from importlib.metadata import version as _v

    typer.echo(_v("osrs-rllib"))
