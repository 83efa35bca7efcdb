"""The one "did you mean" helper and the one strict YAML loader (`common/`), used by every layer."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import yaml

from common.suggest import closest, closest_names, did_you_mean
from common.yaml_loader import DuplicateKeyError, StrictLoader

ROOT = Path(__file__).resolve().parents[2]


def test_closest_and_the_hint_wording() -> None:
    assert closest("minibatch_sise", ["minibatch_size", "train_batch_size"]) == "minibatch_size"
    assert closest("zzz", ["minibatch_size"]) is None
    assert did_you_mean("tribird", ["tribrid", "baseline"]) == "; did you mean 'tribrid'?"
    assert did_you_mean("tribird", ["tribrid"], " (did you mean {!r}?)") == " (did you mean 'tribrid'?)"
    assert did_you_mean("zzz", ["tribrid"]) == ""
    assert closest_names("eval/win", ["eval/win_rate", "eval/win_rate_pure", "loss"], n=2) == [
        "eval/win_rate",
        "eval/win_rate_pure",
    ]


def test_no_other_module_calls_difflib() -> None:
    """One helper, so every layer words a typo the same way."""
    offenders = []
    for package in ("common", "envs", "policies", "league", "serving", "osrs_rllib", "benchmarks"):
        for path in (ROOT / package).rglob("*.py"):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
                if (isinstance(node, ast.ImportFrom) and node.module == "difflib") or "difflib" in names:
                    offenders.append(str(path.relative_to(ROOT)))
    assert offenders == ["common/suggest.py"]


def test_strict_loader_rejects_duplicate_keys_with_the_line() -> None:
    with pytest.raises(DuplicateKeyError) as info:
        yaml.load("ppo:\n  gamma: 0.9\n  gamma: 0.8\n", Loader=StrictLoader)
    assert info.value.key == "gamma" and info.value.key_node.start_mark.line == 2
    assert "line 3" in str(info.value) and "duplicate key 'gamma'" in str(info.value)


def test_strict_loader_reads_exponent_floats_and_stays_safe() -> None:
    assert yaml.load("lr: 1e-4\nn: 1_000\ns: '1e-4'\n", Loader=StrictLoader) == {
        "lr": 1e-4,
        "n": 1000,
        "s": "1e-4",
    }
    with pytest.raises(yaml.constructor.ConstructorError):
        yaml.load("!!python/object/apply:os.system ['true']", Loader=StrictLoader)
