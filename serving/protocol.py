"""The JSON-lines protocol of `osrs-rllib serve`: one request object per line, one reply object per line.

The field names and the reply's shape are those of the system this server replaces, so that its clients
(a `Response(**json)` built from every key of the reply, a request built from a dataclass) switch without a
change. Parsing and checking live here, apart from the sockets and from Ray, so that the proxy, the Serve
replica, the client and the tests all share one definition.

Request (camelCase as the existing clients send it)::

    {"model": "latest", "obs": [[...176 numbers...]], "actionMasks": [[true, false, ...], ... 12 lists],
     "deterministic": true, "returnLogProb": true, "returnEntropy": false, "returnValue": false,
     "returnProbs": false, "extensions": []}

Reply (exactly these six keys; null where not asked, ``extensionResults`` always a list)::

    {"action": [1, 0, 2, 0, 0, 0, 1, 0, 0, 1, 0, 3], "logProb": -4.21, "entropy": null, "values": null,
     "probs": null, "extensionResults": []}

The types are the old system's, field for field (`REQUEST_TYPES`, `REPLY_TYPES`; a test holds every reply to
them): ``entropy`` is one number per head, ``extensionResults`` is never null, and ``obs`` may hold booleans.

A bad request gets ``{"error": "..."}`` and the connection stays usable. ``{"command": "models"}`` lists
the models served (name, kind, training steps, checksum, frame stacking), see `serving.models`.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from common.suggest import did_you_mean
from envs.nh.contract import HEAD_SIZES, NUM_HEADS, NUM_LOGITS, OBS_SIZE, Head

MAX_LINE_BYTES = 1 << 20
"""Longest request line accepted (1 MiB: ~8,000 observation numbers). A longer line is answered with an
error and the connection is closed, because the rest of the line cannot be told apart from the next one."""
MAX_FRAMES = 64
"""Most observation frames one request may carry (a guard against huge arrays; models use a handful)."""

REQUIRED_FIELDS = ("model", "obs", "actionMasks")
OPTIONAL_FIELDS = (
    "deterministic",
    "returnLogProb",
    "returnEntropy",
    "returnValue",
    "returnProbs",
    "extensions",
)
REQUEST_FIELDS = REQUIRED_FIELDS + OPTIONAL_FIELDS
REPLY_FIELDS = ("action", "logProb", "entropy", "values", "probs", "extensionResults")
"""The reply's keys, in order; a successful reply has exactly these."""

REQUEST_TYPES: dict[str, str] = {
    "model": "str",
    "obs": "list[list[float | bool]]",
    "actionMasks": "list[list[bool]]",
    "deterministic": "bool | list[bool]",
    "returnLogProb": "bool",
    "returnEntropy": "bool",
    "returnValue": "bool",
    "returnProbs": "bool",
    "extensions": "list[str]",
}
"""The old system's request type, field for field (Python annotations of its dataclass). Every request these
types allow is accepted unless a value breaks the contract (a frame of the wrong length, a mask of the wrong
head sizes, `deterministic` as a list of neither 1 nor 12 flags), which is answered with an error naming it."""

REPLY_TYPES: dict[str, str] = {
    "action": "list[int]",
    "logProb": "float | None",
    "entropy": "list[float] | None",
    "values": "list[float] | None",
    "probs": "list[list[float]] | None",
    "extensionResults": "list",
}
"""The old system's reply type, field for field: what a client's ``Response(**json)`` expects. ``entropy`` is
one entropy per head (along the chosen path); ``extensionResults`` is a list even when no extension was asked."""
COMMANDS = ("models",)
"""Requests of the form ``{"command": NAME}`` (no other key)."""

MODEL_NAME_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]{0,127}\Z")
"""A served name: a model file's stem or a ladder name. No path separators and no leading dot, so a name
can never point outside the models directory."""


class ProtocolError(ValueError):
    """A request the server cannot answer; the message is sent back as ``{"error": message}``."""


@dataclass(frozen=True, slots=True)
class HugeInteger:
    """An integer literal too long for Python to convert (its digits are kept only to be counted)."""

    digits: int

    def __repr__(self) -> str:
        return f"an integer of {self.digits} digits"


_INT_DIGITS_LIMIT = 4000
"""Integer literals longer than this are not converted (Python's own limit is 4,300 digits)."""


def _parse_int(text: str) -> int | HugeInteger:
    return int(text) if len(text) <= _INT_DIGITS_LIMIT else HugeInteger(len(text.lstrip("-")))


