"""Who the person plays against, and the fight parameters of a game.

An opponent is named the way every other command names a side: a model file (``*.nhmodel``), ``models/<name>``
(the shipped models), an experiment (its ``models/best.nhmodel``, else ``latest``), a directory of model files
(each one an opponent), a ladder rung or ``baseline``. With ``--server HOST:PORT`` the names are those a running
``osrs-rllib serve`` answers for (its models and the ladder).

Why the opponent acts through `osrs_rllib.evaluation.fight.resolve_side`: that is the seat `osrs-rllib fight`,
evaluation and ``rate`` use (`ModelSide`: one deterministic forward pass per decision; `LadderSeat`: one bot per fight,
seeded from the fight seed and seat), so the agent you meet here plays as it was measured. Over the network it
is `serving.client.ServeClient`, the client the serving docs and benchmarks use.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from envs.nh.contract import NUM_LOGITS, OBS_SIZE
from envs.nh.params import OPPONENT_AGENT, OPPONENT_BASELINE, FightParams
from envs.opponents import LADDER, needs_opponent_action
from osrs_rllib.evaluation import BASELINE, MODEL_SUFFIX, SideSeat, resolve_side

logger = logging.getLogger(__name__)

FALLBACK_OPPONENT = "expert"
"""The opponent when none is named and ``models/`` holds no model file: the strongest honest ladder rung."""
WARM_UP_CALLS = 3
"""Forward passes a model makes when loaded (TorchScript's profiling runs), so the first decision of a game is
as quick as the others."""
OPPONENT_SEAT = 1
"""The person plays seat 0, the opponent seat 1 (spec §13.1: the seat an opponent agent takes)."""
PLAY_OPTIONS: Mapping[str, Any] = {
    "only_switch_prayer_when_about_to_attack": False,
    "only_switch_gear_when_attack_soon": False,
    "allow_smite": False,
    "allow_redemption": False,
    "allow_moving_if_can_attack": False,
    "randomize_gear": True,
    "random_build_options": ["LMS_PURE", "LMS_ZERKER", "LMS_MED", "PURE", "ZERKER", "MED"],
    "death_match": True,
    "max_episode_ticks": 2000,
}
"""Reset options of a game against a scripted opponent: the §13.3 "core" preset's masks and builds, which the
shipped models train with (configs/nh.yml), so every opponent meets the person under the same rules. A model
opponent's own training options (from its file) take precedence: it plays under the masks it learned."""
_SET_BY_PLAY = frozenset(
    {"opponent", "first_player_baseline", "include_opponent_observation", "training", "account_build",
     "randomize_build", "fight_type", "randomize_fight_type", "agent", "target", "episode_id"}
)  # fmt: skip
"""Reset options a game sets itself (who sits where, the build and fight type asked for, fixed spawns)."""


class OpponentError(ValueError):
    """An opponent name that names nothing playable (the message lists what was looked for)."""


@dataclass(frozen=True)
class Opponent:
    """One opponent the page offers.

    Attributes:
        name: What the page and the score table call it.
        kind: ``model``, ``ladder``, ``baseline`` or ``served`` (a name on an ``osrs-rllib serve``).
        source: The model file, the rung's name, or ``HOST:PORT/name``.
        options: Reset options a model file was trained with (`policies.fight_rules`: its settings and rules),
            applied over `PLAY_OPTIONS`; ``--set`` options override them.
        server: ``(host, port)`` of the server answering for a ``served`` opponent.
        frame_stack: Frame offsets a ``served`` model asks for (spec §15.3; the server lists them).
        sampling: The model's default mode of play is sampling (its file's ``play_mode``, `policies.play_mode`);
            False: greedy, also for a file that names none.
    """

    name: str
    kind: str
    source: str
    options: Mapping[str, Any] = field(default_factory=dict)
    server: tuple[str, int] | None = None
    frame_stack: tuple[int, ...] = (0,)
    sampling: bool = False
    members: tuple[str, ...] = ()
    """A ``served`` per-fight mixture's members' served names: each game is played by the one its seed draws."""

    @property
    def prescient(self) -> bool:
        """Whether it must see the person's action of the tick first (the ladder's ``prescient`` upper bound)."""
        rung = self.source.rsplit("/", 1)[-1]
        return self.kind in ("ladder", "served") and rung in LADDER and needs_opponent_action(rung)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "source": self.source}

    def params(self, build: str | None, fight_type: str | None, extra: Mapping[str, Any] | None = None) -> FightParams:
        """The fight parameters of one game: `PLAY_OPTIONS`, the opponent's training options, `extra` (``--set``),
        then the game's own: the build asked for (else drawn by the simulator from ``random_build_options``,
        §12.7), the fight type asked for (else the build's own, §13.2), fixed spawns (§16.2) and who sits where.

        Raises:
            ParamError: An unknown build, fight type or option (the message lists the valid ones).
        """
        options: dict[str, Any] = {**PLAY_OPTIONS, **{k: v for k, v in self.options.items() if k not in _SET_BY_PLAY}}
        options.update(extra or {})
        options.update(
            opponent=OPPONENT_BASELINE if self.kind == "baseline" else OPPONENT_AGENT,
            first_player_baseline=False,
            include_opponent_observation=False,
            training=False,
            randomize_build=build is None,
            randomize_fight_type=False,
            fight_type=fight_type,
        )
        if build is not None:
            options["account_build"] = build
        return FightParams.from_options(options)


