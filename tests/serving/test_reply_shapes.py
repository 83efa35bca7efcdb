"""The old protocol's types, held to every reply shape and every kind of request they allow.

The system `osrs-rllib serve` replaces types its request and reply as Python dataclasses; its clients build
``Response(**json)`` and index the fields by their declared types (`serving.protocol.REQUEST_TYPES` and
`REPLY_TYPES` copy those annotations). A reply that is valid JSON but of another type (``extensionResults``
null, ``entropy`` a single number) breaks those clients, so each case here is checked field by field against
the table, in-process (`ModelRegistry.answer`, what a replica runs) and through the real server.
"""

from __future__ import annotations

import json
import types
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from envs.nh.contract import HEAD_SIZES, NUM_HEADS, OBS_SIZE
from policies.outcome import WINRATE
from serving.client import ServeClient
from serving.models import ModelRegistry
from serving.protocol import REPLY_FIELDS, REPLY_TYPES, REQUEST_FIELDS, REQUEST_TYPES, Request, parse_line
from tests.serving.conftest import Stack
from tests.serving.test_winrate import _winrate_model

pytestmark = pytest.mark.timeout(300)

_NAMES = {"list": list, "float": float, "int": int, "bool": bool, "str": str, "None": None}


def annotation(text: str) -> Any:
    """A type string of the tables as a typing object, so that unions and nested lists are checked as written."""
    return eval(text, {"__builtins__": {}}, _NAMES)  # the tables of serving.protocol, never input


def conforms(value: Any, tp: Any) -> bool:
    """Whether a decoded JSON value has type `tp`, as a typed client reads it (an int is a float, a bool is
    neither)."""
    if tp is None:
        return value is None
    if isinstance(tp, types.UnionType):
        return any(conforms(value, arg) for arg in tp.__args__)
    if isinstance(tp, types.GenericAlias):
        (item,) = tp.__args__
        return isinstance(value, list) and all(conforms(v, item) for v in value)
    if tp is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if tp is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, tp)


def test_the_tables_cover_the_fields_and_the_checker_reads_them() -> None:
    assert tuple(REPLY_TYPES) == REPLY_FIELDS and set(REQUEST_TYPES) == set(REQUEST_FIELDS)
    assert conforms([0.5, 1], annotation("list[float] | None")) and conforms(None, annotation("list[float] | None"))
    assert not conforms(0.5, annotation("list[float] | None")) and not conforms(None, annotation("list"))
    assert not conforms([True], annotation("list[int]")) and conforms([[0.1], []], annotation("list[list[float]]"))


def assert_old_reply(reply: dict[str, Any], case: str) -> None:
    assert "error" not in reply, f"{case}: {reply}"
    assert list(reply) == list(REPLY_FIELDS), f"{case}: keys {list(reply)}"
    for key, text in REPLY_TYPES.items():
        assert conforms(reply[key], annotation(text)), f"{case}: {key} = {reply[key]!r} is not {text}"
    assert len(reply["action"]) == NUM_HEADS
    if reply["entropy"] is not None:
        assert len(reply["entropy"]) == NUM_HEADS, f"{case}: one entropy per head"
    if reply["probs"] is not None:
        assert [len(p) for p in reply["probs"]] == list(HEAD_SIZES)


MASKS = [[True] * size for size in HEAD_SIZES]
OBS = [[0.25 * (i % 5) for i in range(OBS_SIZE)]]
FULL = {"returnLogProb": True, "returnEntropy": True, "returnValue": True, "returnProbs": True}

REPLY_CASES: list[tuple[str, dict[str, Any]]] = [
    ("minimal", {"model": "obsvalue", "obs": OBS, "actionMasks": MASKS}),
    ("full", {"model": "obsvalue", "obs": OBS, "actionMasks": MASKS, "deterministic": True, **FULL,
              "extensions": []}),
    ("full, sampled", {"model": "obsvalue", "obs": OBS, "actionMasks": MASKS, "deterministic": False, **FULL}),
    ("full, per head", {"model": "obsvalue", "obs": OBS, "actionMasks": MASKS,
                        "deterministic": [h % 2 == 0 for h in range(NUM_HEADS)], **FULL}),
    ("log-prob only", {"model": "latest", "obs": OBS, "actionMasks": MASKS, "returnLogProb": True}),
    ("entropy only", {"model": "latest", "obs": OBS, "actionMasks": MASKS, "returnEntropy": True}),
    ("scripted, minimal", {"model": "tribrid", "obs": OBS, "actionMasks": MASKS}),
    ("scripted, all false", {"model": "noop", "obs": OBS, "actionMasks": MASKS, "deterministic": False,
                             "returnLogProb": False, "returnEntropy": False, "returnValue": False,
                             "returnProbs": False, "extensions": []}),
    ("scripted, nulls", {"model": "expert", "obs": OBS, "actionMasks": MASKS, "extensions": None,
                         "returnLogProb": None}),
]


