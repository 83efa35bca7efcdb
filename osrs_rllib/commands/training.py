"""`osrs-rllib train`, `exploit` and `exploit-curve`: the reinforcement-learning runs.

Each turns its flags into the library's arguments and prints what it raises: `osrs_rllib.training.launch.run_train`,
`osrs_rllib.exploit.measure.run_exploit` and `osrs_rllib.exploit.curve.ExploitCurve` own the runs (create, resume, and
for the first two force and detach) and their messages.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from osrs_rllib.commands import fail


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
    weights (a cloned or shipped model; osrs_rllib/training/warm_start.py); a resume continues from its checkpoint
    instead.
    """
    from osrs_rllib.training import TrainRunError, run_train

    overrides = list(set_ or [])
    if init is not None:
        if resume:
            raise fail("--init and --resume contradict each other: a resumed run continues from its checkpoint's "
                       "weights; leave out --init (or start a new experiment from the model)")  # fmt: skip
        overrides.append(f"init.model={json.dumps(str(init.expanduser().resolve()))}")  # JSON is YAML: any path
    if init_critic is not None:
        overrides.append(f"init.critic={'true' if init_critic else 'false'}")
    if name is not None:
        overrides.append(f"name={name}")
    if address is not None:
        overrides.append(f"ray.address={address}")
    detach_argv = None
    if detach:  # the child runs this command again (without --detach), with the arguments as typed
        detach_argv = sys.argv[2:] if len(sys.argv) > 2 and sys.argv[1] == "train" else [config]
    try:
        code = run_train(config, overrides, resume=resume, force=force, detach_argv=detach_argv, echo=typer.echo)
    except TrainRunError as exc:
        raise fail(str(exc)) from None
    raise typer.Exit(code=code)


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
    config: Annotated[str, typer.Option(help="The exploiter's training config.")] = "configs/exploit.yml",
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
    MODEL's exploitability at --env-steps (see osrs_rllib/exploit/measure.py; results in
    experiments/<name>/exploit.json).
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
        fail,
        env_steps=env_steps,
        detach=detach,
        model_sampling=model_sampling,
    )
    raise typer.Exit(code=code)


def exploit_curve(
    experiment: Annotated[Path, typer.Argument(help="A training run's directory, e.g. experiments/nh.")],
    env_steps: Annotated[
        int, typer.Option(min=1, help="Each point's budget: exploiter env steps (default 2M, half the standard).")
    ] = 2_000_000,
    final_fights: Annotated[int, typer.Option(min=1, help="Fights per build of each final evaluation.")] = 100,
    config: Annotated[str, typer.Option(help="The exploiters' training config.")] = "configs/exploit.yml",
    set_: Annotated[
        list[str] | None, typer.Option("--set", help="Override key.path=value of the exploiters' config; repeatable.")
    ] = None,
    model_sampling: Annotated[
        bool, typer.Option("--model-sampling", help="The milestones sample their actions instead of playing greedy.")
    ] = False,
    follow: Annotated[
        bool, typer.Option("--follow", help="Keep measuring new milestones until the training run has ended.")
    ] = False,
    poll_seconds: Annotated[float, typer.Option(min=1.0, help="With --follow: how often to look for one.")] = 30.0,
    twin: Annotated[
        str, typer.Option(help="Whose milestones: 'main', or 'average' (the running average of main's parameters, "
                               "ppo.average; written to exploit-curve-average.json).")
    ] = "main",
) -> None:
    """Exploitability over training: a short fresh exploit of every milestone model the run kept
    (checkpoint.milestone_env_steps, models/milestones/), written to EXPERIMENT/exploit-curve.json and to
    TensorBoard (robustness/fresh_exploit/*). Measured points are kept; an interrupted one resumes."""
    from osrs_rllib.experiments import Experiment
    from osrs_rllib.exploit import CurveError, CurveSettings, ExploitCurve, format_curve

    path = experiment.absolute()
    settings = CurveSettings(env_steps, final_fights, config, model_sampling, tuple(set_ or []))
    try:
        curve = ExploitCurve(Experiment(path.parent, path.name), settings, echo=typer.echo, kind=twin)
        if not curve.pending() and not curve.curve["points"] and not follow:
            raise fail(
                f"{path} has no milestone models (models/milestones/): train with checkpoint.milestone_env_steps "
                "set (nh.yml keeps one every 5M env steps), or use --follow while the run reaches its first"
            )
        curve.measure_all(follow=follow, poll_s=poll_seconds)
    except CurveError as exc:
        raise fail(str(exc)) from None
    typer.echo(format_curve(curve.curve))


def register(app: typer.Typer) -> None:
    """Add ``train``, ``exploit`` and ``exploit-curve`` to the main command line."""
    app.command()(train)
    app.command()(exploit)
    app.command("exploit-curve")(exploit_curve)