def _loads_keeping_huge_integers(line: bytes | str) -> Any:
    try:
        return json.loads(line, parse_int=_parse_int)
    except (ValueError, RecursionError) as exc:
        raise ProtocolError(f"malformed JSON: {exc}; send one JSON object per line") from None


@dataclass(slots=True)
class Request:
    """One checked request, ready for a model: numpy arrays, a per-head deterministic flag."""

    model: str
    obs: npt.NDArray[np.float32]
    """(frames, 176) float32, newest frame first."""
    mask: npt.NDArray[np.bool_]
    """(45,) environment mask in head order."""
    deterministic: tuple[bool, ...]
    """One flag per head."""
    return_log_prob: bool = False
    return_entropy: bool = False
    return_value: bool = False
    return_probs: bool = False
    extensions: tuple[str, ...] = field(default_factory=tuple)
    follows_model: bool = False
    """The request left out ``deterministic``: the model's default mode of play answers it (its file's
    ``play_mode``, `policies.play_mode`; sampling, as `deterministic` says, when the file names none)."""

    @property
    def wants_statistics(self) -> bool:
        return self.return_log_prob or self.return_entropy or self.return_value or self.return_probs

    def to_json(self) -> dict[str, Any]:
        """The request as a client sends it (used by `serving.client`)."""
        det: bool | list[bool] = self.deterministic[0] if len(set(self.deterministic)) == 1 else list(
            self.deterministic
        )
        return {
            "model": self.model,
            "obs": self.obs.tolist(),
            "actionMasks": mask_to_heads(self.mask),
            "deterministic": None if self.follows_model else det,
            "returnLogProb": self.return_log_prob,
            "returnEntropy": self.return_entropy,
            "returnValue": self.return_value,
            "returnProbs": self.return_probs,
            "extensions": list(self.extensions),
        }


@dataclass(frozen=True, slots=True)
class Command:
    """A control request such as ``{"command": "models"}``."""

    name: str


def mask_to_heads(mask: npt.ArrayLike) -> list[list[bool]]:
    """The flat 45-entry mask as the protocol's one list of booleans per head."""
    flat = np.asarray(mask, dtype=bool).tolist()
    out, start = [], 0
    for size in HEAD_SIZES:
        out.append(flat[start : start + size])
        start += size
    return out


def check_model_name(name: Any) -> str:
    """A served name, or a `ProtocolError` that says why it cannot be one."""
    if not isinstance(name, str):
        raise ProtocolError(f"field 'model' must be a string (a model or ladder name), got {_type(name)}")
    if "/" in name or "\\" in name or name.startswith(".") or "\x00" in name:
        raise ProtocolError(
            f"model name {name!r} tries to leave the models directory: give a served name such as 'latest' "
            "(a model file's name without .nhmodel), not a path; {\"command\": \"models\"} lists them"
        )
    if not MODEL_NAME_RE.match(name):
        raise ProtocolError(
            f"model name {name!r} is not a served name: expected letters, digits, '_', '-' or '.' "
            "(1-128 characters); {\"command\": \"models\"} lists the served names"
        )
    return name


def parse_line(line: bytes | str) -> Request | Command:
    """Parse and check one request line.

    Raises:
        ProtocolError: Malformed JSON, not an object, an unknown or missing field, a wrong type, wrong
            head sizes or observation length, a non-finite number, or a head mask with no legal value.
    """
    try:
        data = json.loads(line)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ProtocolError(f"malformed JSON: {exc}; send one JSON object per line") from None
    except RecursionError:
        raise ProtocolError("malformed JSON: nested too deeply") from None
    except ValueError:
        # Python refuses to convert an integer literal of more than 4,300 digits (its integer-string limit)
        # and raises a plain ValueError from inside the decoder. Decode again, keeping such literals as
        # `HugeInteger` so that the field checks can name the field that holds one.
        data = _loads_keeping_huge_integers(line)
    if not isinstance(data, dict):
        raise ProtocolError(f"a request must be a JSON object, got {_type(data)}")
    if "command" in data:
        return _parse_command(data)
    return parse_request(data)


def _parse_command(data: dict[str, Any]) -> Command:
    extra = sorted(k for k in data if k != "command")
    if extra:
        raise ProtocolError(f"a command request has only the field 'command', got also {extra}")
    name = data["command"]
    if name not in COMMANDS:
        raise ProtocolError(f"unknown command {name!r}; valid commands: {', '.join(COMMANDS)}")
    return Command(name)


