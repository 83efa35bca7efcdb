"""A command leaves nothing running: when ``train``, ``exploit``, ``ship`` (whose probe trains exploiters), ``bc`` or
``serve`` exits, every process it started (its Ray's raylet, GCS, dashboard and runtime-env agents, workers) is gone
within 2 s. Each runs as a user runs it, in a subprocess; its process tree is sampled while it runs (every process
below it: a command that starts Ray is its agents' subreaper, `serving.ray_start.adopt_orphans`), and the machine's
process list is compared before and after."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest
import yaml

from common.processes import descendants, still_running
from serving.runtime import free_port

REPO = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-m", "osrs_rllib.cli"]
LINGER_S = 2.0
"""How long after its exit a command's processes may still be seen (the bar)."""

pytestmark = pytest.mark.integration


def _machine() -> set[tuple[int, float]]:
    out = set()
    for p in psutil.process_iter(["create_time"]):
        out.add((p.pid, float(p.info["create_time"] or 0.0)))
    return out


class Watched:
    """A command run in a subprocess, its descendants sampled every 50 ms while it runs."""

    def __init__(self, args: list[str]) -> None:
        self.before = _machine()
        self.proc = subprocess.Popen([*CLI, *args], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True)  # fmt: skip
        self.seen: dict[int, int] = {}
        self._sampler = threading.Thread(target=self._sample, daemon=True)
        self._sampler.start()

    def _sample(self) -> None:
        while self.proc.poll() is None:
            self.seen.update(descendants(self.proc.pid))
            time.sleep(0.05)

    def finish(self, timeout: float = 600.0) -> str:
        out, _ = self.proc.communicate(timeout=timeout)
        self._sampler.join()
        return out

    def left(self) -> list[str]:
        """What the command started that still runs `LINGER_S` after its exit: its sampled descendants, and any
        process new to the machine whose command line is Ray's."""
        time.sleep(LINGER_S)
        left = [f"{pid} (a descendant)" for pid in still_running(self.seen)]
        for p in psutil.process_iter(["cmdline", "create_time"]):
            if (p.pid, float(p.info["create_time"] or 0.0)) in self.before:
                continue
            cmdline = " ".join(p.info["cmdline"] or [])
            if "ray" in cmdline and (str(self.proc.pid) in cmdline or "/ray/" in cmdline or "ray::" in cmdline):
                left.append(f"{p.pid} {cmdline[:100]}")
        return left


def run_and_check(args: list[str]) -> str:
    watched = Watched(args)
    out = watched.finish()
    assert watched.proc.returncode == 0, out[-3000:]
    assert watched.seen, "the command started no process at all: nothing was watched"
    left = watched.left()
    assert not left, f"{args[0]} left behind: {left}"
    return out


def test_train_exploit_and_ship_leave_nothing(tmp_path: Path) -> None:
    smoke = str(REPO / "configs" / "smoke.yml")
    config = tmp_path / "run.yml"
    probe = {"finalists": 1, "env_steps": 512, "seeds": [0], "model_modes": ["deterministic"], "final_fights": 1,
             "config": smoke, "overrides": ["evaluation.fights=1"]}  # fmt: skip
    config.write_text(yaml.safe_dump({
        "extends": smoke, "experiments_dir": str(tmp_path / "exp"), "checkpoint": {"interval": 1, "keep_last": 2},
        "evaluation": {"interval": 0}, "stop": {"iterations": 2},
        "ship": {"candidates": 1, "rung": {"opponent": "baseline", "fights": 1, "modes": ["deterministic"]},
                 "exploit": probe},
    }))  # fmt: skip
    run_and_check(["train", str(config), "--set", "checkpoint.keep_best=false"])
    model = tmp_path / "exp" / "run" / "models" / "latest.nhmodel"
    run_and_check(["exploit", str(model), "--config", smoke, "--env-steps", "512", "--final-fights", "1",
                   "--set", f"experiments_dir={tmp_path / 'exploits'}"])  # fmt: skip
    run_and_check(["ship", str(tmp_path / "exp" / "run"), "--name", "m", "--out", str(tmp_path / "models")])
    assert (tmp_path / "models" / "m.nhmodel").is_file()


def test_bc_leaves_nothing(tmp_path: Path) -> None:
    replays = tmp_path / "replays"
    rules = [a for key in ("only_switch_prayer_when_about_to_attack", "only_switch_gear_when_attack_soon",
                           "allow_smite", "allow_redemption") for a in ("--set", f"{key}=false")]  # the config's
    subprocess.run([*CLI, "fight", "expert", "veteran", "--n", "2", "--build", "PURE", "--record", str(replays),
                    *rules], cwd=REPO, check=True, capture_output=True, timeout=300)  # fmt: skip
    watched = Watched(["bc", str(replays), "-o", str(tmp_path / "clone.nhmodel"), "--config", "configs/smoke.yml",
                       "--epochs", "1"])  # fmt: skip
    out = watched.finish()
    assert watched.proc.returncode == 0, out[-3000:]
    assert not watched.left()


def test_serve_stopped_leaves_nothing(tmp_path: Path) -> None:
    from envs.nh.contract import NUM_LOGITS, OBS_SIZE
    from serving.client import build_request

    port = free_port()
    watched = Watched(["serve", str(REPO / "models"), "--port", str(port)])
    line = json.dumps(build_request("nh-main", [0.0] * OBS_SIZE, [True] * NUM_LOGITS)).encode() + b"\n"
    answered = False
    deadline = time.monotonic() + 300
    while not answered and time.monotonic() < deadline and watched.proc.poll() is None:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:
                conn.sendall(line)
                answered = b'"action"' in conn.makefile("rb").readline()
        except OSError:
            time.sleep(0.2)
    assert answered, "serve never answered"
    watched.proc.send_signal(signal.SIGTERM)
    out = watched.finish(timeout=120)
    assert watched.proc.returncode == 0, out[-3000:]
    assert not watched.left()
