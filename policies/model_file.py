"""Model files: one self-describing file per exported policy, loadable with torch alone.

A model file is a TorchScript archive (`torch.jit.save`) of `NHPolicyNetwork` (actor heads, critic and the
running normalisation statistics, which are buffers) with two extra entries:

* ``osrs_rllib_meta.json``: the file format, the contract version (`envs.nh.contract.CONTRACT_VERSION`),
  input sizes, frame stacking, the network config and free metadata (training steps, iteration,
  experiment, training config, …);
* ``osrs_rllib_contract.json``: the full action/observation contract, so that a client in another
  language can encode observations and read actions without this repository.

Why TorchScript plus JSON rather than a pickle or a checkpoint: the file runs without RLlib, Ray or this
package's Python classes (the network's code travels in the archive), and loading it never unpickles
arbitrary Python objects. The metadata is read straight from the zip before torch touches the module, so a
wrong contract or a damaged file is reported as such instead of as a TorchScript stack trace.

Loading needs `torch` and the contract's version string (`envs/nh/contract.py`, numpy only); no Ray.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import time
import warnings
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from common.atomic_files import atomic_path
from envs.nh.contract import CONTRACT_VERSION, MAX_HEAD_SIZE, NUM_HEADS, contract_json

MODEL_FORMAT = "osrs-rllib-model/1"
"""Version of the file layout itself; bump it when the meta keys or the scripted methods change."""
MIXTURE_FORMAT = "osrs-rllib-mixture/1"
"""A per-fight mixture of single models (`policies.mixture`): a format of its own, so that a reader that knows
only single models refuses it rather than play it wrong."""
META_ENTRY = "osrs_rllib_meta.json"
CONTRACT_ENTRY = "osrs_rllib_contract.json"
MODEL_SUFFIX = ".nhmodel"
"""Conventional extension of model files (they are zip archives)."""


class ModelFileError(ValueError):
    """A model file cannot be used: damaged, not a model file, or written for another contract."""


@dataclass
class ModelFile:
    """A loaded model file: the scripted network and its metadata.

    `act` takes and returns numpy arrays so that callers (serving, notebooks, other tools) need no torch
    code of their own.
    """

    path: Path
    module: torch.jit.ScriptModule
    meta: dict[str, Any]
    contract: dict[str, Any] = field(default_factory=dict)

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Pickled with its TorchScript module as bytes (a ScriptModule does not pickle): a loaded model travels to
        a Ray worker (evaluation played on a run's env runners) exactly as loaded, without its path being read there."""
        buffer = io.BytesIO()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # TorchScript is this file format's contract
            torch.jit.save(self.module, buffer)
        return _model_file_from_bytes, (self.path, buffer.getvalue(), self.meta, self.contract)

    @property
    def obs_size(self) -> int:
        return int(self.meta["obs_size"])

    @property
    def critic_size(self) -> int:
        return int(self.meta["critic_size"])

    @property
    def frame_stack(self) -> list[int]:
        return list(self.meta.get("frame_stack", [0]))

    @property
    def metadata(self) -> dict[str, Any]:
        return dict(self.meta.get("metadata", {}))

    @property
    def member_count(self) -> int:
        """1 for a single model; a per-fight mixture's number of members (`policies.mixture`)."""
        return len((self.meta.get("mixture") or {}).get("members") or []) or 1

    def member(self, index: int) -> ModelFile:
        """Member `index` of a mixture as a single model (its own network and metadata); a single model's only
        member is itself. For tools that read one network (analysis, `outcome`, a warm start).

        Raises:
            IndexError: No such member.
        """
        if not 0 <= index < self.member_count:
            raise IndexError(f"{self.path} has {self.member_count} member(s); there is no member {index}")
        if self.member_count == 1:
            return self
        meta = self.meta["mixture"]["members"][index]
        return ModelFile(self.path, getattr(self.module.members, str(index)), dict(meta), self.contract)

    def single(self, use: str) -> ModelFile:
        """This file, checked to hold one network, for `use` (what needs it, as a person would name it).

        Raises:
            ModelFileError: The file is a mixture; the message says how to pick a member.
        """
        if self.member_count > 1:
            raise ModelFileError(
                f"{self.path} is a per-fight mixture of {self.member_count} models; {use} needs a single model: "
                "pick a member (ModelFile.member(i), or write one out with policies.mixture.write_member_file)"
            )
        return self

    @property
    def extensions(self) -> list[str]:
        """Extensions the file declares and carries (``extension_<name>`` methods), e.g. ``["winrate"]``."""
        declared = self.meta.get("extensions") or []
        names = declared if isinstance(declared, list) else []
        return sorted(n for n in names if isinstance(n, str) and hasattr(self.module, f"extension_{n}"))

    def extension_info(self, name: str) -> dict[str, Any]:
        """What the file records about extension `name` (how it was trained, its measured figures); {} if none."""
        info = (self.meta.get("extension_info") or {}).get(name)
        return dict(info) if isinstance(info, dict) else {}

    def extension(self, name: str, obs: Any) -> Any:
        """Run extension `name` (e.g. ``winrate``: P(win)) on stacked observations (B, obs_size) → numpy (B,);
        a 1-D observation gives a scalar array.

        Raises:
            KeyError: The file carries no such extension (the message lists those it has).
            ValueError: The observation has the wrong length.
        """
        if name not in self.extensions:
            raise KeyError(
                f"model file {self.path} has no extension {name!r}; it carries: {', '.join(self.extensions) or 'none'}"
                + (" (add one with `osrs-rllib outcome train`)" if name == "winrate" else "")
            )
        obs_t = torch.as_tensor(obs, dtype=torch.float32)
        if obs_t.shape[-1] != self.obs_size or obs_t.dim() not in (1, 2):
            raise ValueError(f"observation has shape {tuple(obs_t.shape)}, this model expects (B, {self.obs_size})")
        with torch.no_grad():
            return getattr(self.module, f"extension_{name}")(obs_t).numpy()

    def act(
        self,
        obs: Any,
        mask: Any,
        deterministic: bool = True,
        seed: int | None = None,
        noise: Any = None,
        members: Any = None,
    ) -> Any:
        """Actions (B, 12) int64 as numpy for observations (B, obs_size) and masks (B, 45); 1-D inputs give 1-D.

        With `deterministic` every head takes its most probable legal value. Otherwise `noise` (uniforms of
        shape (B, 12, MAX_HEAD_SIZE)) or `seed` makes the draw reproducible; with neither, torch's global RNG is used.
        A mixture (`member_count` > 1) needs `members`: the member playing each row (one index for all rows, or
        (B,)), which a caller draws when a fight starts (`policies.mixture_draw.fight_member`); a single model
        ignores it.

        Raises:
            ValueError: A mixture without `members`, or an index out of range.
        """
        obs_t = torch.as_tensor(obs, dtype=torch.float32)
        mask_t = torch.as_tensor(mask, dtype=torch.float32)
        single = obs_t.dim() == 1
        if single:
            obs_t, mask_t = obs_t.unsqueeze(0), mask_t.unsqueeze(0)
        if obs_t.shape[-1] != self.obs_size:
            raise ValueError(f"observation has {obs_t.shape[-1]} entries, this model expects {self.obs_size}")
        noise_t = None
        if not deterministic:
            if noise is not None:
                noise_t = torch.as_tensor(noise, dtype=torch.float32)
            elif seed is not None:
                gen = torch.Generator().manual_seed(int(seed))
                noise_t = torch.rand(obs_t.shape[0], NUM_HEADS, MAX_HEAD_SIZE, generator=gen)
        with torch.no_grad():
            if self.member_count > 1:
                actions, _ = self.module(obs_t, mask_t, deterministic, noise_t, self._member_rows(members, obs_t))
            else:
                actions, _ = self.module(obs_t, mask_t, deterministic, noise_t)
        out = actions.numpy()
        return out[0] if single else out


    def _member_rows(self, members: Any, obs: torch.Tensor) -> torch.Tensor:
        if members is None:
            raise ValueError(
                f"{self.path} is a per-fight mixture of {self.member_count} models: pass members=, the member "
                "playing each row (policies.mixture_draw.fight_member draws a fight's from its seed)"
            )
        rows = torch.as_tensor(np.asarray(members, dtype=np.int64).reshape(-1))
        if rows.numel() == 1:
            rows = rows.expand(obs.shape[0])
        if rows.numel() != obs.shape[0] or bool(((rows < 0) | (rows >= self.member_count)).any()):
            raise ValueError(
                f"members must be one index in 0..{self.member_count - 1} per row ({obs.shape[0]} rows), got "
                f"{np.asarray(members).tolist()}"
            )
        return rows.contiguous()


