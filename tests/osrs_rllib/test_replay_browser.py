"""The replay viewer in a real headless browser (Debian's chromium), driven over the DevTools protocol.

The page renders with no console errors, a screenshot at a chosen tick shows both
players, and moving the slider changes the shown tick and the hitpoints. The page must also fetch nothing
from the network. The screenshot is saved under the test's tmp dir and copied to /tmp/replay_screenshot.png.

Chromium is started by the test on a free port (``--remote-debugging-port=0``; the port is read back from
``DevToolsActivePort``) with its own profile directory, and stopped at the end. Without chromium the test
is skipped, except under CI (``CI`` set), where a missing browser is a failure: `.ci/run` installs it.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from osrs_rllib.evaluation.fight import run_fights
from osrs_rllib.replay import load_replay, write_html
from tests.osrs_rllib.test_replay import WinrateNetwork, _save

REPO = Path(__file__).resolve().parents[2]
SCREENSHOT_COPY = Path("/tmp/replay_screenshot.png")
VIEWPORT = (1400, 1000)
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome")
STARTUP_TIMEOUT_S = 60.0
CALL_TIMEOUT_S = 60.0


def _chromium() -> str:
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    if os.environ.get("CI"):
        pytest.fail("chromium is not installed, but CI must run the browser test (.ci/run installs it)")
    pytest.skip("chromium is not installed (apt-get install -y chromium); CI runs this test")


class DevTools:
    """A minimal Chrome DevTools Protocol client over one page's websocket: commands and their events."""

    def __init__(self, ws_url: str) -> None:
        import websocket  # websocket-client

        self.ws = websocket.create_connection(ws_url, timeout=CALL_TIMEOUT_S, suppress_origin=True)
        self.next_id = 0
        self.events: list[dict[str, Any]] = []

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == self.next_id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            self.events.append(msg)

    def wait_for(self, event: str, timeout: float = CALL_TIMEOUT_S) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for e in self.events:
                if e.get("method") == event:
                    return e
            self.events.append(json.loads(self.ws.recv()))
        raise TimeoutError(f"no {event} within {timeout} s")

    def js(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression!r} threw: {result['exceptionDetails']}")
        return result["result"].get("value")

    def close(self) -> None:
        self.ws.close()


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[DevTools]:
    exe = _chromium()
    profile = tmp_path / "profile"
    proc = subprocess.Popen(
        [exe, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
         "--disable-extensions", "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0",
         f"--user-data-dir={profile}", f"--window-size={VIEWPORT[0]},{VIEWPORT[1]}", "about:blank"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while not (port_file.is_file() and port_file.read_text().strip()):
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"chromium did not start (exit code {proc.poll()})")
            time.sleep(0.1)
        port = int(port_file.read_text().split()[0])
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=CALL_TIMEOUT_S) as r:
            pages = [t for t in json.load(r) if t.get("type") == "page"]
        tools = DevTools(pages[0]["webSocketDebuggerUrl"])
        try:
            yield tools
        finally:
            tools.close()
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_viewer_renders_and_follows_the_slider(browser: DevTools, tmp_path: Path) -> None:
    run_fights("tribrid", "baseline", n=1, seed=3, record=tmp_path / "rec")
    replay_file = tmp_path / "rec" / "fight-000000.nhreplay"
    html = tmp_path / "fight.html"
    made = subprocess.run(
        [sys.executable, "-m", "osrs_rllib.cli", "replay", str(replay_file), "-o", str(html)],
        cwd=REPO, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    rep = load_replay(replay_file)
    n = len(rep.ticks) - 1
    hp = [[t["players"][i]["hp"] for t in rep.ticks] for i in (0, 1)]
    # a tick where both players are hurt (the screenshot's), and a later one where the hitpoints differ
    shot_tick = next(t for t in range(n + 1) if hp[0][t] < hp[0][0] and hp[1][t] < hp[1][0])
    at_shot = (hp[0][shot_tick], hp[1][shot_tick])
    moved_tick = next(t for t in range(shot_tick + 1, n + 1) if (hp[0][t], hp[1][t]) != at_shot)

    cdp = browser
    for domain in ("Page", "Runtime", "Log", "Network"):
        cdp.call(f"{domain}.enable")
    cdp.call("Emulation.setDeviceMetricsOverride", width=VIEWPORT[0], height=VIEWPORT[1], deviceScaleFactor=1,
             mobile=False)  # fmt: skip
    cdp.call("Page.navigate", url=html.as_uri())
    cdp.wait_for("Page.loadEventFired")
    assert cdp.js("document.body.dataset.ready") == "1"
    assert cdp.js("document.getElementById('tick-label').textContent") == f"tick 0 / {n}"

    def show(t: int) -> dict[str, Any]:
        cdp.js(f"(() => {{ const s = document.getElementById('slider'); s.value = {t}; "
               "s.dispatchEvent(new Event('input', {bubbles: true})); })()")  # fmt: skip
        return cdp.js(
            "(() => { const $ = (id) => document.getElementById(id);"
            " return {tick: $('tick-label').textContent, hp0: Number($('hp-0').dataset.hp),"
            " hp1: Number($('hp-1').dataset.hp), hpText0: $('hp-0').textContent, hpText1: $('hp-1').textContent,"
            " name0: $('name-0').textContent, name1: $('name-1').textContent,"
            " fill0: document.querySelector('#hp-0 .fill').style.width}; })()"
        )

    at = show(shot_tick)
    assert at["tick"] == f"tick {shot_tick} / {n}"
    assert (at["name0"], at["name1"]) == ("tribrid", "baseline")
    assert (at["hp0"], at["hp1"]) == (hp[0][shot_tick], hp[1][shot_tick])
    max_hp = rep.ticks[0]["players"][0]["max_hp"]
    assert f"{hp[0][shot_tick]} / {max_hp}" in at["hpText0"] and f"{hp[1][shot_tick]} / " in at["hpText1"]
    assert float(at["fill0"].rstrip("%")) == pytest.approx(100 * hp[0][shot_tick] / max_hp, abs=0.01)

    shot = cdp.call("Page.captureScreenshot", format="png")
    png = base64.b64decode(shot["data"])
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    assert (width, height) == VIEWPORT and len(png) > 50_000  # a drawn page, not a blank one
    (tmp_path / "replay.png").write_bytes(png)
    try:
        SCREENSHOT_COPY.write_bytes(png)
    except OSError:  # another user's copy: the one in tmp_path is the test's record
        pass

    moved = show(moved_tick)
    assert moved["tick"] == f"tick {moved_tick} / {n}" != at["tick"]
    assert (moved["hp0"], moved["hp1"]) == (hp[0][moved_tick], hp[1][moved_tick]) != (at["hp0"], at["hp1"])

    # the arrow keys step one tick, space plays
    cdp.call("Input.dispatchKeyEvent", type="keyDown", key="ArrowRight", code="ArrowRight", windowsVirtualKeyCode=39)
    assert cdp.js("document.getElementById('tick-label').textContent") == f"tick {moved_tick + 1} / {n}"
    cdp.call("Input.dispatchKeyEvent", type="keyDown", key="ArrowLeft", code="ArrowLeft", windowsVirtualKeyCode=37)
    cdp.call("Input.dispatchKeyEvent", type="keyDown", key="ArrowLeft", code="ArrowLeft", windowsVirtualKeyCode=37)
    assert cdp.js("document.getElementById('slider').value") == str(moved_tick - 1)
    cdp.js("document.getElementById('play').click()")
    deadline = time.monotonic() + 30  # playing advances the slider: wait for that, not for a fixed time
    while int(cdp.js("document.getElementById('slider').value")) <= moved_tick - 1:
        assert time.monotonic() < deadline, "play did not advance the replay"
        time.sleep(0.05)
    cdp.js("document.getElementById('play').click()")
    assert int(cdp.js("document.getElementById('slider').value")) > moved_tick - 1

    _assert_clean(cdp.events)


def _assert_clean(events: list[dict[str, Any]]) -> None:
    """No exception, console error or error log entry, and nothing fetched but the page itself."""
    errors = [
        e for e in events
        if e.get("method") == "Runtime.exceptionThrown"
        or (e.get("method") == "Runtime.consoleAPICalled" and e["params"].get("type") in ("error", "assert"))
        or (e.get("method") == "Log.entryAdded" and e["params"]["entry"].get("level") == "error")
    ]  # fmt: skip
    assert not errors, errors
    fetched = {e["params"]["request"]["url"] for e in events if e.get("method") == "Network.requestWillBeSent"}
    assert fetched and all(u.startswith(("file:", "data:")) for u in fetched), fetched


def test_viewer_shows_a_models_win_probability(browser: DevTools, tmp_path: Path) -> None:
    """A model with the `winrate` extension: the page shows its win probability per tick and draws the curve."""
    model = _save(tmp_path, "winrate.nhmodel", WinrateNetwork, ["winrate"])
    run_fights(str(model), "baseline", n=1, seed=2, options={"max_episode_ticks": 60}, record=tmp_path / "rec")
    replay_file = tmp_path / "rec" / "fight-000000.nhreplay"
    rep = load_replay(replay_file)
    html = write_html(rep, tmp_path / "model.html")
    cdp = browser
    for domain in ("Page", "Runtime", "Log", "Network"):
        cdp.call(f"{domain}.enable")
    cdp.call("Page.navigate", url=html.as_uri() + "#tick=20")
    cdp.wait_for("Page.loadEventFired")
    assert cdp.js("document.body.dataset.ready") == "1"
    assert cdp.js("document.getElementById('tick-label').textContent") == f"tick 20 / {len(rep.ticks) - 1}"
    # the state after tick 20 is what tick 21's action, value and win probability were computed on
    w = rep.ticks[21]["win_prob"][0]
    assert cdp.js("document.getElementById('wp-a-text').textContent") == f"{100 * w:.0f}%"
    assert cdp.js("document.querySelectorAll('#timeline polyline').length") == 3  # two hitpoint lines + P(win)
    assert "win probability of winrate.nhmodel" in cdp.js("document.getElementById('legend').textContent")
    shown = cdp.js("document.getElementById('action-0').textContent")
    assert f"value {rep.ticks[20]['value'][0]:.3f}" in shown
    assert f"win probability {100 * rep.ticks[20]['win_prob'][0]:.1f} %" in shown
    _assert_clean(cdp.events)
