"""The time account of a run (`osrs_rllib.training.time_account`): every second of the wall time under one part.

The bar: the account's parts sum to the run's wall time (as ``run.json`` measures it) within 5 %, every part is
there, and TensorBoard holds each iteration's split. The runs are real (`osrs-rllib train` / ``exploit`` on the
smoke config, embedded Ray); the account's own arithmetic is checked on a hand-driven clock.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from osrs_rllib.training.time_account import NAMED_PARTS, PARTS, SAMPLING_SPLIT, TimeAccount, format_table

REPO = Path(__file__).resolve().parents[2]
CLI = (sys.executable, "-m", "osrs_rllib.cli")


class Clock:
    """A clock the test moves by hand: the account's arithmetic, exactly."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_nested_parts_count_each_second_once() -> None:
    clock = Clock()
    account = TimeAccount(clock)
    clock.now += 2.0  # start-up
    account.rest_to("startup")
    with account.part("checkpoint"):
        clock.now += 1.0
        with account.part("league"):  # e.g. a snapshot written inside a checkpoint
            clock.now += 3.0
            with account.part("logging"):
                clock.now += 0.5
        clock.now += 1.0
    clock.now += 0.25  # nobody's
    summary = account.summary()
    parts = summary["parts_s"]
    assert parts["startup"] == 2.0 and parts["checkpoint"] == 2.0 and parts["league"] == 3.0
    assert parts["logging"] == 0.5 and parts["other"] == pytest.approx(0.25)
    assert sum(parts.values()) == pytest.approx(summary["wall_s"]) == pytest.approx(7.75)
    assert list(parts) == list(PARTS)
    with pytest.raises(ValueError, match="unknown part 'evaluations'"):
        account.add("evaluations", 1.0)


def test_laps_split_each_iteration_and_sum_to_its_wall_time() -> None:
    clock = Clock()
    account = TimeAccount(clock)
    clock.now += 5.0
    account.rest_to("startup")
    account.lap()
    laps = []
    for evaluating in (False, True):
        account.add("sampling", 3.0)
        account.add("learning", 1.0)
        clock.now += 4.0
        if evaluating:
            with account.part("evaluation"):
                clock.now += 6.0
        clock.now += 0.1
        laps.append(account.end_iteration(None, len(laps) + 1))
    assert [lap["wall"] for lap in laps] == [pytest.approx(4.1), pytest.approx(10.1)]
    assert [lap["evaluation"] for lap in laps] == [0.0, 6.0]
    for lap in laps:
        assert sum(lap[p] for p in PARTS) == pytest.approx(lap["wall"])
        assert lap["other"] == pytest.approx(0.1) and lap["startup"] == 0.0
    summary = account.summary()
    assert summary["iterations"] == 2 and summary["loop_wall_s"] == pytest.approx(14.2)
    table = format_table(summary)
    assert "19.2" in table.splitlines()[0]  # the wall time heads the table
    assert table_rows(table) == {part: f"{summary['parts_s'].get(part, 0.0):.1f}" for part in PARTS}


def test_rllib_timers_keep_running_totals() -> None:
    """The account reads each RLlib timer's running total, not its windowed mean: pinned here so a Ray upgrade
    that drops it fails this test instead of silently moving algo.train() under ``rllib_other``."""
    from ray.util.timer import _Timer

    timer = _Timer(window_size=2)
    for _ in range(3):
        with timer:
            sum(range(10_000))
    assert isinstance(timer._total_time, float) and timer._total_time > 0
    assert len(timer._samples) == 2 and timer._total_time > sum(timer._samples)  # all three, not the window


def table_rows(text: str) -> dict[str, str]:
    """The time account's rows in printed text (a part's name, its seconds, its share): part -> seconds as printed."""
    rows = {}
    for cells in (line.split() for line in text.splitlines()):
        if len(cells) >= 3 and cells[0] in PARTS and cells[2].endswith("%"):
            rows[cells[0]] = cells[1]
    return rows


