"""The `osrs-rllib` commands, one module per command group; `osrs_rllib/cli.py` registers them all.

A command parses its options, calls the library and prints: what it does lives in the library (`fight`,
`rate`, `train_run`, `exploit`, `bc`, `outcome`, `jobs`, `play`, `serving`), so the same work runs from
Python, a notebook or a test without the command line.

Every module imports only typer and rich at the top and the library inside the command's body: the command
line loads the modules of every command to list them, and `--help`, `jobs` or `serve status` must not pay
for Ray, torch or the play web server (tests/osrs_rllib/test_cli_startup.py holds that).
"""

from __future__ import annotations

import typer


def fail(message: str) -> typer.Exit:
    """Print one clear error line on stderr; the caller raises the returned exit (status 2)."""
    typer.secho(f"error: {message}", err=True, fg=typer.colors.RED)
    return typer.Exit(code=2)
