"""`osrs-rllib serve` (and ``serve status`` / ``serve stop``) and `osrs-rllib export`.

The serving code itself lives in `serving/` (which never imports the trainer); this module only turns options
into a `serving.runtime.Service`.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from common.atomic_files import copy_atomic
from osrs_rllib.commands import fail

if TYPE_CHECKING:
    from serving.runtime import ServeSettings

CONTROL_WORDS = ("status", "stop")


def serve(
    target: Annotated[
        str | None,
        typer.Argument(
            metavar="MODELS_DIR|EXPERIMENT|status|stop",
            help="A directory of *.nhmodel files, an experiment (directory or name); or status / stop for a "
            "detached server.",
        ),
    ] = None,
    host: Annotated[str, typer.Option(help="Address the TCP proxy binds; 127.0.0.1 keeps it private.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=1, max=65535, help="TCP port of the JSON-lines proxy.")] = 9999,
    replicas: Annotated[int, typer.Option(min=1, help="Serve replicas (each loads every model once).")] = 1,
    cpus_per_replica: Annotated[float, typer.Option(min=0, help="CPUs Ray reserves per replica.")] = 1.0,
    address: Annotated[
        str | None, typer.Option(help="Join a running Ray cluster ('auto' or HOST:PORT) instead of starting one.")
    ] = None,
    detach: Annotated[bool, typer.Option("--detach", help="Run in the background; see `serve status`.")] = False,
    experiments_dir: Annotated[str, typer.Option(help="Where experiment names are looked up.")] = "experiments",
    reload_s: Annotated[float, typer.Option(min=0, help="Seconds between rescans for new model files (0: off).")] = 2.0,
    max_connections: Annotated[int, typer.Option(min=1, help="Connections the proxy accepts at once.")] = 1024,
    idle_timeout: Annotated[float, typer.Option(min=1, help="Seconds before an idle connection is closed.")] = 300.0,
    num_cpus: Annotated[int | None, typer.Option(min=1, help="CPUs of the embedded Ray (default: all).")] = None,
    dashboard: Annotated[
        bool, typer.Option("--dashboard/--no-dashboard", help="Start Ray's dashboard (with its Serve tab) with an "
                           "embedded Ray; off by default: it costs seconds of start-up.")
    ] = False,
    dashboard_port: Annotated[
        int | None,
        typer.Option(min=1, max=65535, help="Dashboard port of an embedded Ray (default 8265, or the next free "
                     "one when another Ray holds it; a port given here must be free)."),
    ] = None,
    deadline_ms: Annotated[
        float, typer.Option(min=0, help="Longest a request waits before it is answered with a 'retry' error "
                            "(e.g. while a crashed replica is replaced); 0: no deadline.")
    ] = 300.0,
    start_timeout: Annotated[
        float, typer.Option(min=1, help="Seconds the application may take to start once Ray runs, before giving "
                            "up, saying why.")
    ] = 300.0,
    ray_start_timeout: Annotated[
        float, typer.Option(min=1, help="Seconds a private Ray may take to start (a busy machine needs a minute "
                            "or more); a line every 10 s says it is waiting.")
    ] = 180.0,
    state_dir: Annotated[
        Path | None, typer.Option(help="Where detached servers are recorded (default ~/.osrs-rllib/serve).")
    ] = None,
    wait: Annotated[float, typer.Option(help="serve stop: seconds to wait for a clean shutdown.")] = 60.0,
    as_json: Annotated[bool, typer.Option("--json", help="serve status: print JSON.")] = False,
) -> None:
    """Serve trained agents and the scripted ladder over a raw TCP JSON-lines socket (Ray Serve behind it).

    Examples: `osrs-rllib serve experiments/nh` (follows models/latest.nhmodel and best.nhmodel as training
    writes them, beside the training run), `osrs-rllib serve models/ --port 9999 --replicas 2 --detach`, then
    `osrs-rllib serve status` and `osrs-rllib serve stop --port 9999`. SIGTERM and Ctrl-C stop it cleanly
    (exit 0). Protocol and examples: docs/serving.md.
    """
    from serving.detached import ServeError, default_state_dir

    states = state_dir or default_state_dir()
    if target == "status":
        _status(states, as_json)
        return
    if target == "stop":
        _stop(states, port, wait)
        return
    if target is None:
        raise fail("give a models directory or an experiment to serve (or `serve status` / `serve stop`)")
    from serving.detached import resolve_models_dir

    try:
        models_dir = resolve_models_dir(target, experiments_dir)
    except ServeError as exc:
        raise fail(str(exc)) from None

    if detach:
        _detach(states, port, models_dir, wait_s=ray_start_timeout + start_timeout)
        return
    from serving.proxy import ProxyLimits
    from serving.runtime import ServeSettings

    settings = ServeSettings(
        models_dir=str(models_dir), host=host, port=port, replicas=replicas, cpus_per_replica=cpus_per_replica,
        address=address, num_cpus=num_cpus, dashboard=dashboard, dashboard_port=dashboard_port, reload_s=reload_s,
        start_timeout_s=start_timeout, ray_start_timeout_s=ray_start_timeout,
        limits=ProxyLimits(max_connections=max_connections, idle_timeout_s=idle_timeout,
                           deadline_s=deadline_ms / 1000.0),
    )
    _run_foreground(settings, models_dir, states)


def _run_foreground(settings: ServeSettings, models_dir: Path, states: Path) -> None:
    """Start, serve until a stop signal, stop. The first SIGTERM or Ctrl-C at any moment (start-up included)
    stops cleanly, exit 0; a second one ends at once, exit 130 (`common.stops`). Either way nothing the server
    started is left running, and no record claims a server that is not there."""
    import logging

    from common.stops import StopRequest

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    stop = StopRequest(before_exit=_kill_started_processes).install()
    try:
        _serve_until_stopped(settings, models_dir, states, stop)
    except KeyboardInterrupt:  # a second signal (`HardStop`), or Ctrl-C before the handlers were in place
        raise typer.Exit(code=130) from None
    finally:
        _forget_own_record(states, settings.port)


def _serve_until_stopped(settings: ServeSettings, models_dir: Path, states: Path, stop: Any) -> None:
    from serving.detached import ServeError, ServeRecord, record_path, write_record
    from serving.runtime import ServeStopped, Service

    service = Service(settings, echo=typer.echo, should_stop=lambda: stop.requested)
    try:
        try:
            models = service.start(after_ray_init=stop.install)
        except ServeError as exc:
            raise fail(str(exc)) from None
        except ServeStopped as exc:
            typer.echo(f"stopped: {exc}")
            return
        assert service.address is not None
        listen_host, listen_port = service.address
        typer.echo(f"serving {models_dir} on {listen_host}:{listen_port} (JSON lines; Ctrl-C to stop)")
        for m in models:
            if m["kind"] == "model":
                typer.echo(f"  {m['name']:<16} model     iteration {m['iteration']}, env steps {m['envSteps']}, "
                           f"frames {m['frameStack']}, sha256 {str(m['sha256'])[:12]}")
            else:
                typer.echo(f"  {m['name']:<16} scripted  ladder opponent")
        if service.dashboard_url:
            typer.echo(f"Ray dashboard (Serve tab): {service.dashboard_url}")
            from osrs_rllib.experiments import dashboard_login_hint

            typer.echo(dashboard_login_hint())
        if os.environ.get("OSRS_RLLIB_SERVE_DETACHED") == "1" or record_path(states, listen_port).exists():
            write_record(states, ServeRecord(
                pid=os.getpid(), host=listen_host, port=listen_port, models_dir=str(models_dir),
                log=str(states / f"serve-{listen_port}.log"), started_unix=time.time(),
                dashboard=service.dashboard_url, state="running"))
        timings = ", ".join(f"{k} {v:.1f} s" for k, v in service.timings.items())
        typer.echo(f"ready in {service.timings.get('models', 0.0):.1f} s ({timings})")
        while not stop.event.wait(0.5):
            pass
        typer.echo(f"shutting down ({stop.signal_name})")
    finally:
        _stop_service(service, stop)


def _stop_service(service: Any, stop: Any) -> None:
    """`Service.stop`; after a second signal, or on a further one during it, every process the server started
    is ended at once (SIGKILL) instead: the clean stop takes seconds, a user who presses Ctrl-C again wants
    them gone now, and none may outlive the server."""
    if stop.hard:
        _kill_started_processes()
        stop.disarm()
        return

    def now(signum: int, frame: Any) -> None:
        _kill_started_processes()
        os._exit(130)

    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, now)
    service.stop()


def _kill_started_processes() -> None:
    from serving.ray_start import end_ray_now

    end_ray_now()


def _forget_own_record(states: Path, port: int) -> None:
    """Remove the record of this process's server (whatever its state): a server that has stopped, or never
    came up, must not be listed as starting or running."""
    from serving.detached import read_records, record_path

    for r in read_records(states):
        if r.pid == os.getpid():
            record_path(states, r.port).unlink(missing_ok=True)


def _detach(states: Path, port: int, models_dir: Path, wait_s: float) -> None:
    """Start the server in the background and return once a request would succeed (the proxy listens only
    when a model server answers), saying how long that took; or, if it dies first, say why and remove its
    record."""
    from common.processes import pid_alive
    from serving.detached import ServeRecord, read_records, record_path, start_detached, write_record

    for r in read_records(states):
        if r.port == port and pid_alive(r.pid):
            raise fail(f"a detached server already runs on port {port} (pid {r.pid}); `osrs-rllib serve stop`")
    argv = [a for a in sys.argv[2:]] if len(sys.argv) > 2 and sys.argv[1] == "serve" else [str(models_dir)]
    os.environ["OSRS_RLLIB_SERVE_DETACHED"] = "1"
    if "--state-dir" not in argv:
        argv += ["--state-dir", str(states)]
    t0 = time.monotonic()
    pid, log = start_detached(argv, states, port)
    write_record(states, ServeRecord(pid=pid, host="?", port=port, models_dir=str(models_dir), log=str(log),
                                     started_unix=time.time(), state="starting"))
    typer.echo(f"serving {models_dir} in the background (pid {pid}); log: {log}")
    problem = _wait_until_answering(pid, states, port, t0, wait_s)
    if problem is not None:
        if not pid_alive(pid):
            record_path(states, port).unlink(missing_ok=True)
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-5:]) if log.exists() else ""
        raise fail(f"{problem}; its log ({log}) ends:\n{tail}")
    typer.echo(f"ready: answering on port {port}, {time.monotonic() - t0:.1f} s after the command")
    typer.echo("see it with `osrs-rllib serve status`, stop it with `osrs-rllib serve stop"
               + (f" --port {port}`" if port != 9999 else "`"))


def _wait_until_answering(pid: int, states: Path, port: int, t0: float, wait_s: float) -> str | None:
    """None once the detached server has recorded itself running and answers a models request; else why not."""
    from common.processes import pid_alive
    from serving.client import ServeClient
    from serving.detached import read_records

    next_note = 10.0
    while True:
        if not pid_alive(pid):
            return "the server stopped before it was ready"
        record = next((r for r in read_records(states) if r.port == port and r.pid == pid), None)
        if record is not None and record.state == "running":
            try:
                with ServeClient(record.host if record.host not in ("0.0.0.0", "", "?") else "127.0.0.1", port,
                                 timeout_s=10, retries=0) as client:
                    client.models()
                return None
            except (OSError, RuntimeError, ValueError):
                pass
        waited = time.monotonic() - t0
        if waited > wait_s:
            return f"not answering after {wait_s:g} s (it keeps starting in the background: pid {pid})"
        if waited >= next_note:
            typer.echo(f"still starting after {waited:.0f} s")
            next_note += 10.0
        time.sleep(0.2)


def _status(states: Path, as_json: bool) -> None:
    from common.processes import pid_alive
    from serving.client import ServeClient
    from serving.detached import read_records, record_path

    rows: list[dict[str, Any]] = []
    for r in read_records(states):
        row: dict[str, Any] = r.to_dict()
        alive = pid_alive(r.pid)
        row["state"] = r.state if alive else "dead"
        if not alive:  # a server killed before it could remove its record: shown once, then forgotten
            record_path(states, r.port).unlink(missing_ok=True)
        row["models"] = None
        if alive and r.state == "running":
            try:
                with ServeClient(r.host if r.host not in ("0.0.0.0", "", "?") else "127.0.0.1", r.port,
                                 timeout_s=10) as c:
                    row["models"] = c.models()
            except (OSError, RuntimeError, ValueError) as exc:
                row["state"] = f"not answering ({exc})"
        rows.append(row)
    if as_json:
        typer.echo(json.dumps(rows, default=str))
        return
    if not rows:
        typer.echo(f"no detached server recorded in {states}/")
        return
    for row in rows:
        typer.echo(f"{row['host']}:{row['port']}  {row['state']}  pid {row['pid']}  {row['models_dir']}  "
                   f"log {row['log']}")
        for m in row["models"] or []:
            if m["kind"] == "model":
                typer.echo(f"  {m['name']:<16} iteration {m['iteration']}, env steps {m['envSteps']}, "
                           f"sha256 {str(m['sha256'])[:12]}")
            else:
                typer.echo(f"  {m['name']:<16} scripted")


def _stop(states: Path, port: int, wait: float) -> None:
    from serving.detached import read_records, stop_detached

    records = [r for r in read_records(states) if r.port == port]
    if not records:
        ports = [r.port for r in read_records(states)]
        raise fail(f"no detached server on port {port}" + (f"; recorded ports: {ports}" if ports else ""))
    typer.echo(f"port {port}: {stop_detached(records[0], states, wait)}")


def export(
    checkpoint: Annotated[
        Path,
        typer.Argument(metavar="CHECKPOINT", help="A training checkpoint directory (or an experiment: its newest)."),
    ],
    out: Annotated[Path, typer.Option("-o", "--out", help="The model file to write (*.nhmodel).", dir_okay=False)],
    policy: Annotated[str, typer.Option(help="Policy to export from an RLlib checkpoint.")] = "main",
    snapshot: Annotated[
        str | None,
        typer.Option(help="A league snapshot of the experiment instead (e.g. main@v100, from its league/ folder)."),
    ] = None,
    twin: Annotated[
        str | None,
        typer.Option(help="A network main's learner keeps beside it instead of main: 'average' (ppo.average, the "
                          "running average of its parameters) or 'magnet' (ppo.magnet's EMA magnet)."),
    ] = None,
) -> None:
    """Write a model file from a training checkpoint (a self-contained *.nhmodel, see docs/serving.md)."""
    from osrs_rllib.experiments import AVERAGE_MODEL_NAME, MODEL_NAME, Experiment
    from policies.model_file import MODEL_SUFFIX, ModelFileError, load_model_file

    if out.suffix != MODEL_SUFFIX:
        raise fail(f"{out}: model files end in {MODEL_SUFFIX} (e.g. -o best{MODEL_SUFFIX})")
    if twin not in (None, *TWINS):
        raise fail(f"--twin {twin}: expected one of {', '.join(TWINS)}")
    if snapshot is not None:
        from osrs_rllib.training import SnapshotError, export_snapshot

        try:
            md = export_snapshot(checkpoint, snapshot, out)
        except SnapshotError as exc:
            raise fail(str(exc)) from None
        typer.echo(f"wrote {out} ({snapshot} of {checkpoint.name}, snapshot at iteration {md.get('iteration')})")
        return
    ckpt = checkpoint
    if (checkpoint / "checkpoints").is_dir():
        latest = Experiment(checkpoint.parent, checkpoint.name).latest_checkpoint()
        if latest is None:
            raise fail(f"experiment {checkpoint} has no complete checkpoint")
        ckpt = latest.path
    if not ckpt.is_dir():
        raise fail(f"no checkpoint directory at {checkpoint}")
    written = (ckpt / MODEL_NAME) if policy == "main" and twin is None else None
    if twin == "average" and (ckpt / AVERAGE_MODEL_NAME).is_file():
        written = ckpt / AVERAGE_MODEL_NAME
    if written is not None and written.is_file():
        try:
            model = load_model_file(written)  # check it before copying it anywhere
        except ModelFileError as exc:
            raise fail(str(exc)) from None
        copy_atomic(written, out)
        md = model.metadata
    else:
        md = _export_from_rllib(ckpt, policy, out, twin)
    what = f"{twin} of {policy}" if twin else policy
    typer.echo(f"wrote {out} ({what}, iteration {md.get('iteration')}, env steps {md.get('env_steps')})")


TWINS = ("average", "magnet")
"""``export --twin``: the networks a learner may keep beside main's (`osrs_rllib/training/learner/ppo_policy.py`)."""


