"""The play server on real uvicorn and real sockets (127.0.0.1, port 0), spoken to as the page speaks.

Robustness: bad input from the page (an unknown action, a wrong head size, a flood of messages, a
message after the fight ended) gets an error message on the socket, never a crash, and never changes a finished
game. Also: whole games against a ladder rung, a model file in-process and the in-simulator baseline write
replays that ``osrs-rllib replay --verify`` accepts; a page that leaves mid-game ends only its own game.
"""

from __future__ import annotations

import hashlib
import json
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from osrs_rllib.cli import app
from osrs_rllib.play import PlayServer
from osrs_rllib.play.controls import enabled_controls
from osrs_rllib.replay import load_replay, verify
from tests.play.conftest import SHORT_TICKS, PageSocket


def _play_to_end(page: PageSocket, start: dict, choose: Callable[[dict], str | None] | None = None) -> dict:
    """Start a game and answer every tick with `choose(tick message)` (a control id or None); returns the end."""
    page.send({"type": "start", **start})
    while True:
        msg = page.until("start", "tick", "end", "error")
        if msg["type"] == "error":
            # a choice made on one tick can reach the server after the next one (50 ms ticks): refused, harmless
            assert msg["code"] in ("illegal", "game_over"), msg
            continue
        if msg["type"] == "end":
            return msg
        if choose is not None:
            cid = choose(msg)
            if cid is not None:
                page.send({"type": "control", "id": cid})


def _chooser(msg: dict) -> str | None:
    """A person who prays against melee, eats when it is allowed and otherwise switches between two styles."""
    legal = set(enabled_controls([c == "1" for c in msg["mask"]]))
    for cid in ("eat", "protect_melee", "ranged" if msg["tick"]["t"] % 4 else "ice"):
        if cid in legal and cid not in msg["pending"]:
            return cid
    return None


@pytest.mark.parametrize("opponent", ["expert", "model", "baseline"])
def test_a_whole_game_verifies(play_server: Callable[..., PlayServer], tiny_model: Path, opponent: str) -> None:
    name = str(tiny_model) if opponent == "model" else opponent
    server = play_server([name])
    page = PageSocket(server)
    end = _play_to_end(page, {"build": "MED"}, _chooser)
    summary = end["summary"]
    assert summary["ticks"] == SHORT_TICKS or summary["outcome"] in ("won", "lost")
    replay = server.state.replay_dir / summary["replay"]
    assert verify(replay).ok, verify(replay).summary()
    rep = load_replay(replay)
    assert rep.players[0]["kind"] == "human" and rep.players[1]["name"] == (tiny_model.stem if opponent == "model"
                                                                            else opponent)  # fmt: skip
    assert summary["damage_dealt"] == sum(sum(t["splats"][1]) for t in rep.ticks)
    assert end["replay_url"] == f"/replays/{replay.stem}"
    with urllib.request.urlopen(f"http://{server.host}:{server.port}{end['replay_url']}", timeout=30) as r:
        assert b"replay-data" in r.read()  # the replay viewer's page of the game
    row = next(r for r in end["scores"] if r["opponent"] == summary["opponent"])
    assert row["games"] == 1 and row["won"] + row["lost"] + row["tied"] == 1
    page.close()


def test_the_cli_verifies_a_played_game(play_server: Callable[..., PlayServer]) -> None:
    server = play_server(["novice"])
    page = PageSocket(server)
    page.send({"type": "start", "build": "PURE", "pace": "step"})
    page.until("start")
    while True:
        page.send({"type": "step"})  # step mode: one tick per request (one after the end is refused, skipped here)
        end = page.until("tick", "end")
        if end["type"] == "end":
            break
    path = server.state.replay_dir / end["summary"]["replay"]
    done = CliRunner().invoke(app, ["replay", str(path), "--verify"])  # the command, in this process
    assert done.exit_code == 0, done.output  # 1 if any tick differs
    check = verify(path)
    assert check.ok and check.ticks > 0
    page.close()


