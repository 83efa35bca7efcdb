"""`osrs-rllib jobs`, `stop`, `tensorboard` and `dashboard-token`: the commands that watch and end runs.

None of them starts a run: they read and signal experiment directories (`osrs_rllib/experiments/jobs.py`) and Ray's
dashboard, so they import neither Ray nor torch.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from osrs_rllib.commands import fail


def dashboard_token() -> None:
    """Print the token the Ray dashboard's login dialog asks for (Ray keeps token authentication on).

    Open the dashboard address that `train` or `serve` printed, paste the token into the dialog; for the
    HTTP API send it as ``Authorization: Bearer TOKEN``.
    """
    from osrs_rllib.experiments import ray_auth_token

    token, where = ray_auth_token()
    if token is None:
        raise fail(f"no Ray token at {where}: start training or serving first (Ray writes it on its first start)")
    typer.echo(token)


def jobs(
    experiments_dir: Annotated[str, typer.Option(help="Where experiments live.")] = "experiments",
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """List training runs with their state and latest figures."""
    from osrs_rllib.experiments import list_jobs

    rows = list_jobs(experiments_dir)
    if as_json:
        typer.echo(json.dumps([j.to_dict() for j in rows], default=str))
        return
    if not rows:
        typer.echo(f"no experiments in {experiments_dir}/")
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(
        "name", "state", "pid", "iteration", "env steps", "steps/s", "eval win¹", "weakest build", "best", "minutes",
        caption="¹ mean over the trained builds of the latest evaluation",
    )  # fmt: skip

    def f(value: Any, spec: str) -> str:
        return "–" if value is None else format(value, spec)

    for j in rows:
        table.add_row(
            j.name,
            j.state,
            f(j.pid, "d"),
            f(j.iteration, "d"),
            f(j.env_steps, ","),
            f(j.steps_per_s, ",.0f"),
            f(j.eval_win_rate, ".1%"),
            j.eval_weakest_build or "–",
            f(j.best_eval_win_rate, ".1%"),
            f(j.train_minutes, ".1f"),
        )
    Console().print(table)


def stop(
    name: Annotated[str | None, typer.Argument(metavar="NAME", help="Experiment to stop.")] = None,
    all_: Annotated[bool, typer.Option("--all", help="Stop every running experiment.")] = False,
    experiments_dir: Annotated[str, typer.Option(help="Where experiments live.")] = "experiments",
    wait: Annotated[float, typer.Option(help="Seconds to wait for the final checkpoint (0: don't wait).")] = 600.0,
    as_json: Annotated[bool, typer.Option("--json", help="Print each run's state afterwards as JSON.")] = False,
) -> None:
    """Stop a run cleanly: it finishes its iteration, writes a checkpoint and exits."""
    from osrs_rllib.experiments import JobsError, stop_jobs

    if (name is None) == (not all_):
        raise fail("give an experiment NAME or --all (not both)")
    try:
        states = stop_jobs(experiments_dir, None if name is None else [name], wait_s=wait)
    except JobsError as exc:
        raise fail(str(exc)) from None
    if as_json:
        typer.echo(json.dumps(states))
        return
    if not states:
        typer.echo("nothing is running")
    for target, state in states.items():
        typer.echo(f"{target}: {state}")


def tensorboard(
    experiments_dir: Annotated[str, typer.Option(help="Where experiments live (every run is shown).")] = "experiments",
    port: Annotated[int, typer.Option(help="Port to serve on.")] = 6006,
    host: Annotated[str, typer.Option(help="Address to bind; 127.0.0.1 keeps it private.")] = "127.0.0.1",
) -> None:
    """Start TensorBoard on the experiments' event files (bound to 127.0.0.1 unless told otherwise)."""
    import os
    import subprocess
    import sys

    logdir = Path(experiments_dir)
    if not logdir.is_dir():
        raise fail(f"no experiments directory at {logdir}; train something first")
    spec = ",".join(f"{p.parent.name}:{p}" for p in sorted(logdir.glob("*/tensorboard")))
    args = [sys.executable, "-m", "tensorboard.main", "--host", host, "--port", str(port)]
    args += ["--logdir_spec", spec] if spec else ["--logdir", str(logdir)]
    typer.echo(f"TensorBoard on http://{host}:{port} (Ctrl-C to stop)")
    if os.name == "posix":
        # Become TensorBoard rather than wait on it: a signal to this process (Ctrl-C, `kill`, a supervisor
        # stopping it) then reaches the server itself instead of orphaning a child that keeps serving.
        sys.stdout.flush()
        os.execv(sys.executable, args)
    raise typer.Exit(subprocess.call(args))


def register(app: typer.Typer) -> None:
    """Add the commands to `app`, in the order ``--help`` lists them."""
    app.command("dashboard-token")(dashboard_token)
    app.command()(jobs)
    app.command()(stop)
    app.command()(tensorboard)
