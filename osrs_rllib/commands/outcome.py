"""`osrs-rllib outcome train|check`: the command line of `osrs_rllib/evaluation/outcome.py` (the win-probability
model)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from osrs_rllib.commands import fail

outcome_app = typer.Typer(
    no_args_is_help=True,
    help="The win-probability model (the `winrate` extension of a model file): train it, check its calibration.",
)


def _progress(quiet: bool) -> Any:
    if quiet:
        return None
    return lambda opponent, done, total: typer.echo(f"  {opponent}: {done}/{total} fights", err=True)


def _fmt(value: Any, spec: str = ".3f") -> str:
    return "–" if value is None else format(value, spec)


def _rules_line(rules: dict[str, Any] | None) -> str:
    """The ``rules: ...`` line of the fights played (`policies.fight_rules`), from a report's ``rules`` object."""
    if not rules:
        return "rules: not recorded"
    from policies.fight_rules import FightRules

    return FightRules.from_dict(rules).describe()


def _print_report(rep: dict[str, Any], title: str) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    head = rep.get("bar")
    if head is None:
        console.print(f"{title}: no ticks at or after tick {rep['from_tick']}")
        return
    bars = rep["bars"]
    console.print(
        f"{title}: {rep['fights']} fights, {rep['trajectories']} recorded seats, {head['samples']} ticks >= "
        f"{rep['from_tick']}; ECE {head['ece']:.3f} (bar <= {bars['max_ece']}: {'ok' if bars['ece_ok'] else 'FAIL'}), "
        f"AUC {_fmt(head['auc'])} (bar >= {bars['min_auc']}: {'ok' if bars['auc_ok'] else 'FAIL'}), "
        f"Brier {head['brier']:.3f}, log-loss {head['log_loss']:.3f}"
    )
    fw = rep.get("bar_fight_weighted")
    if fw:
        console.print(f"  each recorded seat weighted equally: ECE {fw['ece']:.3f}, AUC {_fmt(fw['auc'])}, "
                      f"Brier {fw['brier']:.3f}")
    rel = Table("bin", "ticks", "mean predicted", "observed", title=f"reliability (ticks >= {rep['from_tick']})")
    for r in rep["reliability"]:
        rel.add_row(f"[{r['low']:.1f}, {r['high']:.1f})", str(r["count"]), _fmt(r["mean_predicted"]),
                    _fmt(r["observed"]))
    console.print(rel)
    for key, label in (("by_phase", "fight phase (ticks)"), ("by_opponent", "opponent (ticks >= %d)"),
                       ("by_build", "build (ticks >= %d)"), ("by_fight_type", "fight type (ticks >= %d)")):
        table = Table(label.replace("%d", str(rep["from_tick"])), "ticks", "win rate", "mean predicted", "ECE",
                      "AUC", "Brier")
        for name, row in rep[key].items():
            if row is None:
                table.add_row(name, "0", "–", "–", "–", "–", "–")
                continue
            table.add_row(name, str(row["samples"]), _fmt(row["win_rate"]), _fmt(row["mean_predicted"]),
                          _fmt(row["ece"]), _fmt(row["auc"]), _fmt(row["brier"]))
        console.print(table)


