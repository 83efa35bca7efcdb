"""Start-up and shutdown of `osrs-rllib serve` as a user runs it: seconds from the command to its first good
reply, seconds from a signal to the exit, and the processes left behind.

How to run this script::

    .venv/bin/python benchmarks/serve_startup.py                     # 3 runs of `serve models/`, stopped by SIGTERM
    .venv/bin/python benchmarks/serve_startup.py --burners 2         # beside two CPU-burning processes
    .venv/bin/python benchmarks/serve_startup.py --models ""         # a fresh model of the default size instead
    .venv/bin/python benchmarks/serve_startup.py --runs 1 --signal INT
    .venv/bin/python benchmarks/serve_startup.py --serve-args="--dashboard"   # what the dashboard costs
    .venv/bin/python benchmarks/serve_startup.py --json             # with each run's processes: CPU s, start
    .venv/bin/python benchmarks/serve_startup.py --runs 1 --latency-seconds 5   # and a client's latency

What is timed: ``python -m osrs_rllib.cli serve DIR --port P`` in a subprocess, serving ``models/`` (the
shipped models; ``--models ""`` serves one fresh model of the default network size). "first answer" is from
the command's launch to the first good reply (an action) to a real request for the first served model (a
client tries every 50 ms; connection refused until the proxy listens, which it does only once a model server
answers), "CPU s" the CPU time the server and every process it started had spent by then (on a busy machine
the wall time says more about the neighbours than about the server; the CPU time does not); "exit" is from the
signal to the exit of the process. "left behind" counts the processes the server started (its descendants,
sampled while it ran) that still run one second after it exited; the script then stops them, so it never
leaves any itself.

Results to expect: on a quiet 2-core machine the first answer comes within 15 s (median of 3; the old
system's harness allows 50 s), within 120 s beside two CPU-burning processes (``--burners 2``), the exit within
a few seconds with status 0 and nothing left behind; docs/serving.md records the figures measured. Nothing is
asserted: this script prints figures, the median first answer last.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.serve_latency import closed_loop, machine, request_lines  # noqa: E402
from envs.nh.contract import CRITIC_SIZE, NUM_LOGITS, OBS_SIZE  # noqa: E402


def first_answer(port: int, proc: subprocess.Popen[bytes], limit_s: float, model: str) -> float | None:
    """Seconds until a real request on 127.0.0.1:`port` is answered with an action, or None."""
    from serving.client import build_request

    line = json.dumps(build_request(model, [0.0] * OBS_SIZE, [True] * NUM_LOGITS)).encode() + b"\n"
    start = time.monotonic()
    while time.monotonic() - start < limit_s and proc.poll() is None:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
                sock.sendall(line)
                reply = sock.makefile("rb").readline()
            if b'"action"' in reply:
                return time.monotonic() - start
        except OSError:
            pass
        time.sleep(0.05)
    return None


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system) spent so far by `pid` and every process below it, the exited ones included
    (as far as their parents have waited for them): the work of a start, which a quiet 2-core machine needs
    at least half of in wall time."""
    from common.processes import descendants

    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for p in (pid, *descendants(pid)):
        fields = _stat(p)
        if fields is not None:
            total += sum(int(v) for v in fields[11:15])  # utime, stime, cutime, cstime
    return total / ticks


