"""Tick timing and the opponent's decision latency of `osrs-rllib play` (bars: docs/play.md).

How to run this script::

    .venv/bin/python benchmarks/play_latency.py                     # 500 ticks at 600 ms (5 min), then latency runs
    .venv/bin/python benchmarks/play_latency.py --no-serve          # without starting `osrs-rllib serve`
    .venv/bin/python benchmarks/play_latency.py --ticks 20 --tick-ms 20 --latency-ticks 20 --no-serve   # a smoke run
    .venv/bin/python benchmarks/play_latency.py --json              # one JSON object

What is timed, on the real stack (uvicorn on 127.0.0.1, the WebSocket, the engine, the replay recorder):

1. **Tick timing.** A person is played by a WebSocket client that answers every tick with a legal choice, as a
   fast player would; games are chained until ``--ticks`` ticks have run at ``--tick-ms``. For each tick, the
   server records how late it ran after its slot on the clock's grid (``start + k × pace``). The bar: p99 ≤ 30 ms
   *while the machine also trains*; run a training job beside it (``osrs-rllib train configs/nh.yml --detach``)
   and the script prints the load average it saw.
2. **Decision latency** of the opponent, from the request (right after a tick) to the answer: p50 and p99 for a
   model file in-process (`osrs_rllib.evaluation.fight.ModelSide` in a worker thread) and through a running
   ``osrs-rllib serve`` (``--server``), started by this script as a user starts it. Same model, same pace
   (``--latency-tick-ms``), ``--latency-ticks`` ticks each.

The model is ``--model``, else the first shipped model (``models/*.nhmodel``), else a freshly initialised network
of the default size (a forward pass costs the same as a trained one's).

Results to expect (docs/play.md records a run): ticks late by about a millisecond at p50 and a few at p99 on
2 cores with training beside; decisions in-process ~1–3 ms, through serve a few ms more (the proxy and Ray Serve).
Nothing is asserted: this script prints figures.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.serve_latency import machine  # noqa: E402

SERVE_START_S = 600.0
"""How long `osrs-rllib serve` may take to answer (Ray starts from scratch; slow on a loaded machine)."""


def ms(values_s: list[float]) -> dict[str, float | int | None]:
    if not values_s:
        return {"n": 0, "p50_ms": None, "p99_ms": None, "max_ms": None}
    arr = np.asarray(values_s) * 1000.0
    return {"n": len(arr), "p50_ms": round(float(np.percentile(arr, 50)), 3),
            "p99_ms": round(float(np.percentile(arr, 99)), 3), "max_ms": round(float(arr.max()), 3)}  # fmt: skip


def model_path(given: str | None, tmp: Path) -> Path:
    if given:
        return Path(given)
    shipped = sorted((REPO / "models").glob("*.nhmodel")) if (REPO / "models").is_dir() else []
    if shipped:
        return shipped[0]
    import torch

    from envs.nh.contract import CRITIC_SIZE, OBS_SIZE
    from policies.model_file import save_model_file
    from policies.network import NHPolicyNetwork
    from policies.network_config import NetworkConfig

    torch.manual_seed(0)
    return save_model_file(NHPolicyNetwork(OBS_SIZE, CRITIC_SIZE, NetworkConfig()), tmp / "bench.nhmodel")


class Person(threading.Thread):
    """A player at the page: starts games until `ticks` ticks have run, answering each tick with a legal choice."""

    def __init__(self, url: str, ticks: int, pace: int, seed: int = 0) -> None:
        super().__init__(name="person", daemon=True)
        self.url, self.ticks, self.pace = url, ticks, pace
        self.rng = random.Random(seed)
        self.seen = 0
        self.games = 0
        self.error: BaseException | None = None

    def run(self) -> None:
        import websocket

        from osrs_rllib.play.controls import enabled_controls

        try:
            ws = websocket.create_connection(self.url, timeout=60)
            json.loads(ws.recv())  # hello
            ws.send(json.dumps({"type": "start", "pace": self.pace}))
            while self.seen < self.ticks:
                msg = json.loads(ws.recv())
                if msg["type"] == "end":
                    self.games += 1
                    ws.send(json.dumps({"type": "start", "pace": self.pace}))
                elif msg["type"] in ("start", "tick"):
                    self.seen += msg["type"] == "tick"
                    legal = sorted(enabled_controls([c == "1" for c in msg["mask"]]))
                    if legal and self.rng.random() < 0.5:
                        ws.send(json.dumps({"type": "control", "id": self.rng.choice(legal)}))
            ws.close()
        except BaseException as exc:  # reported by the main thread
            self.error = exc


def run_games(opponents: list[Any], ticks: int, tick_ms: int, data_dir: Path) -> dict[str, Any]:
    """Chain games against the first opponent for `ticks` ticks; the clock's lateness and the decision latency."""
    from osrs_rllib.play import PlayConfig, PlayServer

    config = PlayConfig(opponents=opponents, data_dir=data_dir, tick_ms=tick_ms, seed=0)
    server = PlayServer(config, port=0)
    server.state.load()
    server.start()
    load_before = os.getloadavg()[0]
    person = Person(f"ws://{server.host}:{server.port}/ws", ticks, tick_ms)
    started = time.perf_counter()
    person.start()
    person.join()
    wall = time.perf_counter() - started
    time.sleep(0.2)
    server.stop()
    if person.error is not None:
        raise person.error
    sessions = {id(s): s for s in [*server.state.recent, *server.state.sessions]}.values()
    lateness = [x for s in sessions for x in s.lateness_s]
    latency = [x for s in sessions if s.decider is not None for x in s.decider.latencies_s]
    late = sum(s.decider.late_ticks for s in sessions if s.decider is not None)
    return {
        "opponent": opponents[0].name,
        "kind": opponents[0].kind,
        "tick_ms": tick_ms,
        "ticks": len(lateness),
        "games": person.games,
        "wall_s": round(wall, 1),
        "tick_lateness": ms(lateness),
        "ticks_late_over_30ms": int(sum(x > 0.030 for x in lateness)),
        "decision_latency": ms(latency),
        "opponent_late_ticks": late,
        "load_avg_1m": [round(load_before, 2), round(os.getloadavg()[0], 2)],
    }


