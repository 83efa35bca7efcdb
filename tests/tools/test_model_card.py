"""`python -m tools.model_card`, run as the cards in docs/models.md are written: its rows, its exploit runs, its
refusals."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tools.model_card", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.mark.integration
def test_model_card_with_both_exploit_runs() -> None:
    """A card states each exploit run (the model greedy and sampling) and the model's figure, the lower one."""
    shipped = "results/nh-main"  # nh-main's exploit runs, as `osrs-rllib ship` ran them (seed 0 of each mode)
    runs = (f"{shipped}/exploit-greedy-seed0.json", f"{shipped}/exploit-sampling-seed0.json")
    proc = _run("models/nh-main.nhmodel", "--fights", "1", "--exploit", runs[0], "--exploit", runs[1]
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout
    assert "### `nh-main.nhmodel`" in out and "| expert |" in out
    reports = [json.loads((REPO / r).read_text())["exploitability"] for r in runs]
    for run, report in zip(runs, reports, strict=True):
        assert f"**{report['win_rate']:.1%}**" in out and f"(`{run}`)" in out
    # One run per mode: the model's figure is its lower run's, with that run's interval (the report's numbers, as the
    # card writes them).
    lowest = min(reports, key=lambda r: r["win_rate"])
    assert f"**{lowest['win_rate']:.1%} [{lowest['win_rate_low']:.1%}, {lowest['win_rate_high']:.1%}]**" in out


def test_model_card_takes_the_worst_run_of_the_better_mode_as_ship_does() -> None:
    """Two seeds per mode (as `ship` runs them): the model's figure is the worst run of its better mode, the figure
    `ship` wrote on the model's own card, not the luckiest of the four runs."""
    from tools.model_card import model_exploitability

    shipped = REPO / "results" / "nh-main"
    runs = [json.loads(f.read_text())["exploitability"] for f in sorted(shipped.glob("exploit-*-seed*.json"))]
    assert len(runs) == 4 and len({r["model_mode"] for r in runs}) == 2
    ship = json.loads((shipped / "ship.json").read_text())
    shipped_row = next(c for c in ship["candidates"] if c.get("exploitability"))
    figure = model_exploitability(runs)
    assert figure["win_rate"] == shipped_row["exploitability"]["win_rate"]  # ship's own figure
    assert figure["win_rate"] > min(r["win_rate"] for r in runs)  # here the luckiest run is lower: not that one


@pytest.mark.integration
def test_model_card_sampling_rows() -> None:
    """``--sampling`` plays the named opponents again with the model sampling: a second table, its own rows."""
    proc = _run("models/nh-main.nhmodel", "--fights", "2", "--sampling", "expert", "--json"
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    card = json.loads(proc.stdout)
    (row,) = card["sampling_win_rates"]
    assert row["opponent"] == "expert" and row["fights"] == 2 * len(row["builds"])  # the trained builds' fights
    # A progress line per row played: every greedy opponent, then expert again, sampling.
    names = {r["opponent"] for r in card["win_rates"]}
    progress = [line for line in proc.stderr.splitlines() if line.split(":")[0].strip() in names]
    assert len(progress) == len(card["win_rates"]) + 1 and f"{row['win_rate']:.1%}" in progress[-1]
    again = _run("models/nh-main.nhmodel", "--fights", "2", "--sampling", "expert", "--json"
    )
    assert json.loads(again.stdout)["sampling_win_rates"][0]["by_build"] == row["by_build"]  # seeded: it replays
    bad = _run("models/nh-main.nhmodel", "--sampling", "expertt")
    assert bad.returncode != 0 and "--sampling" in bad.stderr and "'expertt'" in bad.stderr  # the flag, the name


def test_model_card_refuses_an_exploit_run_of_other_weights() -> None:
    proc = _run(
        "models/nh-main.nhmodel",
        "--fights",
        "1",
        "--exploit",
        "results/exploit-nh-main-v1.json",
    )
    other = json.loads((REPO / "results/exploit-nh-main-v1.json").read_text())["model"]["tensor_sha256"]
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert "results/exploit-nh-main-v1.json" in proc.stderr and other in proc.stderr  # the run and the weights it had
