"""`osrs-rllib version`: the installed version (reads the package metadata only)."""

from __future__ import annotations

import typer


def version() -> None:
    """Print the installed version."""
    from importlib.metadata import version as _v

    typer.echo(_v("osrs-rllib"))


def register(app: typer.Typer) -> None:
    """Add ``version`` to the main command line."""
    app.command()(version)
