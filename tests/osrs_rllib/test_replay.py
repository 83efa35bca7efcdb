"""Fight replays: recording, the file format, exact replay from the seed, and the win-probability path.

The first bar of the issue is `test_every_build_and_fight_type_replays_exactly`: fights of every build and
fight type, with the simulator's baseline in seat 1 and with an acting seat 1, re-run from their files.
"""

from __future__ import annotations

import gzip
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

from envs.nh.contract import CRITIC_SIZE, OBS_SIZE
from envs.nh.loadouts import Build
from envs.nh.params import FightParams
from envs.nh.state import FightMode
from osrs_rllib import analysis
from osrs_rllib.cli import app
from osrs_rllib.evaluation.fight import run_fights
from osrs_rllib.replay import REPLAY_FORMAT, ReplayError, load_replay, render_html, verify, write_replay
from osrs_rllib.replay.format import params_from_options, params_to_options
from policies.model_file import load_model_file, save_model_file
from policies.network import NHPolicyNetwork
from policies.network_config import NetworkConfig

REPO = Path(__file__).resolve().parents[2]
BUILDS = [b.value for b in Build]
FIGHT_TYPES = [m.value for m in FightMode]
SHORT = 120
"""max_episode_ticks of fights that only need to be long enough to exercise the mechanics."""