class GameSeat(Protocol):
    """The opponent in one game: acts on its stacked observation and mask (the `batched_fights.Seat` batch of one)."""

    frame_stack: Sequence[int] | int
    needs_opponent_action: bool

    def act(self, obs: np.ndarray, mask: np.ndarray, opponent_action: np.ndarray | None = None) -> np.ndarray:
        """The 12 head values for one stacked observation and its 45-entry mask."""
        ...

    def close(self) -> None: ...


class _SideGameSeat:
    """A `fight` side (model file or ladder rung) in one game, with the game's seed as its fight seed."""

    def __init__(self, side: SideSeat, fight_seed: int) -> None:
        self._side = side
        self._seat = side.seat()
        self._seed = int(fight_seed)
        self.frame_stack = self._seat.frame_stack
        self.needs_opponent_action = self._seat.needs_opponent_action

    def act(self, obs: np.ndarray, mask: np.ndarray, opponent_action: np.ndarray | None = None) -> np.ndarray:
        if self.needs_opponent_action:
            out = self._seat.act(obs[None], mask[None], [self._seed], opponent_actions=opponent_action[None])
        else:
            out = self._seat.act(obs[None], mask[None], [self._seed])
        return np.asarray(out[0], dtype=np.int64)

    def close(self) -> None:
        self._side.forget(self._seed)


class _ServedGameSeat:
    """A name on a running ``osrs-rllib serve``, one connection per game (opened by the first decision, in the
    decision thread, so that a slow server delays the opponent and never the clock)."""

    def __init__(self, opponent: Opponent, sampling: bool = False, fight_seed: int = 0) -> None:
        from serving.client import member_for_fight

        assert opponent.server is not None
        self._opponent = opponent
        row = {"name": opponent.source.rsplit("/", 1)[-1], "kind": "mixture" if opponent.members else "model",
               "members": list(opponent.members)}  # fmt: skip
        self._name = member_for_fight(row, fight_seed)
        self._deterministic = not sampling
        self._client: Any = None
        self._lock = threading.Lock()
        self.frame_stack = opponent.frame_stack
        self.needs_opponent_action = opponent.prescient

    def act(self, obs: np.ndarray, mask: np.ndarray, opponent_action: np.ndarray | None = None) -> np.ndarray:
        from serving.client import ServeClient

        with self._lock:
            if self._client is None:
                host, port = self._opponent.server or ("127.0.0.1", 0)
                self._client = ServeClient(host, port, timeout_s=10.0)
            reply = self._client.act(self._name, obs.reshape(-1, OBS_SIZE), mask, deterministic=self._deterministic)
        return np.asarray(reply.action, dtype=np.int64)

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None


