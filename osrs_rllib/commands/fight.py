"""`osrs-rllib fight A B`: two sides (a model file, the baseline or a ladder rung) fight N times
(`osrs_rllib.evaluation.fight`).

The result tables (`split_table`) are shared with the commands that print a win rate per build and fight type.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from osrs_rllib.commands import fail
from osrs_rllib.commands.options import parse_set_options


def fight(
    a: Annotated[
        str,
        typer.Argument(metavar="A", help="Side A (results are from its view): baseline, a ladder name or a *.nhmodel."),
    ],
    b: Annotated[str, typer.Argument(metavar="B", help="Side B: 'baseline', a ladder name or a model file.")],
    n: Annotated[int, typer.Option("--n", min=1, help="Number of fights.")] = 1000,
    seed: Annotated[int, typer.Option(min=0, help="Base seed; fight k uses seed + k.")] = 0,
    build: Annotated[
        str | None,
        typer.Option(
            help="Account build (PURE, ZERKER, MED, MAXED, LMS_*; default PURE), a comma-separated list or 'all': "
            "several builds spread the fights evenly over them (and over fight types if randomised)."
        ),
    ] = None,
    set_: Annotated[
        list[str] | None,
        typer.Option(
            "--set",
            help="Reset option key=value (YAML scalar value); repeatable. Rules such as allow_smite=false override "
            "a model's training rules.",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object and nothing else.")] = False,
    record: Annotated[
        Path | None,
        typer.Option(help="Write every fight as a replay file DIR/fight-<k>.nhreplay (see osrs-rllib replay)."),
    ] = None,
    engine: Annotated[
        str,
        typer.Option(help="Simulator: auto (the compiled core when built), core or python (same fights)."),
    ] = "auto",
    model_sampling: Annotated[
        bool | None,
        typer.Option(
            "--model-sampling/--model-greedy",
            help="Model sides sample their actions (seeded: the same seed, the same fights), or play greedy. "
            "Default: the model file's own mode of play (its metadata's play_mode), greedy when it names none.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Fight side A against side B N times and report A's wins, losses and ties.

    A model file plays by the rules it was trained under (its training config's masks and death_match; --set
    overrides them; two models trained under different rules need --set to choose); scripted-only fights use the
    spec's defaults. The rules used are printed under the results (and in --json as "rules").

    Valid sides: a trained policy's model file such as experiments/nh/models/best.nhmodel, baseline, or a
    ladder rung, weakest to strongest as measured (docs/strength.md): noop, random, stay_alive, novice,
    prayer_switcher, apprentice, tribrid, adept, veteran, expert, prescient (the baseline rates between
    prayer_switcher and apprentice). prescient is an upper bound, not honest play: it is shown its
    opponent's action of the tick, so it cannot face the baseline.
    """
    from common.stops import StopRequest
    from envs.nh.core_engine import check_engine
    from osrs_rllib.evaluation import FightsStopped, parse_builds, plan_matchup, run_fights

    try:
        options = parse_set_options(set_ or [])
        builds = parse_builds(build) if build is not None else None
        if builds is not None and len(builds) == 1:
            options["account_build"] = builds[0].value
            builds = None
        if model_sampling is None:
            model_sampling = default_sampling(a, b)
        plan_matchup(a, b, options, model_sampling)  # validate everything before the first fight
        check_engine(engine)
    except ValueError as exc:
        raise fail(str(exc)) from None

    # A stop (SIGTERM, Ctrl-C) abandons the fights in flight and reports those that ended; a second one exits 130.
    stop = StopRequest().install()

    def play(progress: Callable[[int], None] | None) -> Any:
        return run_fights(
            a, b, n, seed, options, progress=progress, builds=builds, record=record, engine=engine,
            model_sampling=model_sampling, should_stop=lambda: stop.requested,
        )  # fmt: skip

    try:
        if as_json:
            typer.echo(json.dumps(play(None).to_dict(), default=str))
            return
        _print_summary(_with_progress_bar(f"{a} vs {b}", n, play), model_sampling, record)
    except FightsStopped as exc:
        typer.echo(f"{exc}: nothing to report", err=True)
    except KeyboardInterrupt:  # a second signal (`HardStop`)
        raise typer.Exit(code=130) from None
    finally:
        stop.uninstall()