# ---- models made for the test ------------------------------------------------------------------------
class WinrateNetwork(NHPolicyNetwork):
    """A policy network carrying a trivial but real ``winrate`` extension: a logistic function of the
    observation's first entries (the outcome model has the same signature)."""

    @torch.jit.export
    def extension_winrate(self, obs: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(2.0 * obs[:, 0] - 1.5 * obs[:, 1] + 0.1)


def _save(tmp: Path, name: str, cls: type[NHPolicyNetwork], extensions: list[str]) -> Path:
    torch.manual_seed(3)
    net = cls(OBS_SIZE, CRITIC_SIZE, NetworkConfig(actor_hidden=(32,), critic_hidden=(16,)))
    # `extensions` in the free metadata: read by serving's `model_extensions` and by the recorder alike
    return save_model_file(net, tmp / name, metadata={"extensions": extensions} if extensions else None)


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("replay-models")
    return {
        "winrate": _save(tmp, "winrate.nhmodel", WinrateNetwork, ["winrate"]),
        "plain": _save(tmp, "plain.nhmodel", NHPolicyNetwork, []),
    }


def _tamper(src: Path, dst: Path, edit: callable) -> Path:  # type: ignore[valid-type]
    lines = [json.loads(line) for line in gzip.decompress(src.read_bytes()).decode().splitlines()]
    edit(lines)
    dst.write_bytes(gzip.compress("\n".join(json.dumps(x) for x in lines).encode()))
    return dst


# ---- exact replay --------------------------------------------------------------------------------------
def test_every_build_and_fight_type_replays_exactly(tmp_path: Path) -> None:
    """Bar 1: for every build × fight type, a fight against the in-simulator baseline (seat 1 acts inside the
    simulator) and one between two acting scripted sides replay tick for tick from their files."""
    seen: set[tuple[str, str, str]] = set()
    for build in BUILDS:
        for fight_type in FIGHT_TYPES:
            options = {"account_build": build, "fight_type": fight_type, "max_episode_ticks": SHORT}
            for b in ("baseline", "prayer_switcher"):
                out = tmp_path / f"{build}-{fight_type}-{b}"
                run_fights("tribrid", b, n=1, seed=len(seen), options=options, record=out)
                (path,) = sorted(out.glob("*.nhreplay"))
                rep = load_replay(path)
                assert (rep.header["build"], rep.header["fight_type"]) == (build, fight_type)
                assert [p["kind"] for p in rep.players] == ["ladder", "baseline" if b == "baseline" else "ladder"]
                baseline_actions = [t["actions"][1] for t in rep.ticks[1:]]
                assert all(a is None for a in baseline_actions) == (b == "baseline")
                check = verify(path)
                assert check.ok, check.summary()
                assert check.ticks == len(rep.ticks) - 1 == rep.end["ticks"] > 0
                seen.add((build, fight_type, b))
    assert len(seen) == len(BUILDS) * len(FIGHT_TYPES) * 2


def test_randomised_fights_and_swapped_seats_replay_exactly(tmp_path: Path) -> None:
    """Gear randomisation, random spawns, a drawn fight type, and `baseline` as side A (seats swapped)."""
    options = {"randomize_gear": True, "training": True, "randomize_fight_type": True, "max_episode_ticks": SHORT}
    run_fights("stay_alive", "tribrid", n=2, seed=40, options=options, record=tmp_path / "rand")
    run_fights("baseline", "random", n=1, seed=7, options={"max_episode_ticks": 60}, record=tmp_path / "swap")
    run_fights("baseline", "baseline", n=1, seed=8, options={"max_episode_ticks": 30}, record=tmp_path / "bb")
    paths = sorted(tmp_path.glob("*/*.nhreplay"))
    assert len(paths) == 4
    for path in paths:
        check = verify(path)
        assert check.ok, check.summary()
    swapped = load_replay(tmp_path / "swap" / "fight-000000.nhreplay")
    assert [(p["side"], p["name"]) for p in swapped.players] == [("b", "random"), ("a", "baseline")]
    both = load_replay(tmp_path / "bb" / "fight-000000.nhreplay")
    assert both.end["truncated"] and all(t["actions"] == [None, None] for t in both.ticks)


def test_a_tampered_replay_is_detected(tmp_path: Path) -> None:
    run_fights("tribrid", "baseline", n=1, seed=2, record=tmp_path)
    path = tmp_path / "fight-000000.nhreplay"
    assert verify(path).ok

    def hp(lines: list[dict]) -> None:
        lines[11]["players"][1]["hp"] += 1  # line 0 is the header: line 11 is tick 10

    check = verify(_tamper(path, tmp_path / "hp.nhreplay", hp))
    assert not check.ok and check.ticks == 10
    assert check.problems[0].startswith("tick 10: players[1].hp: recorded")

    def action(lines: list[dict]) -> None:
        for line in lines[1:-1]:  # every tick: the agent eats nothing and never attacks
            if line["actions"][0] is not None:
                line["actions"][0] = [0] * len(line["actions"][0])

    check = verify(_tamper(path, tmp_path / "action.nhreplay", action))
    assert not check.ok

    def seed(lines: list[dict]) -> None:
        lines[0]["seed"] += 1

    check = verify(_tamper(path, tmp_path / "seed.nhreplay", seed))
    assert not check.ok and check.ticks == 0 and "rng" in "".join(check.problems)

    def end(lines: list[dict]) -> None:
        lines[-1]["winner"] = 1 - lines[-1]["winner"]

    check = verify(_tamper(path, tmp_path / "end.nhreplay", end))
    assert not check.ok and check.problems[0].startswith("end.winner")

    def garbage(lines: list[dict]) -> None:
        lines[3]["actions"][0] = [99] * 12

    with pytest.raises(ReplayError, match="tick 2: the recorded actions"):
        verify(_tamper(path, tmp_path / "garbage.nhreplay", garbage))

    def cut(lines: list[dict]) -> None:
        last = lines.pop()
        del lines[-5:]
        lines.append(last)

    check = verify(_tamper(path, tmp_path / "cut.nhreplay", cut))
    assert not check.ok and "goes on" in check.problems[0]


def test_bad_files_give_clear_errors(tmp_path: Path) -> None:
    run_fights("random", "baseline", n=1, seed=1, options={"max_episode_ticks": 20}, record=tmp_path)
    path = tmp_path / "fight-000000.nhreplay"
    raw = path.read_bytes()
    (tmp_path / "cut.nhreplay").write_bytes(raw[: len(raw) // 2])
    with pytest.raises(ReplayError, match="cannot decompress"):
        load_replay(tmp_path / "cut.nhreplay")
    with pytest.raises(ReplayError, match="no replay file"):
        load_replay(tmp_path / "missing.nhreplay")

    def version(lines: list[dict]) -> None:
        lines[0]["format"] = "osrs-rllib-replay/0"

    with pytest.raises(ReplayError, match="replay format 'osrs-rllib-replay/0'"):
        load_replay(_tamper(path, tmp_path / "v0.nhreplay", version))

    def order(lines: list[dict]) -> None:
        lines[3]["t"] = 7

    with pytest.raises(ReplayError, match="line 4: tick 7 where tick 2 was expected"):
        load_replay(_tamper(path, tmp_path / "order.nhreplay", order))


# ---- the format ----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "options",
    [
        {},
        {"randomize_build": True, "random_build_weights": [1, 2, 0], "randomize_gear": True, "fight_type": "LMS"},
        {"account_build": "LMS_ZERKER", "training": True, "death_match": False, "opponent": "agent", "agent": "x"},
    ],
)
def test_fight_params_round_trip_through_json(options: dict) -> None:
    params = FightParams.from_options(options)
    assert params_from_options(json.loads(json.dumps(params_to_options(params)))) == params


def test_file_layout_and_round_trip(tmp_path: Path) -> None:
    run_fights("tribrid", "baseline", n=1, seed=3, record=tmp_path)
    path = tmp_path / "fight-000000.nhreplay"
    lines = [json.loads(x) for x in gzip.decompress(path.read_bytes()).decode().splitlines()]
    assert [x["kind"] for x in (lines[0], lines[1], lines[-1])] == ["header", "tick", "end"]
    header = lines[0]
    assert header["format"] == REPLAY_FORMAT and header["seed"] == 3
    assert len(header["heads"]) == 12 and header["heads"][0]["id"] == "attack"
    tick = lines[5]
    assert set(tick) >= {"t", "players", "actions", "masks", "hits", "landed", "splats", "value", "win_prob", "rng"}
    p = tick["players"][0]
    for key in ("hp", "prayer", "overhead", "prayers", "gear", "equipment", "special_energy", "vengeance",
                "food_left", "karambwans_left", "doses", "x", "y"):  # fmt: skip
        assert key in p
    assert set(p["timers"]) >= {"freeze", "freeze_immunity"}
    assert len(tick["masks"][0]) == 45 and set(tick["masks"][0]) <= {"0", "1"} and tick["masks"][1] is None
    hits = [h for t in lines[1:-1] for h in t["hits"][0]]
    assert hits and {"style", "damage", "accurate", "prayer_right"} <= set(hits[0])
    assert {h["style"] for h in hits} <= {"melee", "ranged", "magic"}
    # every hitsplat a player took is its hp drop (no healing in between) or more
    rep = load_replay(path)
    write_replay(rep, tmp_path / "copy.nhreplay")
    again = load_replay(tmp_path / "copy.nhreplay")
    assert (again.header, again.ticks, again.end) == (rep.header, rep.ticks, rep.end)
    assert render_html(rep).count("<script") == 2  # the data and the code, both inline


def test_recorded_actions_are_legal_under_the_recorded_masks(tmp_path: Path) -> None:
    run_fights("random", "tribrid", n=1, seed=9, options={"max_episode_ticks": SHORT}, record=tmp_path)
    rep = load_replay(tmp_path / "fight-000000.nhreplay")
    offsets = np.cumsum([0] + [len(h["values"]) for h in rep.header["heads"]])[:-1]
    for tick in rep.ticks[1:]:
        for seat in (0, 1):
            mask = tick["masks"][seat]
            for h, value in enumerate(tick["actions"][seat]):
                assert mask[offsets[h] + value] == "1" or value == 0, (tick["t"], seat, h, value)


# ---- models: value and win probability ----------------------------------------------------------------
def test_analysis_play_records_value_and_win_probability(models: dict[str, Path], tmp_path: Path) -> None:
    fights, ticks = analysis.play(
        models["winrate"], "baseline", fights=2, seed=5, record=tmp_path, max_episode_ticks=60
    )
    module = load_model_file(models["winrate"]).module
    for k in range(2):
        rep = load_replay(tmp_path / f"fight-{k:06d}.nhreplay")
        assert verify(rep).ok
        a = ticks[(ticks.fight == k) & (ticks.player == "a")].reset_index(drop=True)
        assert [t["t"] for t in rep.ticks[1:]] == list(a.tick)
        assert rep.players[0]["extensions"] == ["winrate"] and rep.players[0]["kind"] == "model"
        assert rep.players[0]["file_sha256"] and rep.players[0]["tensor_sha256"]
        # the win probability is the model's extension on the observation the model acted on
        obs = torch.from_numpy(np.stack(a.obs))
        expected = module.extension_winrate(obs).numpy()
        got = np.array([t["win_prob"][0] for t in rep.ticks[1:]])
        assert np.allclose(got, expected, atol=1e-6) and ((0 < got) & (got < 1)).all()
        assert np.allclose([t["value"][0] for t in rep.ticks[1:]], a.value, atol=1e-6)
        assert np.allclose(a.win_prob, expected, atol=1e-6)
        assert all(t["win_prob"][1] is None and t["value"][1] is None for t in rep.ticks)
        acted = [list(map(int, x)) for x in a[list(analysis.ACTION_COLUMNS)].values]
        assert [t["actions"][0] for t in rep.ticks[1:]] == acted
        assert fights.ticks[k] == rep.end["ticks"]


def test_fight_command_records_models_on_both_seats(models: dict[str, Path], tmp_path: Path) -> None:
    """`osrs-rllib fight MODEL MODEL --record DIR` and `osrs-rllib replay --verify` as a user runs them: a
    model without the extension has a value but a null win probability; the one with it has both."""
    proc = subprocess.run(
        [sys.executable, "-m", "osrs_rllib.cli", "fight", str(models["winrate"]), str(models["plain"]),
         "--n", "2", "--set", "max_episode_ticks=40", "--record", str(tmp_path / "rec"), "--json"],
        cwd=REPO, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["n"] == 2
    path = tmp_path / "rec" / "fight-000001.nhreplay"
    rep = load_replay(path)
    assert [p["name"] for p in rep.players] == ["winrate.nhmodel", "plain.nhmodel"]
    body = rep.ticks[1:]
    assert all(isinstance(t["value"][0], float) and isinstance(t["value"][1], float) for t in body)
    assert all(0 < t["win_prob"][0] < 1 and t["win_prob"][1] is None for t in body)
    # the replay command in-process (the subprocess above is the user's path; this saves a torch import)
    verified = CliRunner().invoke(app, ["replay", str(path), "--verify"])
    assert verified.exit_code == 0, verified.output  # 1 when a tick differs (below)
    page = render_html(path)
    assert "winrate.nhmodel" in page
    # nothing to fetch: no http(s) URL besides the SVG namespace name (the browser test watches the network)
    assert not re.search(r"https?://(?!www\.w3\.org/2000/svg)", page)
    # its own (empty) icon: else a browser asks the server that serves the page for /favicon.ico, and `play`'s
    # replay link logs a 404 in the console (the play browser test fails on console errors)
    assert '<link rel="icon" href="data:,">' in page

    def hp(lines: list[dict]) -> None:
        lines[-2]["players"][0]["hp"] = 0

    bad = CliRunner().invoke(app, ["replay", str(_tamper(path, tmp_path / "bad.nhreplay", hp)), "--verify"])
    assert bad.exit_code == 1 and verify(tmp_path / "bad.nhreplay").problems  # and verify says where
    shown = CliRunner().invoke(app, ["replay", str(path), "-o", str(tmp_path / "page.html")])
    assert shown.exit_code == 0 and (tmp_path / "page.html").read_text().startswith("<!DOCTYPE html>")
    missing = CliRunner().invoke(app, ["replay", str(tmp_path / "none.nhreplay")])
    assert missing.exit_code == 2 and str(tmp_path / "none.nhreplay") in missing.output  # names the file


def test_analysis_play_and_the_fight_command_record_the_same_fights(tmp_path: Path) -> None:
    """`play(..., record=DIR)` (lockstep loop) and `osrs-rllib fight --record` (one fight at a time) seed
    every fight the same way, so their replays agree tick for tick."""
    analysis.play("tribrid", "prayer_switcher", fights=3, seed=21, record=tmp_path / "play", max_episode_ticks=80)
    run_fights("tribrid", "prayer_switcher", n=3, seed=21, options={"max_episode_ticks": 80}, record=tmp_path / "cmd")
    for k in range(3):
        a, b = (load_replay(tmp_path / d / f"fight-{k:06d}.nhreplay") for d in ("play", "cmd"))
        assert a.ticks == b.ticks and a.end == b.end and a.players == b.players
        assert a.header["params"] == b.header["params"] and a.seed == b.seed == 21 + k


def test_show_replay_is_an_iframe_with_the_whole_page(tmp_path: Path) -> None:
    run_fights("tribrid", "baseline", n=1, seed=4, options={"max_episode_ticks": 30}, record=tmp_path)
    shown = analysis.show_replay(tmp_path / "fight-000000.nhreplay")
    markup = shown._repr_html_()
    assert markup.startswith("<iframe") and "srcdoc=" in markup
    assert "&lt;script" in markup and "tribrid" in markup  # the page, escaped into the attribute
    with pytest.raises(ReplayError):
        analysis.show_replay(tmp_path / "nothing.nhreplay")


def test_show_replay_renders_in_a_notebook_run_by_nbclient(tmp_path: Path) -> None:
    """The inline viewer as a notebook shows it: executed by nbclient, the cell's output is text/html."""
    nbformat = pytest.importorskip("nbformat", reason="install the analysis extra: pip install -e '.[analysis]'")
    nbclient = pytest.importorskip("nbclient", reason="install the analysis extra: pip install -e '.[analysis]'")
    run_fights("tribrid", "baseline", n=1, seed=6, options={"max_episode_ticks": 40}, record=tmp_path)
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(
            f"from osrs_rllib import analysis\nanalysis.show_replay({str(tmp_path / 'fight-000000.nhreplay')!r})"
        )
    ]
    client = nbclient.NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": REPO}})
    client.execute()
    (output,) = nb.cells[0].outputs
    html = output["data"]["text/html"]
    assert html.startswith("<iframe srcdoc=") and "tribrid" in html and "replay-data" in html
