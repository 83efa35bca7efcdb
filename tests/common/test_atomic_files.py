"""One atomic-write helper for every file the project writes: old or new content, never half, ordinary modes."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from common.atomic_files import (
    atomic_directory,
    atomic_path,
    copy_atomic,
    write_bytes_atomic,
    write_json_atomic,
    write_text_atomic,
)


@pytest.fixture
def umask_022() -> Iterator[None]:
    old = os.umask(0o022)
    yield
    os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_files_are_written_with_the_modes_of_any_other_output(tmp_path: Path, umask_022: None) -> None:
    """`mkstemp` creates 0600 files; output that holds no secret must be readable like `open()`'s would be."""
    plain = tmp_path / "plain.txt"
    plain.write_text("x")
    for path in (
        write_text_atomic(tmp_path / "a.txt", "a"),
        write_bytes_atomic(tmp_path / "b.bin", b"b"),
        write_json_atomic(tmp_path / "c.json", {"c": 1}),
        copy_atomic(plain, tmp_path / "d.txt"),
    ):
        assert _mode(path) == _mode(plain) == 0o644, path
    secret = write_text_atomic(tmp_path / "token", "s3cret", private=True)
    assert _mode(secret) == 0o600
    (tmp_path / "a.txt").chmod(0o640)
    assert _mode(write_text_atomic(tmp_path / "a.txt", "replaced")) == 0o640  # a replaced file keeps its mode
    with atomic_directory(tmp_path / "dir") as d:
        (d / "f").write_text("f")
    assert _mode(tmp_path / "dir") == 0o755


def test_a_failed_write_keeps_the_old_content_and_leaves_no_temporary(tmp_path: Path) -> None:
    target = write_json_atomic(tmp_path / "state.json", {"v": 1})
    with pytest.raises(RuntimeError, match="crash"), atomic_path(target) as tmp:
        tmp.write_text('{"v": 2, "trunc')
        raise RuntimeError("crash mid-write")
    assert json.loads(target.read_text()) == {"v": 1}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state.json"]


def test_a_directory_replaces_the_old_one_whole_or_not_at_all(tmp_path: Path) -> None:
    final = tmp_path / "iter-000001"
    with atomic_directory(final) as d:
        (d / "a").write_text("1")
    with pytest.raises(RuntimeError), atomic_directory(final) as d:
        (d / "a").write_text("2")
        raise RuntimeError("crash")
    assert (final / "a").read_text() == "1"
    with atomic_directory(final) as d:
        (d / "b").write_text("2")
    assert sorted(p.name for p in final.iterdir()) == ["b"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["iter-000001"]


def test_json_is_sorted_and_text_uses_newlines(tmp_path: Path) -> None:
    path = write_json_atomic(tmp_path / "x.json", {"b": 1, "a": Path("/p")})
    assert path.read_text() == '{\n "a": "/p",\n "b": 1\n}'
    assert write_text_atomic(tmp_path / "y.txt", "1\n2\n").read_bytes() == b"1\n2\n"
