"""Policy forward-pass time: batch 1 and batch 256 with the default network, eager and TorchScript.

How to run this script::

    .venv/bin/python benchmarks/policy_forward.py               # a table
    .venv/bin/python benchmarks/policy_forward.py --seconds 0.5 # quicker, noisier
    .venv/bin/python benchmarks/policy_forward.py --json        # one JSON object

What is timed (single thread, `torch.no_grad`, inputs built once):

* ``act``: features + the 12-head autoregressive sample (what a rollout worker or a server pays per step),
  stochastic sampling, random observations and all-legal masks;
* ``act+value``: the same plus the critic on the 269-entry input (what RLlib computes while sampling);
* ``evaluate``: teacher-forced log-probabilities and entropies of given actions (one PPO loss forward,
  without the backward pass).

Results to expect: about a millisecond for batch 1 (a dozen sequential heads, so per-op overhead
dominates), a few milliseconds for batch 256. Nothing is asserted: this script prints figures.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
import warnings
from collections.abc import Callable
from typing import Any

import torch

from envs.nh.contract import CRITIC_SIZE, NUM_LOGITS, OBS_SIZE
from policies.network import NHPolicyNetwork
from policies.network_config import NetworkConfig

BATCHES = (1, 256)


def _time(fn: Callable[[], Any], seconds: float) -> tuple[float, int]:
    """Median milliseconds per call over `seconds` of repeated calls (after a short warm-up)."""
    for _ in range(5):
        fn()
    samples: list[float] = []
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline or len(samples) < 5:
        t0 = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(samples), len(samples)


def run(seconds: float) -> dict[str, Any]:
    torch.set_num_threads(1)
    torch.manual_seed(0)
    net = NHPolicyNetwork(OBS_SIZE, CRITIC_SIZE, NetworkConfig()).eval()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # torch 2.13 deprecates TorchScript; see docs/policy.md
        scripted = torch.jit.script(net)
    rows = []
    with torch.no_grad():
        for batch in BATCHES:
            obs = torch.randn(batch, OBS_SIZE)
            critic = torch.randn(batch, CRITIC_SIZE)
            mask = torch.ones(batch, NUM_LOGITS)
            actions, _ = net(obs, mask)
            for label, module in (("eager", net), ("torchscript", scripted)):
                cases = {
                    "act": lambda m=module, o=obs, k=mask: m(o, k),
                    "act+value": lambda m=module, o=obs, k=mask, c=critic: (m(o, k), m.value(c)),
                    "evaluate": lambda m=module, o=obs, k=mask, a=actions: m.evaluate(o, k, a),
                }
                for case, fn in cases.items():
                    ms, n = _time(fn, seconds)
                    rows.append(
                        {
                            "mode": label,
                            "case": case,
                            "batch": batch,
                            "ms": ms,
                            "calls": n,
                            "rows_per_s": batch / ms * 1e3,
                        }
                    )
    params = sum(p.numel() for p in net.parameters())
    return {
        "machine": {
            "platform": platform.platform(),
            "cpu": platform.processor() or platform.machine(),
            "python": platform.python_version(),
            "torch": torch.__version__,
            "threads": 1,
        },
        "network": {**NetworkConfig().to_dict(), "parameters": params},
        "results": rows,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="time per measurement")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    report = run(args.seconds)
    if args.json:
        print(json.dumps(report, indent=1))
        return
    m = report["machine"]
    print(f"machine: {m['platform']} · {m['cpu']} · python {m['python']} · torch {m['torch']} · 1 thread")
    print(f"network: default NetworkConfig, {report['network']['parameters']:,} parameters")
    print(f"{'mode':<12} {'case':<10} {'batch':>5} {'ms/call':>9} {'rows/s':>11}")
    for r in report["results"]:
        print(f"{r['mode']:<12} {r['case']:<10} {r['batch']:>5} {r['ms']:>9.3f} {r['rows_per_s']:>11,.0f}")


if __name__ == "__main__":
    main()
