"""`osrs-rllib fight` and `contract export` as a user runs them, plus the statistics behind them."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from osrs_rllib.evaluation.fight import FightSummary, plan_matchup, run_fights, side_names, wilson_interval

REPO = Path(__file__).resolve().parents[2]


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "osrs_rllib.cli", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


# ---- the real CLI ----------------------------------------------------------------------------------


def test_fight_json_output_is_one_consistent_object() -> None:
    proc = _cli("fight", "random", "baseline", "--n", "20", "--json")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)  # stdout holds the JSON object and nothing else
    assert summary["a"] == "random" and summary["b"] == "baseline"
    assert summary["n"] == 20 and summary["seed"] == 0
    assert summary["wins"] + summary["losses"] + summary["ties"] == 20
    assert 0 <= summary["truncations"] <= summary["ties"]
    assert summary["win_rate"] == pytest.approx(summary["wins"] / 20)
    lo, hi = summary["win_rate_ci95"]
    assert 0.0 <= lo <= summary["win_rate"] <= hi <= 1.0
    assert (lo, hi) == pytest.approx(wilson_interval(summary["wins"], 20))
    assert 0 < summary["median_ticks"] and 0 < summary["mean_ticks"]
    assert summary["mean_damage_dealt"] >= 0 and summary["mean_damage_received"] > 0


def test_fight_over_several_builds_spreads_them_and_reports_each() -> None:
    proc = _cli(
        "fight", "tribrid", "baseline", "--n", "18", "--build", "PURE,ZERKER,LMS_MED",
        "--set", "randomize_fight_type=true", "--set", "max_episode_ticks=80", "--json",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    # 18 = 3 builds × 3 fight types × 2: every build and every fight type 6 times
    assert {b: row["fights"] for b, row in summary["by_build"].items()} == {"PURE": 6, "ZERKER": 6, "LMS_MED": 6}
    assert {t: row["fights"] for t, row in summary["by_fight_type"].items()} == {"NORMAL": 6, "LMS": 6, "PVP_ARENA": 6}
    assert sum(row["wins"] for row in summary["by_build"].values()) == summary["wins"]
    table = _cli("fight", "tribrid", "baseline", "--n", "4", "--build", "all", "--set", "max_episode_ticks=40")
    assert table.returncode == 0, table.stderr
    assert "MAXED" in table.stdout  # a row per build played, the unseen one too


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("fight", "random", "bogus", "--n", "2"), r"'bogus'"),
        (("fight", "random", "baseline", "--n", "2", "--build", "FOO"), r"'FOO'"),
        (("fight", "random", "baseline", "--n", "2", "--set", "max_episode_tick=5"), r"\bmax_episode_tick\b"),
        (("fight", "random", "baseline", "--n", "2", "--set", "max_episode_ticks"), r"--set.*'max_episode_ticks'"),
    ],
)
def test_fight_bad_input_is_one_clear_line_without_traceback(args: tuple[str, ...], expected: str) -> None:
    proc = _cli(*args)
    assert proc.returncode != 0
    assert re.search(expected, proc.stderr), proc.stderr  # names what was wrong: the opponent, build, key or pair
    assert "Traceback" not in proc.stderr + proc.stdout
    assert proc.stdout == ""


def test_fight_unknown_opponent_lists_valid_names() -> None:
    proc = _cli("fight", "nobody", "baseline", "--n", "1", "--json")
    assert proc.returncode != 0
    for name in side_names():
        assert name in proc.stderr


def test_contract_export_writes_json(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "contract.json"
    proc = _cli("contract", "export", str(path))
    assert proc.returncode == 0, proc.stderr
    assert str(path) in proc.stdout
    contract = json.loads(path.read_text(encoding="utf-8"))
    assert {"version", "action", "observation"} <= contract.keys()
    to_stdout = _cli("contract", "export", "-")  # '-' is standard output, not a file named '-'
    assert to_stdout.returncode == 0 and json.loads(to_stdout.stdout) == contract
    assert not (REPO / "-").exists()


# ---- library ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("k", "n", "low", "high"),
    [
        # By hand, z = 1.96: centre = (p + z²/2n) / (1 + z²/n), half = z/(1 + z²/n) · √(p(1−p)/n + z²/4n²).
        # 8/10: centre = 0.99208 / 1.38416 = 0.716738, half = 1.96 · 0.160012 / 1.38416 = 0.226581.
        (8, 10, 0.490157, 0.943319),
        # 0/10: centre = half = 0.19208 / 1.38416 = 0.138771.
        (0, 10, 0.0, 0.277541),
        (10, 10, 0.722459, 1.0),
        # 50/100: centre = 0.5, half = 1.96 · √(0.0025 + 0.00009604) / 1.038416 = 0.096170.
        (50, 100, 0.403830, 0.596170),
    ],
)
def test_wilson_interval_matches_hand_computed_values(k: int, n: int, low: float, high: float) -> None:
    assert wilson_interval(k, n) == pytest.approx((low, high), abs=1e-5)


def test_wilson_interval_edge_cases() -> None:
    assert wilson_interval(0, 0) == (0.0, 1.0)
    lo, hi = wilson_interval(3, 7, z=2.576)  # wider at 99% than at 95%
    lo95, hi95 = wilson_interval(3, 7)
    assert lo < lo95 < 3 / 7 < hi95 < hi
    for k, n in ((-1, 5), (6, 5), (0, -1)):
        with pytest.raises(ValueError):
            wilson_interval(k, n)


def test_same_seed_same_summary() -> None:
    first = run_fights("random", "stay_alive", n=3, seed=7, options={"max_episode_ticks": 300})
    again = run_fights("random", "stay_alive", n=3, seed=7, options={"max_episode_ticks": 300})
    assert first == again
    assert isinstance(first, FightSummary)
    assert first.wins + first.losses + first.ties == 3


def test_progress_is_called_once_per_fight() -> None:
    seen: list[int] = []
    run_fights("noop", "baseline", n=3, seed=0, progress=seen.append)
    assert seen == [1, 2, 3]


def test_baseline_as_side_a_is_seated_as_player_one_and_mirrored() -> None:
    m = plan_matchup("baseline", "random")
    assert m.swapped and m.seats[0] is not None and m.seats[1] is None
    assert m.params.opponent == "baseline" and not m.params.first_player_baseline
    a_view = run_fights("baseline", "random", n=4, seed=3)
    b_view = run_fights("random", "baseline", n=4, seed=3)
    assert (a_view.wins, a_view.losses, a_view.ties) == (b_view.losses, b_view.wins, b_view.ties)
    assert a_view.mean_damage_dealt == b_view.mean_damage_received
    assert a_view.mean_ticks == b_view.mean_ticks


def test_two_baselines_share_the_simulator() -> None:
    m = plan_matchup("baseline", "baseline", {"max_episode_ticks": 50})
    assert m.params.first_player_baseline and m.params.opponent == "baseline"
    s = run_fights("baseline", "baseline", n=2, seed=0, options={"max_episode_ticks": 50})
    assert s.ties == s.truncations == 2  # two idle baselines never start fighting (§18.2)


@pytest.mark.parametrize("options", [{"opponent": "agent"}, {"first_player_baseline": True}, {"nope": 1}])
def test_options_decided_by_the_sides_or_unknown_are_rejected(options: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        plan_matchup("random", "baseline", options)


def test_bad_counts_are_rejected() -> None:
    with pytest.raises(ValueError, match="n must be"):
        run_fights("random", "baseline", n=0)
    with pytest.raises(ValueError, match="seed must be"):
        run_fights("random", "baseline", n=1, seed=-1)


def test_fight_with_a_model_file(tmp_path: Path) -> None:
    import torch

    from envs.nh.contract import CRITIC_SIZE, OBS_SIZE
    from osrs_rllib.evaluation.fight import run_fights
    from policies.model_file import save_model_file
    from policies.network import NHPolicyNetwork
    from policies.network_config import NetworkConfig

    torch.manual_seed(0)
    path = tmp_path / "untrained.nhmodel"
    network = NHPolicyNetwork(OBS_SIZE, CRITIC_SIZE, NetworkConfig(actor_hidden=(32,), critic_hidden=(32,)))
    save_model_file(network, path)
    summary = run_fights(str(path), "random", n=3, seed=0, options={"max_episode_ticks": 100})
    assert summary.wins + summary.losses + summary.ties == 3
    again = run_fights(str(path), "random", n=3, seed=0, options={"max_episode_ticks": 100})
    assert again == summary  # deterministic model, seeded opponent
    (tmp_path / "broken.nhmodel").write_bytes(b"nope")
    with pytest.raises(ValueError, match="cannot load model file"):
        run_fights(str(tmp_path / "broken.nhmodel"), "random", n=1)


def test_wilson_interval_always_contains_the_rate() -> None:
    """At 0 % and 100 % rounding put a bound a hair inside the rate (found by the notebook's error bars)."""
    for n in range(1, 1001):
        for k in (0, 1, n - 1, n):
            low, high = wilson_interval(k, n)
            assert 0.0 <= low <= k / n <= high <= 1.0, (k, n, low, high)


def test_fight_with_model_sampling_is_seeded_and_says_so() -> None:
    """``--model-sampling`` seats the model sampling its heads (the mode a sampling exploit run measures): the same
    seed gives the same fights, the summary records the mode, and asking it of two scripted sides is an error."""
    args = ("fight", "models/nh-main.nhmodel", "expert", "--n", "6", "--build", "all", "--json")
    sampled = [json.loads(_cli(*args, "--model-sampling").stdout) for _ in range(2)]
    assert sampled[0]["model_sampling"] is True and sampled[0] == sampled[1]
    assert sampled[0]["wins"] + sampled[0]["losses"] + sampled[0]["ties"] == 6
    greedy = json.loads(_cli(*args).stdout)
    assert greedy["model_sampling"] is False
    with pytest.raises(ValueError, match="neither side is a model file"):
        plan_matchup("random", "baseline", model_sampling=True)


def test_model_sampling_plays_other_fights_than_greedy(tmp_path: Path) -> None:
    """A sampling model is not its greedy self: an untrained network (nearly even heads) plays other fights."""
    import torch

    from envs.nh.contract import CRITIC_SIZE, OBS_SIZE
    from policies.model_file import save_model_file
    from policies.network import NHPolicyNetwork
    from policies.network_config import NetworkConfig

    torch.manual_seed(0)
    path = tmp_path / "untrained.nhmodel"
    network = NHPolicyNetwork(OBS_SIZE, CRITIC_SIZE, NetworkConfig(actor_hidden=(32,), critic_hidden=(32,)))
    save_model_file(network, path)
    options = {"max_episode_ticks": 100}
    greedy = run_fights(str(path), "random", n=4, seed=0, options=options)
    sampled = run_fights(str(path), "random", n=4, seed=0, options=options, model_sampling=True)
    assert sampled.model_sampling and not greedy.model_sampling
    assert (sampled.mean_ticks, sampled.mean_damage_dealt) != (greedy.mean_ticks, greedy.mean_damage_dealt)


def test_a_model_fights_on_one_torch_thread_and_the_count_is_restored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two intra-op threads collapse beside any busy process (`policies/torch_threads.py`): `fight` runs its
    forward passes on one, whatever the caller set, and gives the caller its setting back."""
    import torch

    from envs.nh.contract import CRITIC_SIZE, OBS_SIZE
    from policies.model_file import ModelFile, save_model_file
    from policies.network import NHPolicyNetwork
    from policies.network_config import NetworkConfig

    path = tmp_path / "m.nhmodel"
    network = NHPolicyNetwork(OBS_SIZE, CRITIC_SIZE, NetworkConfig(actor_hidden=(16,), critic_hidden=(16,)))
    save_model_file(network, path)
    seen: list[int] = []
    act = ModelFile.act

    def counting(self: ModelFile, *args: object, **kwargs: object) -> object:
        seen.append(torch.get_num_threads())
        return act(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(ModelFile, "act", counting)
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        run_fights(str(path), "random", n=2, seed=0, options={"max_episode_ticks": 50})
        assert seen and set(seen) == {1}
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)
