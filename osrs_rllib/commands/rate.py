"""`osrs-rllib rate PLAYERS...`: a round-robin tournament, rated and saved (`osrs_rllib.evaluation.rate`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from osrs_rllib.commands import fail
from osrs_rllib.commands.options import parse_set_options


def rate(
    players: Annotated[
        list[str],
        typer.Argument(
            metavar="EXPERIMENT|MODEL_FILE|NAME...",
            help="Experiment directories (every kept checkpoint), model files, ladder names or 'baseline'.",
        ),
    ],
    fights: Annotated[int, typer.Option(min=1, help="Fights per pair (seats alternate).")] = 100,
    seed: Annotated[int, typer.Option(min=0, help="Fight k of every pair uses seed + k.")] = 0,
    ladder: Annotated[bool, typer.Option(help="Add the ladder and the baseline to the tournament.")] = True,
    out: Annotated[Path | None, typer.Option(help="Where to write ratings.json and ratings.csv.")] = None,
    set_: Annotated[
        list[str] | None, typer.Option("--set", help="Fight option key=value (spec §13.1); repeatable.")
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print one JSON object: the ratings, the rules and the scores per build.")
    ] = False,
    build: Annotated[
        str | None,
        typer.Option(help="Spread every pair's fights over these builds: a comma-separated list or 'all'."),
    ] = None,
    engine: Annotated[
        str, typer.Option(help="Simulator: auto (the compiled core when built), core or python (same games).")
    ] = "auto",
) -> None:
    """Round-robin tournament, rated with Elo and openskill (mu, sigma, 95 % interval), printed and saved.

    Fights use the first model's training settings (its builds, gear and fight-type randomisation) and the
    models' training rules (masks, death_match; models trained under different rules need --set to choose), so
    models are rated in the conditions they learned; --set overrides them. The rules used are printed (and in
    --json and ratings.json as "rules"); without a model, the spec's defaults. Builds are spread evenly over
    every pair's fights (the trained builds, or --build), and a table of each player's score per build
    follows the ratings (--json: "by_build"). The prescient rung does not meet the baseline (it must see its
    opponent's action).
    """
    from envs.nh.core_engine import check_engine
    from envs.nh.params import ParamError
    from osrs_rllib.evaluation import (
        parse_builds,
        resolve_players,
        save_table,
        table_json,
        tournament,
        tournament_params,
    )
    from policies.model_file import ModelFileError

    try:
        roster = resolve_players(players, with_ladder=ladder)
        options = parse_set_options(set_ or [])
        params, rules = tournament_params(roster, options)
        builds = parse_builds(build) if build is not None else None
        check_engine(engine)
    except (ValueError, ParamError, ModelFileError) as exc:
        raise fail(str(exc)) from None
    if len(roster) < 2:
        raise fail("a tournament needs at least two players")
    scores: dict[str, dict[str, list[float]]] = {}
    rows, games = tournament(
        roster,
        fights,
        params,
        seed,
        progress=None if as_json else lambda a, b: typer.echo(f"{a} vs {b}", err=True),
        builds=builds,
        by_build=scores,
        engine=engine,
    )
    target = out or (Path(players[0]) if Path(players[0]).is_dir() else Path("."))
    written = save_table(rows, games, target, rules)
    if as_json:
        typer.echo(table_json(rows, rules, scores))
        return
    _print_ratings(rows, scores)
    typer.echo(rules.describe())
    typer.echo(f"saved {', '.join(str(p) for p in written)}")


def _print_ratings(rows: list[Any], scores: dict[str, dict[str, list[float]]]) -> None:
    """The ratings table, then each player's score per build where more than one build was played."""
    from rich.console import Console
    from rich.table import Table

    table = Table("rank", "player", "elo", "mu", "sigma", "mu - 3 sigma", "95 % interval of mu", "games")
    for i, r in enumerate(rows, 1):
        table.add_row(
            str(i),
            r.name,
            f"{r.elo:.0f}",
            f"{r.mu:.2f}",
            f"{r.sigma:.2f}",
            f"{r.conservative:.2f}",
            f"[{r.ci95_low:.2f}, {r.ci95_high:.2f}]",
            str(r.games),
        )
    Console().print(table)
    played = sorted({b for per in scores.values() for b in per})
    if len(played) > 1:
        per_build = Table("player", *played, title="score per build (wins + ½ ties) / games")
        for r in rows:
            cells = scores.get(r.name, {})
            per_build.add_row(r.name, *(f"{cells[b][0] / cells[b][1]:.0%}" if b in cells else "–" for b in played))
        Console().print(per_build)


def register(app: typer.Typer) -> None:
    """Add ``rate`` to the main command line."""
    app.command()(rate)