def test_bad_input_is_answered_and_changes_nothing(play_server: Callable[..., PlayServer]) -> None:
    server = play_server(["expert"], tick_ms=20)
    page = PageSocket(server)

    def answer(message: object) -> dict:
        page.send(message)
        return page.until("error", "choices", "pace")

    assert answer({"type": "control", "id": "eat"})["code"] == "no_game"
    assert answer({"type": "start", "opponent": "nobody"})["code"] == "unknown_opponent"
    assert answer({"type": "start", "build": "GIANT"})["code"] == "bad_option"
    assert answer({"type": "start", "pace": 5})["code"] == "bad_pace"
    page.send({"type": "start", "pace": "step", "build": "MED"})
    page.until("start")
    cases = {
        "unknown_type": {"type": "teleport"},
        "unknown_control": {"type": "control", "id": "teleport"},
        "bad_action": {"type": "action", "action": [0] * 11},  # the wrong number of heads
        "illegal": {"type": "action", "action": [0] * 12},  # no attack while the attack is ready (§14.3)
        "bad_json": "{not json",
        "too_large": json.dumps({"type": "control", "id": "x" * 10_000}),
        "game_running": {"type": "start"},
        "bad_pace": {"type": "pace", "pace": "fast"},
    }
    for code, message in cases.items():
        reply = answer(message)
        assert reply["type"] == "error" and reply["code"] == code, (code, reply)
        assert reply["message"]
    bad_head = {"type": "action", "action": [1, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 1]}  # head 3 has 4 values
    reply = answer(bad_head)
    assert reply["code"] == "bad_action" and "head 3 (mage_attack_type)" in reply["message"]
    page.ws.send_binary(b"\x00\x01")
    assert page.until("error")["code"] == "bad_message"
    # none of it changed the game: no tick ran (step mode), the choices are still empty
    assert answer({"type": "clear"})["pending"] == []

    # a flood: far more messages than the page may send; the excess is dropped with an error, nothing breaks
    for _ in range(400):
        page.send({"type": "clear"})
    flood = page.until("error")
    assert flood["code"] == "flood"
    page.close()

    # the server still serves: a new page plays the game to its end, then every message after it is refused
    page = PageSocket(server)
    page.send({"type": "start", "pace": 20, "build": "MED"})
    end = page.until("end")
    replay = server.state.replay_dir / end["summary"]["replay"]
    digest = hashlib.sha256(replay.read_bytes()).hexdigest()
    scores = json.dumps(server.state.scores.to_json())
    for message in ({"type": "control", "id": "eat"}, {"type": "action", "action": [1, 0, 0, 1] + [0] * 8},
                    {"type": "step"}, {"type": "pace", "pace": 600}, {"type": "clear"}):  # fmt: skip
        reply = answer(message)
        assert reply["code"] == "game_over", reply
    assert hashlib.sha256(replay.read_bytes()).hexdigest() == digest
    assert json.dumps(server.state.scores.to_json()) == scores
    assert verify(replay).ok
    page.close()


def test_leaving_mid_game_ends_only_that_game(play_server: Callable[..., PlayServer]) -> None:
    server = play_server(["expert"], tick_ms=200)
    page = PageSocket(server)
    page.send({"type": "start"})
    page.until("tick")
    page.close()  # the tab closes mid-fight
    other = PageSocket(server)  # the next page connects, the server is up
    assert other.hello["opponents"][0]["name"] == "expert"
    other.send({"type": "start", "pace": 20})
    end = other.until("end")
    assert verify(server.state.replay_dir / end["summary"]["replay"]).ok
    row = end["scores"][0]
    assert (row["games"], row["abandoned"]) == (1, 1)
    assert len(list(server.state.replay_dir.glob("*.nhreplay"))) == 1  # the abandoned game left no replay
    other.close()


def test_the_page_and_its_assets_come_from_the_server_alone(play_server: Callable[..., PlayServer]) -> None:
    server = play_server(["expert"])
    base = f"http://{server.host}:{server.port}"
    with urllib.request.urlopen(base + "/", timeout=30) as r:
        page = r.read().decode()
        assert "default-src 'self'" in r.headers["Content-Security-Policy"]
    assert "http://" not in page and "https://" not in page
    for asset in ("play.js", "play.css", "fightview.js", "viewer.css"):
        assert f"/assets/{asset}" in page
        with urllib.request.urlopen(f"{base}/assets/{asset}", timeout=30) as r:
            assert r.status == 200 and len(r.read()) > 500
    for missing in ("/assets/secret.txt", "/replays/..%2fscores", "/replays/nothing-here"):
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(base + missing, timeout=30)
        assert err.value.code == 404
    with urllib.request.urlopen(base + "/api/state", timeout=30) as r:
        state = json.load(r)
    assert [c["id"] for c in state["controls"]][:3] == ["protect_magic", "protect_missiles", "protect_melee"]