def parse_request(data: dict[str, Any]) -> Request:
    """Check a decoded request object and convert it (see `parse_line`)."""
    unknown = [k for k in data if k not in REQUEST_FIELDS]
    if unknown:
        key = unknown[0]
        hint = did_you_mean(key, REQUEST_FIELDS) or f"; valid fields: {', '.join(REQUEST_FIELDS)}"
        raise ProtocolError(f"unknown field {key!r}{hint}")
    missing = [k for k in REQUIRED_FIELDS if k not in data]
    if missing:
        raise ProtocolError(f"missing field {missing[0]!r}; every request needs {', '.join(REQUIRED_FIELDS)}")
    model = check_model_name(data["model"])
    obs = _parse_obs(data["obs"])
    mask = _parse_mask(data["actionMasks"])
    deterministic = _parse_deterministic(data.get("deterministic"))
    flags = {}
    for key in ("returnLogProb", "returnEntropy", "returnValue", "returnProbs"):
        value = data.get(key)
        if value is None:
            value = False
        elif not isinstance(value, bool):
            raise ProtocolError(f"field {key!r} must be true or false, got {_type(value)}")
        flags[key] = value
    extensions = _parse_extensions(data.get("extensions"))
    return Request(
        model=model,
        obs=obs,
        mask=mask,
        deterministic=deterministic,
        return_log_prob=flags["returnLogProb"],
        return_entropy=flags["returnEntropy"],
        return_value=flags["returnValue"],
        return_probs=flags["returnProbs"],
        extensions=extensions,
        follows_model=data.get("deterministic") is None,
    )


def _parse_obs(raw: Any) -> npt.NDArray[np.float32]:
    if not isinstance(raw, list) or not raw or not all(isinstance(f, list) for f in raw):
        raise ProtocolError(
            f"field 'obs' must be a non-empty list of frames (lists of {OBS_SIZE} numbers), newest first, "
            f"got {_type(raw)}"
        )
    if len(raw) > MAX_FRAMES:
        raise ProtocolError(f"field 'obs' has {len(raw)} frames; at most {MAX_FRAMES} are accepted")
    for i, frame in enumerate(raw):
        if len(frame) != OBS_SIZE:
            raise ProtocolError(
                f"field 'obs': frame {i} has {len(frame)} entries, expected {OBS_SIZE} (the observation of "
                "the contract, spec §15.2)"
            )
    try:
        arr = np.asarray(raw)
    except (ValueError, TypeError, OverflowError):
        arr = np.empty(0, dtype=object)  # ragged or mixed: the entry-by-entry check below names the culprit
    # Booleans are numbers to the old protocol (``list[list[float | bool]]``): true is 1, false is 0.
    if arr.dtype.kind not in "fiub" or arr.ndim != 2:
        frame, entry, bad = _first_non_number(raw)
        raise ProtocolError(
            f"field 'obs' must hold numbers only (booleans count as 1 and 0): frame {frame} entry {entry} is "
            f"{_describe(bad)}"
        )
    with np.errstate(over="ignore"):
        out = arr.astype(np.float32)
    if not np.isfinite(out).all():
        frame, entry = (int(v) for v in np.argwhere(~np.isfinite(out))[0])
        raise ProtocolError(
            f"field 'obs': frame {frame} entry {entry} is {number_text(arr[frame, entry])}; observations must be "
            "finite numbers within float32 range"
        )
    return out


_INT64_RANGE = (-(2**63), 2**63 - 1)
FLOAT32_MAX = float(np.finfo(np.float32).max)


def number_text(value: Any) -> str:
    """A number as a person writes it in a message: ``NaN``, ``infinity``, ``1e+39 (beyond float32's range)``,
    ``0.25``; never numpy's ``np.float64(nan)``."""
    number = value.item() if isinstance(value, np.generic) else value
    if isinstance(number, float):
        if math.isnan(number):
            return "NaN"
        if math.isinf(number):
            return "infinity" if number > 0 else "-infinity"
        if abs(number) > FLOAT32_MAX:
            return f"{number:g} (beyond float32's range, ±{FLOAT32_MAX:.2g})"
        return f"{number:g}"
    return str(number)


