"""`tools/league_study.py`: its table, its rows per model, and a fresh machine continuing from what landed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def test_league_study_table_states_greedy_and_sampling_exploitability() -> None:
    """The bar is on the better of the two modes, so the study's table shows both where the run recorded both."""
    from tools.league_study import report

    def pct(p: float) -> dict[str, float]:
        return {"win_rate": p, "win_rate_low": p - 0.02, "win_rate_high": p + 0.02}

    finals = {"final_deterministic": {**pct(0.927), "fights": 600}, "final_stochastic": {**pct(0.867), "fights": 600}}
    ex = {**pct(0.927), "mode": "deterministic", "env_steps": 4_005_888, "steps_to_pass_half": 1_228_800, **finals}
    old = {**pct(0.9), "mode": "deterministic", "env_steps": 4_000_000, "steps_to_pass_half": None}
    sampled = {
        **pct(0.915),
        "mode": "deterministic",
        "env_steps": 4_005_888,
        "steps_to_pass_half": 1_232_896,
        "final_deterministic": {**pct(0.915), "fights": 600},
        "final_stochastic": {**pct(0.823), "fights": 600},
    }
    table = report({"recipes": {"mix": {"env_steps": 20_004_864, "exploitability": ex,
                                        "exploitability_model_sampling": sampled},
                                "pfsp": {"env_steps": 1, "exploitability": old}}, "head_to_head": {}})  # fmt: skip
    mix, pfsp = (line for line in table.splitlines() if line.startswith(("| mix", "| pfsp")))
    assert "| 92.7% [90.7%, 94.7%] / 86.7% [84.7%, 88.7%] | 91.5% [89.5%, 93.5%] / 82.3% [80.3%, 84.3%] |" in mix
    assert mix.endswith("| 1,228,800 / 1,232,896 |")
    assert "| 90.0% [88.0%, 92.0%] | – | never / – |" in pfsp


def test_league_study_rows_hold_one_models_figures_and_references_join_the_table(tmp_path: Path) -> None:
    """A retrained recipe must not keep the exploit figures of its old weights; a reference (a model the study
    did not train) gets its own row after the recipes."""
    from tools.league_study import entry_for, exploited_sha, parse_references, report

    row = {"win_rate": 0.9, "win_rate_low": 0.88, "win_rate_high": 0.92}
    results = {"recipes": {"mix": {"tensor_sha256": "old", "expert": row, "exploitability": row}}, "head_to_head": {}}
    assert entry_for(results, "mix", "old")["exploitability"] == row  # same weights: kept
    assert entry_for(results, "mix", "new") == {"tensor_sha256": "new"}  # retrained: dropped
    assert results["recipes"]["mix"] == {"tensor_sha256": "new"}
    assert exploited_sha({"model": {"tensor_sha256": "abc"}}) == "abc" and exploited_sha({}) is None

    model = tmp_path / "old-mix.nhmodel"
    model.write_bytes(b"")
    assert parse_references([f"mix-1cf6cfb={model}"]) == {"mix-1cf6cfb": model}
    for bad, why in [
        ("mix-1cf6cfb", "expected NAME=MODEL"),
        (f"mix={model}", "recipe's"),
        (f"mix-x={tmp_path / 'none.nhmodel'}", "no model file"),
    ]:
        with pytest.raises(ValueError, match=why):
            parse_references([bad])
    with pytest.raises(ValueError, match="taken"):
        parse_references([f"a={model}", f"a={model}"])

    results["recipes"]["mix-1cf6cfb"] = {"env_steps": 5, "expert": {**row, "by_build": {"MED": 0.9}}}
    results["recipes"]["mix"] |= {"env_steps": 5, "expert": {**row, "by_build": {"MED": 0.8}}}
    results["head_to_head"]["mix|mix-1cf6cfb"] = {"win_rate": 0.55, "losses": 40, "fights": 100}
    lines = report(results).splitlines()
    rows = [line.split(" |")[0] for line in lines if line.startswith("| mix")]
    assert rows == ["| mix", "| mix-1cf6cfb", "| mix", "| mix-1cf6cfb"]  # the table, then the head to head
    assert "| mix-1cf6cfb | 40.0% | – |" in lines


def test_league_study_continues_on_a_fresh_machine_from_what_landed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A fresh machine has no experiments: a recipe whose model and figures landed in results/study is
    neither trained nor exploited again, and plays from its landed file; a run trained here wins over it."""
    import shutil

    from tools import league_study

    landed, experiments = tmp_path / "landed", tmp_path / "experiments"
    landed.mkdir()
    model = landed / "pfsp.nhmodel"
    shutil.copy(REPO / "models" / "nh-main.nhmodel", model)
    from policies.model_file import load_model_file

    sha = load_model_file(model).meta["tensor_sha256"]
    ex = {"win_rate": 0.7, "win_rate_low": 0.66, "win_rate_high": 0.74, "tensor_sha256": sha}
    figures = {"recipes": {"pfsp": {"tensor_sha256": sha, "exploitability": ex, "exploitability_model_sampling": ex}},
               "head_to_head": {}}  # fmt: skip
    (landed / "league-study.json").write_text(json.dumps(figures))

    def no_run(*args: str) -> int:
        raise AssertionError(f"ran osrs-rllib {args}")

    monkeypatch.setattr(league_study, "_osrs", no_run)
    assert league_study.model_path(experiments, "pfsp", landed) == model
    assert league_study.load_results(tmp_path / "out.json", landed) == figures
    league_study.train(["pfsp"], 20_000_000, experiments, landed)
    league_study.exploit(["pfsp"], experiments, tmp_path / "out.json", 4_000_000, landed=landed)
    assert capsys.readouterr().out.count("already") == 3
    assert league_study.model_path(experiments, "mix", landed) == experiments / "study-mix/models/latest.nhmodel"
    trained_here = experiments / "study-pfsp" / "models" / "latest.nhmodel"
    trained_here.parent.mkdir(parents=True)
    trained_here.write_bytes(model.read_bytes())
    assert league_study.model_path(experiments, "pfsp", landed) == trained_here
    assert league_study.model_path(experiments, "pfsp", None) == trained_here
