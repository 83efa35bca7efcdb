"""The play page's fixed numbers, in a module that imports nothing.

Why apart from `session` and `server`: the `play` command's options show them as defaults and bounds, and the
command line loads every command's options to list them; importing the server for three numbers would cost
every `osrs-rllib` command the web server's and torch's import time.
"""

from __future__ import annotations

DEFAULT_PORT = 8600
"""The page's port unless ``--port`` says otherwise."""
MIN_TICK_MS = 20
"""Fastest pace accepted (tests and benchmarks run fast games; the game's own is 600 ms)."""
MAX_TICK_MS = 10_000
"""Slowest pace accepted; slower than that, use step mode."""