def start_serve(models_dir: Path) -> tuple[subprocess.Popen[bytes], str]:
    """`osrs-rllib serve DIR` as a user starts it, on a free port; returns it and HOST:PORT once it answers.

    Raises:
        RuntimeError: It exited or did not answer in time (the end of its output says why).
    """
    from serving.client import ServeClient, ServeReplyError
    from serving.runtime import free_port

    port = free_port()
    log = models_dir / "serve.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "osrs_rllib.cli", "serve", str(models_dir), "--port", str(port), "--num-cpus", "1",
             "--cpus-per-replica", "0", "--reload-s", "0", "--no-dashboard", "--state-dir", str(models_dir / "state")],
            cwd=REPO, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    deadline = time.monotonic() + SERVE_START_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            tail = log.read_text(errors="replace").strip().splitlines()[-5:]
            raise RuntimeError(f"osrs-rllib serve exited with {proc.returncode}: {' | '.join(tail)}")
        try:
            with ServeClient("127.0.0.1", port, timeout_s=5.0) as client:
                if client.models():
                    return proc, f"127.0.0.1:{port}"
        except (OSError, ServeReplyError):  # not listening yet, or its replica still starting
            time.sleep(1.0)
    stop_serve(proc)
    raise RuntimeError(f"osrs-rllib serve did not answer within {SERVE_START_S:.0f} s (log: {log})")


def stop_serve(proc: subprocess.Popen[bytes]) -> None:
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # the process group this script started
        proc.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ticks", type=int, default=500, help="ticks of the timing run")
    parser.add_argument("--tick-ms", type=int, default=600, help="pace of the timing run")
    parser.add_argument("--latency-ticks", type=int, default=300, help="ticks of each decision-latency run")
    parser.add_argument("--latency-tick-ms", type=int, default=100, help="pace of the decision-latency runs")
    parser.add_argument("--model", help="model file (default: models/*.nhmodel, else a fresh default-size network)")
    parser.add_argument("--serve", action=argparse.BooleanOptionalAction, default=True,
                        help="also measure through `osrs-rllib serve` (starts one; Ray takes a while)")  # fmt: skip
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()

    import torch

    from osrs_rllib.play.opponents import resolve_opponents

    torch.set_num_threads(1)
    report: dict[str, Any] = {"machine": machine()}
    show = (lambda *_: None) if args.json else print_section
    show("machine", report["machine"])
    with tempfile.TemporaryDirectory(prefix="play-bench-") as tmp_name:
        tmp = Path(tmp_name)
        model = model_path(args.model, tmp)
        report["model"] = str(model)
        show("model", report["model"])
        in_process = resolve_opponents([str(model)])
        report["timing"] = run_games(in_process, args.ticks, args.tick_ms, tmp / "timing")
        show("timing", report["timing"])
        report["in_process"] = run_games(in_process, args.latency_ticks, args.latency_tick_ms, tmp / "in-process")
        show("in_process", report["in_process"])
        if args.serve:
            served_dir = tmp / "served"
            served_dir.mkdir()
            (served_dir / model.name).write_bytes(model.read_bytes())
            try:
                proc, address = start_serve(served_dir)
            except RuntimeError as exc:
                report["served"] = {"error": str(exc)}
            else:
                try:
                    served = resolve_opponents([model.stem], server=address)
                    report["served"] = run_games(served, args.latency_ticks, args.latency_tick_ms, tmp / "served-games")
                finally:
                    stop_serve(proc)
        else:
            report["served"] = {"error": "not measured (--no-serve)"}
        show("served", report["served"])
    if args.json:
        print(json.dumps(report))


def print_section(key: str, value: Any) -> None:
    """One part of the report, printed as soon as it is measured (a failure later loses nothing)."""
    if key == "machine":
        print(f"machine: {value['cpu']}, {value['cores']} cores, {value['platform']}, Python {value['python']}")
    elif key == "model":
        print(f"model: {value}")
    elif key == "timing":
        lat = value["tick_lateness"]
        print(f"\ntick timing: {value['ticks']} ticks at {value['tick_ms']} ms ({value['games']} games finished, "
              f"{value['wall_s']} s), load average {value['load_avg_1m'][0]} -> {value['load_avg_1m'][1]}")
        print(f"  lateness of a tick after its slot: p50 {lat['p50_ms']} ms, p99 {lat['p99_ms']} ms, "
              f"max {lat['max_ms']} ms; {value['ticks_late_over_30ms']} tick(s) over 30 ms")
        print(f"  opponent late at {value['opponent_late_ticks']} tick(s)")
        print("\nopponent decision latency (request after a tick -> answer):")
    else:
        label = "model file in-process" if key == "in_process" else "through osrs-rllib serve"
        if "error" in value:
            print(f"  {label:28s} {value['error']}")
            return
        d = value["decision_latency"]
        print(f"  {label:28s} p50 {d['p50_ms']} ms, p99 {d['p99_ms']} ms, max {d['max_ms']} ms ({d['n']} decisions "
              f"at {value['tick_ms']} ms a tick; late at {value['opponent_late_ticks']} tick(s); load average "
              f"{value['load_avg_1m'][0]} -> {value['load_avg_1m'][1]})")


if __name__ == "__main__":
    main()
