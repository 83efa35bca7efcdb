"""`osrs-rllib rate`: the round-robin tournament and its ratings table."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import torch

from envs.nh.contract import CRITIC_SIZE, OBS_SIZE
from envs.nh.params import FightParams
from osrs_rllib.evaluation.rate import resolve_players, save_table, tournament
from policies.model_file import save_model_file
from policies.network import NHPolicyNetwork
from policies.network_config import NetworkConfig

REPO = Path(__file__).resolve().parents[2]


def model(tmp_path: Path, name: str, seed: int) -> Path:
    torch.manual_seed(seed)
    path = tmp_path / f"{name}.nhmodel"
    save_model_file(
        NHPolicyNetwork(OBS_SIZE, CRITIC_SIZE, NetworkConfig(actor_hidden=(16,), critic_hidden=(16,))), path
    )
    return path


def test_round_robin_plays_every_pair_and_rates_everyone(tmp_path: Path) -> None:
    a = model(tmp_path, "a", 0)
    players = resolve_players([str(a), "tribrid", "noop", "baseline"], with_ladder=False)
    rows, games = tournament(players, fights=4, params=FightParams(max_episode_ticks=120), seed=3, parallel=3)
    assert len(games) == 6 * 4  # 4 players → 6 pairs
    assert {r.name for r in rows} == {"a", "tribrid", "noop", "baseline"}
    assert all(r.games == 12 for r in rows)
    by_name = {r.name: r for r in rows}
    assert by_name["tribrid"].mu > by_name["noop"].mu  # the ladder's order shows through
    assert all(r.ci95_low <= r.mu <= r.ci95_high for r in rows)
    again = tournament(players, fights=4, params=FightParams(max_episode_ticks=120), seed=3, parallel=2)[1]
    key = [(g.player_a, g.player_b, g.outcome.value) for g in games]
    assert sorted((g.player_a, g.player_b, g.outcome.value) for g in again) == sorted(key), "batching changed results"
    written = save_table(rows, games, tmp_path / "out")
    saved = json.loads(written[0].read_text())
    assert len(saved["ratings"]) == 4 and len(saved["games"]) == 24
    assert written[1].read_text().startswith("name,elo,mu,sigma")


def test_rate_cli_errors_are_one_line(tmp_path: Path) -> None:
    cli = [sys.executable, "-m", "osrs_rllib.cli", "rate"]
    bad = subprocess.run([*cli, "nobody"], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "unknown player 'nobody'" in bad.stderr and "Traceback" not in bad.stderr
    (tmp_path / "x.nhmodel").write_bytes(b"junk")
    broken = subprocess.run([*cli, str(tmp_path / "x.nhmodel")], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert broken.returncode == 2 and str(tmp_path / "x.nhmodel") in broken.stderr  # names the file
    assert "Traceback" not in broken.stderr


def test_tournament_spreads_builds_evenly_from_both_seats_and_scores_per_build(tmp_path: Path) -> None:
    players = resolve_players(["tribrid", "noop", "baseline"], with_ladder=False)
    params = FightParams.from_options(
        {"randomize_build": True, "random_build_options": ["PURE", "MED"], "max_episode_ticks": 60}
    )
    scores: dict[str, dict[str, list[float]]] = {}
    _rows, games = tournament(players, fights=8, params=params, seed=0, parallel=4, by_build=scores)
    assert len(games) == 3 * 8
    for name in ("tribrid", "noop", "baseline"):
        assert {b: cell[1] for b, cell in scores[name].items()} == {"PURE": 8.0, "MED": 8.0}  # 2 pairs × 4 each
    # Each build is played from both seats of a pair (tribrid vs noop: seats alternate).
    seats = {(g.player_a, g.player_b) for g in games if {g.player_a, g.player_b} == {"tribrid", "noop"}}
    assert seats == {("tribrid", "noop"), ("noop", "tribrid")}


def test_rate_cli_reports_the_score_per_build(tmp_path: Path) -> None:
    proc = subprocess.run(
        [
            sys.executable, "-m", "osrs_rllib.cli", "rate", "tribrid", "noop", "--no-ladder", "--fights", "4",
            "--build", "PURE,LMS_MED", "--set", "max_episode_ticks=60", "--out", str(tmp_path), "--json",
        ],
        cwd=REPO, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout.splitlines()[-1])
    assert {r["name"] for r in report["ratings"]} == {"tribrid", "noop"}
    by_build = report["by_build"]
    assert set(by_build) == {"tribrid", "noop"}
    for build in ("LMS_MED", "PURE"):  # 4 fights over 2 builds: 2 of each, and the two players' scores add up
        assert [by_build[p][build]["games"] for p in ("tribrid", "noop")] == [2, 2]
        assert by_build["tribrid"][build]["score"] + by_build["noop"][build]["score"] == 2
