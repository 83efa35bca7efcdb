"""League snapshots as model files: a past self, stored by the league as bare weights, made playable.

The league keeps each snapshot of a learner as ``<experiment>/league/<id>.npz`` (`league/callback.py`): the
policy's weights and nothing else. `export_snapshot` turns one into an ordinary ``*.nhmodel`` (`osrs-rllib
export EXPERIMENT --snapshot main@v100`) so that past selves can be fought, rated, served, exploited, or held
against an exploiter of a later self (`benchmarks/exploit_transfer.py`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


class SnapshotError(ValueError):
    """The snapshot cannot be exported (missing, or not matching the experiment's network); the message says why."""


def _snapshot_order(snapshot_id: str) -> tuple[str, int]:
    """``main@v9`` before ``main@v10``: by source, then version number."""
    source, _, version = snapshot_id.rpartition("@v")
    return source, int(version) if version.isdigit() else -1


def export_snapshot(experiment: Path, snapshot_id: str, out: Path) -> dict[str, Any]:
    """A past self of the league (`<experiment>/league/<id>.npz`) as a model file, so that it can be fought,
    rated, served or exploited like any model: the league stores only its weights, and the experiment's config
    gives the network shape, the frame stack and the fight rules it trained under (recorded in the file)."""
    import numpy as np
    import torch

    from envs.nh.contract import frame_offsets
    from osrs_rllib.config import ConfigError, load_config
    from osrs_rllib.training.bc.learn import init_network
    from osrs_rllib.training.warm_start import INIT_FILE
    from policies.model_file import load_model_file, save_model_file

    store = experiment / "league"
    weights = store / f"{snapshot_id}.npz"
    if not weights.is_file():
        found = [p.stem for p in store.glob("*.npz")] if store.is_dir() else []
        found.sort(key=_snapshot_order)
        hint = f"; it has {len(found)}: {found[0]} … {found[-1]}" if found else " (no league/ folder: no league)"
        raise SnapshotError(f"experiment {experiment} has no snapshot {snapshot_id!r}{hint}")
    try:
        cfg = load_config(experiment / "config.yml")
    except ConfigError as exc:
        raise SnapshotError(f"{experiment}/config.yml does not load ({exc}): the network's shape is unknown") from None
    net = init_network(cfg)  # the shape training gave main: the config's network, its input sizes
    with np.load(weights) as data:
        state = {k.removeprefix("net."): torch.as_tensor(data[k]) for k in data.files}
    try:
        net.load_state_dict(state)
    except RuntimeError as exc:
        first = str(exc).splitlines()[0]
        raise SnapshotError(f"{weights} does not fit the network of {experiment}/config.yml: {first}") from None
    metadata: dict[str, Any] = {"experiment": experiment.name, "snapshot": snapshot_id, "config": cfg.to_dict()}
    league_files = sorted((experiment / "checkpoints").glob("iter-*/league.json"))
    if league_files:
        entries = json.loads(league_files[-1].read_text())["league"].get("snapshots", [])
        entry = next((e for e in entries if e.get("player_id") == snapshot_id), None)
        if entry is not None:
            # `env_steps` as a model file written by training has it (the run's, so exploit reports and cards
            # compare past selves with final models); a league saved before snapshots recorded it has none
            metadata |= {k: entry.get(k) for k in ("iteration", "env_steps", "training_steps")}
    init = experiment / INIT_FILE
    if init.is_file():
        # every learner of a warm-started run descends from the init model (osrs_rllib/training/warm_start.py), and a
        # snapshot is as much that model's descendant as the run's final file, which records it the same way
        metadata["init"] = json.loads(init.read_text())
    save_model_file(net, out, frame_stack=frame_offsets(cfg.env.frame_stack), metadata=metadata)
    return load_model_file(out).metadata
