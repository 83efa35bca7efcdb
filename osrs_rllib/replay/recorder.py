"""Recording fights as replays, from the engine a fight loop hands over (docs/replays.md).

A fight loop (`osrs_rllib.evaluation.fight.run_fights`, `osrs_rllib.analysis.play`) creates one `FightRecorder` right
after ``engine.reset`` and calls `FightRecorder.step` after every ``engine.step`` with what each seat did;
the recorder reads everything else from the engine: the simulator's objects on the Python engine
(``engine.sim``), the core's snapshots on the compiled core (`osrs_rllib.replay.state.CoreTickReader`). A fight
recorded on either engine gives the same replay, tick for tick and field for field. The masks a seat acted on
are the engine's masks before the step, which the recorder keeps from the previous call, so a loop needs no
pre-step hook.

The in-simulator baseline (spec §18) decides inside ``FightSim.step`` through game operations, not the
action interface: its seat's actions and masks are ``null``. Its decisions are reproduced exactly from the
seed (it draws only from the simulator's generator), and their effects are in its recorded state.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from envs.nh.contract import CONTRACT_VERSION, CRITIC_SIZE, HEADS, OBS_SIZE, FrameStack
from envs.nh.core_engine import AnyEngine, CoreEngine
from envs.nh.engine import EngineStep, NHEngine
from envs.nh.sim import Outcome
from osrs_rllib.replay.format import REPLAY_FORMAT, Replay, params_to_options
from osrs_rllib.replay.state import (
    SKILL_NAMES,
    SLOT_NAMES,
    CoreTickReader,
    LandingTracker,
    core_rng_digest,
    created_hits,
    item_names,
    player_state,
    rng_digest,
)
from policies.mixture_draw import fight_member
from policies.model_file import ModelFile

WINRATE_EXTENSION = "winrate"
"""Name of the outcome model's extension in a model file (`serving.models.model_extensions`)."""
SIDES = ("a", "b")


def mask_bits(mask: np.ndarray) -> str:
    """A 45-entry boolean mask as a string of ``0``/``1`` in head order (spec §14.3): compact and readable."""
    return (np.asarray(mask, dtype=np.uint8) + ord("0")).tobytes().decode("ascii")


