"""Whole fights played through the play page in a real headless chromium (Debian's), over the DevTools protocol.

The page's contract: keys are pressed and buttons clicked on a schedule; at every tick the page's enabled
controls are exactly the legal ones for the mask the server sent (spec §14.3; checked against
`controls.enabled_controls`), clicking a disabled one sends nothing; the fight ends, its replay verifies, and the
page logged no console error and fetched nothing but this server's files. A second test closes the tab mid-fight
and the server serves the next game. Chromium comes from the replay viewer's browser test (`browser` fixture:
skipped without chromium, except under CI).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from osrs_rllib.play import PlayServer
from osrs_rllib.play.controls import CONTROLS, enabled_controls
from osrs_rllib.replay import verify
from tests.osrs_rllib.test_replay_browser import VIEWPORT, DevTools
from tests.play.conftest import SHORT_TICKS

WAIT_S = 30.0
KEYS: dict[str, dict[str, Any]] = {
    "Enter": {"key": "Enter", "code": "Enter", "windowsVirtualKeyCode": 13},
    "Escape": {"key": "Escape", "code": "Escape", "windowsVirtualKeyCode": 27},
}


def _wait(cdp: DevTools, expression: str, timeout: float = WAIT_S) -> Any:
    """Until `expression` is truthy in the page (one that throws, e.g. while a new page has no body yet, is false)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            value = cdp.js(expression)
        except RuntimeError:
            value = None
        if value:
            return value
        time.sleep(0.02)
    raise TimeoutError(f"{expression!r} never held")


def _press(cdp: DevTools, key: str) -> None:
    spec = KEYS.get(key, {"key": key, "text": key, "code": f"Key{key.upper()}" if key.isalpha() else f"Digit{key}"})
    cdp.call("Input.dispatchKeyEvent", type="keyDown", **spec)
    cdp.call("Input.dispatchKeyEvent", type="keyUp", **{k: v for k, v in spec.items() if k != "text"})


def _click(cdp: DevTools, selector: str) -> None:
    """A real mouse click in the middle of the element (a disabled button ignores it, as for a person)."""
    cdp.js(f"document.querySelector({json.dumps(selector)}).scrollIntoView({{block: 'center'}})")
    box = cdp.js(f"(() => {{ const r = document.querySelector({json.dumps(selector)}).getBoundingClientRect();"
                 " return [r.x + r.width / 2, r.y + r.height / 2]; })()")  # fmt: skip
    for kind in ("mousePressed", "mouseReleased"):
        cdp.call("Input.dispatchMouseEvent", type=kind, x=box[0], y=box[1], button="left", clickCount=1)


def _open(cdp: DevTools, server: PlayServer) -> None:
    for domain in ("Page", "Runtime", "Log", "Network"):
        cdp.call(f"{domain}.enable")
    cdp.call("Emulation.setDeviceMetricsOverride", width=VIEWPORT[0], height=VIEWPORT[1], deviceScaleFactor=1,
             mobile=False)  # fmt: skip
    cdp.call("Page.navigate", url=server.url)
    _wait(cdp, "document.body.dataset.state === 'idle'")


def _check_enabled(cdp: DevTools) -> set[str]:
    """The page enables exactly the legal controls of the mask it holds (none once the game is over); returns
    them. Read in one evaluation, so that a tick arriving meanwhile cannot split the mask from the buttons."""
    shown = cdp.js("(() => { const m = document.body.dataset.mask; const on = [];"
                   " document.querySelectorAll('button[data-control]').forEach((b) => { if (!b.disabled)"
                   " on.push(b.dataset.control); });"
                   " return {mask: m, on: on, playing: document.body.dataset.state === 'playing'}; })()")  # fmt: skip
    legal = set(enabled_controls([c == "1" for c in shown["mask"]])) if shown["playing"] else set()
    assert set(shown["on"]) == legal, (sorted(set(shown["on"]) ^ legal), shown["mask"])
    return legal


def _server_errors(cdp: DevTools) -> list[str]:
    """Errors the server answered the page with (the page logs them with console.info)."""
    return [
        json.dumps(e["params"]["args"])
        for e in cdp.events
        if e.get("method") == "Runtime.consoleAPICalled" and e["params"]["type"] == "info"
        and e["params"]["args"] and e["params"]["args"][0].get("value") == "server:"
    ]  # fmt: skip


SCHEDULE: dict[int, list[str]] = {
    0: ["key:e"],  # protect from melee
    2: ["click:protect_missiles"],
    3: ["key:3"],  # ranged
    5: ["key:c"],  # combo eat (what of it is legal)
    6: ["key:s"],  # special attack
    8: ["click:ice"],
    9: ["key:Escape"],  # clear the one-off choices
    10: ["key:a", "key:b"],  # eat, brew
    12: ["key:u", "key:4"],  # step under, melee
    14: ["key:q", "key:v"],  # protect from magic, vengeance
}
"""Tick → what the person does before stepping (keys by their default binding, buttons by control id)."""