def _export_from_rllib(ckpt: Path, policy_id: str, out: Path, twin: str | None = None) -> dict[str, Any]:
    """A checkpoint without the model file asked for beside it: restore the RLlib policy (with the networks its
    learner keeps in its state) and export its network, or its `twin`."""
    policy_dir = ckpt / "policies" / policy_id
    if not policy_dir.is_dir():
        found = sorted(p.name for p in (ckpt / "policies").iterdir()) if (ckpt / "policies").is_dir() else []
        raise fail(f"{ckpt} has no model file and no RLlib policy {policy_id!r}" +
                    (f"; its policies: {', '.join(found)}" if found else " (not a training checkpoint?)"))
    from ray.rllib.policy.policy import Policy

    from osrs_rllib.training import register_everything
    from policies.model_file import load_model_file
    from policies.rllib_model import export_policy

    register_everything()
    restored = Policy.from_checkpoint(str(policy_dir))
    metadata: dict[str, Any] = {"checkpoint": str(ckpt), "policy": policy_id, **_checkpoint_provenance(ckpt)}
    if "config" not in metadata:
        typer.echo(
            f"warning: no training config beside {ckpt} (expected ../../config.yml): the model file records no fight "
            "rules, so `fight` and `serve` will use the spec's defaults unless told with --set",
            err=True,
        )
    network = None
    if twin is not None:
        held = getattr(restored, twin, None)
        network = getattr(held, "net", None)
        if network is None:
            raise fail(f"{ckpt}: policy {policy_id!r} keeps no {twin} network (its config's ppo.{twin} is off, or "
                       "for the magnet not kind ema)")
        metadata[twin] = {"decay": float(held.decay)}
    export_policy(restored, out, metadata=metadata, network=network)
    return load_model_file(out).metadata