def file_sha256(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def player_info(
    side: str, name: str, kind: str, source: str, model: ModelFile | None = None, deterministic: bool = True
) -> dict[str, Any]:
    """Who played a seat: a model file (name, file and weight checksums, frame stack, extensions), a ladder
    rung or the simulator's baseline."""
    info: dict[str, Any] = {"side": side, "name": name, "kind": kind, "source": source}
    if model is not None:
        info.update(
            file=Path(model.path).name,
            file_sha256=file_sha256(model.path),
            tensor_sha256=model.meta.get("tensor_sha256"),
            deterministic=deterministic,
            frame_stack=model.frame_stack,
            extensions=sorted(declared_extensions(model)),
            metadata={k: model.metadata[k] for k in ("experiment", "iteration", "env_steps") if k in model.metadata},
        )
    return info


def declared_extensions(model: ModelFile) -> set[str]:
    """Extensions the model file declares and carries as ``extension_<name>`` methods (as serving reads them)."""
    declared = model.meta.get("extensions") or model.metadata.get("extensions") or []
    return {n for n in declared if isinstance(n, str) and hasattr(model.module, f"extension_{n}")}


def winrate_fn(model: ModelFile) -> Callable[[torch.Tensor], np.ndarray] | None:
    """The model's win-probability method (stacked observations (B, D) → (B,)), or None if it has none."""
    if WINRATE_EXTENSION not in declared_extensions(model):
        return None
    method = getattr(model.module, f"extension_{WINRATE_EXTENSION}")

    def run(obs: torch.Tensor) -> np.ndarray:
        with torch.no_grad():
            out = method(obs)
        return out.reshape(obs.shape[0], -1)[:, 0].double().numpy()

    return run


class ModelReadout:
    """A model's value estimate and win probability for one seat of one fight, tick by tick.

    It stacks the seat's frames itself (the same offsets the model acts on) so that a fight loop can ask
    for the figures without reaching into the side that acts.
    """

    def __init__(self, model: ModelFile) -> None:
        self.model = model
        self.full_critic = model.critic_size != model.obs_size
        self.playing = model.member(0)
        """The network that plays the fight: the model, or the member of a per-fight mixture that its seed draws."""
        self.winrate = winrate_fn(self.playing)
        self.obs_stack = FrameStack(model.frame_stack, OBS_SIZE)
        self.critic_stack = FrameStack(model.frame_stack, CRITIC_SIZE) if self.full_critic else None

    def reset(self, fight_seed: int = 0) -> None:
        """Start a fight of this seed (which picks a mixture's member, `policies.mixture_draw.fight_member`)."""
        self.obs_stack.reset()
        if self.critic_stack is not None:
            self.critic_stack.reset()
        if self.model.member_count > 1:
            self.playing = self.model.member(fight_member(fight_seed, self.model.member_count))
            self.winrate = winrate_fn(self.playing)

    def read(self, engine: AnyEngine, seat: int) -> tuple[float, float | None]:
        """(value, win probability or None) of the seat's state before this tick's step."""
        obs = torch.from_numpy(self.obs_stack.push(engine.obs[seat])).unsqueeze(0)
        if self.critic_stack is not None:
            critic = torch.from_numpy(self.critic_stack.push(engine.critic_obs(seat))).unsqueeze(0)
        else:
            critic = obs
        module = self.playing.module
        with torch.no_grad():
            value = float(module.value(critic, module.features(obs))[0])
        return value, (float(self.winrate(obs)[0]) if self.winrate is not None else None)


class FightRecorder:
    """Builds the replay of one fight (see the module docstring for how a loop drives it)."""

    def __init__(
        self,
        engine: AnyEngine,
        seed: int,
        players: Sequence[dict[str, Any]],
        acting: Sequence[bool],
        extra: dict[str, Any] | None = None,
    ) -> None:
        self.acting = tuple(bool(a) for a in acting)
        self.header: dict[str, Any] = {
            "format": REPLAY_FORMAT,
            "contract_version": CONTRACT_VERSION,
            "created_unix": time.time(),
            "seed": int(seed),
            "params": params_to_options(engine.params),
            "build": engine.build.value,
            "fight_type": engine.fight_mode.value,
            "players": [dict(p) for p in players],
            "heads": [{"id": h.id, "values": [v.name.lower() for v in h.values]} for h in HEADS],
            "slots": list(SLOT_NAMES),
            "skills": list(SKILL_NAMES),
            **(extra or {}),
        }
        self.core = CoreTickReader(engine) if isinstance(engine, CoreEngine) else None
        self.tracker = LandingTracker(engine.sim) if self.core is None else None
        self.ticks: list[dict[str, Any]] = [self._tick(engine, None, [None, None], [None, None], [None, None])]
        self._masks = self._current_masks(engine)

    def _current_masks(self, engine: AnyEngine) -> list[str | None]:
        return [mask_bits(engine.masks[i]) if self.acting[i] else None for i in (0, 1)]

    def _tick(
        self,
        engine: AnyEngine,
        masks: Sequence[str | None] | None,
        actions: Sequence[Any],
        values: Sequence[float | None],
        win_probs: Sequence[float | None],
    ) -> dict[str, Any]:
        first = masks is None
        hits: list[list[dict[str, Any]]] = [[], []]
        landed: list[list[dict[str, Any]]] = [[], []]
        if self.core is not None:
            if not first:
                hits, landed = self.core.step()
            players, splats, rng = self.core.players(), self.core.splats(), core_rng_digest(engine)
        else:
            assert self.tracker is not None and isinstance(engine, NHEngine)
            sim = engine.sim
            if not first:
                hits, landed = [created_hits(sim, i) for i in (0, 1)], self.tracker.landed(sim)
            players = [player_state(p) for p in sim.players]
            splats = [list(p.hitsplats) for p in sim.players]
            rng = rng_digest(sim)
        return {
            "t": engine.tick,
            "players": players,
            "actions": [None if a is None else [int(x) for x in a] for a in actions],
            "masks": list(masks) if masks is not None else [None, None],
            "hits": hits,
            "landed": landed,
            "splats": splats,
            "value": [None if v is None or v != v else float(v) for v in values],
            "win_prob": [None if w is None else float(w) for w in win_probs],
            "rng": rng,
        }

    def step(
        self,
        engine: AnyEngine,
        actions: Sequence[Any],
        values: Sequence[float | None] = (None, None),
        win_probs: Sequence[float | None] = (None, None),
    ) -> None:
        """Record the tick just simulated: each seat's action (None for the baseline), and the value and win
        probability its model gave before acting (None where no model played or it has no such output)."""
        acts = [actions[i] if self.acting[i] and i < len(actions) else None for i in (0, 1)]
        self.ticks.append(self._tick(engine, self._masks, acts, list(values), list(win_probs)))
        self._masks = self._current_masks(engine)

    def finish(self, step: EngineStep) -> Replay:
        """The finished replay (call after the last tick's `step`)."""
        outcome = step.outcomes[0]
        winner = {Outcome.WON: 0, Outcome.LOST: 1}.get(outcome) if outcome is not None else None
        end = {
            "outcome": outcome.value if outcome is not None else None,
            "winner": winner,
            "truncated": bool(step.truncated),
            "ticks": len(self.ticks) - 1,
        }
        header = dict(self.header)
        header["items"] = item_names([p["equipment"] for t in self.ticks for p in t["players"]])
        return Replay(header, self.ticks, end)


def replay_name(fight: int) -> str:
    """File name of fight k's replay in a record directory (sorted in fight order)."""
    return f"fight-{fight:06d}.nhreplay"