class OpponentHost:
    """An opponent and what it needs across games: a model is loaded once (on first use) and serves every
    game; a ladder rung keeps one bot per game, seeded from the game's seed. A model plays its default mode
    (`Opponent.sampling`) unless `model_sampling` says which (``play --model-sampling/--model-greedy``)."""

    def __init__(self, opponent: Opponent, model_sampling: bool | None = None) -> None:
        self.opponent = opponent
        self.sampling = opponent.sampling if model_sampling is None else model_sampling
        self._side: SideSeat | None = None
        self._lock = threading.Lock()

    @property
    def model(self) -> Any:
        """The loaded `policies.model_file.ModelFile` of a model opponent (for the replay header), else None."""
        return getattr(self._side, "model", None)

    def load(self) -> None:
        """Load the model file now (a few hundred ms), so that the first game does not wait for it."""
        if self.opponent.kind in ("model", "ladder"):
            with self._lock:
                if self._side is None:
                    factory = resolve_side(self.opponent.source, self.sampling)
                    assert factory is not None
                    side = factory(OPPONENT_SEAT)
                    model = getattr(side, "model", None)
                    if model is not None:  # TorchScript optimises on its first calls: make them here, not in a game
                        rows = model.member_count  # every member of a per-fight mixture
                        obs = np.zeros((rows, model.obs_size), dtype=np.float32)
                        for _ in range(WARM_UP_CALLS):
                            model.act(obs, np.ones((rows, NUM_LOGITS), dtype=np.float32), members=np.arange(rows))
                    self._side = side

    def game_seat(self, fight_seed: int) -> GameSeat | None:
        """The opponent's seat in a game with this seed; None for the in-simulator baseline (spec §18)."""
        kind = self.opponent.kind
        if kind == "baseline":
            return None
        if kind == "served":
            return _ServedGameSeat(self.opponent, self.sampling, fight_seed)
        self.load()
        assert self._side is not None
        return _SideGameSeat(self._side, fight_seed)


def _model(path: Path, name: str | None = None) -> Opponent:
    """A model file as an opponent, with the options it trained with: its settings (builds, gear randomisation)
    and its rules (the §14.3 masks, death match), read by `policies.fight_rules`, the one reader of them."""
    from policies.fight_rules import fight_rules_of
    from policies.model_file import ModelFileError, read_model_meta
    from policies.play_mode import samples_by_default

    label = name or path.stem
    try:
        recorded = fight_rules_of(path, name=label)
        sampling = samples_by_default(read_model_meta(path).get("metadata") or {})
    except (ModelFileError, ValueError) as exc:
        raise OpponentError(str(exc)) from None
    options = {**recorded.training_options, **(recorded.rules or {})}
    return Opponent(label, "model", str(path), options, sampling=sampling)


def resolve_opponents(
    specs: Sequence[str],
    *,
    experiments_dir: str | Path = "experiments",
    models_dir: str | Path = "models",
    server: str | None = None,
) -> list[Opponent]:
    """The opponents named on the command line, or the defaults (`default_opponents`) when none is.

    Raises:
        OpponentError: A name that is none of the things the module docstring lists (the message says what
            was looked for), or a server that cannot be reached or does not serve the name.
    """
    if server is not None:
        return _served(specs, server)
    if not specs:
        found, _ = default_opponents(models_dir)
        return found
    out: list[Opponent] = []
    for spec in specs:
        out += _resolve_one(spec, Path(experiments_dir), Path(models_dir))
    names = [o.name for o in out]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise OpponentError(f"opponents named twice: {twice}; name each once")
    return out


