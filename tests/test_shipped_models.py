"""The model files shipped in `models/`: each loads, matches its card, and fights.

A fresh clone must be able to fight, serve and analyse an agent without training one, so every file in
`models/` needs a card in `docs/models.md` (written by `tools/model_card.py`) whose checksum is the file's,
and each must play a short fight through the same doors a user takes: `osrs-rllib fight` and the analysis API.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from osrs_rllib.cli import app
from policies.model_file import load_model_file

REPO = Path(__file__).resolve().parents[1]
MODELS = sorted((REPO / "models").glob("*.nhmodel"))
CARDS = REPO / "docs" / "models.md"
CARD_RE = re.compile(r"^### `(?P<name>[^`]+\.nhmodel)`\n(?P<body>.*?)(?=^### |\Z)", re.M | re.S)
SHA_RE = re.compile(r"^\| sha256 \| `(?P<sha>[0-9a-f]{64})` \|$", re.M)
MAX_BYTES = 4 * 1024 * 1024
"""A shipped model stays small (today's nh.yml network is about 1.6 MB): the repository carries every version."""


def cards() -> dict[str, str]:
    """Card body by model file name."""
    return {m["name"]: m["body"] for m in CARD_RE.finditer(CARDS.read_text())}


def test_models_are_shipped_and_every_one_has_a_card() -> None:
    assert MODELS, "models/ holds no *.nhmodel: a fresh clone could not fight an agent without training one"
    assert sorted(cards()) == sorted(p.name for p in MODELS), "docs/models.md must have one card per models/ file"


@pytest.mark.parametrize("path", MODELS, ids=[p.name for p in MODELS])
def test_shipped_model_matches_its_card_and_loads(path: Path) -> None:
    card = cards()[path.name]
    (sha,) = SHA_RE.findall(card)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == sha, f"{path.name} changed: re-run tools/model_card.py"
    assert path.stat().st_size <= MAX_BYTES
    model = load_model_file(path)  # checks the format and the contract version
    trained = model.metadata
    assert trained.get("config", {}).get("env", {}).get("params"), "a shipped model records its training rules"
    assert f"{trained['env_steps']:,} env steps" in card and f"`{model.meta['tensor_sha256']}`" in card


@pytest.mark.parametrize("path", MODELS, ids=[p.name for p in MODELS])
def test_shipped_model_fights_through_the_cli(path: Path) -> None:
    """`osrs-rllib fight models/<name>.nhmodel expert` works on a fresh clone (short: 6 fights, one per build)."""
    rel = path.relative_to(REPO)
    result = CliRunner().invoke(app, ["fight", str(rel), "expert", "--n", "6", "--build", "all", "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert out["wins"] + out["losses"] + out["ties"] == 6


@pytest.mark.parametrize("path", MODELS, ids=[p.name for p in MODELS])
def test_shipped_model_fights_in_the_analysis_api(path: Path) -> None:
    """The notebook door: `load_policy` and `play` on the shipped file, one fight per trained build."""
    from osrs_rllib.analysis import load_policy, play

    policy = load_policy(str(path))
    builds = ["LMS_PURE", "LMS_ZERKER", "LMS_MED", "PURE", "ZERKER", "MED"]
    rows = play(policy, "baseline", fights=6, build=builds)
    assert len(rows) == 6 and set(rows["winner"]) <= {"a", "b", "tie"} and set(rows["build"]) == set(builds)
