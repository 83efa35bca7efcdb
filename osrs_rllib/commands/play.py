"""``osrs-rllib play [OPPONENT]...``: fight an agent in the browser (`osrs_rllib.play`, its web app)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from osrs_rllib.commands import fail
from osrs_rllib.play.limits import DEFAULT_DATA_DIR, DEFAULT_PORT, MAX_TICK_MS, MIN_TICK_MS


def play(
    opponents: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="[OPPONENT]...",
            help="Model file, models/<name>, experiment, directory of model files, ladder rung or baseline; with "
            "--server, names the server answers for. Default: every model in models/, else the expert rung.",
        ),
    ] = None,
    build: Annotated[
        str | None, typer.Option(help="Default build (PURE, ZERKER, MED, MAXED, LMS_*); default: drawn per game.")
    ] = None,
    fight_type: Annotated[
        str | None,
        typer.Option("--fight-type", help="Default fight type (NORMAL, LMS, PVP_ARENA); default: the build's."),
    ] = None,
    tick_ms: Annotated[
        int, typer.Option("--tick-ms", min=MIN_TICK_MS, max=MAX_TICK_MS, help="Milliseconds per tick (the game: 600).")
    ] = 600,
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port of the page (0: any free one).")] = DEFAULT_PORT,
    host: Annotated[str, typer.Option(help="Address to bind; 127.0.0.1 keeps it private.")] = "127.0.0.1",
    server: Annotated[
        str | None, typer.Option(help="HOST:PORT of a running `osrs-rllib serve`: the opponent decides there.")
    ] = None,
    set_: Annotated[
        list[str] | None, typer.Option("--set", help="Reset option key=value for every game (spec §13.1); repeatable.")
    ] = None,
    seed: Annotated[int | None, typer.Option(min=0, help="Game k gets seed SEED + k (default: random).")] = None,
    data_dir: Annotated[Path, typer.Option(help="Where replays and the score table are kept.")] = DEFAULT_DATA_DIR,
    experiments_dir: Annotated[str, typer.Option(help="Where experiment names are looked up.")] = "experiments",
    models_dir: Annotated[str, typer.Option(help="The shipped models (the default opponents).")] = "models",
    engine: Annotated[
        str, typer.Option(help="Simulator: auto (the compiled core when built), core or python.")
    ] = "auto",
    model_sampling: Annotated[
        bool | None,
        typer.Option(
            "--model-sampling/--model-greedy",
            help="Model opponents sample their actions, or play greedy. Default: each model file's own mode of play "
            "(its metadata's play_mode), greedy when it names none.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Fight an agent yourself in the browser, at game speed: starts a local web app and prints its URL.

    You play seat 0 of a fight; the opponent plays seat 1 as in `osrs-rllib fight` and evaluation. Ticks advance
    every --tick-ms on the server's clock (slower paces and a step mode on the page); a late opponent's last
    action stands. Every game is written as a replay (osrs-rllib replay FILE --verify) and scored per opponent.
    See docs/play.md.
    """
    import logging

    from osrs_rllib.commands.options import parse_set_options
    from osrs_rllib.play.launch import PlayError, PlaySettings, run_play

    try:
        options = parse_set_options(set_ or [])
    except ValueError as exc:
        raise fail(str(exc)) from None
    settings = PlaySettings(
        opponents=tuple(opponents or ()), build=build, fight_type=fight_type, tick_ms=tick_ms, port=port, host=host,
        server=server, options=options, seed=seed, data_dir=data_dir, experiments_dir=experiments_dir,
        models_dir=models_dir, engine=engine, model_sampling=model_sampling,
    )  # fmt: skip
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        run_play(settings, echo=typer.echo)
    except PlayError as exc:
        raise fail(str(exc)) from None


def register(app: typer.Typer) -> None:
    """Add ``play`` to the main command line."""
    app.command()(play)
