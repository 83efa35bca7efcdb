"""``osrs-rllib play`` run as a user runs it: it prints its URL, serves the page, and picks its default opponent
(the shipped models in ``models/``, else the expert rung, saying so)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from typer.testing import CliRunner

from osrs_rllib.cli import app
from osrs_rllib.play.launch import PlayError, PlaySettings, open_play
from osrs_rllib.play.opponents import FALLBACK_OPPONENT, OpponentError, default_opponents, resolve_opponents

STARTUP_S = 120.0


def _start(cwd: Path, *args: str) -> tuple[subprocess.Popen[str], list[str], str]:
    """Run the command; returns it, the lines it printed up to its URL, and the URL."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "osrs_rllib.cli", "play", "--port", "0", "--data-dir", str(cwd / "data"), *args],
        cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
    )  # fmt: skip
    assert proc.stdout is not None
    lines: list[str] = []
    deadline = time.monotonic() + STARTUP_S
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line.rstrip())
        if line.startswith("play at "):
            return proc, lines, line.split()[2]
    proc.kill()
    raise AssertionError(f"no URL printed: {lines}")


def _stop(proc: subprocess.Popen[str]) -> None:
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def test_the_command_serves_and_falls_back_to_the_expert(tmp_path: Path) -> None:
    proc, lines, url = _start(tmp_path)
    try:
        assert url.startswith("http://127.0.0.1:")
        assert any("models/" in line and repr(FALLBACK_OPPONENT) in line for line in lines), lines  # says so
        with urllib.request.urlopen(url + "api/state", timeout=30) as r:
            state = json.load(r)
        assert [o["name"] for o in state["opponents"]] == [FALLBACK_OPPONENT]
        assert state["defaults"]["pace"] == 600
        with urllib.request.urlopen(url, timeout=30) as r:
            assert b"/assets/play.js" in r.read()
    finally:
        _stop(proc)
    assert proc.returncode is not None


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_stops_play_cleanly(tmp_path: Path, sig: signal.Signals) -> None:
    """A service manager's SIGTERM and a terminal's Ctrl-C both end the command normally: exit 0, the page no
    longer served; uvicorn's habit of re-raising the signal after its shutdown used to make SIGTERM end the process
    with status 143. (The time-out only guards against a hang; how fast a stop is belongs to the stop tests.)"""
    proc, _, url = _start(tmp_path)
    try:
        proc.send_signal(sig)
        out, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, out
    assert "Traceback" not in out
    with socket.socket() as s:
        assert s.connect_ex(("127.0.0.1", urllib.parse.urlsplit(url).port or 0)) != 0


def test_the_shipped_models_are_the_default(tmp_path: Path, tiny_model: Path) -> None:
    (tmp_path / "models").mkdir()
    shutil.copy(tiny_model, tmp_path / "models" / "main.nhmodel")
    found, note = default_opponents(tmp_path / "models")
    assert [(o.name, o.kind) for o in found] == [("main", "model")] and note is None
    assert resolve_opponents([], models_dir=tmp_path / "models") == found
    _, note = default_opponents(tmp_path / "nothing")
    assert note is not None and repr(FALLBACK_OPPONENT) in note


def test_names_resolve_like_the_other_commands(tmp_path: Path, tiny_model: Path) -> None:
    (tmp_path / "models").mkdir()
    shutil.copy(tiny_model, tmp_path / "models" / "main.nhmodel")
    exp = tmp_path / "experiments" / "run1" / "models"
    exp.mkdir(parents=True)
    shutil.copy(tiny_model, exp / "best.nhmodel")
    found = resolve_opponents(
        ["models/main", "run1", str(tiny_model), "novice", "baseline"],
        experiments_dir=tmp_path / "experiments", models_dir=tmp_path / "models",
    )  # fmt: skip
    assert [(o.name, o.kind) for o in found] == [
        ("main", "model"), ("run1/best", "model"), ("tiny", "model"), ("novice", "ladder"), ("baseline", "baseline")
    ]  # fmt: skip
    with pytest.raises(OpponentError, match="unknown opponent 'nobody'"):
        resolve_opponents(["nobody"], models_dir=tmp_path / "models")


def test_a_bad_opponent_is_one_error_line() -> None:
    runner = CliRunner()
    done = runner.invoke(app, ["play", "nobody", "--port", "0"])
    assert done.exit_code == 2
    assert "'nobody'" in done.output  # names the opponent
    done = runner.invoke(app, ["play", "expert", "--build", "GIANT"])
    assert done.exit_code == 2 and "GIANT" in done.output


def test_open_play_checks_everything_before_the_page_opens(tmp_path: Path, tiny_model: Path) -> None:
    """The command's one library call: opponents resolved, options checked against each, the port bound; a bad
    input is a `PlayError` and nothing is served."""
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}  # open_play catches them
    try:
        server, started = open_play(
            PlaySettings(opponents=(str(tiny_model), "novice"), port=0, data_dir=tmp_path / "d", seed=3)
        )
        server.sock.close()
        assert [(o.name, o.kind) for o in started.opponents] == [("tiny", "model"), ("novice", "ladder")]
        assert started.url == server.url and started.data_dir == tmp_path / "d" and started.note is None
        assert server.state.config.seed == 3 and server.state.config.opponents == list(started.opponents)
        server, fallback = open_play(PlaySettings(port=0, data_dir=tmp_path / "d", models_dir=str(tmp_path / "no")))
        server.sock.close()
        assert [o.name for o in fallback.opponents] == [FALLBACK_OPPONENT] and fallback.note is not None
        bad = [
            PlaySettings(opponents=("nobody",), port=0),
            PlaySettings(opponents=("expert",), build="GIANT", port=0),
            PlaySettings(opponents=("expert",), options={"max_episode_tickz": 5}, port=0),
            PlaySettings(opponents=("expert",), engine="gpu", port=0),
        ]
        for settings, named in zip(bad, ("'nobody'", "GIANT", "max_episode_tickz", "gpu"), strict=True):
            with pytest.raises(PlayError) as raised:
                open_play(settings)
            assert named in str(raised.value)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