@pytest.fixture(scope="module")
def registry(models_dir: Path) -> ModelRegistry:
    return ModelRegistry(models_dir)


@pytest.mark.parametrize(("case", "request_json"), REPLY_CASES, ids=[c for c, _ in REPLY_CASES])
def test_every_reply_has_the_old_types(registry: ModelRegistry, case: str, request_json: dict[str, Any]) -> None:
    req = parse_line(json.dumps(request_json))
    assert isinstance(req, Request)
    (reply,) = registry.answer([req])
    assert_old_reply(json.loads(json.dumps(reply)), case)
    if not req.extensions:
        assert reply["extensionResults"] == [], "no extension asked: an empty list, never null"


def test_a_reply_with_an_extension_has_the_old_types(tmp_path: Path) -> None:
    models = tmp_path / "models"
    models.mkdir()
    _winrate_model(models / "single.nhmodel", tmp_path)
    reply = ModelRegistry(models, ladder=False).answer([parse_line(json.dumps(
        {"model": "single", "obs": OBS, "actionMasks": MASKS, "returnEntropy": True, "extensions": [WINRATE]}))])[0]
    assert_old_reply(reply, "extension")
    assert len(reply["extensionResults"]) == 1 and conforms(reply["extensionResults"][0], float)


def test_through_the_server_every_reply_has_the_old_types(stack: Stack) -> None:
    with ServeClient(stack.host, stack.port, timeout_s=60) as client:
        for case, request_json in REPLY_CASES:
            assert_old_reply(client.send_line(json.dumps(request_json).encode()), case)


# -- requests: whatever the old types allow is accepted -------------------------------------------------------

BOOL_FRAME = [i % 3 == 0 for i in range(OBS_SIZE)]
REQUEST_CASES: list[tuple[str, dict[str, Any]]] = [
    ("obs of booleans", {"obs": [BOOL_FRAME]}),
    ("obs mixing floats, ints and booleans", {"obs": [[1.5, 2, True, False, *([0] * (OBS_SIZE - 4))]]}),
    ("obs of ints", {"obs": [[3] * OBS_SIZE]}),
    ("deterministic true", {"deterministic": True}),
    ("deterministic false", {"deterministic": False}),
    ("deterministic, one flag per head", {"deterministic": [h < 6 for h in range(NUM_HEADS)]}),
    ("deterministic, a list of one", {"deterministic": [True]}),
    ("every flag true", FULL),
    ("extensions empty", {"extensions": []}),
]


@pytest.mark.parametrize(("case", "changes"), REQUEST_CASES, ids=[c for c, _ in REQUEST_CASES])
def test_every_request_of_the_old_types_is_accepted(registry: ModelRegistry, case: str,
                                                    changes: dict[str, Any]) -> None:
    request_json = {"model": "obsvalue", "obs": OBS, "actionMasks": MASKS, **changes}
    for key, value in request_json.items():
        assert conforms(value, annotation(REQUEST_TYPES[key])), f"the case itself breaks the old type of {key}"
    req = parse_line(json.dumps(request_json))
    assert isinstance(req, Request)
    (reply,) = registry.answer([req])
    assert_old_reply(reply, case)


def test_boolean_observations_are_ones_and_zeros(registry: ModelRegistry) -> None:
    as_bools = parse_line(json.dumps({"model": "latest", "obs": [BOOL_FRAME], "actionMasks": MASKS,
                                      "deterministic": True}))
    as_numbers = parse_line(json.dumps({"model": "latest", "obs": [[float(b) for b in BOOL_FRAME]],
                                        "actionMasks": MASKS, "deterministic": True}))
    assert isinstance(as_bools, Request) and isinstance(as_numbers, Request)
    np.testing.assert_array_equal(as_bools.obs, as_numbers.obs)
    assert registry.answer([as_bools])[0]["action"] == registry.answer([as_numbers])[0]["action"]

