"""The JSON-lines protocol without sockets: what is accepted, and the message for each kind of bad request."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from envs.nh.contract import HEAD_SIZES, NUM_HEADS, OBS_SIZE
from serving.protocol import (
    REPLY_FIELDS,
    Command,
    ProtocolError,
    Request,
    encode_reply,
    mask_to_heads,
    parse_line,
)


def good(**changes: Any) -> dict[str, Any]:
    req: dict[str, Any] = {
        "model": "latest",
        "obs": [[0.5] * OBS_SIZE],
        "actionMasks": [[True] * size for size in HEAD_SIZES],
        "deterministic": True,
        "returnLogProb": False,
        "returnEntropy": False,
        "returnValue": False,
        "returnProbs": False,
        "extensions": [],
    }
    req.update(changes)
    return req


def line(obj: Any) -> bytes:
    return json.dumps(obj).encode() + b"\n"


def test_good_request_is_converted_to_arrays() -> None:
    masks = [[i % 2 == 0 for i in range(size)] for size in HEAD_SIZES]
    req = parse_line(line(good(obs=[[1.0] * OBS_SIZE, [2] * OBS_SIZE], actionMasks=masks, returnProbs=True)))
    assert isinstance(req, Request)
    assert req.obs.shape == (2, OBS_SIZE) and req.obs.dtype == np.float32
    assert req.obs[1, 0] == 2.0
    assert mask_to_heads(req.mask) == masks
    assert req.deterministic == (True,) * NUM_HEADS
    assert req.return_probs and not req.return_log_prob
    assert Request(**{f: getattr(req, f) for f in req.__slots__}).to_json()["actionMasks"] == masks


def test_optional_fields_default_and_accept_null() -> None:
    req = parse_line(line({"model": "m", "obs": [[0] * OBS_SIZE], "actionMasks": good()["actionMasks"],
                           "extensions": None, "returnValue": None}))
    assert isinstance(req, Request)
    assert req.deterministic == (False,) * NUM_HEADS and req.extensions == () and not req.return_value


def test_per_head_deterministic() -> None:
    flags = [i % 3 == 0 for i in range(NUM_HEADS)]
    req = parse_line(line(good(deterministic=flags)))
    assert isinstance(req, Request) and req.deterministic == tuple(flags)


def test_command() -> None:
    assert parse_line(b'{"command": "models"}\n') == Command("models")


NAN_LINE = json.dumps(good()).replace('"obs": [[0.5', '"obs": [[NaN').encode()
INF_LINE = json.dumps(good()).replace('"obs": [[0.5', '"obs": [[1e999').encode()


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (b"{not json", "malformed JSON"),
        (b"\xff\xfe", "malformed JSON"),
        (b"[1, 2]", "must be a JSON object"),
        (line(good(modle="x")), "unknown field 'modle'; did you mean 'model'"),
        (line({k: v for k, v in good().items() if k != "obs"}), "missing field 'obs'"),
        (line(good(model=3)), "field 'model' must be a string"),
        (line(good(model="../../etc/passwd")), "tries to leave the models directory"),
        (line(good(model="/abs/latest")), "tries to leave the models directory"),
        (line(good(model=".hidden")), "tries to leave the models directory"),
        (line(good(model="a b")), "not a served name"),
        (line(good(obs=[0.5] * OBS_SIZE)), "list of frames"),
        (line(good(obs=[])), "list of frames"),
        (line(good(obs=[[0.5] * (OBS_SIZE - 1)])), f"has {OBS_SIZE - 1} entries, expected {OBS_SIZE}"),
        (line(good(obs=[["x"] * OBS_SIZE])), "numbers only"),
        (line(good(obs=[[None] * OBS_SIZE])), "numbers only"),
        (line(good(obs=[[0.5] * OBS_SIZE] * 65)), "at most 64"),
        (NAN_LINE, "must be finite"),
        (INF_LINE, "must be finite"),
        (line(good(actionMasks=good()["actionMasks"][:-1])), f"list of {NUM_HEADS} lists"),
        (line(good(actionMasks=[[True] * 3 for _ in HEAD_SIZES])), "head 0 (ATTACK) must have 4 booleans"),
        (line(good(actionMasks=[[1] * s for s in HEAD_SIZES])), "expected booleans"),
        (line(good(actionMasks=[[False] * s for s in HEAD_SIZES])), "no legal value in any head"),
        (line(good(deterministic="yes")), "field 'deterministic'"),
        (line(good(deterministic=[True] * 3)), "a list of 3"),
        (line(good(returnLogProb=1)), "field 'returnLogProb' must be true or false"),
        (line(good(extensions="winrate")), "field 'extensions'"),
        (b'{"command": "reboot"}', "unknown command 'reboot'"),
        (b'{"command": "models", "model": "x"}', "only the field 'command'"),
    ],
)
def test_bad_requests_are_named(raw: bytes, expected: str) -> None:
    with pytest.raises(ProtocolError, match=None) as info:
        parse_line(raw)
    assert expected in str(info.value)


def test_a_single_empty_head_is_allowed() -> None:
    """The environment itself sends heads with no legal value (§14.2 forces value 0)."""
    masks = good()["actionMasks"]
    masks[-1] = [False] * HEAD_SIZES[-1]
    assert isinstance(parse_line(line(good(actionMasks=masks))), Request)


def test_reply_encoding_is_one_line_and_finite() -> None:
    reply = dict.fromkeys(REPLY_FIELDS)
    reply["action"] = [0] * NUM_HEADS
    reply["logProb"] = float("-inf")
    raw = encode_reply(reply)
    assert raw.endswith(b"\n") and raw.count(b"\n") == 1
    decoded = json.loads(raw)
    assert list(decoded) == list(REPLY_FIELDS) and decoded["logProb"] is None


HUGE = "7" * 5000
"""An integer literal beyond Python's integer-string limit (4,300 digits): `json.loads` itself raises."""


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (json.dumps(good()).replace('"obs": [[0.5', f'"obs": [[{HUGE}'), "field 'obs'"),
        (json.dumps(good()).replace('"obs": [[0.5', f'"obs": [[{HUGE}'), "an integer of 5000 digits"),
        (json.dumps(good()).replace('"obs": [[0.5', f'"obs": [[-{HUGE}'), "an integer of 5000 digits"),
        (json.dumps(good()).replace('"obs": [[0.5', '"obs": [[' + "9" * 40), "frame 0 entry 0 is an integer of 40"),
        (json.dumps(good()).replace('"obs": [[0.5', '"obs": [[1e39'), "within float32 range"),
        (json.dumps(good()).replace('"obs": [[0.5', '"obs": [[-Infinity'), "must be finite"),
        (json.dumps(good()).replace('"deterministic": true', f'"deterministic": {HUGE}'), "field 'deterministic'"),
        (json.dumps(good()).replace('"returnLogProb": false', f'"returnLogProb": {HUGE}'), "field 'returnLogProb'"),
        (json.dumps(good(model=0)).replace('"model": 0', f'"model": {HUGE}'), "field 'model'"),
        (json.dumps(good()).replace('[[true, true, true, true]', f'[[{HUGE}, true, true, true]', 1), "actionMasks"),
        (line(good(obs=[[[0.5]] * OBS_SIZE])), "frame 0 entry 0 is a list"),
    ],
)
def test_malformed_numbers_are_named_by_field(raw: str, expected: str) -> None:
    with pytest.raises(ProtocolError) as info:
        parse_line(raw)
    assert expected in str(info.value)
    assert len(str(info.value)) < 400, "the message quotes the field, not the number"


def test_deterministic_as_a_list_of_one_applies_to_every_head() -> None:
    for flag in (True, False):
        req = parse_line(line(good(deterministic=[flag])))
        assert isinstance(req, Request) and req.deterministic == (flag,) * NUM_HEADS