def default_opponents(models_dir: str | Path = "models") -> tuple[list[Opponent], str | None]:
    """The shipped models (every ``*.nhmodel`` in `models_dir`), else the `FALLBACK_OPPONENT` rung; the second
    value is the line to print when falling back."""
    files = sorted(Path(models_dir).glob(f"*{MODEL_SUFFIX}")) if Path(models_dir).is_dir() else []
    if files:
        return [_model(f) for f in files], None
    note = (f"no model files in {models_dir}/: playing the {FALLBACK_OPPONENT!r} ladder rung (name an opponent to "
            "change)")
    return [Opponent(FALLBACK_OPPONENT, "ladder", FALLBACK_OPPONENT)], note


def _resolve_one(spec: str, experiments_dir: Path, models_dir: Path) -> list[Opponent]:
    if spec == BASELINE:
        return [Opponent(BASELINE, "baseline", BASELINE)]
    if spec in LADDER:
        return [Opponent(spec, "ladder", spec)]
    path = Path(spec)
    if spec.endswith(MODEL_SUFFIX):
        if not path.is_file():
            raise OpponentError(f"no model file at {path}")
        return [_model(path)]
    shipped = Path(*path.parts[1:]) if len(path.parts) > 1 and path.parts[0] == "models" else path
    candidates = [path.with_name(path.name + MODEL_SUFFIX), models_dir / (str(shipped) + MODEL_SUFFIX)]
    for c in candidates:
        if c.is_file():
            return [_model(c)]
    for exp in (path, experiments_dir / spec):
        for name in ("best", "latest"):
            f = exp / "models" / f"{name}{MODEL_SUFFIX}"
            if f.is_file():
                return [_model(f, f"{exp.name}/{name}")]
    if path.is_dir():
        files = sorted(path.glob(f"*{MODEL_SUFFIX}"))
        if files:
            return [_model(f) for f in files]
    raise OpponentError(
        f"unknown opponent {spec!r}: expected a model file (*{MODEL_SUFFIX}), models/<name>, an experiment "
        f"(directory or name under {experiments_dir}/, with models/best{MODEL_SUFFIX}), a directory of model files, "
        f"'{BASELINE}' or a ladder rung ({', '.join(LADDER)}); looked at {', '.join(str(c) for c in candidates)}"
    )


def parse_server(server: str) -> tuple[str, int]:
    """``HOST:PORT`` → (host, port).

    Raises:
        OpponentError: Not HOST:PORT with a port number.
    """
    host, sep, port = server.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise OpponentError(f"--server expects HOST:PORT (e.g. 127.0.0.1:9999), got {server!r}")
    return host, int(port)


def _served(specs: Sequence[str], server: str) -> list[Opponent]:
    from serving.client import ServeClient, ServeReplyError

    host, port = parse_server(server)
    try:
        with ServeClient(host, port, timeout_s=10.0) as client:
            listed = {m["name"]: m for m in client.models()}
    except (OSError, ServeReplyError) as exc:
        raise OpponentError(f"cannot reach osrs-rllib serve at {server}: {exc} (is it running? osrs-rllib serve "
                            "status)") from None  # fmt: skip
    names = list(specs) or [n for n, m in listed.items() if m.get("kind") in ("model", "mixture")
                            and "mixtureOf" not in m] or [FALLBACK_OPPONENT]  # fmt: skip
    out = []
    for name in names:
        if name not in listed:
            raise OpponentError(f"{server} does not serve {name!r}; it serves {', '.join(listed)}")
        members = tuple(listed[name].get("members") or ()) if listed[name].get("kind") == "mixture" else ()
        first = listed[members[0]] if members and members[0] in listed else listed[name]
        frames = tuple(int(f) for f in first.get("frameStack") or (0,))
        sampling = first.get("playMode") == "sampling"  # the server lists the file's play_mode
        out.append(Opponent(name, "served", f"{host}:{port}/{name}", {}, (host, port), frames, sampling, members))
    return out
