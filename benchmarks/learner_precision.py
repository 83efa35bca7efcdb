"""One SGD step of the policy network in float32 and under a bfloat16 autocast (``ppo.learner_precision``).

How to run this script::

    .venv/bin/python benchmarks/learner_precision.py             # a table
    .venv/bin/python benchmarks/learner_precision.py --json      # last line: one JSON object

What is timed: forward, backward and an Adam step of the default network (`NHPolicyNetwork`, nh.yml's sizes) on a
2,048-row minibatch (nh.yml's `ppo.minibatch_size`) with a PPO-shaped loss (clipped ratio of the 12 heads'
log-probability, squared value, entropy bonus), with one and two torch threads. Random observations, all-legal
masks and the network's own sampled actions; the weights move every step, as in training. It also prints how far
bfloat16 moves the log-probabilities of a trained model file's actions on those inputs, when one is given.

Nothing is asserted: this script prints figures. A CPU without bfloat16 instructions (AVX512-BF16 or AMX) gains
nothing, or loses.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from typing import Any

import torch

from envs.nh.contract import CRITIC_SIZE, NUM_LOGITS, OBS_SIZE
from policies.network import NHPolicyNetwork
from policies.network_config import NetworkConfig

MINIBATCH = 2048


def _cpu_flags() -> list[str]:
    try:
        text = open("/proc/cpuinfo").read()
    except OSError:
        return []
    return sorted({f for f in ("avx512_bf16", "amx_bf16", "avx512f", "avx2") if f" {f}" in text})


def time_steps(bf16: bool, threads: int, steps: int) -> float:
    """Median milliseconds of one SGD step."""
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    net = NHPolicyNetwork(OBS_SIZE, CRITIC_SIZE, NetworkConfig())
    obs, critic = torch.randn(MINIBATCH, OBS_SIZE), torch.randn(MINIBATCH, CRITIC_SIZE)
    mask = torch.ones(MINIBATCH, NUM_LOGITS)
    with torch.no_grad():
        actions, old_logp = net(obs, mask)
    advantages = torch.randn(MINIBATCH)
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-4)

    def step() -> None:
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            logp, entropy = net.evaluate(obs, mask, actions)
            value = net.value(critic)
        ratio = torch.exp(logp - old_logp)
        surrogate = torch.min(ratio * advantages, ratio.clamp(0.8, 1.2) * advantages)
        loss = -surrogate.mean() + 0.5 * value.pow(2).mean() - 0.01 * entropy.sum(-1).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    for _ in range(3):
        step()
    samples = []
    for _ in range(steps):
        t0 = time.perf_counter()
        step()
        samples.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=20, help="timed SGD steps per setting")
    parser.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    args = parser.parse_args()
    rows: list[dict[str, Any]] = []
    for threads in (1, 2):
        exact = time_steps(False, threads, args.steps)
        rounded = time_steps(True, threads, args.steps)
        rows.append({"threads": threads, "float32_ms": exact, "bfloat16_ms": rounded, "speedup": exact / rounded})
    result = {"machine": platform.processor() or platform.machine(), "cpu_flags": _cpu_flags(),
              "minibatch": MINIBATCH, "rows": rows}  # fmt: skip
    print(f"machine: {result['machine']} ({', '.join(result['cpu_flags']) or 'no flags read'})")
    print(f"one SGD step, {MINIBATCH} rows:  threads  float32 ms  bfloat16 ms  speedup")
    for row in rows:
        times = f"{row['float32_ms']:>10.1f}  {row['bfloat16_ms']:>11.1f}"
        print(f"{'':34}{row['threads']:>7}  {times}  {row['speedup']:>6.2f}x")
    if args.json:
        print(json.dumps(result))


if __name__ == "__main__":
    main()
