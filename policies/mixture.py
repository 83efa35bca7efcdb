"""Per-fight mixtures: several policies in one model file, one of them playing each fight.

Why: one exploiter learns the holes of one policy quickly, but a policy drawn at random per fight from several
late models of a run leaves it facing a different set of holes each fight, which it cannot learn as well
(docs/league.md, "A per-fight mixture"). A mixture is a *model file* like any other (``*.nhmodel``, loaded by
`policies.model_file.load_model_file`) so that everything that seats a model (``fight``, ``play``, ``serve``,
``exploit``) seats a mixture too:

* the archive is TorchScript: `NHPolicyMixture` holds the members' scripted networks unchanged, and its
  ``forward(obs, mask, deterministic, noise, members)`` takes one member index per row, so a program with torch
  alone plays a mixture by choosing a member when its fight starts and passing it with every tick;
* its metadata has the format `MIXTURE_FORMAT` (a reader that knows only single models refuses it instead of
  playing one member by mistake) and, under ``mixture``, every member's own metadata and how members are drawn;
* `policies.mixture_draw.fight_member` is the draw: a fight's member follows from its seed alone, uniformly and
  independently of the seed's other uses, so a fight replays with the same member whatever else shares its batch.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch
from torch import Tensor, nn

from envs.nh.contract import CONTRACT_VERSION, NUM_HEADS
from policies.fight_rules import fight_rules_of
from policies.mixture_draw import DRAW
from policies.model_file import MIXTURE_FORMAT, ModelFile, ModelFileError, _jsonable, tensor_checksum, write_archive

MAX_MEMBERS = 16
"""Most members a mixture holds: each is a full network in memory and on disk (~1.5 MB)."""


class NHPolicyMixture(nn.Module):
    """The members' networks side by side; each row of a batch is played by the member its index names."""

    def __init__(self, members: Sequence[nn.Module]) -> None:
        super().__init__()
        self.members = nn.ModuleList(members)
        self.num_heads = NUM_HEADS

    def forward(
        self,
        obs: Tensor,
        env_mask: Tensor,
        deterministic: bool = False,
        noise: Tensor | None = None,
        members: Tensor | None = None,
    ) -> tuple[Tensor, Tensor]:
        """(actions (B, 12) int64, log-probability (B,)) of each row's member (`members`: (B,) indices)."""
        if members is None:
            raise RuntimeError(
                "this model is a per-fight mixture: pass members, one member index per row, drawn when the fight "
                "starts (policies.mixture_draw.fight_member) and kept for the whole fight"
            )
        rows = obs.shape[0]
        actions = torch.zeros(rows, self.num_heads, dtype=torch.long)
        logp = torch.zeros(rows)
        for i, member in enumerate(self.members):
            idx = torch.nonzero(members == i).flatten()
            if idx.numel() > 0:
                part_noise = noise.index_select(0, idx) if noise is not None else None
                a, lp = member(obs.index_select(0, idx), env_mask.index_select(0, idx), deterministic, part_noise)
                actions[idx] = a
                logp[idx] = lp
        return actions, logp

    @torch.jit.export
    def member_count(self) -> int:
        return len(self.members)


def save_mixture_file(
    members: Sequence[ModelFile], path: str | Path, *, metadata: dict[str, Any] | None = None
) -> Path:
    """Write `members` (loaded single-model files) as one mixture file, atomically.

    The members keep their networks and metadata exactly (each member's weights checksum is its own file's), and
    the mixture's ``metadata`` defaults to the first member's, so a mixture of one run's models reads as that
    run's model to everything that looks up its training config and rules (`policies.fight_rules`).

    Raises:
        ModelFileError: Fewer than two members or more than `MAX_MEMBERS`, a member that is itself a mixture, the
            same weights twice, members that read different observations (sizes or frame stacking), or members
            trained under different fight rules.
    """
    if not 2 <= len(members) <= MAX_MEMBERS:
        raise ModelFileError(f"a mixture needs 2 to {MAX_MEMBERS} members, got {len(members)}")
    first = members[0]
    seen: dict[str, Path] = {}
    for m in members:
        if m.member_count > 1:
            raise ModelFileError(f"{m.path} is itself a mixture: give its members instead")
        shape = (m.obs_size, m.critic_size, m.frame_stack)
        if shape != (first.obs_size, first.critic_size, first.frame_stack):
            raise ModelFileError(
                f"{m.path} reads observations of {m.obs_size} entries stacked {m.frame_stack}, {first.path} "
                f"{first.obs_size} stacked {first.frame_stack}: a mixture's members must read the same observations"
            )
        if fight_rules_of(m).rules != fight_rules_of(first).rules:
            raise ModelFileError(
                f"{m.path} and {first.path} were trained under different fight rules (policies.fight_rules): a "
                "mixture plays every fight by one set of rules"
            )
        checksum = str(m.meta.get("tensor_sha256"))
        if checksum in seen:
            raise ModelFileError(f"{m.path} and {seen[checksum]} hold the same weights: a mixture's members differ")
        seen[checksum] = m.path
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # TorchScript is the model files' format
        scripted = torch.jit.script(NHPolicyMixture([m.module for m in members]))
    meta = {
        "format": MIXTURE_FORMAT,
        "contract_version": CONTRACT_VERSION,
        "created_unix": time.time(),
        "torch_version": torch.__version__,
        "obs_size": first.obs_size,
        "critic_size": first.critic_size,
        "frame_stack": first.frame_stack,
        "tensor_sha256": tensor_checksum(scripted),
        "metadata": _jsonable(dict(first.metadata if metadata is None else metadata)),
        "mixture": {"draw": DRAW, "members": [_jsonable(m.meta) for m in members]},
    }
    return write_archive(scripted, meta, path)


def write_member_file(model: ModelFile, index: int, path: str | Path) -> Path:
    """Write member `index` of a mixture as a single-model file, atomically: byte for byte the network and metadata
    the member had before it joined (its checksum checks on load), for tools that play single models only (the
    league's frozen targets, which `osrs-rllib exploit` draws one per fight)."""
    member = model.member(index)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_archive(member.module, member.meta, path)