def _model_file_from_bytes(path: Path, module: bytes, meta: dict[str, Any], contract: dict[str, Any]) -> ModelFile:
    """`ModelFile.__reduce__`'s other half."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return ModelFile(path, torch.jit.load(io.BytesIO(module)), meta, contract)


def save_model_file(
    network: torch.nn.Module,
    path: str | os.PathLike[str],
    *,
    frame_stack: Sequence[int] = (0,),
    metadata: Mapping[str, Any] | None = None,
    extensions: Mapping[str, Mapping[str, Any]] | None = None,
) -> Path:
    """Script `network` (an `NHPolicyNetwork`) and write it atomically with its metadata.

    The file appears complete or not at all: it is written to a temporary file in the same directory and
    renamed over `path`, so a crash never leaves a half-written model where a reader expects one.

    `extensions` names the extensions the network carries as exported methods ``extension_<name>`` (e.g.
    ``winrate``, `policies/outcome.py`), each with a JSON description (how it was made and measured); they are
    written to the metadata as ``"extensions": [names]`` and ``"extension_info": {name: description}``, and
    a file without any has neither key, exactly as before extensions existed.
    """
    from policies.network import NHPolicyNetwork

    if not isinstance(network, NHPolicyNetwork):
        raise TypeError(f"expected an NHPolicyNetwork, got {type(network).__name__}")
    if any(t.device.type != "cpu" for t in network.state_dict().values()):  # a GPU learner's: files are CPU files
        import copy

        network = copy.deepcopy(network).cpu()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    was_training = network.training
    network.eval()
    try:
        with warnings.catch_warnings():
            # torch 2.13 marks TorchScript deprecated; it is still the one format that keeps the
            # autoregressive sampling loop and loads without Python classes (see docs/policy.md).
            warnings.simplefilter("ignore", DeprecationWarning)
            scripted = torch.jit.script(network)
    finally:
        network.train(was_training)
    meta = {
        "format": MODEL_FORMAT,
        "contract_version": CONTRACT_VERSION,
        "created_unix": time.time(),
        "torch_version": torch.__version__,
        "obs_size": network.obs_size,
        "critic_size": network.critic_size,
        "frame_stack": [int(o) for o in frame_stack],
        "network": network.config.to_dict(),
        "tensor_sha256": tensor_checksum(network),
        "metadata": _jsonable(dict(metadata or {})),
    }
    for name in extensions or {}:
        if not hasattr(scripted, f"extension_{name}"):
            raise ValueError(f"extension {name!r} declared but the network has no exported method extension_{name}")
    if extensions:
        meta["extensions"] = sorted(extensions)
        meta["extension_info"] = _jsonable({name: dict(info) for name, info in extensions.items()})
    return write_archive(scripted, meta, path)


def write_archive(scripted: torch.jit.ScriptModule, meta: Mapping[str, Any], path: Path) -> Path:
    """Write a scripted network with its metadata and the contract as a model file, atomically: the one writer of
    the archive's layout, for single models and mixtures (`policies.mixture`) alike."""
    extra = {META_ENTRY: json.dumps(meta, sort_keys=True, indent=1), CONTRACT_ENTRY: contract_json()}
    with atomic_path(path) as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # TorchScript is this file format's contract
        torch.jit.save(scripted, str(tmp), _extra_files=extra)
    return path


