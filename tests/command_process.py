"""A command of ours started the way a user's shell starts it, in a session of its own, its output collected.

The stop and start-up tests signal such a command at chosen moments and read what it printed while it runs;
its own session lets a test kill everything it started without touching the test runner.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


class CommandProcess:
    """``python -m osrs_rllib.cli ARGS`` in its own session; `output` is everything it printed so far."""

    def __init__(self, args: list[str], env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "osrs_rllib.cli", *args], cwd=REPO,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
                                     env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})})
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for raw in iter(self.proc.stdout.readline, b""):
            self.lines.append(raw.decode(errors="replace"))

    @property
    def output(self) -> str:
        return "".join(self.lines)

    def join_reader(self, timeout_s: float = 10.0) -> None:
        """Wait until the output of an exited command is read to its end."""
        self._reader.join(timeout_s)