def _stat(pid: int) -> list[str] | None:
    """The fields of ``/proc/PID/stat`` after the command name (fields[0] is field 3, the state); None once gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None


def process_split(pid: int) -> list[dict[str, Any]]:
    """The server and each process below it at the first answer: what it is, the CPU seconds it has spent and
    when it started (seconds after the server's own process): where a start's time goes (docs/serving.md)."""
    from common.processes import descendants

    ticks = os.sysconf("SC_CLK_TCK")
    rows = []
    for p in (pid, *descendants(pid)):
        fields = _stat(p)
        try:
            argv = Path(f"/proc/{p}/cmdline").read_bytes().decode(errors="replace").split("\0")
        except OSError:
            continue
        if fields is None:
            continue
        # utime and stime are fields 14-15 of stat, starttime field 22.
        rows.append({"process": _what(argv), "cpu_s": round((int(fields[11]) + int(fields[12])) / ticks, 2),
                     "start_ticks": int(fields[19])})
    first = rows[0]["start_ticks"] if rows else 0
    for row in rows:
        row["started_s"] = round((row.pop("start_ticks") - first) / ticks, 2)
    return sorted(rows, key=lambda r: r["started_s"])


def _what(argv: list[str]) -> str:
    """A process's name as a reader knows it: Ray's actors and agents by their title, scripts by their file."""
    if argv[0].startswith("ray::"):
        return argv[0].split()[0]
    if "osrs_rllib.cli" in argv:
        return "osrs-rllib " + " ".join(argv[argv.index("osrs_rllib.cli") + 1:][:1])
    script = next((a for a in argv[1:] if a.endswith(".py")), None)
    return Path(script or argv[0]).name


def one_run(models: Path, serve_args: list[str], sig: signal.Signals, limit_s: float,
            latency_s: float, model: str) -> dict[str, Any]:
    from common.processes import descendants, reap, still_running
    from serving.runtime import free_port

    port = free_port()
    state = Path(tempfile.mkdtemp(prefix="serve-startup-state-"))
    cmd = [sys.executable, "-m", "osrs_rllib.cli", "serve", str(models), "--port", str(port), "--state-dir",
           str(state), *serve_args]
    launched = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    output: list[bytes] = []
    reader = threading.Thread(target=lambda: output.extend(iter(proc.stdout.readline, b"")), daemon=True)  # type: ignore[union-attr]
    reader.start()
    seen: dict[int, int] = {}
    result: dict[str, Any] = {"first_answer_s": None, "exit_s": None, "exit_code": None, "left_behind": []}
    try:
        answered = first_answer(port, proc, limit_s, model)
        result["first_answer_s"] = None if answered is None else round(time.monotonic() - launched, 2)
        result["cpu_s_to_first_answer"] = round(cpu_seconds(proc.pid), 1)
        result["processes"] = process_split(proc.pid)
        if answered is not None and latency_s > 0:
            # The server as started by the CLI, one closed-loop client: the same figure as serve_latency.py's
            # "served, 1 client", which starts its server in-process.
            import asyncio

            lines, _, _ = request_lines(256, 0)
            served = asyncio.run(closed_loop("127.0.0.1", port, lines, 1, latency_s))
            result["latency_1_client"] = {k: round(served[k], 2) for k in ("p50_ms", "p99_ms", "requests_per_s")}
        if answered is not None:
            time.sleep(1.0)  # let Ray finish whatever it starts lazily, so that it is counted and stopped too
        seen.update(descendants(proc.pid))
        signalled = time.monotonic()
        proc.send_signal(sig)
        try:
            result["exit_code"] = proc.wait(timeout=60)
            result["exit_s"] = round(time.monotonic() - signalled, 2)
        except subprocess.TimeoutExpired:
            result["exit_s"] = None
        time.sleep(1.0)
        left = still_running(seen)
        result["left_behind"] = [_name(pid) for pid in left]
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
        reap(seen, grace_s=0.0)
        reader.join(5)
    text = b"".join(output).decode(errors="replace")
    ready = [ln for ln in text.splitlines() if ln.startswith("ready in")]
    result["server_says"] = ready[0] if ready else None
    if result["first_answer_s"] is None:
        result["output_tail"] = text[-2000:]
    return result


def _name(pid: int) -> str:
    try:
        argv0 = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode(errors="replace")
    except OSError:
        return str(pid)
    return f"{pid} {argv0[:60]}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--signal", choices=("TERM", "INT"), default="TERM", help="How each run is stopped.")
    parser.add_argument("--serve-args", default="", help="Extra `serve` flags, e.g. --serve-args='--no-dashboard'.")
    parser.add_argument("--limit", type=float, default=300.0, help="Seconds to wait for the first answer.")
    parser.add_argument("--latency-seconds", type=float, default=0.0,
                        help="After the first answer, time one closed-loop client for this long (0: skip).")
    parser.add_argument("--models", default="models",
                        help="The directory served (default: the shipped models/); empty: a fresh default-size model.")
    parser.add_argument("--burners", type=int, default=0,
                        help="CPU-burning processes run beside the server (the busy-laptop bar: 2).")
    parser.add_argument("--json", action="store_true", help="Print one JSON object.")
    args = parser.parse_args()

    if args.models:
        models = (REPO / args.models).resolve()
        model = sorted(p.stem for p in models.glob("*.nhmodel"))[0]
    else:
        from policies.model_file import save_model_file
        from policies.network import NHPolicyNetwork

        models = Path(tempfile.mkdtemp(prefix="serve-startup-"))
        model = "bench"
        save_model_file(NHPolicyNetwork(OBS_SIZE, CRITIC_SIZE), models / f"{model}.nhmodel")
    sig = signal.Signals[f"SIG{args.signal}"]
    report: dict[str, Any] = {"machine": machine(), "serve_args": args.serve_args, "signal": sig.name,
                              "models": str(models), "burners": args.burners, "runs": []}
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.burners)]
    try:
        for _ in range(args.runs):
            report["runs"].append(one_run(models, shlex.split(args.serve_args), sig, args.limit,
                                          args.latency_seconds, model))
    finally:
        for b in burners:
            b.kill()
            b.wait()
    report["machine"]["load_avg_1m_end"] = os.getloadavg()[0]
    answered = sorted(r["first_answer_s"] for r in report["runs"] if r["first_answer_s"] is not None)
    report["median_first_answer_s"] = answered[len(answered) // 2] if len(answered) == len(report["runs"]) else None
    if args.json:
        print(json.dumps(report))
        return
    m = report["machine"]
    print(f"machine: {m['cpu']}, {m['cores']} cores, {m['platform']}, Python {m['python']}; "
          f"load average {m['load_avg_1m']:.1f} → {m['load_avg_1m_end']:.1f}")
    print(f"serve {models} {args.serve_args or '(default flags)'}, stopped with {sig.name}, "
          f"{args.burners} CPU burners beside it")
    print(f"{'run':>4} {'first answer s':>15} {'CPU s':>6} {'exit s':>7} {'status':>7} {'left behind':>12}  "
          "server says")
    for i, r in enumerate(report["runs"], 1):
        first = "-" if r["first_answer_s"] is None else f"{r['first_answer_s']:.1f}"
        ex = "-" if r["exit_s"] is None else f"{r['exit_s']:.1f}"
        cpu = r.get("cpu_s_to_first_answer")
        print(f"{i:>4} {first:>15} {cpu!s:>6} {ex:>7} {r['exit_code']!s:>7} {len(r['left_behind']):>12}  "
              f"{r['server_says']}")
        if "latency_1_client" in r:
            lat = r["latency_1_client"]
            print(f"       1 client: p50 {lat['p50_ms']:.2f} ms, p99 {lat['p99_ms']:.2f} ms, "
                  f"{lat['requests_per_s']:,.0f} req/s")
        if i == 1 and r.get("processes"):
            print("       where the first run's CPU went by its first answer (CPU s, started s after the command):")
            for row in r["processes"]:
                print(f"       {row['cpu_s']:6.2f} {row['started_s']:6.2f}  {row['process']}")
        for name in r["left_behind"]:
            print(f"       left: {name}")
        if "output_tail" in r:
            print(r["output_tail"])
    median = report["median_first_answer_s"]
    print(f"median first good reply: {'-' if median is None else f'{median:.1f} s'} after the command "
          f"(bar: 15 s quiet, 120 s beside two CPU burners)")


if __name__ == "__main__":
    main()
