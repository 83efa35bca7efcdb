"""`NHEngine`'s interface backed by the compiled core (issue 15 item 4), and the one factory that picks an engine.

`CoreEngine` is a `FightBatch` of one fight behind the same attributes and results as `envs/nh/engine.py`'s
`NHEngine` (reset, step → `EngineStep`, `obs`, `masks`, `critic_obs`, `info`, `params`, `self_play`,
`progress`, `reward_weights`, `record_reward_components`); the differential tests hold it to the Python
engine value for value. It has no `sim`: code that reads the Python simulator's objects (the replay
recorder, `fight`, the evaluation hooks) keeps the Python engine (`engine: python`).

The fight's generator is the caller's (`rng`), as the adapters hand theirs to the Python engine's simulator:
the core copies its state in before each reset and step and back after, so that draws made between ticks
by the caller (opponent selection, seeds) interleave exactly as with the Python engine.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from envs.nh.contract import CRITIC_SIZE, HEAD_SIZES, OBS_SIZE, PARTIAL_INDICES
from envs.nh.core import load_core, reset_params, reward_weights_mapping
from envs.nh.engine import EngineStep, NHEngine
from envs.nh.loadouts import Build
from envs.nh.masks import NUM_MASK
from envs.nh.params import FightParams
from envs.nh.rewards import REWARD_COMPONENTS, RewardWeights
from envs.nh.sim import Outcome
from envs.nh.state import FightMode, Skill

EngineName = Literal["auto", "core", "python"]
ENGINES: tuple[str, ...] = ("auto", "core", "python")
"""`engine` option values: `core` needs the compiled extension, `auto` uses it when built, `python` never."""

_log = logging.getLogger(__name__)
_PARTIAL = np.asarray(PARTIAL_INDICES, dtype=np.intp)
_OUTCOMES: tuple[Outcome | None, ...] = (None, Outcome.WON, Outcome.LOST, Outcome.TIED)
"""The core's outcome codes (0 none, 1 won, 2 lost, 3 tied) as `sim.Outcome`."""
_HEAD_LIMITS = np.asarray(HEAD_SIZES, dtype=np.int64)
_BUILDS = list(Build)
_FIGHT_MODES = list(FightMode)
_HP = int(Skill.HITPOINTS)
_fallback_logged = False


