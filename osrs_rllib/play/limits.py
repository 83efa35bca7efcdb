"""The play page's fixed numbers and paths, in a module that imports only the standard library.

Why apart from `session` and `server`: the `play` command's options show them as defaults and bounds, and the
command line loads every command's options to list them; importing the server for three numbers would cost
every `osrs-rllib` command the web server's and torch's import time.
"""

from __future__ import annotations

from pathlib import Path

DEFAULT_DATA_DIR = Path("~/.osrs-rllib/play")
"""Where games are kept (``replays/``, ``scores.json``) unless ``--data-dir`` says otherwise."""
DEFAULT_PORT = 8600
"""The page's port unless ``--port`` says otherwise."""
MIN_TICK_MS = 20
"""Fastest pace accepted (tests and benchmarks run fast games; the game's own is 600 ms)."""
MAX_TICK_MS = 10_000
"""Slowest pace accepted; slower than that, use step mode."""