@outcome_app.command("train")
def outcome_train(
    model: Annotated[str, typer.Argument(metavar="MODEL", help="A model file (*.nhmodel).")],
    fights: Annotated[int, typer.Option(min=20, help="Fights to play and learn from (split by fight).")] = 3000,
    out: Annotated[Path | None, typer.Option(help="Where to write the model file (default: MODEL.winrate.nhmodel).")]
    = None,
    in_place: Annotated[bool, typer.Option("--in-place", help="Rewrite MODEL itself (atomically).")] = False,
    seed: Annotated[int, typer.Option(min=0, help="Fight k uses seed + k; also seeds the split and the weights.")]
    = 0,
    mix: Annotated[
        str | None, typer.Option(help="Opponent shares, e.g. 'self=0.5,baseline=0.2,tribrid=0.3' (default: see docs).")
    ] = None,
    parallel: Annotated[int, typer.Option(min=1, help="Fights stepped in lockstep.")] = 64,
    engine: Annotated[
        str, typer.Option(help="Simulator: auto (the compiled core when built), core or python (same fights).")
    ] = "auto",
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object and nothing else.")] = False,
) -> None:
    """Play FIGHTS fights of MODEL against itself, the baseline and the ladder, learn P(win) per tick from its own
    observation, and store it in the model file as the `winrate` extension (test-split figures printed)."""
    from osrs_rllib.evaluation import OutcomeError, parse_mix, train_winrate
    from policies.model_file import ModelFileError

    try:
        result = train_winrate(
            model,
            fights,
            out=out,
            in_place=in_place,
            seed=seed,
            mix=parse_mix(mix) if mix else None,
            parallel=parallel,
            progress=_progress(as_json),
            engine=engine,
        )
    except (OutcomeError, ModelFileError) as exc:
        raise fail(str(exc)) from None
    if as_json:
        typer.echo(json.dumps({"path": str(result.path), "info": result.info, "test": result.test,
                               "seconds": result.seconds}, default=str))
        return
    fit = result.fit
    typer.echo(
        f"trained on {result.samples['train']} ticks ({result.info['splits']['train']} seats), best epoch "
        f"{fit.best_epoch + 1} of {fit.epochs}, validation log-loss {fit.val_loss_calibrated:.3f} after Platt "
        f"scaling (a={fit.platt[0]:.3f}, b={fit.platt[1]:.3f}); fights {result.seconds['fights']:.0f} s, "
        f"training {result.seconds['training']:.0f} s"
    )
    _print_report(result.test, "test split (fights of the training seeds the model never saw)")
    typer.echo(_rules_line(result.info.get("rules")))
    typer.echo(f"wrote {result.path} (extension winrate; check it with `osrs-rllib outcome check {result.path}`)")


@outcome_app.command("check")
def outcome_check(
    model: Annotated[str, typer.Argument(metavar="MODEL", help="A model file carrying the winrate extension.")],
    fights: Annotated[int, typer.Option(min=1, help="Held-out fights to play.")] = 1000,
    seed: Annotated[int | None, typer.Option(min=0, help="First seed (default: right after the training seeds).")]
    = None,
    mix: Annotated[str | None, typer.Option(help="Opponent shares (default: the training mix).")] = None,
    parallel: Annotated[int, typer.Option(min=1, help="Fights stepped in lockstep.")] = 64,
    engine: Annotated[
        str, typer.Option(help="Simulator: auto (the compiled core when built), core or python (same fights).")
    ] = "auto",
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object and nothing else.")] = False,
    strict: Annotated[bool, typer.Option("--strict", help="Exit with status 1 when a bar fails.")] = False,
) -> None:
    """Calibration (ECE, reliability table, Brier) and AUC of MODEL's winrate extension on held-out fights, overall
    and by fight phase, opponent, build and fight type, against the calibration bars (ECE <= 0.05, AUC >= 0.85 from
    tick 20 on)."""
    from osrs_rllib.evaluation import OutcomeError, check_winrate, parse_mix
    from policies.model_file import ModelFileError

    try:
        rep = check_winrate(
            model, fights, seed=seed, mix=parse_mix(mix) if mix else None, parallel=parallel,
            progress=_progress(as_json), engine=engine,
        )
    except (OutcomeError, ModelFileError) as exc:
        raise fail(str(exc)) from None
    if as_json:
        typer.echo(json.dumps(rep, default=str))
    else:
        _print_report(rep, f"held-out fights (seeds {rep['seeds'][0]}..{rep['seeds'][1] - 1})")
        typer.echo(_rules_line(rep.get("rules")))
    if strict and not (rep["bars"]["ece_ok"] and rep["bars"]["auc_ok"]):
        raise typer.Exit(code=1)


def register(app: typer.Typer) -> None:
    app.add_typer(outcome_app, name="outcome")
