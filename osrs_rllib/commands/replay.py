"""`osrs-rllib replay FILE`: a recorded fight as one HTML page, or re-run to verify it (`osrs_rllib.replay`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from osrs_rllib.commands import fail


def replay(
    file: Annotated[Path, typer.Argument(metavar="FILE", help="A replay file (*.nhreplay, from fight --record).")],
    out: Annotated[
        Path | None, typer.Option("-o", "--out", help="The HTML page to write (default: FILE with .html).")
    ] = None,
    verify: Annotated[
        bool, typer.Option("--verify", help="Re-run the fight from its seed and actions; exit 1 if any tick differs.")
    ] = False,
    engine: Annotated[
        str, typer.Option(help="Simulator --verify re-runs the fight on: auto (the compiled core when built), core "
                          "or python (either verifies a replay recorded on either).")
    ] = "auto",
    as_json: Annotated[
        bool, typer.Option("--json", help="Print one JSON object (the check, or the page written) and nothing else.")
    ] = False,
) -> None:
    """Write a replay as one self-contained HTML page (no network needed to view it), or --verify it."""
    from osrs_rllib.replay.command import replay_command

    raise typer.Exit(code=replay_command(file, out, verify, fail, engine, as_json))


def register(app: typer.Typer) -> None:
    """Add ``replay`` to the main command line."""
    app.command()(replay)
