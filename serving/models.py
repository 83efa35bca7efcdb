"""What a replica serves: the model files of a directory (reloaded live) and the scripted ladder, by name.

This module is plain torch and numpy (no Ray, no sockets), so the same code answers requests inside a Serve
replica, in the benchmark's in-process comparison and in unit tests. `ModelRegistry.answer` takes a batch of
checked requests (`serving.protocol.Request`), runs one forward pass per model for all of them and returns
one reply (or error) per request, in order.

Live models: `ModelRegistry.refresh` rescans the directory. A file whose size, modification time or inode
changed is loaded in full (`policies.model_file.load_model_file` checks the archive and the weights'
checksum) *before* it replaces the served one, so a damaged or half-written file never replaces a good
model: the old one keeps answering and the failure is logged once per version of the file. Requests already
running finish on the model they started with.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from envs.nh.contract import HEAD_SIZES, MAX_HEAD_SIZE, NUM_HEADS, OBS_SIZE, frame_offsets
from envs.opponents import LADDER, ScriptedPolicy, make_opponent
from policies.fight_rules import fight_rules_of
from policies.model_file import MODEL_SUFFIX, ModelFile, ModelFileError, load_model_file
from policies.play_mode import GREEDY, play_mode_of
from serving.protocol import MODEL_NAME_RE, REPLY_FIELDS, ProtocolError, Request

logger = logging.getLogger(__name__)

_DETERMINISTIC_UNIFORM = float(np.exp(np.float32(-1.0)))
"""A uniform whose Gumbel transform −log(−log u) is exactly 0.0 in float32: heads given this noise take their
most probable legal value, which is how one request mixes deterministic and sampled heads in one pass."""

Reply = dict[str, Any]
"""A successful reply (the six `REPLY_FIELDS`, typed as `serving.protocol.REPLY_TYPES`) or ``{"error": message}``."""

ExtensionFn = Callable[[ModelFile, torch.Tensor], list[Any]]
"""(model file, stacked observations (B, D)) → one JSON value per row."""


def _module_extension(name: str) -> ExtensionFn:
    """An extension stored in the model file as a TorchScript method ``extension_<name>(obs) -> Tensor``."""

    def run(model: ModelFile, obs: torch.Tensor) -> list[Any]:
        return getattr(model.module, f"extension_{name}")(obs).tolist()

    return run


def model_extensions(model: ModelFile) -> dict[str, ExtensionFn]:
    """The extensions a model file carries (e.g. ``winrate`` once an outcome model is stored in it).

    A model file declares them in its metadata (``"extensions": ["winrate", ...]``) and carries each as an
    exported TorchScript method ``extension_<name>``; a declared name without its method is ignored.
    """
    declared = model.meta.get("extensions") or model.metadata.get("extensions") or []
    found: dict[str, ExtensionFn] = {}
    for name in declared if isinstance(declared, list) else []:
        if isinstance(name, str) and hasattr(model.module, f"extension_{name}"):
            found[name] = _module_extension(name)
    return found


@dataclass
class ServedModel:
    """A loaded model file with what serving needs to know about it."""

    name: str
    model: ModelFile
    stat: tuple[int, int, int]
    loaded_unix: float = field(default_factory=time.time)
    offsets: tuple[int, ...] = ()
    extensions: dict[str, ExtensionFn] = field(default_factory=dict)
    play_mode: str | None = None
    """The file's default mode of play (`policies.play_mode`), which answers a request without ``deterministic``."""
    mixture: tuple[str, int, int] | None = None
    """(the mixture's name, this member's index, its number of members) for a member of a per-fight mixture."""

    def __post_init__(self) -> None:
        self.offsets = frame_offsets(self.model.frame_stack)
        self.extensions = model_extensions(self.model)
        self.play_mode = play_mode_of(self.model.metadata)  # a bad value fails the load, naming the key

    def flags(self, req: Request) -> tuple[bool, ...]:
        """The request's per-head deterministic flags; the model's default mode when it left them out."""
        return (self.play_mode == GREEDY,) * NUM_HEADS if req.follows_model else req.deterministic

    @property
    def value_from_obs(self) -> bool:
        """The critic reads only the actor's input (a model trained without the full-state critic input)."""
        return self.model.critic_size == self.model.obs_size

    def describe(self) -> dict[str, Any]:
        meta, md = self.model.meta, self.model.metadata
        return {
            "name": self.name,
            "kind": "model",
            "path": str(self.model.path),
            "experiment": md.get("experiment"),
            "iteration": md.get("iteration"),
            "envSteps": md.get("env_steps"),
            "evalWinRate": md.get("eval_win_rate"),
            "sha256": meta.get("tensor_sha256"),
            "frameStack": list(self.offsets),
            "fightRules": fight_rules_of(self.model).rules,  # its training rules (masks, death_match); None: unknown
            "obsSize": self.model.obs_size,
            "returnValue": self.value_from_obs,
            "extensions": sorted(self.extensions),
            "playMode": self.play_mode,  # None: the file names none (a request without deterministic samples)
            "loadedUnix": self.loaded_unix,
            **({"mixtureOf": self.mixture[0], "member": self.mixture[1]} if self.mixture else {}),
        }

    def warm_up(self) -> None:
        """Run each path of the forward pass once before the model answers anyone.

        TorchScript optimises a method on its first calls, which take many times longer than later ones; a
        client's first request would pay for that, and could miss the proxy's deadline.
        """
        obs = np.zeros((1, len(self.offsets) * OBS_SIZE), dtype=np.float32)
        mask = np.ones((1, sum(HEAD_SIZES)), dtype=np.bool_)
        for det in ((True,) * NUM_HEADS, (False,) * NUM_HEADS, (True, False) * (NUM_HEADS // 2)):
            req = Request(self.name, obs.reshape(len(self.offsets), OBS_SIZE), mask[0], det,
                          return_log_prob=True, return_entropy=True, return_probs=True,
                          return_value=self.value_from_obs)
            for _ in range(2):
                _forward(self, [req], obs)

    def stacked(self, obs: np.ndarray) -> np.ndarray:
        """The request's frames (newest first) as this model's stacked input, or a `ProtocolError`.

        Accepted: exactly the frames at the model's offsets (``len(frameStack)`` frames), or the whole recent
        history (``max(frameStack) + 1`` frames, newest first) from which the model's offsets are taken.
        """
        n = obs.shape[0]
        if n == len(self.offsets):
            return obs.reshape(-1)
        depth = max(self.offsets) + 1
        if n == depth:
            return obs[list(self.offsets)].reshape(-1)
        want = sorted({len(self.offsets), depth})
        raise ProtocolError(
            f"model {self.name!r} stacks frames at offsets {list(self.offsets)}: send "
            f"{' or '.join(str(w) for w in want)} frames of {OBS_SIZE} entries (newest first), got {n}"
        )


class ModelRegistry:
    """The models directory (optional) and the ladder, answering batches of requests by name.

    Args:
        models_dir: Directory of ``*.nhmodel`` files, served by file stem (``latest.nhmodel`` → ``latest``);
            None serves the ladder only. It may not exist yet (an experiment that has not written a model).
        ladder: Serve the scripted ladder opponents (every name of `envs.opponents.LADDER`).
        seed: Seed of the ladder bots that draw (``random``).
    """

    def __init__(self, models_dir: str | os.PathLike[str] | None, ladder: bool = True, seed: int = 0) -> None:
        self.models_dir = Path(models_dir) if models_dir is not None else None
        self.models: dict[str, ServedModel] = {}
        rungs = [make_opponent(name, seed) for name in LADDER] if ladder else []
        # A prescient rung must be shown the other seat's action of the tick, which no client has: it could
        # answer no request, so it is not listed (asking for it by name says why).
        self.scripted: dict[str, ScriptedPolicy] = {p.name: p for p in rungs if not p.needs_opponent_action}
        self.unservable: dict[str, str] = {
            p.name: f"model {p.name!r} is not served: it is a prescient ladder rung that needs the opponent's action "
            "of the tick, which a serving client does not have; ask for an honest rung such as 'expert'"
            for p in rungs if p.needs_opponent_action
        }
        self.mixtures: dict[str, list[str]] = {}
        """A per-fight mixture's name → its members' served names (``<name>.m<i>``, `member_name`)."""
        self._failed: dict[Path, tuple[int, int, int]] = {}
        self._lock = threading.Lock()  # one refresh at a time; answering never takes it
        self.refresh()

    # -- the directory -------------------------------------------------------------------------------
    def refresh(self) -> list[str]:
        """Load new or changed model files, drop removed ones; returns log-style lines of what changed."""
        if self.models_dir is None:
            return []
        with self._lock:
            return self._refresh()

    def _refresh(self) -> list[str]:
        assert self.models_dir is not None
        events: list[str] = []
        seen: set[str] = set()
        try:
            paths = sorted(self.models_dir.glob(f"*{MODEL_SUFFIX}"))
        except OSError:
            paths = []
        for path in paths:
            name = path.name[: -len(MODEL_SUFFIX)]
            if not MODEL_NAME_RE.match(name):
                continue  # hidden temporary files of atomic writes (.latest.nhmodel.123.tmp) and odd names
            if name in self.scripted or name in self.unservable:
                if self._failed.get(path) is None:
                    logger.warning("not serving %s: its name is taken by the ladder opponent %r", path, name)
                    self._failed[path] = (0, 0, 0)
                continue
            try:
                st = path.stat()
            except OSError:
                continue
            stat = (st.st_mtime_ns, st.st_size, st.st_ino)
            names = self.mixtures.get(name, [name])
            seen.update(names)
            current = self.models.get(names[0])
            if (current is not None and current.stat == stat) or self._failed.get(path) == stat:
                continue
            try:
                entries = _served_entries(name, load_model_file(path), stat)
                for served in entries:
                    served.warm_up()
            except ModelFileError as exc:
                self._failed[path] = stat
                line = f"kept {'the served' if current else 'no'} model {name!r}: {exc}"
                logger.warning(line)
                events.append(line)
                continue
            except Exception as exc:  # anything torch raises on a strange file must not stop the scan
                self._failed[path] = stat
                line = f"kept {'the served' if current else 'no'} model {name!r}: cannot load {path}: {exc}"
                logger.warning(line)
                events.append(line)
                continue
            self._failed.pop(path, None)
            for old_name in names:
                self.models.pop(old_name, None)
            self.mixtures.pop(name, None)
            for served in entries:
                self.models[served.name] = served
            seen.update(e.name for e in entries)
            if entries[0].mixture is not None:
                self.mixtures[name] = [e.name for e in entries]
            d = entries[0].describe()
            line = (
                f"{'reloaded' if current else 'loaded'} model {name!r} from {path} (iteration {d['iteration']}, "
                f"env steps {d['envSteps']}, sha256 {str(d['sha256'])[:12]}"
                + (f"; a per-fight mixture: {', '.join(self.mixtures[name])})" if name in self.mixtures else ")")
            )
            logger.info(line)
            events.append(line)
        for name in [n for n in self.mixtures if self.mixtures[n][0] not in seen]:
            del self.mixtures[name]
        for name in [n for n in self.models if n not in seen]:
            del self.models[name]
            line = f"stopped serving model {name!r}: its file is gone"
            logger.info(line)
            events.append(line)
        return events

    # -- listing -------------------------------------------------------------------------------------
    def names(self) -> list[str]:
        return sorted(self.models) + list(self.scripted)

    def describe(self) -> list[dict[str, Any]]:
        rows = [self.models[n].describe() for n in sorted(self.models)]
        rows += [{"name": n, "kind": "mixture", "members": list(m), "frameStack": list(self.models[m[0]].offsets)}
                 for n, m in sorted(self.mixtures.items())]  # fmt: skip
        rows += [{"name": n, "kind": "scripted", "frameStack": [0], "returnValue": False, "extensions": []}
                 for n in self.scripted]
        return rows

    def _unknown(self, name: str) -> str:
        where = f" in {self.models_dir}" if self.models_dir is not None else ""
        return f"unknown model {name!r}{where}; served models: {', '.join(self.names()) or 'none'}"

    # -- answering -----------------------------------------------------------------------------------
    def answer(self, requests: Sequence[Request]) -> list[Reply]:
        """One reply per request, in order: one forward pass per model for all requests naming it."""
        replies: list[Reply | None] = [None] * len(requests)
        groups: dict[str, list[int]] = {}
        for i, req in enumerate(requests):
            groups.setdefault(req.model, []).append(i)
        for name, rows in groups.items():
            served = self.models.get(name)
            if served is not None:
                self._answer_model(served, requests, rows, replies)
            elif name in self.scripted:
                for i in rows:
                    replies[i] = self._answer_scripted(name, requests[i])
            elif name in self.unservable:
                for i in rows:
                    replies[i] = {"error": self.unservable[name]}
            elif name in self.mixtures:
                members = self.mixtures[name]
                for i in rows:
                    replies[i] = {"error": f"model {name!r} is a per-fight mixture of {len(members)} models: draw one "
                                  f"per fight and ask for it by name ({', '.join(members)}; serving.client."
                                  "member_for_fight draws a fight's member from its seed)"}  # fmt: skip
            else:
                for i in rows:
                    replies[i] = {"error": self._unknown(name)}
        return [r if r is not None else {"error": "internal error: no reply computed"} for r in replies]

    def _answer_scripted(self, name: str, req: Request) -> Reply:
        """One request to a ladder rung. Requests are answered one by one, not through the batch adapter
        `envs.opponents.act_rows`: a bad mask in one request must fail that request only, and a rung's decision
        is Python per row either way, so batching would save nothing."""
        if req.wants_statistics or req.extensions:
            asked = [k for k, v in (("returnLogProb", req.return_log_prob), ("returnEntropy", req.return_entropy),
                                    ("returnValue", req.return_value), ("returnProbs", req.return_probs)) if v]
            asked += [f"extension {e!r}" for e in req.extensions]
            return {
                "error": f"model {name!r} is a scripted ladder opponent: it has no log-probabilities, entropy, values, "
                f"probabilities or extensions (asked for {', '.join(asked)}); ask for the action only"
            }
        try:
            action = self.scripted[name].act(req.obs[0], req.mask)
        except ValueError as exc:
            return {"error": f"model {name!r}: {exc}"}
        return _reply(action=[int(a) for a in action])

    def _answer_model(self, served: ServedModel, requests: Sequence[Request], rows: list[int],
                      replies: list[Reply | None]) -> None:
        good: list[int] = []
        stacked: list[np.ndarray] = []
        for i in rows:
            req = requests[i]
            problem = self._check_model_request(served, req)
            if problem is not None:
                replies[i] = {"error": problem}
                continue
            try:
                stacked.append(served.stacked(req.obs))
            except ProtocolError as exc:
                replies[i] = {"error": str(exc)}
                continue
            good.append(i)
        if not good:
            return
        try:
            results = _forward(served, [requests[i] for i in good], np.stack(stacked))
        except Exception as exc:  # a model must never take the replica down with it
            logger.exception("model %r failed on a batch of %d", served.name, len(good))
            for i in good:
                replies[i] = {"error": f"model {served.name!r} failed: {type(exc).__name__}: {exc}"}
            return
        for i, reply in zip(good, results, strict=True):
            replies[i] = reply

    @staticmethod
    def _check_model_request(served: ServedModel, req: Request) -> str | None:
        if req.return_value and not served.value_from_obs:
            return (
                f"model {served.name!r} cannot return a value: its critic reads the full game state "
                f"({served.model.critic_size} entries: your {served.model.obs_size} plus the opponent's private "
                "ones, spec §15.3), which a client does not have; ask without returnValue"
            )
        missing = [e for e in req.extensions if e not in served.extensions]
        if missing:
            has = ", ".join(sorted(served.extensions)) or "none"
            return (
                f"model {served.name!r} has no extension {missing[0]!r}; the extensions it carries: {has}"
            )
        return None


def member_name(mixture: str, index: int) -> str:
    """The served name of member `index` of the mixture served as `mixture`."""
    return f"{mixture}.m{index}"


def _served_entries(name: str, model: ModelFile, stat: tuple[int, int, int]) -> list[ServedModel]:
    """What one model file serves: itself, or each member of a per-fight mixture under its own name, because a
    request is one tick and only the client knows which fight, and so which member, it belongs to."""
    count = model.member_count
    if count == 1:
        return [ServedModel(name, model, stat)]
    served = [ServedModel(member_name(name, i), model.member(i), stat, mixture=(name, i, count)) for i in range(count)]
    for entry in served:  # a member plays in the mixture's default mode (its file's play_mode), not its own
        entry.play_mode = play_mode_of(model.metadata)
    return served


def _reply(**fields: Any) -> Reply:
    """A successful reply: every field of `REPLY_FIELDS`, null where not given except ``extensionResults``,
    which the old protocol types as a list (``[]`` when no extension was asked)."""
    reply = {key: fields.get(key) for key in REPLY_FIELDS}
    if reply["extensionResults"] is None:
        reply["extensionResults"] = []
    return reply


def _forward(served: ServedModel, reqs: Sequence[Request], obs: np.ndarray) -> list[Reply]:
    """One forward pass of `served` for `reqs` (their stacked observations `obs`, (B, D))."""
    module = served.model.module
    b = len(reqs)
    obs_t = torch.from_numpy(np.ascontiguousarray(obs, dtype=np.float32))
    mask_t = torch.from_numpy(np.stack([r.mask for r in reqs]).astype(np.float32))
    det = np.array([served.flags(r) for r in reqs], dtype=np.bool_)  # (B, 12)
    with torch.no_grad():
        features = module.features(obs_t)
        if det.all():
            actions, logp, entropy = module.sample_from_features(features, mask_t, True, None)
        else:
            actions = torch.empty(b, NUM_HEADS, dtype=torch.long)
            logp = torch.empty(b)
            entropy = torch.empty(b, NUM_HEADS)
            full = det.all(axis=1)
            if full.any():  # fully deterministic rows take the exact argmax path
                idx = torch.from_numpy(np.flatnonzero(full))
                a, lp, en = module.sample_from_features(features[idx], mask_t[idx], True, None)
                actions[idx], logp[idx], entropy[idx] = a, lp, en
            idx_np = np.flatnonzero(~full)
            idx = torch.from_numpy(idx_np)
            noise = torch.rand(len(idx_np), NUM_HEADS, MAX_HEAD_SIZE)
            noise[torch.from_numpy(det[idx_np])] = _DETERMINISTIC_UNIFORM
            a, lp, en = module.sample_from_features(features[idx], mask_t[idx], False, noise)
            actions[idx], logp[idx], entropy[idx] = a, lp, en
        probs = module.head_log_probs(features, mask_t, actions).exp() if any(r.return_probs for r in reqs) else None
        values = module.value(obs_t, features) if any(r.return_value for r in reqs) else None
        ext_results: dict[str, list[Any]] = {}
        for name in {e for r in reqs for e in r.extensions}:
            ext_results[name] = served.extensions[name](served.model, obs_t)
    actions_l = actions.tolist()
    # `+ 0.0` turns a negative zero (an entropy of a head with one legal value, say) into 0.0: a reply reads
    # as a person writes numbers (IEEE 754: -0.0 + 0.0 == +0.0, every other value unchanged).
    logp_l = (logp + 0.0).tolist()
    entropy_l = (entropy + 0.0).tolist()
    probs_l = (probs + 0.0).tolist() if probs is not None else None
    values_l = (values + 0.0).tolist() if values is not None else None
    out: list[Reply] = []
    for i, r in enumerate(reqs):
        out.append(
            _reply(
                action=actions_l[i],
                logProb=logp_l[i] if r.return_log_prob else None,
                entropy=entropy_l[i] if r.return_entropy else None,
                values=[values_l[i]] if r.return_value and values_l is not None else None,
                probs=[row[:size] for row, size in zip(probs_l[i], HEAD_SIZES, strict=True)]
                if r.return_probs and probs_l is not None
                else None,
                extensionResults=[ext_results[e][i] for e in r.extensions],
            )
        )
    return out