def test_a_fight_played_through_the_page(browser: DevTools, play_server: Callable[..., PlayServer]) -> None:
    server = play_server(["expert"])
    cdp = browser
    _open(cdp, server)
    assert cdp.js("document.querySelectorAll('button[data-control]').length") == len(CONTROLS)

    # game 1, step mode: a tick per Enter, with the schedule's keys and clicks in between
    cdp.js("document.getElementById('pace').value = 'step'")
    cdp.js("document.getElementById('build').value = 'MED'")
    _click(cdp, "#start")
    _wait(cdp, "document.body.dataset.state === 'playing' && document.body.dataset.tick === '0'")
    tick = 0
    disabled_tried = 0
    while cdp.js("document.body.dataset.state") == "playing":
        legal = _check_enabled(cdp)
        off = sorted(set(CONTROLS) - legal)
        if off:  # a disabled button does nothing when clicked: the choices stay as they were
            before = cdp.js("document.body.dataset.next")
            _click(cdp, f"button[data-control='{off[tick % len(off)]}']")
            disabled_tried += 1
            time.sleep(0.05)
            assert cdp.js("document.body.dataset.next") == before
        for move in SCHEDULE.get(tick, []):
            kind, what = move.split(":")
            if kind == "key":
                _press(cdp, what)
            else:
                _click(cdp, f"button[data-control='{what}']")
        time.sleep(0.05)  # let the choices' answer arrive before the step
        _press(cdp, "Enter")
        _wait(cdp, f"document.body.dataset.tick !== '{tick}' || document.body.dataset.state !== 'playing'")
        tick = int(cdp.js("document.body.dataset.tick"))
    assert disabled_tried > 0
    _wait(cdp, "document.body.dataset.state === 'over' && !!document.body.dataset.replay")
    assert tick == SHORT_TICKS or cdp.js("document.body.dataset.outcome") in ("won", "lost")
    assert not _server_errors(cdp), _server_errors(cdp)  # the page never sent anything illegal
    replay_url = cdp.js("document.body.dataset.replay")
    assert cdp.js("document.getElementById('replay-link').getAttribute('href')") == replay_url
    assert not cdp.js("document.getElementById('result').hidden")
    replay = server.state.replay_dir / (replay_url.rsplit("/", 1)[-1] + ".nhreplay")
    check = verify(replay)
    assert check.ok, check.summary()

    # game 2, in real time (50 ms a tick): keys on a wall-clock schedule until the fight ends
    cdp.js("document.getElementById('pace').value = '900'")  # any clock pace; then the page's own 50 ms
    _click(cdp, "#start")
    _wait(cdp, "document.body.dataset.state === 'playing'")
    cdp.js("(() => { const s = document.getElementById('pace'); s.value = '50';"
           " s.dispatchEvent(new Event('change')); })()")  # fmt: skip
    keys = ["w", "3", "a", "e", "1", "c", "q", "4"]
    k = 0
    deadline = time.monotonic() + WAIT_S
    while cdp.js("document.body.dataset.state") == "playing" and time.monotonic() < deadline:
        _press(cdp, keys[k % len(keys)])
        k += 1
        time.sleep(0.03)
    _wait(cdp, "document.body.dataset.state === 'over' && !!document.body.dataset.outcome")
    second = cdp.js("document.body.dataset.replay")
    assert second != replay_url
    assert verify(server.state.replay_dir / (second.rsplit("/", 1)[-1] + ".nhreplay")).ok
    assert cdp.js("document.querySelector('#scores tbody td:nth-child(2)').textContent") == "2"
    assert "expert" in cdp.js("document.getElementById('scores').textContent")

    # the "watch the replay" link opens the replay viewer of the game
    cdp.call("Page.navigate", url=server.url.rstrip("/") + second)
    _wait(cdp, "document.body.dataset.ready === '1'")
    assert cdp.js("document.getElementById('name-0').textContent") == "you"
    _assert_no_errors(cdp.events)
    fetched = {e["params"]["request"]["url"] for e in cdp.events if e.get("method") == "Network.requestWillBeSent"}
    assert fetched and all(u.startswith(server.url) for u in fetched), fetched


def _assert_no_errors(events: list[dict[str, Any]]) -> None:
    errors = [
        e for e in events
        if e.get("method") == "Runtime.exceptionThrown"
        or (e.get("method") == "Runtime.consoleAPICalled" and e["params"].get("type") in ("error", "assert"))
        or (e.get("method") == "Log.entryAdded" and e["params"]["entry"].get("level") == "error")
    ]  # fmt: skip
    # name each error by its text and the resource it came from: a bare 404 does not say which request failed
    entries = [e["params"].get("entry", e["params"]) for e in errors]
    named = [(entry.get("text"), entry.get("url")) for entry in entries]
    assert not errors, named


def test_closing_the_tab_mid_fight_leaves_the_server_serving(
    browser: DevTools, play_server: Callable[..., PlayServer]
) -> None:
    server = play_server(["expert"], tick_ms=100)
    cdp = browser
    _open(cdp, server)
    _click(cdp, "#start")
    _wait(cdp, "Number(document.body.dataset.tick) >= 3")
    # open a second tab, then close the first one mid-fight
    target = cdp.call("Target.createTarget", url="about:blank")["targetId"]
    devtools_host, devtools_port = cdp.ws.sock.getpeername()[:2]
    cdp.call("Page.close")
    deadline = time.monotonic() + WAIT_S
    while any(not s.finished for s in server.state.sessions):
        assert time.monotonic() < deadline, "the abandoned game kept running"
        time.sleep(0.05)
    assert server.state.scores.to_json()[0]["abandoned"] == 1
    second = DevTools(f"ws://{devtools_host}:{devtools_port}/devtools/page/{target}")
    try:
        _open(second, server)
        _click(second, "#start")
        _wait(second, "document.body.dataset.state === 'over'", timeout=60)
        replay = second.js("document.body.dataset.replay")
        assert verify(server.state.replay_dir / (replay.rsplit("/", 1)[-1] + ".nhreplay")).ok
        assert second.js("document.querySelector('#scores tbody td:nth-child(5)').textContent") == "1"  # left: 1
        _assert_no_errors(second.events)
    finally:
        second.close()