def _checkpoint_provenance(ckpt: Path) -> dict[str, Any]:
    """What a model file written by training records (`Trainer._checkpoint`), recovered for an RLlib-only
    checkpoint: its counters from the checkpoint's marker and the run's resolved config from the experiment
    (`experiments/<name>/config.yml`, two levels up). The config carries the fight rules the model trained
    under; without it every door would judge the file by the spec's default masks."""
    from osrs_rllib.config import ConfigError, load_config
    from osrs_rllib.experiments import STATE_FILE

    found: dict[str, Any] = {}
    state = ckpt / STATE_FILE
    if state.is_file():
        try:
            marker = json.loads(state.read_text())
        except (OSError, ValueError):
            marker = {}
        found.update({k: marker[k] for k in ("iteration", "env_steps", "eval_win_rate") if k in marker})
    config = ckpt.parent.parent / "config.yml"
    if ckpt.parent.name == "checkpoints" and config.is_file():
        try:
            found["config"] = load_config(config).to_dict()
            found["experiment"] = ckpt.parent.parent.name
        except ConfigError as exc:
            typer.echo(f"warning: {config} does not load ({exc}); the model file records no training config", err=True)
    return found


def register(app: typer.Typer) -> None:
    """Add `serve` and `export` to the main CLI (one line in cli.py)."""
    app.command(context_settings={"help_option_names": ["-h", "--help"]})(serve)
    if not any(getattr(c, "name", None) == "export" for c in app.registered_commands):
        app.command()(export)