def _first_non_number(raw: list[list[Any]]) -> tuple[int, int, Any]:
    """The first entry that is not a finite-able number: a string, null, a list, an integer that numpy cannot
    hold (beyond 64 bits) or one too long to convert."""
    for i, frame in enumerate(raw):
        for j, v in enumerate(frame):
            if isinstance(v, bool) or isinstance(v, float):
                continue
            if isinstance(v, int) and _INT64_RANGE[0] <= v <= _INT64_RANGE[1]:
                continue
            return i, j, v
    return 0, 0, None


def _describe(value: Any) -> str:
    if isinstance(value, HugeInteger):
        return repr(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return f"an integer of {len(str(abs(value)))} digits (beyond 64 bits)"
    if isinstance(value, str | list | dict):
        return f"{_type(value)} {_short(value)}"
    return f"{_type(value)}"


def _short(value: Any, limit: int = 40) -> str:
    text = json.dumps(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _parse_mask(raw: Any) -> npt.NDArray[np.bool_]:
    if not isinstance(raw, list) or len(raw) != NUM_HEADS:
        n = len(raw) if isinstance(raw, list) else None
        raise ProtocolError(
            f"field 'actionMasks' must be a list of {NUM_HEADS} lists of booleans (one per head, sizes "
            f"{list(HEAD_SIZES)}), got {_type(raw) if n is None else f'{n} lists'}"
        )
    flat: list[bool] = []
    for h, (head, size) in enumerate(zip(raw, HEAD_SIZES, strict=True)):
        if not isinstance(head, list) or len(head) != size:
            got = f"{len(head)} entries" if isinstance(head, list) else _type(head)
            raise ProtocolError(
                f"field 'actionMasks': head {h} ({Head(h).name}) must have {size} booleans, got {got}"
            )
        for v in head:
            if v is not True and v is not False:
                raise ProtocolError(f"field 'actionMasks': head {h} ({Head(h).name}) holds {v!r}, expected booleans")
        flat += head
    if not any(flat):
        # A single head may have no legal value (the environment masks e.g. every prayer when none can be
        # switched to; §14.2 then forces value 0), but a mask with nothing legal anywhere is a client bug,
        # typically a zeroed buffer.
        raise ProtocolError(
            "field 'actionMasks' has no legal value in any head; send the environment's mask for this tick "
            "(a head with no legal value is allowed: spec §14.2 forces its value 0)"
        )
    mask = np.array(flat, dtype=np.bool_)
    assert mask.shape == (NUM_LOGITS,)
    return mask


def _parse_deterministic(raw: Any) -> tuple[bool, ...]:
    if raw is None:
        return (False,) * NUM_HEADS
    if isinstance(raw, bool):
        return (raw,) * NUM_HEADS
    if isinstance(raw, list) and all(isinstance(v, bool) for v in raw):
        if len(raw) == NUM_HEADS:
            return tuple(raw)
        if len(raw) == 1:  # the old type allows any list: one flag stands for every head
            return (raw[0],) * NUM_HEADS
    raise ProtocolError(
        f"field 'deterministic' must be true/false or a list of {NUM_HEADS} booleans (one per head; a list of "
        f"one applies to every head), got {_type(raw) if not isinstance(raw, list) else _list_kind(raw)}"
    )


def _list_kind(raw: list[Any]) -> str:
    if all(isinstance(v, bool) for v in raw):
        return f"a list of {len(raw)}"
    bad = next(v for v in raw if not isinstance(v, bool))
    return f"a list holding {_describe(bad)}"


def _parse_extensions(raw: Any) -> tuple[str, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list) or not all(isinstance(v, str) for v in raw):
        raise ProtocolError(f"field 'extensions' must be a list of extension names (strings), got {_type(raw)}")
    return tuple(raw)


def _type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, HugeInteger):
        return repr(value)
    names = {bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "a list", dict: "an object"}
    return names.get(type(value), type(value).__name__)


# ---------------------------------------------------------------------------------------------------------
# Replies
# ---------------------------------------------------------------------------------------------------------


def encode_reply(reply: dict[str, Any]) -> bytes:
    """One reply line (compact JSON + newline). Non-finite floats would not be JSON: they become null."""
    try:
        text = json.dumps(reply, separators=(",", ":"), allow_nan=False)
    except ValueError:
        text = json.dumps(_finite(reply), separators=(",", ":"))
    return text.encode() + b"\n"


def error_reply(message: str) -> dict[str, str]:
    return {"error": message}


def _finite(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, list):
        return [_finite(v) for v in value]
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    return value
