"""Latency and throughput of `osrs-rllib serve`: client → TCP proxy → Ray Serve → model → reply.

How to run this script::

    .venv/bin/python benchmarks/serve_latency.py                  # a table (about a minute, Ray start included)
    .venv/bin/python benchmarks/serve_latency.py --seconds 2      # quicker, noisier
    .venv/bin/python benchmarks/serve_latency.py --json           # one JSON object
    .venv/bin/python benchmarks/serve_latency.py --batch-wait 0.002  # what a @serve.batch wait costs

What is timed: a real server on 127.0.0.1 (a local Ray, one replica, the proxy actor) serving a model file of
the default network size (`NetworkConfig()`, freshly initialised: the forward pass costs the same as a
trained one's). Clients keep one connection each and send one deterministic request, wait for its reply,
then send the next (closed loop); the request lines are encoded beforehand, as a game client encodes its
own. Figures: p50 / p99 latency and requests/s for 1 and 16 concurrent clients, and, for comparison, the
same request answered in-process (`ModelRegistry.answer`, what a replica does per request; and the bare
`ModelFile.act`), so the Serve and proxy overhead is the difference.

Results to expect: the in-process call takes ~0.5 ms; docs/serving.md records quiet 2-core runs (p50 2.3 to 2.4 ms
for one client, 2,500 to 3,100 requests/s for 16; with ``--serve-defaults`` 3.9 ms and 1,500 requests/s). Nothing
is asserted: this script prints figures.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from envs.nh.contract import CRITIC_SIZE, NUM_HEADS, NUM_LOGITS, OBS_SIZE


def machine() -> dict[str, Any]:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), cpu)
    except OSError:
        pass
    return {"platform": platform.platform(), "cpu": cpu, "cores": os.cpu_count(), "python": platform.python_version(),
            "load_avg_1m": os.getloadavg()[0]}


def percentiles(latencies_s: list[float]) -> dict[str, float]:
    arr = np.sort(np.asarray(latencies_s)) * 1000.0
    return {"p50_ms": float(np.percentile(arr, 50)), "p99_ms": float(np.percentile(arr, 99)),
            "mean_ms": float(arr.mean())}


def request_lines(n: int, seed: int) -> tuple[list[bytes], np.ndarray, np.ndarray]:
    from serving.client import build_request

    rng = np.random.default_rng(seed)
    obs = rng.normal(0, 1, (n, OBS_SIZE)).astype(np.float32)
    masks = rng.random((n, NUM_LOGITS)) < 0.7
    masks[:, 0] = True
    lines = [json.dumps(build_request("bench", obs[i], masks[i]), separators=(",", ":")).encode() + b"\n"
             for i in range(n)]
    return lines, obs, masks


def time_in_process(path: Path, obs: np.ndarray, masks: np.ndarray, seconds: float) -> dict[str, float]:
    """The replica's own work for one request, and the bare model call, in this process (one torch thread)."""
    import torch

    from policies.model_file import load_model_file
    from serving.models import ModelRegistry
    from serving.protocol import Request

    torch.set_num_threads(1)
    registry = ModelRegistry(path.parent, ladder=False)
    model = load_model_file(path)
    reqs = [Request("bench", obs[i : i + 1], masks[i], (True,) * NUM_HEADS) for i in range(len(obs))]
    out: dict[str, float] = {}
    for name, call in (
        ("registry_answer", lambda i: registry.answer([reqs[i]])),
        ("model_act", lambda i: model.act(obs[i], masks[i].astype(np.float32))),
    ):
        for i in range(20):
            call(i)
        lat, i, end = [], 0, time.perf_counter() + seconds
        while time.perf_counter() < end:
            start = time.perf_counter()
            call(i % len(reqs))
            lat.append(time.perf_counter() - start)
            i += 1
        out[f"{name}_p50_ms"] = percentiles(lat)["p50_ms"]
    return out


