"""Paths written into records that travel (exploit reports, ``ship.json``, and the copies of them kept in
``results/``): relative to the directory the command ran in, so that a clone reads them against its own checkout
rather than against the machine that wrote them."""

from __future__ import annotations

import os
from pathlib import Path


def portable(path: str | os.PathLike[str], base: str | os.PathLike[str] | None = None) -> str:
    """`path` relative to `base` (the working directory by default) when it lies under it, else as it is."""
    p = Path(path)
    root = Path(base) if base is not None else Path.cwd()
    if not p.is_absolute():
        return p.as_posix()
    try:
        return p.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(p)