class CoreEngine:
    """One NH fight on the compiled core, with `NHEngine`'s interface and results (see the module docstring)."""

    def __init__(
        self,
        params: FightParams | None = None,
        reward_weights: RewardWeights | None = None,
        seed: int | None = None,
        observe_all: bool = False,
    ) -> None:
        self._batch = load_core().FightBatch(1)
        self._params = params or FightParams()
        self.rng = np.random.default_rng(seed)
        """The fight's generator (the Python engine's `sim.rng`): its state moves in and out of the core."""
        self.observe_all = observe_all
        """Observe both players every tick, whoever acts (the core computes both anyway; see `obs`)."""
        self._weights = reward_weights or RewardWeights()
        self._batch.set_reward_weights(reward_weights_mapping(self._weights))
        self.record_reward_components = False
        """Also report each reward's components (the core computes them anyway: this only builds the dicts)."""
        self._obs3 = np.zeros((1, 2, OBS_SIZE), dtype=np.float32)
        self._masks3 = np.zeros((1, 2, NUM_MASK), dtype=bool)
        self.obs = np.zeros((2, OBS_SIZE), dtype=np.float32)
        self.masks = np.zeros((2, NUM_MASK), dtype=bool)
        """The rows `NHEngine` fills: the core writes both players' rows every tick (into `_obs3`/`_masks3`),
        and only the players the Python engine observes are copied here, so a seat it leaves alone (the
        simulator's baseline when nobody asked for its view) reads the same in both engines."""
        self._observed: tuple[int, ...] = (0, 1)
        self._actions = np.zeros((1, 2, len(HEAD_SIZES)), dtype=np.int32)
        self._has = np.zeros((1, 2), dtype=np.int32)
        self._results = np.zeros((1, 4), dtype=np.int32)
        self._rewards = np.zeros((1, 2), dtype=np.float64)
        self._components = np.zeros((1, 2, len(REWARD_COMPONENTS)), dtype=np.float64)
        self._baseline = (False, False)
        self._base_hp = (0, 0)
        self._started = False
        self._done = False

    @property
    def params(self) -> FightParams:
        return self._params

    @property
    def self_play(self) -> bool:
        return not self._baseline[1]

    @property
    def progress(self) -> float:
        """Training progress (completed rollouts) for the reward schedules of spec §17.4."""
        return float(self._batch.progress)

    @progress.setter
    def progress(self, value: float) -> None:
        self._batch.progress = float(value)

    @property
    def reward_weights(self) -> RewardWeights:
        return self._weights

    @reward_weights.setter
    def reward_weights(self, weights: RewardWeights) -> None:
        self._batch.set_reward_weights(reward_weights_mapping(weights))
        self._weights = weights

    def reset(self, seed: int | None = None, params: FightParams | None = None) -> None:
        """Reset the fight (spec §16.1) and write every player's first observation and masks."""
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        if params is not None:
            self._params = params
        self._batch.reset(0, self.rng.bit_generator.state, reset_params(self._params))
        self.rng.bit_generator.state = self._batch.rng_state(0)
        self._batch.write_masks(self._masks3, self._obs3)
        brief = self._batch.brief(0)
        self._baseline = (brief[6], brief[7])
        # `NHEngine._observe`'s rule: the opponent's row when someone needs it, the first player's unless it
        # is the simulator's baseline and not every seat is observed.
        need_opp = self.observe_all or self.self_play or self._params.include_opponent_observation
        self._observed = tuple(i for i in range(2) if not ((i == 1 and not need_opp)
                                                           or (i == 0 and self._baseline[0] and not self.observe_all)))
        self._copy_observed()
        self._base_hp = tuple(int(self._batch.player(0, i)["base"][_HP]) for i in range(2))
        self._started = True
        self._done = False

    def _copy_observed(self) -> None:
        for i in self._observed:
            self.obs[i] = self._obs3[0, i]
            self.masks[i] = self._masks3[0, i]

    def player_state(self, i: int) -> dict[str, Any]:
        """Player i's whole state as the core holds it (plain values: enums as numbers, see
        `tests/envs/core_snapshots.py`), for checks and tools that look inside a fight."""
        return dict(self._batch.player(0, i))

    def base_hp(self, i: int) -> int:
        """Player i's base hitpoints: the signals count damage and healing as fractions of it (§17.1)."""
        return self._base_hp[i]

    def critic_obs(self, i: int, out: np.ndarray | None = None) -> np.ndarray:
        """Player i's 269-entry critic input: own 176 entries + the opponent's 93 partial ones (§15.3)."""
        v = out if out is not None else np.zeros(CRITIC_SIZE, dtype=np.float32)
        v[:OBS_SIZE] = self.obs[i]
        if self._params.include_opponent_observation or self.self_play:
            v[OBS_SIZE:] = self.obs[1 - i][_PARTIAL]
        else:
            v[OBS_SIZE:] = 0.0
        return v

    def step(self, actions: Sequence[Sequence[int] | None]) -> EngineStep:
        """Simulate one tick with the agents' actions and return rewards and signals per player."""
        if not self._started or self._done:
            raise RuntimeError("the fight is over: call reset() before stepping again (spec §16.3)")
        for i in range(2):
            a = actions[i]
            if a is None:
                self._has[0, i] = 0
            else:
                values = np.asarray(a, dtype=np.int64)
                if values.shape != _HEAD_LIMITS.shape or bool(np.any((values < 0) | (values >= _HEAD_LIMITS))):
                    raise ValueError(f"action of player {i} must be 12 head values within {HEAD_SIZES}, got {a!r}")
                self._actions[0, i] = values
                self._has[0, i] = 1
        self._batch.set_rng_state(0, self.rng.bit_generator.state)
        self._batch.step_batch(
            self._actions, self._has, self._results, self._masks3, self._obs3, self._rewards, self._components
        )
        self.rng.bit_generator.state = self._batch.rng_state(0)
        self._copy_observed()
        r = self._results[0]
        outcomes = (_OUTCOMES[r[1]], _OUTCOMES[r[2]])
        signals = [None if self._baseline[i] else self._batch.signals(0, i) for i in range(2)]
        parts: list[dict[str, float] | None] | None = None
        if self.record_reward_components:
            values = self._components[0].tolist()
            parts = [
                None if self._baseline[i] else dict(zip(REWARD_COMPONENTS, v, strict=True))
                for i, v in enumerate(values)
            ]
        rewards = self._rewards[0].tolist()
        terminated, truncated = outcomes[0] is not None, bool(r[3])
        self._done = terminated or truncated
        return EngineStep(rewards, signals, outcomes, terminated, truncated, parts)

    def info(self, i: int, step: EngineStep | None = None) -> dict[str, Any]:
        """A small, JSON-friendly info dict for player i (the same keys and values as `NHEngine.info`)."""
        tick, _, build, fight_mode, hp0, hp1, _, _ = self._batch.brief(0)
        hp = (hp0, hp1)
        info: dict[str, Any] = {
            "tick": tick,
            "build": _BUILDS[build].value,
            "fight_mode": _FIGHT_MODES[fight_mode].value,
            "hp": hp[i],
            "opponent_hp": hp[1 - i],
            "episode_id": self._params.episode_id,
        }
        if step is not None:
            outcome = step.outcomes[i]
            if outcome is not None:
                info["outcome"] = outcome.value
            if step.signals[i] is not None:
                info["signals"] = step.signals[i]
        return info


AnyEngine = NHEngine | CoreEngine
"""Either engine: what `make_engine` returns and what the fight loops hand their hooks."""


def core_available() -> bool:
    """Whether the compiled core is built and importable here."""
    try:
        load_core()
    except ImportError:
        return False
    return True


def make_engine(
    engine: str = "auto",
    params: FightParams | None = None,
    reward_weights: RewardWeights | None = None,
    seed: int | None = None,
    observe_all: bool = False,
) -> NHEngine | CoreEngine:
    """The engine the `engine` option names: `core`, `python`, or `auto` (the core when built, else Python).

    `auto` without a built core logs one line per process and falls back; `core` without one is an
    `ImportError` that says how to build it.
    """
    global _fallback_logged
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {list(ENGINES)}, got {engine!r}")
    if engine == "core" or (engine == "auto" and core_available()):
        return CoreEngine(params, reward_weights, seed, observe_all)
    if engine == "auto" and not _fallback_logged:
        _fallback_logged = True
        _log.warning("compiled simulator core not built: using the Python engine (pip install -e . builds it)")
    return NHEngine(params, reward_weights, seed, observe_all)


def use_rng(engine: NHEngine | CoreEngine, rng: np.random.Generator) -> None:
    """Give the engine the caller's generator for the next reset (the adapters' `engine.sim.rng = rng`)."""
    if isinstance(engine, CoreEngine):
        engine.rng = rng
    else:
        engine.sim.rng = rng
