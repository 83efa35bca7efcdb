"""Wall time of the quick `osrs-rllib` commands, as a user runs them, and what importing the command line costs.

How to run this script::

    .venv/bin/python benchmarks/cli_startup.py              # 3 runs of each command, a table
    .venv/bin/python benchmarks/cli_startup.py --runs 5 --json
    .venv/bin/python benchmarks/cli_startup.py --command "serve status"
    .venv/bin/python benchmarks/cli_startup.py --repo /tmp/old   # another checkout (git archive REV | tar -x)

What is timed: each command in a fresh process (the installed ``osrs-rllib`` script beside this Python, or
``python -m osrs_rllib.cli`` without it), from the launch to its exit, with its output discarded; ``jobs`` and
``serve status`` read an empty temporary directory, so they time the command and not the runs it lists.
"import" is the cumulative ``python -X importtime`` figure of ``import osrs_rllib.cli``.

Results to expect: on a quiet 2-core machine ``--help``, ``version``, ``jobs`` and ``serve status`` finish
within 2 s (about 0.3-0.7 s; importing the command line takes well under 0.1 s), a fight of two scripted sides
within a second or two. Nothing is asserted: this script prints figures; which modules the commands may load
is checked by tests/osrs_rllib/test_cli_startup.py.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

COMMANDS: tuple[str, ...] = (
    "--help",
    "version",
    "jobs --experiments-dir {tmp}",
    "serve status --state-dir {tmp}",
    "fight --help",
    "fight noop random --n 20 --json",
)
"""The commands timed by default: those a person types to look around, and a short scripted fight."""


def launcher(repo: Path) -> list[str]:
    """The installed console script beside this interpreter, else (or for another checkout) ``python -m``."""
    script = Path(sys.executable).with_name("osrs-rllib")
    return [str(script)] if script.exists() and repo == REPO else [sys.executable, "-m", "osrs_rllib.cli"]


def time_command(command: str, runs: int, tmp: str, repo: Path) -> list[float]:
    """Seconds from launch to exit of ``osrs-rllib COMMAND`` run in `repo`, once per run."""
    args = [*launcher(repo), *command.replace("{tmp}", tmp).split()]
    seconds = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(args, cwd=repo, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        seconds.append(time.perf_counter() - started)
    return seconds


def import_seconds(repo: Path) -> float:
    """Cumulative import time of `osrs_rllib.cli` in a fresh interpreter (``-X importtime``)."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import osrs_rllib.cli"],
        cwd=repo, capture_output=True, text=True, check=True,
    )  # fmt: skip
    for line in reversed(proc.stderr.splitlines()):
        match = re.match(r"import time:\s+\d+\s+\|\s+(\d+)\s+\|\s+osrs_rllib\.cli$", line)
        if match:
            return int(match.group(1)) / 1e6
    raise RuntimeError("no import time reported for osrs_rllib.cli")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="Runs of each command (the median is reported).")
    parser.add_argument("--command", action="append", help="A command to time instead of the defaults; repeatable.")
    parser.add_argument("--json", action="store_true", help="Print one JSON object.")
    parser.add_argument("--repo", type=Path, default=REPO, help="The checkout whose command line is timed.")
    args = parser.parse_args(argv)
    repo = args.repo.resolve()

    with tempfile.TemporaryDirectory() as tmp:
        results = []
        for command in args.command or COMMANDS:
            seconds = time_command(command, args.runs, tmp, repo)
            label = command.split(" --")[0] if "{tmp}" in command else command  # without the temporary directory
            results.append({"command": label, "median_s": statistics.median(seconds), "max_s": max(seconds),
                            "runs": seconds})
    report = {
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "python": platform.python_version(),
                    "load_1min": os.getloadavg()[0] if hasattr(os, "getloadavg") else None},
        "repo": str(repo),
        "import_osrs_rllib_cli_s": import_seconds(repo),
        "commands": results,
    }
    if args.json:
        print(json.dumps(report))
        return 0
    m = report["machine"]
    load = "?" if m["load_1min"] is None else f"{m['load_1min']:.1f}"
    print(f"machine: {m['platform']}, {m['cpus']} CPUs, Python {m['python']}, 1-minute load {load}")
    print(f"import osrs_rllib.cli: {report['import_osrs_rllib_cli_s']:.3f} s")
    print(f"{'command':<45} {'median s':>9} {'max s':>7}  ({args.runs} runs)")
    for r in results:
        print(f"{'osrs-rllib ' + r['command']:<45} {r['median_s']:>9.2f} {r['max_s']:>7.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