def read_model_meta(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The metadata of a model file, read from the archive without loading the network.

    Raises:
        ModelFileError: Missing file, not a zip archive, no metadata entry, or unreadable metadata.
    """
    path = Path(path)
    if not path.is_file():
        raise ModelFileError(f"cannot load model file {path}: expected a file, found nothing at that path")
    try:
        with zipfile.ZipFile(path) as archive:
            names = [n for n in archive.namelist() if n.rsplit("/", 1)[-1] == META_ENTRY and "/extra/" in n]
            if not names:
                raise ModelFileError(
                    f"cannot load model file {path}: expected an osrs-rllib model ({MODEL_FORMAT}) with "
                    f"an {META_ENTRY} entry, found a zip archive without one (a plain TorchScript file or a "
                    "checkpoint? training writes model files to experiments/<name>/models/)"
                )
            raw = archive.read(names[0])
            damaged = archive.testzip()
            if damaged is not None:
                raise ModelFileError(
                    f"cannot load model file {path}: expected intact archive entries, found a CRC error in {damaged}"
                )
    except zipfile.BadZipFile as exc:
        raise ModelFileError(
            f"cannot load model file {path}: expected an osrs-rllib model ({MODEL_FORMAT}, a zip archive), "
            f"found a damaged or foreign file ({exc})"
        ) from None
    except (OSError, EOFError, RuntimeError, zipfile.LargeZipFile) as exc:
        raise ModelFileError(f"cannot load model file {path}: the archive is damaged ({exc})") from None
    try:
        meta = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ModelFileError(f"cannot load model file {path}: its {META_ENTRY} is not valid JSON ({exc})") from None
    if not isinstance(meta, dict):
        raise ModelFileError(f"cannot load model file {path}: its {META_ENTRY} is not a JSON object")
    return meta


def load_model_file(path: str | os.PathLike[str], expected_contract: str = CONTRACT_VERSION) -> ModelFile:
    """Load a model file for inference (torch only).

    Raises:
        ModelFileError: The file is missing or damaged, is not a model file, has another format version,
            or was written for a contract other than `expected_contract`; the message names what was
            expected and what was found.
    """
    path = Path(path)
    meta = read_model_meta(path)
    found_format = meta.get("format")
    if found_format not in (MODEL_FORMAT, MIXTURE_FORMAT):
        raise ModelFileError(
            f"cannot load model file {path}: expected file format {MODEL_FORMAT} (or {MIXTURE_FORMAT}), found "
            f"{found_format!r}"
        )
    listed = (meta.get("mixture") or {}).get("members") if found_format == MIXTURE_FORMAT else None
    if found_format == MIXTURE_FORMAT and not (isinstance(listed, list) and all(isinstance(m, dict) for m in listed)):
        raise ModelFileError(f"cannot load model file {path}: a mixture whose metadata does not list its members")
    found_contract = meta.get("contract_version")
    if found_contract != expected_contract:
        raise ModelFileError(
            f"cannot load model file {path}: expected contract {expected_contract}, found {found_contract!r} "
            "(the model was trained against another action/observation layout; retrain or use a matching "
            "osrs-rllib version)"
        )
    for key in ("obs_size", "critic_size"):
        if not isinstance(meta.get(key), int):
            raise ModelFileError(f"cannot load model file {path}: expected an integer {key} in its metadata")
    extra = {CONTRACT_ENTRY: ""}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            module = torch.jit.load(str(path), map_location="cpu", _extra_files=extra)
    except Exception as exc:  # torch raises bare RuntimeErrors of many kinds for bad archives
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ModelFileError(
            f"cannot load model file {path}: expected a TorchScript network in the archive, found a damaged "
            f"one ({first_line})"
        ) from None
    expected_sum = meta.get("tensor_sha256")
    found_sum = tensor_checksum(module)
    if expected_sum != found_sum:
        raise ModelFileError(
            f"cannot load model file {path}: expected weights with checksum {expected_sum}, found {found_sum} "
            "(the file was altered or damaged after it was written)"
        )
    module.eval()
    if listed is not None and (not hasattr(module, "member_count") or module.member_count() != len(listed)):
        raise ModelFileError(f"cannot load model file {path}: its metadata lists {len(listed)} members, the network "
                             "holds another number")
    try:
        contract = json.loads(extra[CONTRACT_ENTRY]) if extra[CONTRACT_ENTRY] else {}
    except json.JSONDecodeError:
        contract = {}
    return ModelFile(path=path, module=module, meta=meta, contract=contract)


def tensor_checksum(module: torch.nn.Module) -> str:
    """SHA-256 over every parameter and buffer (name, dtype, shape, bytes), eager and scripted alike.

    TorchScript does not verify tensor data on load (a cut-off storage loads as garbage), so the file
    records this checksum and `load_model_file` recomputes it on what torch actually loaded.
    """
    digest = hashlib.sha256()
    for name, tensor in sorted([*module.named_parameters(), *module.named_buffers()], key=lambda kv: kv[0]):
        t = tensor.detach().contiguous().cpu()
        digest.update(f"{name}|{t.dtype}|{tuple(t.shape)}|".encode())
        digest.update(t.numpy().tobytes() if t.dtype != torch.bfloat16 else t.float().numpy().tobytes())
    return digest.hexdigest()


def _jsonable(value: Any) -> Any:
    """Metadata must survive JSON: convert tuples, numpy scalars and paths; reject what cannot be written."""
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    item = getattr(value, "item", None)
    if callable(item):
        return item()
    return str(value)