def check_account(exp_dir: Path, stdout: str, iterations: int, evaluated: list[int]) -> dict:
    """The bars on a finished run: ``run.json``'s account sums to its wall time within 5 %, every part is there
    (the named ones claim all but 5 % of it), the table was printed, and TensorBoard holds each iteration's split,
    with the evaluation's seconds in the iterations that evaluated."""
    from tensorboard.backend.event_processing.event_accumulator import SCALARS, EventAccumulator

    run = json.loads((exp_dir / "run.json").read_text())
    account = run["time_account"]
    parts = account["parts_s"]
    assert set(parts) == set(PARTS)  # run.json's keys are sorted
    wall = run["wall_seconds"]
    assert abs(sum(parts.values()) - wall) <= 0.05 * wall, (parts, wall)
    assert parts["other"] <= 0.05 * wall, parts
    for part in ("startup", "sampling", "learning", "evaluation", "checkpoint", "logging"):
        assert parts[part] > 0, part
    assert set(account["sampling_split_s"]) == set(SAMPLING_SPLIT)
    assert sum(account["sampling_split_s"].values()) == pytest.approx(parts["sampling"])
    assert account["iterations"] == iterations and account["env_steps"] > 0
    # the printed table holds each part's seconds as run.json records them
    assert table_rows(stdout) == {part: f"{parts[part]:.1f}" for part in PARTS}, stdout[-3000:]

    acc = EventAccumulator(str(exp_dir / "tensorboard"), size_guidance={SCALARS: 0})
    acc.Reload()
    tags = set(acc.Tags()["scalars"])
    steps = list(range(1, iterations + 1))
    for part in PARTS[1:]:  # start-up is no iteration's
        for tag in (f"time/{part}_s", f"time/{part}_share"):
            assert tag in tags and [e.step for e in acc.Scalars(tag)] == steps, tag
    walls = [e.value for e in acc.Scalars("time/wall_s")]
    sums = [sum(acc.Scalars(f"time/{part}_s")[i].value for part in PARTS[1:]) for i in range(iterations)]
    assert sums == pytest.approx(walls, rel=1e-4)
    assert [e.step for e in acc.Scalars("time/evaluation_s") if e.value > 0] == evaluated
    return account


@pytest.mark.integration
def test_a_training_run_accounts_for_its_wall_time(tmp_path: Path) -> None:
    """``train`` on the smoke config (3 iterations, an evaluation at iteration 2, a checkpoint each, the league)."""
    proc = subprocess.run([*CLI, "train", "configs/smoke.yml", "--set", f"experiments_dir={tmp_path}"], cwd=REPO,
                          capture_output=True, text=True, timeout=900, check=False)  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    account = check_account(tmp_path / "smoke", proc.stdout, 3, [2])
    assert account["env_steps"] == 3 * 512
    assert account["parts_s"]["league"] > 0  # the league's bookkeeping runs every iteration
    assert 0 < account["whole_run_env_steps_per_s"] <= account["between_evaluations_env_steps_per_s"]


@pytest.mark.integration
def test_an_exploit_run_accounts_for_its_wall_time(tmp_path: Path) -> None:
    """``exploit``: the same account, its final evaluation included (after the last iteration's lap)."""
    from envs.nh.contract import CRITIC_SIZE, OBS_SIZE
    from policies.model_file import save_model_file
    from policies.network import NHPolicyNetwork
    from policies.network_config import NetworkConfig

    torch.manual_seed(0)
    net = NHPolicyNetwork(OBS_SIZE, CRITIC_SIZE, NetworkConfig(actor_hidden=(16,), critic_hidden=(16,), head_hidden=8))
    model = save_model_file(net, tmp_path / "tiny.nhmodel", frame_stack=(0,), metadata={"experiment": "tiny"})
    proc = subprocess.run(
        [*CLI, "exploit", str(model), "--config", "configs/smoke.yml", "--env-steps", "1024", "--final-fights", "1",
         "--set", f"experiments_dir={tmp_path / 'exps'}", "--set", "evaluation.interval=2",
         "--set", "evaluation.fights=1"],
        cwd=REPO, capture_output=True, text=True, timeout=900, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    account = check_account(tmp_path / "exps" / "exploit-tiny", proc.stdout, 2, [2])
    assert account["parts_s"]["checkpoint"] > 0 and set(NAMED_PARTS) < set(account["parts_s"])
    # The final evaluation runs after the last iteration's lap: in the run's account, in no iteration's split.
    from tensorboard.backend.event_processing.event_accumulator import SCALARS, EventAccumulator

    acc = EventAccumulator(str(tmp_path / "exps" / "exploit-tiny" / "tensorboard"), size_guidance={SCALARS: 0})
    acc.Reload()
    in_laps = sum(e.value for e in acc.Scalars("time/evaluation_s"))
    assert account["parts_s"]["evaluation"] > in_laps + 0.01, (account["parts_s"], in_laps)
    report = json.loads((tmp_path / "exps" / "exploit-tiny" / "exploit.json").read_text())
    assert report["exploitability"] is not None  # it was played
