"""Background processes of the CLI: starting an ``osrs-rllib`` command detached, and telling whether a pid lives.

Training, exploit and serve all detach the same way (``--detach``), and each later asks whether its process is
still alive; both jobs live here once, below every package that needs them.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

DETACH_FLAG = "--detach"


def start_cli_detached(command: str, argv: Sequence[str], log_path: Path) -> int:
    """Run ``osrs-rllib COMMAND ARGV`` (``--detach`` dropped) in a new session, output appended to `log_path`;
    returns its pid. A new session, so that the terminal's Ctrl-C and hang-up do not reach it."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    log = open(log_path, "ab")
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "osrs_rllib.cli", command, *[a for a in argv if a != DETACH_FLAG]],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
    finally:
        log.close()
    return proc.pid


def pid_alive(pid: int | None) -> bool:
    """Whether process `pid` runs. A zombie (exited, not yet reaped) still answers signal 0, so on Linux
    ``/proc`` has the last word."""
    if not pid:
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    with contextlib.suppress(OSError, IndexError):
        if Path(f"/proc/{int(pid)}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
            return False
    return True