async def closed_loop(host: str, port: int, lines: list[bytes], clients: int, seconds: float) -> dict[str, Any]:
    """`clients` connections, each sending one request and awaiting its reply before the next."""
    latencies: list[float] = []
    errors = 0
    stop_at = 0.0

    async def one(c: int) -> None:
        nonlocal errors
        reader, writer = await asyncio.open_connection(host, port)
        i = c
        while time.perf_counter() < stop_at:
            start = time.perf_counter()
            writer.write(lines[i % len(lines)])
            reply = await reader.readline()
            latencies.append(time.perf_counter() - start)
            if b'"error"' in reply[:10]:
                errors += 1
            i += clients
        writer.close()

    # warm-up: connections, the replica's first batches
    stop_at = time.perf_counter() + min(1.0, seconds / 3)
    await asyncio.gather(*[one(c) for c in range(clients)])
    latencies.clear()
    errors = 0
    start = time.perf_counter()
    stop_at = start + seconds
    await asyncio.gather(*[one(c) for c in range(clients)])
    elapsed = time.perf_counter() - start
    return {"clients": clients, "requests": len(latencies), "errors": errors,
            "requests_per_s": len(latencies) / elapsed, **percentiles(latencies)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="Measuring time per case.")
    parser.add_argument("--clients", default="1,16", help="Comma-separated concurrent client counts.")
    parser.add_argument("--replicas", type=int, default=1)
    parser.add_argument("--batch-wait", type=float, default=None, help="@serve.batch wait (default: the app's).")
    parser.add_argument("--in-flight", type=int, default=None, help="Proxy calls in flight (default: the proxy's).")
    parser.add_argument("--serve-defaults", action="store_true",
                        help="Run Serve with its default settings (no REPLICA_ENV / PROXY_ENV), to see what they save.")
    parser.add_argument("--json", action="store_true", help="Print one JSON object.")
    args = parser.parse_args()

    import ray

    from policies.model_file import save_model_file
    from policies.network import NHPolicyNetwork
    from serving.app import BATCH_WAIT_S, AppOptions
    from serving.proxy import ProxyLimits
    from serving.runtime import deploy, start_proxy

    if args.serve_defaults:
        import serving.app
        import serving.proxy

        serving.app.REPLICA_ENV.clear()
        serving.proxy.PROXY_ENV.clear()
    tmp = Path(tempfile.mkdtemp(prefix="serve-bench-"))
    path = save_model_file(NHPolicyNetwork(OBS_SIZE, CRITIC_SIZE), tmp / "bench.nhmodel")
    lines, obs, masks = request_lines(512, 0)
    report: dict[str, Any] = {"machine": machine(), "in_process": time_in_process(path, obs, masks, args.seconds)}

    batch_wait = BATCH_WAIT_S if args.batch_wait is None else args.batch_wait
    limits = ProxyLimits() if args.in_flight is None else ProxyLimits(max_in_flight=args.in_flight)
    from common.ray_errors import dashboard_port_beside_others

    ray.init(include_dashboard=False, dashboard_port=dashboard_port_beside_others(),
             log_to_driver=False, configure_logging=False)
    try:
        deploy(AppOptions(models_dir=str(tmp), replicas=args.replicas, cpus_per_replica=0, ladder=False,
                          batch_wait_s=batch_wait, reload_s=0))
        _, (host, port) = start_proxy("127.0.0.1", 0, limits)
        report["settings"] = {"replicas": args.replicas, "batch_wait_s": batch_wait,
                              "proxy_in_flight": limits.max_in_flight, "serve_defaults": args.serve_defaults}
        report["served"] = [asyncio.run(closed_loop(host, port, lines, int(c), args.seconds))
                            for c in args.clients.split(",")]
    finally:
        from ray import serve

        serve.shutdown()
        ray.shutdown()
    report["machine"]["load_avg_1m_end"] = os.getloadavg()[0]

    if args.json:
        print(json.dumps(report))
        return
    m, ip = report["machine"], report["in_process"]
    print(f"machine: {m['cpu']}, {m['cores']} cores, {m['platform']}, Python {m['python']}; "
          f"load average {m['load_avg_1m']:.1f} → {m['load_avg_1m_end']:.1f}")
    print(f"settings: {report['settings']}")
    print(f"in-process, one request: ModelRegistry.answer p50 {ip['registry_answer_p50_ms']:.2f} ms, "
          f"ModelFile.act p50 {ip['model_act_p50_ms']:.2f} ms")
    print(f"{'clients':>8} {'requests':>9} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'mean ms':>8} {'errors':>7}")
    for r in report["served"]:
        print(f"{r['clients']:>8} {r['requests']:>9,} {r['requests_per_s']:>8,.0f} {r['p50_ms']:>8.2f} "
              f"{r['p99_ms']:>8.2f} {r['mean_ms']:>8.2f} {r['errors']:>7}")


if __name__ == "__main__":
    main()
