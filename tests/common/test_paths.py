"""`common.paths.portable`: records name files relative to where the command ran, or as given outside it."""

from __future__ import annotations

from pathlib import Path

import pytest

from common.paths import portable


def test_a_path_under_the_base_is_relative_and_one_outside_it_is_kept(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "experiments" / "nh").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    assert portable(tmp_path / "experiments" / "nh" / "m.nhmodel") == "experiments/nh/m.nhmodel"
    assert portable("experiments/nh/m.nhmodel") == "experiments/nh/m.nhmodel"  # already relative
    assert portable("/elsewhere/m.nhmodel") == "/elsewhere/m.nhmodel"
    assert portable(tmp_path / "experiments" / "nh" / "x", base=tmp_path / "experiments") == "nh/x"
