"""Writing files so that a reader, or the next run after a crash, sees the old content or the new, never half.

Every file the project writes that someone may read while it is being written (model files, checkpoints,
status and run records, league snapshots, replays, the contract) goes through here, so they all share one
durability rule: write a temporary sibling, flush it to disk, `os.replace` it over the target, then flush the
directory entry. A new file's permissions follow the process umask like any other output (``0o666 & ~umask``:
a temporary file from `tempfile.mkstemp` would otherwise stay ``0600``); a replaced file keeps the mode it had,
as an editor's save would; pass ``private=True`` for files that hold secrets.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

PUBLIC_MODE = 0o666
"""Mode of ordinary output files before the umask, as `open(path, "w")` would create them."""
PRIVATE_MODE = 0o600
"""Mode of files that hold secrets (tokens): readable by their owner only, whatever the umask."""


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _fsync_dir(directory: Path) -> None:
    """Make the rename itself durable (POSIX); a no-op where directories cannot be opened (Windows)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _mode_for(path: Path) -> int:
    try:
        return path.stat().st_mode & 0o777
    except FileNotFoundError:
        return PUBLIC_MODE & ~_umask()


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str], *, private: bool = False) -> Iterator[Path]:
    """Yield a temporary sibling of `path` to write (by name, for writers that want a path such as
    `torch.jit.save`); when the block succeeds it replaces `path`, when it raises it is removed."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        os.chmod(tmp, PRIVATE_MODE if private else _mode_for(path))
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)


def write_bytes_atomic(path: str | os.PathLike[str], data: bytes, *, private: bool = False) -> Path:
    with atomic_path(path, private=private) as tmp:
        tmp.write_bytes(data)
    return Path(path)


def write_text_atomic(path: str | os.PathLike[str], text: str, *, private: bool = False) -> Path:
    """UTF-8 with ``\\n`` line ends on every platform, so written files compare equal across machines."""
    with atomic_path(path, private=private) as tmp, open(tmp, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)
    return Path(path)


def write_json_atomic(path: str | os.PathLike[str], data: Any, *, indent: int | None = 1) -> Path:
    """Sorted keys, so that rewriting unchanged data gives an identical file; unknown types as `str`."""
    return write_text_atomic(path, json.dumps(data, indent=indent, sort_keys=True, default=str))


def copy_atomic(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> Path:
    with atomic_path(dst) as tmp:
        shutil.copyfile(src, tmp)
    return Path(dst)


@contextlib.contextmanager
def atomic_directory(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary sibling directory to fill; on success it takes `path`'s place (an existing `path` is
    moved aside first and removed after, so a reader never sees a mix of the two)."""
    final = Path(path)
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{final.name}.", dir=final.parent))
    try:
        yield tmp
        os.chmod(tmp, 0o777 & ~_umask())
        if final.exists():
            old = final.with_name(f".{final.name}.old-{os.getpid()}")
            os.replace(final, old)
            os.replace(tmp, final)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    _fsync_dir(final.parent)