def default_sampling(a: str, b: str) -> bool | None:
    """How the model sides play when neither flag is given: their files' default mode (`policies.play_mode`;
    greedy when a file names none); None when two model sides name different modes (each plays its own).

    Raises:
        ValueError: A model file that cannot be read, or one whose mode is neither greedy nor sampling.
    """
    from osrs_rllib.evaluation import is_model_path

    models = [x for x in (a, b) if is_model_path(x)]
    if not models:
        return False  # scripted sides only: no model file to read (and no torch to import for it)
    from policies.model_file import read_model_meta
    from policies.play_mode import samples_by_default

    modes = {samples_by_default(read_model_meta(x).get("metadata") or {}) for x in models}
    return modes.pop() if len(modes) == 1 else None


def _with_progress_bar(label: str, n: int, play: Callable[[Callable[[int], None]], Any]) -> Any:
    """`play`'s result, with a progress bar of its `n` fights on stderr while it runs (gone once done)."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    columns = (TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("fights", total=n)
        return play(lambda done: bar.update(task, completed=done))


def _print_summary(summary: Any, model_sampling: bool | None, record: Path | None) -> None:
    """The results table, the rules played, and the split by build and fight type when there is one."""
    from rich.console import Console

    a, b = summary.a, summary.b
    Console().print(_summary_table(summary))
    if summary.rules is not None:
        typer.echo(summary.rules.describe())
    if model_sampling is None:
        typer.echo("each model side played its file's default mode; --model-sampling or --model-greedy sets both")
    elif model_sampling:
        typer.echo("model sides sampled their actions; --model-greedy plays them greedy")
    if summary.not_played:
        typer.echo(f"stopped: {summary.not_played} of the {summary.n + summary.not_played} fights were not played; "
                   f"the figures are over the {summary.n} that ended")
    if record is not None:
        first = record / "fight-000000.nhreplay"
        typer.echo(f"{summary.n} replay(s) written to {record}; watch one: osrs-rllib replay {first}")
    if len(summary.by_build) > 1 or len(summary.by_fight_type) > 1:
        Console().print(split_table(f"{a} vs {b}: win rate of {a} by build and fight type", summary.to_dict()))
    if summary.by_member:
        Console().print(split_table(f"{a} vs {b}: win rate of {a} by mixture member (drawn by each fight's seed)",
                                    {"by_build": summary.by_member}))  # fmt: skip


def _summary_table(s: Any) -> Any:
    from rich.table import Table

    lo, hi = s.win_rate_ci95
    opts = ", ".join(f"{k}={v}" for k, v in s.options.items()) or "defaults"
    table = Table(title=f"{s.a} vs {s.b}  (n={s.n}, seed={s.seed}, {opts})", show_header=False)
    table.add_column("", style="bold")
    table.add_column("", justify="right")
    table.add_row(f"{s.a} wins / losses / ties", f"{s.wins} / {s.losses} / {s.ties}")
    table.add_row("  ties cut off at max ticks", str(s.truncations))
    table.add_row(f"{s.a} win rate [95% CI]", f"{s.win_rate:.3f} [{lo:.3f}, {hi:.3f}]")
    table.add_row("fight length mean / median (ticks)", f"{s.mean_ticks:.1f} / {s.median_ticks:.1f}")
    table.add_row(f"damage dealt / received by {s.a}", f"{s.mean_damage_dealt:.1f} / {s.mean_damage_received:.1f}")
    return table


def split_table(title: str, split: dict[str, Any], unseen: tuple[str, ...] = ()) -> Any:
    """Rows per build, then per fight type: fights, wins / losses / ties, win rate and its 95 % interval."""
    from rich.table import Table

    table = Table("", "fights", "won / lost / tied", "win rate", "95 % interval", title=title)
    for group in ("by_build", "by_fight_type"):
        for name, row in split.get(group, {}).items():
            label = f"{name} (never trained)" if name in unseen else name
            table.add_row(
                label,
                str(row["fights"]),
                f"{row['wins']} / {row['losses']} / {row['ties']}",
                f"{row['win_rate']:.1%}",
                f"[{row['win_rate_low']:.1%}, {row['win_rate_high']:.1%}]",
            )
        if group == "by_build":
            table.add_section()
    return table


def register(app: typer.Typer) -> None:
    """Add ``fight`` to the main command line."""
    app.command()(fight)
