"""The `osrs-rllib` command line.

Commands:

* ``osrs-rllib version``: the installed version.
* ``osrs-rllib fight A B``: fight two sides (``baseline`` or a scripted ladder opponent) N times and
  print the results from A's point of view (``--json`` for one JSON object).
* ``osrs-rllib contract export PATH``: write the action/observation contract as JSON.
* ``osrs-rllib config show FILE [--set key.path=value ...]``: print the fully resolved training config.

Heavy imports (the simulator) happen inside the commands so that ``--help`` and ``version`` stay fast.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from osrs_rllib.cli_options import parse_set_options

app = typer.Typer(no_args_is_help=True, help="Train, rate, analyse and serve OSRS NH PvP agents.")
contract_app = typer.Typer(no_args_is_help=True, help="The action and observation contract (spec §14, §15).")
app.add_typer(contract_app, name="contract")
config_app = typer.Typer(no_args_is_help=True, help="Training configs: YAML presets with extends and --set.")
app.add_typer(config_app, name="config")


def _fail(message: str) -> typer.Exit:
    """Print one clear error line on stderr; the caller raises the returned exit (status 2)."""
    typer.secho(f"error: {message}", err=True, fg=typer.colors.RED)
    return typer.Exit(code=2)


@app.command()
def version() -> None:
    """Print the installed version."""
    from importlib.metadata import version as _v

    typer.echo(_v("osrs-rllib"))


@app.command()
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
        bool,
        typer.Option(
            "--model-sampling",
            help="Model sides sample their actions instead of playing greedy (seeded: the same seed, the same fights).",
        ),
    ] = False,
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
    from envs.nh.core_engine import check_engine
    from osrs_rllib.fight import plan_matchup, run_fights
    from osrs_rllib.stratified_fights import parse_builds

    try:
        options = parse_set_options(set_ or [])
        builds = parse_builds(build) if build is not None else None
        if builds is not None and len(builds) == 1:
            options["account_build"] = builds[0].value
            builds = None
        plan_matchup(a, b, options, model_sampling)  # validate everything before the first fight
        check_engine(engine)
    except ValueError as exc:
        raise _fail(str(exc)) from None

    if as_json:
        summary = run_fights(
            a, b, n, seed, options, builds=builds, record=record, engine=engine, model_sampling=model_sampling
        )
        typer.echo(json.dumps(summary.to_dict(), default=str))
        return

    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    with Progress(
        TextColumn(f"{a} vs {b}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        transient=True,
    ) as bar:
        task = bar.add_task("fights", total=n)
        summary = run_fights(
            a, b, n, seed, options, progress=lambda done: bar.update(task, completed=done), builds=builds,
            record=record, engine=engine, model_sampling=model_sampling,
        )
    Console().print(_summary_table(summary))
    if summary.rules is not None:
        typer.echo(summary.rules.describe())
    if model_sampling:
        typer.echo("model sides sampled their actions (--model-sampling); without it they play greedy")
    if record is not None:
        first = record / "fight-000000.nhreplay"
        typer.echo(f"{n} replay(s) written to {record}; watch one: osrs-rllib replay {first}")
    if len(summary.by_build) > 1 or len(summary.by_fight_type) > 1:
        Console().print(split_table(f"{a} vs {b}: win rate of {a} by build and fight type", summary.to_dict()))


@app.command()
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
) -> None:
    """Write a replay as one self-contained HTML page (no network needed to view it), or --verify it."""
    from osrs_rllib.replay.command import replay_command

    raise typer.Exit(code=replay_command(file, out, verify, _fail, engine))


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
        raise _fail(f"cannot write {path}: {exc.strerror or exc}") from None
    typer.echo(f"wrote contract to {written}")


@config_app.command("show")
def config_show(
    file: Annotated[str, typer.Argument(metavar="FILE", help="A YAML training config, e.g. configs/nh.yml.")],
    set_: Annotated[
        list[str] | None,
        typer.Option("--set", help="Override key.path=value (value read as YAML, e.g. ppo.lr=1e-4); repeatable."),
    ] = None,
) -> None:
    """Print FILE fully resolved (extends merged, overrides applied, defaults filled in) as YAML.

    The output is itself a valid config: saving it and loading it gives the same configuration.
    """
    from osrs_rllib.config import ConfigError, dump_config, load_config

    overrides = set_ or []
    try:
        cfg = load_config(file, overrides)
    except ConfigError as exc:
        raise _fail(str(exc)) from None
    command = " ".join(["osrs-rllib config show", file, *(f"--set {o}" for o in overrides)])
    header = f"{command}\nresolved: extends merged, overrides applied, defaults filled in"
    typer.echo(dump_config(cfg, header=header), nl=False)


@app.command()
def train(
    config: Annotated[str, typer.Argument(metavar="CONFIG", help="A YAML training config, e.g. configs/nh.yml.")],
    set_: Annotated[
        list[str] | None,
        typer.Option("--set", help="Override key.path=value (value read as YAML); repeatable."),
    ] = None,
    name: Annotated[str | None, typer.Option(help="Experiment name (default: the config's name).")] = None,
    resume: Annotated[bool, typer.Option("--resume", help="Continue the experiment from its last checkpoint.")] = False,
    force: Annotated[bool, typer.Option("--force", help="Start over, deleting an existing experiment.")] = False,
    address: Annotated[
        str | None, typer.Option(help="Join a running Ray cluster ('auto' or HOST:PORT) instead of starting one.")
    ] = None,
    detach: Annotated[bool, typer.Option("--detach", help="Run in the background; see `osrs-rllib jobs`.")] = False,
    init: Annotated[
        Path | None,
        typer.Option(help="Start every trainable policy from this model file (same network shape; init.model)."),
    ] = None,
    init_critic: Annotated[
        bool | None,
        typer.Option("--init-critic/--no-init-critic", help="Also take the init model's critic (init.critic; on)."),
    ] = None,
) -> None:
    """Train an NH agent with RLlib PPO; experiments live in experiments/<name>/.

    With --resume the experiment's own saved config is used (CONFIG names the experiment), with --set
    overrides applied on top, e.g. --set stop.minutes=120 to train longer. --init starts from a model file's
    weights (a cloned or shipped model; osrs_rllib/warm_start.py); a resume continues from its checkpoint instead.
    """
    import json

    from osrs_rllib.config import ConfigError, load_config
    from osrs_rllib.experiment import Experiment, ExperimentError
    from osrs_rllib.warm_start import WarmStartError, load_init

    overrides = list(set_ or [])
    if init is not None:
        if resume:
            raise _fail("--init and --resume contradict each other: a resumed run continues from its checkpoint's "
                        "weights; leave out --init (or start a new experiment from the model)")  # fmt: skip
        overrides.append(f"init.model={json.dumps(str(init.expanduser().resolve()))}")  # JSON is YAML: any path
    if init_critic is not None:
        overrides.append(f"init.critic={'true' if init_critic else 'false'}")
    if name is not None:
        overrides.append(f"name={name}")
    if address is not None:
        overrides.append(f"ray.address={address}")
    try:
        cfg = load_config(config, overrides)
        exp = Experiment(cfg.experiments_dir, cfg.name)
        if resume and force:
            raise _fail("--resume and --force contradict each other: pick one")
        if resume:
            if not exp.config_path.exists():
                raise _fail(f"experiment {cfg.name!r} not found at {exp.dir}: nothing to resume")
            cfg = load_config(exp.config_path, [o for o in overrides if not o.startswith("name=")])
            exp.ensure_not_running()
            if exp.latest_checkpoint() is None:
                raise _fail(
                    f"experiment {cfg.name!r} has no complete checkpoint yet: start it again without --resume "
                    "(nothing is lost: a run without a checkpoint needs no --force)"
                )
        elif exp.exists():
            if not force and exp.latest_checkpoint() is not None:
                raise _fail(
                    f"experiment {cfg.name!r} already exists at {exp.dir}; use --resume to continue it or --force "
                    "to start over (deleting its checkpoints)"
                )
            exp.ensure_not_running()
        if not resume:
            load_init(cfg)  # a model file of another shape: one line, before anything is written
    except (ConfigError, WarmStartError) as exc:
        raise _fail(str(exc)) from None
    except ExperimentError as exc:
        raise _fail(str(exc)) from None

    if detach:
        import sys

        from osrs_rllib.jobs import start_detached

        argv = [a for a in sys.argv[2:]] if len(sys.argv) > 2 and sys.argv[1] == "train" else [config]
        if not resume and "--force" not in argv and exp.exists():
            argv.append("--force")
        pid = start_detached(exp, argv)
        typer.echo(f"training {cfg.name} in the background (pid {pid}); log: {exp.log_path}")
        typer.echo(f"follow it with `osrs-rllib jobs`, stop it with `osrs-rllib stop {cfg.name}`")
        return

    import logging

    from osrs_rllib.train import Trainer, TrainingError

    logging.basicConfig(level=cfg.logging.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    trainer = Trainer(cfg, exp, resume=resume, echo=typer.echo)
    try:
        code = trainer.run()
    except (TrainingError, ExperimentError, WarmStartError) as exc:
        raise _fail(str(exc)) from None
    raise typer.Exit(code=code)


@app.command()
def exploit(
    model: Annotated[
        list[str],
        typer.Argument(
            metavar="MODEL...",
            help="A *.nhmodel file or an experiment directory; several make one opponent that picks one per fight.",
        ),
    ],
    minutes: Annotated[
        float | None,
        typer.Option(help="Also stop after this many training minutes (a guard; minutes depend on the machine)."),
    ] = None,
    config: Annotated[str, typer.Option(help="The learner's training config.")] = "configs/nh.yml",
    name: Annotated[str | None, typer.Option(help="Experiment name (default: exploit-<model>).")] = None,
    set_: Annotated[
        list[str] | None, typer.Option("--set", help="Override key.path=value of the learner's config; repeatable.")
    ] = None,
    env_steps: Annotated[
        int,
        typer.Option(min=1, help="The budget: exploiter env steps (4M: the standard figure of docs and model cards)."),
    ] = 4_000_000,
    final_fights: Annotated[int, typer.Option(min=1, help="Fights per build of the final evaluation.")] = 100,
    resume: Annotated[bool, typer.Option("--resume", help="Continue the exploit run from its checkpoint.")] = False,
    force: Annotated[bool, typer.Option("--force", help="Start over, deleting an existing experiment.")] = False,
    detach: Annotated[bool, typer.Option("--detach", help="Run in the background; see `osrs-rllib jobs`.")] = False,
    model_sampling: Annotated[
        bool,
        typer.Option(
            "--model-sampling",
            help="MODEL samples its actions (in training and evaluation) instead of playing greedy; "
            "default name exploit-<model>-sampling.",
        ),
    ] = False,
) -> None:
    """Train a fresh learner against the frozen MODEL only and report its win rate against MODEL over time:
    MODEL's exploitability at --env-steps (see osrs_rllib/exploit.py; results in experiments/<name>/exploit.json).
    Several MODELs are a per-fight mixture: the exploiter faces one of them, drawn uniformly, in every fight."""
    from osrs_rllib.exploit import run_exploit

    code = run_exploit(
        model,
        minutes,
        config,
        name,
        set_ or [],
        final_fights,
        resume,
        force,
        _fail,
        env_steps=env_steps,
        detach=detach,
        model_sampling=model_sampling,
    )
    raise typer.Exit(code=code)


from osrs_rllib.jobs_cli import register as _register_jobs  # noqa: E402  (jobs, stop, tensorboard, dashboard-token)

_register_jobs(app)


@app.command()
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
    as_json: Annotated[bool, typer.Option("--json", help="Print the table as JSON.")] = False,
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
    follows the ratings. The prescient rung does not meet the baseline (it must see its opponent's action).
    """
    from envs.nh.core_engine import check_engine
    from envs.nh.params import ParamError
    from osrs_rllib.rate import resolve_players, save_table, table_json, tournament, tournament_params
    from osrs_rllib.stratified_fights import parse_builds
    from policies.model_file import ModelFileError

    try:
        roster = resolve_players(players, with_ladder=ladder)
        options = parse_set_options(set_ or [])
        params, rules = tournament_params(roster, options)
        builds = parse_builds(build) if build is not None else None
        check_engine(engine)
    except (ValueError, ParamError, ModelFileError) as exc:
        raise _fail(str(exc)) from None
    if len(roster) < 2:
        raise _fail("a tournament needs at least two players")
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
        typer.echo(table_json(rows, rules))
        return
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
    typer.echo(rules.describe())
    typer.echo(f"saved {', '.join(str(p) for p in written)}")


