"""`osrs-rllib mixture`: write a per-fight mixture model file, from a run by its config's rule or from given files.

The rule and the file are `osrs_rllib.training.mixture`'s and `policies.mixture`'s; this command turns its arguments
into theirs and prints what they raise.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from osrs_rllib.commands import fail


def mixture(
    sources: Annotated[
        list[str],
        typer.Argument(
            metavar="EXPERIMENT | MODEL...",
            help="A training run's directory (its members chosen by its config's mixture: rule), or two or more "
            "*.nhmodel files (the members, in order).",
        ),
    ],
    out: Annotated[
        Path | None,
        typer.Option("-o", "--out", help="The file to write (default for a run: EXPERIMENT/models/mixture.nhmodel).",
                     dir_okay=False),
    ] = None,
    set_: Annotated[
        list[str] | None,
        typer.Option("--set", help="Override the run's rule, e.g. mixture.members=3 (key.path=value; repeatable)."),
    ] = None,
) -> None:
    """Write a per-fight mixture: several models in one file, one drawn per fight by the fight's seed, which
    fight, play, serve and exploit seat like any model (docs/league.md, "A per-fight mixture")."""
    from osrs_rllib.config import ConfigError, load_config
    from osrs_rllib.training import MixtureError, describe_mixture, write_run_mixture
    from policies.mixture import save_mixture_file
    from policies.model_file import MODEL_SUFFIX, ModelFileError, load_model_file

    if out is not None and out.suffix != MODEL_SUFFIX:
        raise fail(f"{out}: model files end in {MODEL_SUFFIX} (e.g. -o mixture{MODEL_SUFFIX})")
    first = Path(sources[0])
    if first.is_dir():
        if len(sources) > 1:
            raise fail("give one EXPERIMENT directory, or model files only")
        config = first / "config.yml"
        if not config.is_file():
            raise fail(f"{first} is not a training run: it has no config.yml")
        try:
            rule = load_config(config, set_ or []).mixture
            path, chosen = write_run_mixture(first / "models", rule, out)
        except (ConfigError, MixtureError) as exc:
            raise fail(str(exc)) from None
        typer.echo(f"wrote {path}: {describe_mixture(chosen)}, one drawn per fight")
        return
    if set_:
        raise fail("--set changes a run's rule; model files given by hand are the members as they are")
    if out is None:
        raise fail("give the file to write: -o OUT.nhmodel")
    try:
        members = [load_model_file(s) for s in sources]
        save_mixture_file(members, out)
    except ModelFileError as exc:
        raise fail(str(exc)) from None
    typer.echo(f"wrote {out}: {len(members)} members ({', '.join(Path(s).name for s in sources)}), one drawn per fight")


def register(app: typer.Typer) -> None:
    """Add ``mixture`` to the main command line."""
    app.command()(mixture)