@app.command("bc")
def behaviour_cloning(
    replays: Annotated[
        list[Path], typer.Argument(metavar="REPLAYS...", help="Replay files or directories of them (fight --record).")
    ],
    out: Annotated[Path, typer.Option("-o", "--out", help="The model file to write (*.nhmodel).")],
    config: Annotated[str, typer.Option(help="The training config whose network learns (shape, rules).")] = (
        "configs/nh.yml"
    ),
    set_: Annotated[
        list[str] | None, typer.Option("--set", help="Override key.path=value of the config; repeatable.")
    ] = None,
    player: Annotated[
        list[str] | None,
        typer.Option(help="Learn only this seat (0, 1) or player name (e.g. expert); repeatable. Default: every "
                     "seat that acted (not the in-simulator baseline)."),
    ] = None,
    epochs: Annotated[int | None, typer.Option(min=1, help="Passes over the training fights (default 6).")] = None,
    batch_size: Annotated[int | None, typer.Option(min=1, help="Samples per step (default 1024).")] = None,
    lr: Annotated[float | None, typer.Option(help="Adam's learning rate, annealed to a tenth (default 1e-3).")] = None,
    holdout: Annotated[float | None, typer.Option(help="Share of whole fights held out (default 0.1).")] = None,
    seed: Annotated[int | None, typer.Option(min=0, help="Split and initialisation seed (default: the config's).")] = (
        None
    ),
    logdir: Annotated[Path | None, typer.Option(help="TensorBoard directory (default: OUT's stem + .tensorboard).")] = (
        None
    ),
    init: Annotated[Path | None, typer.Option(help="Start from this model file's weights (same shape).")] = None,
    engine: Annotated[str, typer.Option(help="Simulator that re-runs the fights: auto, core or python.")] = "auto",
) -> None:
    """Behaviour cloning: train the config's policy network on recorded fights (every head, teacher-forced under
    the masks) and write a model file; held-out fights give per-head accuracy (osrs_rllib/bc.py)."""
    from osrs_rllib.bc import bc_command

    settings = {"epochs": epochs, "batch_size": batch_size, "lr": lr, "holdout": holdout, "seed": seed}
    raise typer.Exit(
        code=bc_command(replays, out, config, set_ or [], player, settings, logdir, init, engine, typer.echo, _fail)
    )


from osrs_rllib.serve_cli import register as _register_serving  # noqa: E402  (serve, export)

_register_serving(app)

from osrs_rllib.outcome_cli import register as _register_outcome  # noqa: E402  (outcome train|check)

_register_outcome(app)

from osrs_rllib.play.cli import register as _register_play  # noqa: E402  (play: fight an agent in the browser)

_register_play(app)

if __name__ == "__main__":
    app(prog_name="osrs-rllib")
