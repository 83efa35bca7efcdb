"""`NHEngine`'s interface backed by the compiled core, and the one factory that picks an engine.

`CoreEngine` is one fight of a compiled `FightBatch` behind the same attributes and results as
`envs/nh/engine.py`'s `NHEngine` (reset, step → `EngineStep`, `obs`, `masks`, `critic_obs`, `info`, `params`,
`self_play`, `progress`, `reward_weights`, `record_reward_components`, `tick`, `build`, `fight_mode`,
`hitsplats`); the differential tests hold it to the Python engine value for value. On its own it is a batch of
one. Loops that run many fights at once (the lockstep fight loop, the training sampler) put their fights on one
`CoreFights` and step them together with `step_engines`: one core call per tick for the whole batch.

The fight's generator is the caller's (`rng`), as the adapters hand theirs to the Python engine's simulator:
the core takes its state at reset and gives it back after, takes it again at the first tick and gives it back
when the fight ends (or whenever `rng` is read), so that draws the caller makes between fights and before the
first tick (opponent selection, seeds) interleave exactly as with the Python engine.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from envs.nh.contract import CRITIC_SIZE, HEAD_SIZES, OBS_SIZE, PARTIAL_INDICES, check_action
from envs.nh.core import StaleCoreError, load_core, reset_params, reward_weights_mapping
from envs.nh.engine import EngineStep, NHEngine, fight_info
from envs.nh.loadouts import Build
from envs.nh.masks import NUM_MASK
from envs.nh.params import FightParams, ParamError
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
_BUILDS = list(Build)
_FIGHT_MODES = list(FightMode)
_HP = int(Skill.HITPOINTS)
_fallback_logged = False


class CoreFights:
    """Fights on one compiled `FightBatch`, with the arrays `step_batch` writes, allocated once.

    Each fight is driven through its `CoreEngine` view (`engine(k)`); a loop that steps many fights at once
    stages every live fight's actions (`CoreEngine.stage`), steps them all in one core call (`step_staged`),
    then reads each fight's results (`CoreEngine.finish`): that is what `step_engines` does. The reward weights
    and the training progress belong to the batch: every fight on it shares them.
    """

    def __init__(self, n: int, reward_weights: RewardWeights | None = None) -> None:
        if n < 1:
            raise ValueError(f"a batch needs at least one fight, got {n}")
        self.n = n
        self.batch = load_core().FightBatch(n)
        self.weights = reward_weights or RewardWeights()
        self.batch.set_reward_weights(reward_weights_mapping(self.weights))
        self.obs = np.zeros((n, 2, OBS_SIZE), dtype=np.float32)
        self.masks = np.zeros((n, 2, NUM_MASK), dtype=bool)
        self.actions = np.zeros((n, 2, len(HEAD_SIZES)), dtype=np.int32)
        self.has = np.zeros((n, 2), dtype=np.int32)
        self.results = np.zeros((n, 4), dtype=np.int32)
        self.rewards = np.zeros((n, 2), dtype=np.float64)
        self.components = np.zeros((n, 2, len(REWARD_COMPONENTS)), dtype=np.float64)
        self.seen_obs = np.zeros((n, 2, OBS_SIZE), dtype=np.float32)
        self.seen_masks = np.zeros((n, 2, NUM_MASK), dtype=bool)
        """Each fight's `CoreEngine.obs`/`masks` (views of its rows): the rows of the players it observes, copied
        after each tick (`CoreEngine.finish`, or `copy_observed` for many fights at once)."""
        self.observed = np.zeros((n, 2), dtype=bool)
        """The players each fight's engine observes (`CoreEngine.reset`)."""
        self.critic_sees_opponent = np.zeros(n, dtype=bool)
        """Whether each fight's critic inputs carry the opponent's partial row (`CoreEngine.critic_obs`)."""
        self.staged = np.zeros(n, dtype=bool)
        """Fights whose actions for the next tick are in `actions`/`has`."""
        self.running = np.zeros(n, dtype=bool)
        """Fights reset and not over: those the core steps."""
        self._views: list[CoreEngine | None] = [None] * n

    def set_weights(self, weights: RewardWeights) -> None:
        self.batch.set_reward_weights(reward_weights_mapping(weights))
        self.weights = weights

    def engine(
        self, k: int, params: FightParams | None = None, seed: int | None = None, observe_all: bool = False
    ) -> CoreEngine:
        """The `CoreEngine` of fight k (one per fight: asking twice is an error, two drivers would collide)."""
        if self._views[k] is not None:
            raise ValueError(f"fight {k} of this batch already has its engine")
        view = CoreEngine(params, self.weights, seed, observe_all, fights=self, index=k)
        self._views[k] = view
        return view

    def step_staged(self) -> None:
        """One tick of every staged fight, in one core call.

        The core steps every running fight, so every running fight must be staged: a fight left out would
        replay its previous actions. That is an error here rather than a wrong tick.
        """
        if not np.array_equal(self.staged, self.running):
            missing = np.flatnonzero(self.running & ~self.staged).tolist()
            raise RuntimeError(f"running fights {missing} have no staged actions: stage every running fight")
        self.batch.step_batch(
            self.actions, self.has, self.results, self.masks, self.obs, self.rewards, self.components
        )
        self.staged[:] = False

    def copy_observed(self, fights: np.ndarray) -> None:
        """`CoreEngine.finish`'s copy of the observed players' rows, for every fight in the boolean `fights` at once
        (the array path of `envs.rllib_env.CoreEnvBatch`)."""
        where = (self.observed & fights[:, None])[:, :, None]
        np.copyto(self.seen_obs, self.obs, where=where)
        np.copyto(self.seen_masks, self.masks, where=where)

    def step_one(self, k: int) -> None:
        """One tick of fight k alone (the others keep their rows)."""
        self.batch.step_batch(
            self.actions, self.has, self.results, self.masks, self.obs, self.rewards, self.components, only=k
        )
        self.staged[k] = False


class CoreEngine:
    """One NH fight on the compiled core, with `NHEngine`'s interface and results (see the module docstring).

    On its own it is a batch of one; `CoreFights.engine(k)` makes it fight k of a shared batch, so that a
    loop over many fights can step them all in one core call (`step_engines`).
    """

    def __init__(
        self,
        params: FightParams | None = None,
        reward_weights: RewardWeights | None = None,
        seed: int | None = None,
        observe_all: bool = False,
        *,
        fights: CoreFights | None = None,
        index: int = 0,
    ) -> None:
        self._fights = fights if fights is not None else CoreFights(1, reward_weights)
        self._k = index
        self._batch = self._fights.batch
        self._params = params or FightParams()
        self._rng = np.random.default_rng(seed)
        self._rng_outside = True
        """Whether the generator's current state is in `_rng` (else in the core: see `rng`)."""
        self.observe_all = observe_all
        """Observe both players every tick, whoever acts (the core computes both anyway; see `obs`)."""
        self.record_reward_components = False
        """Also report each reward's components (the core computes them anyway: this only builds the dicts)."""
        self.obs = self._fights.seen_obs[index]
        self.masks = self._fights.seen_masks[index]
        """The rows `NHEngine` fills: the core writes both players' rows every tick (into the batch's arrays),
        and only the players the Python engine observes are copied here, so a seat it leaves alone (the
        simulator's baseline when nobody asked for its view) reads the same in both engines. Views of the
        batch's `seen_obs`/`seen_masks`, so that one copy can serve every fight of a batch."""
        self._observed: tuple[int, ...] = (0, 1)
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
    def fights(self) -> CoreFights:
        """The batch this fight is on."""
        return self._fights

    @property
    def index(self) -> int:
        """This fight's row in its batch's arrays."""
        return self._k

    @property
    def rng(self) -> np.random.Generator:
        """The fight's generator (the Python engine's `sim.rng`).

        The core holds its state while the fight runs; it comes out after `reset`, when the fight ends and when
        read here, and goes back in before the next tick, so that draws the caller makes between reset and the
        first tick (the adapters seed a scripted opponent from it) interleave exactly as with the Python engine.
        """
        if self._started and not self._done and not self._rng_outside:
            self._rng.bit_generator.state = self._batch.rng_state(self._k)
            self._rng_outside = True
        return self._rng

    @rng.setter
    def rng(self, rng: np.random.Generator) -> None:
        self._rng = rng
        self._rng_outside = True

    @property
    def progress(self) -> float:
        """Training progress (completed rollouts) for the reward schedules of spec §17.4 (the batch's)."""
        return float(self._batch.progress)

    @progress.setter
    def progress(self, value: float) -> None:
        self._batch.progress = float(value)

    @property
    def reward_weights(self) -> RewardWeights:
        return self._fights.weights

    @reward_weights.setter
    def reward_weights(self, weights: RewardWeights) -> None:
        self._fights.set_weights(weights)

    @property
    def tick(self) -> int:
        """Ticks simulated in this fight (the Python simulator's `sim.tick`)."""
        return int(self._batch.brief(self._k)[0])

    @property
    def done(self) -> bool:
        return self._done

    @property
    def build(self) -> Build:
        return _BUILDS[self._batch.brief(self._k)[2]]

    @property
    def fight_mode(self) -> FightMode:
        return _FIGHT_MODES[self._batch.brief(self._k)[3]]

    def hitsplats(self, i: int) -> tuple[int, ...]:
        """The hitsplats player i was shown on the last tick (damage it took, spec §4.5)."""
        return self._batch.hitsplats(self._k, i)

    def reset(self, seed: int | None = None, params: FightParams | None = None) -> None:
        """Reset the fight (spec §16.1) and write every player's first observation and masks."""
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        if params is not None:
            self._params = params
        k, batch = self._k, self._batch
        batch.reset(k, self._rng.bit_generator.state, reset_params(self._params))
        self._rng.bit_generator.state = batch.rng_state(k)
        self._rng_outside = True
        batch.write_masks(self._fights.masks, self._fights.obs, k)
        brief = batch.brief(k)
        self._baseline = (brief[6], brief[7])
        # `NHEngine._observe`'s rule: the opponent's row when someone needs it, the first player's unless it
        # is the simulator's baseline and not every seat is observed.
        need_opp = self.observe_all or self.self_play or self._params.include_opponent_observation
        self._observed = tuple(i for i in range(2) if not ((i == 1 and not need_opp)
                                                           or (i == 0 and self._baseline[0] and not self.observe_all)))
        self._fights.observed[k] = [i in self._observed for i in range(2)]
        self._fights.critic_sees_opponent[k] = self._params.include_opponent_observation or self.self_play
        self._copy_observed()
        self._base_hp = tuple(int(batch.player(k, i)["base"][_HP]) for i in range(2))
        self._started = True
        self._done = False
        self._fights.running[k] = True
        self._fights.staged[k] = False

    def _copy_observed(self) -> None:
        obs, masks = self._fights.obs[self._k], self._fights.masks[self._k]
        for i in self._observed:
            self.obs[i] = obs[i]
            self.masks[i] = masks[i]

    def player_state(self, i: int) -> dict[str, Any]:
        """Player i's whole state as the core holds it (plain values: enums as numbers, see
        `tests/envs/core_snapshots.py`), for checks and tools that look inside a fight."""
        return dict(self._batch.player(self._k, i))

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
        self.stage(actions)
        self._fights.step_one(self._k)
        return self.finish()

    def stage(self, actions: Sequence[Sequence[int] | None]) -> None:
        """Check the tick's actions and put them where the next core step reads them (see `CoreFights`)."""
        if not self._started or self._done:
            raise RuntimeError("the fight is over: call reset() before stepping again (spec §16.3)")
        fights, k = self._fights, self._k
        for i in range(2):
            a = actions[i]
            if a is None:
                fights.has[k, i] = 0
            else:
                try:
                    fights.actions[k, i] = check_action(a)
                except ValueError as exc:
                    raise ValueError(f"action of player {i}, 12 head values: {exc}") from None
                fights.has[k, i] = 1
        self.push_rng()
        fights.staged[k] = True

    def push_rng(self) -> None:
        """Hand the generator's state to the core for the next tick, if it is outside (see `rng`)."""
        if self._rng_outside:
            self._batch.set_rng_state(self._k, self._rng.bit_generator.state)
            self._rng_outside = False

    def reward_parts(self, i: int) -> np.ndarray:
        """Player i's reward components of the last tick, in `REWARD_COMPONENTS` order (a view of the batch's row)."""
        return self._fights.components[self._k, i]

    def signals(self, i: int) -> dict[str, Any] | None:
        """Player i's reward signals of the last tick (`EngineStep.signals[i]`; None for the simulator's baseline)."""
        return None if self._baseline[i] else self._batch.signals(self._k, i)

    def finish(self) -> EngineStep:
        """The results of the tick the core just stepped (after `CoreFights.step_staged` or `step_one`)."""
        fights, k = self._fights, self._k
        self._copy_observed()
        r = fights.results[k]
        outcomes = (_OUTCOMES[r[1]], _OUTCOMES[r[2]])
        signals = [self.signals(i) for i in range(2)]
        parts: list[dict[str, float] | None] | None = None
        if self.record_reward_components:
            values = fights.components[k].tolist()
            parts = [
                None if self._baseline[i] else dict(zip(REWARD_COMPONENTS, v, strict=True))
                for i, v in enumerate(values)
            ]
        rewards = fights.rewards[k].tolist()
        terminated, truncated = outcomes[0] is not None, bool(r[3])
        if terminated or truncated:
            self._done = True
            fights.running[k] = False
            self._rng.bit_generator.state = self._batch.rng_state(k)
            self._rng_outside = True
        return EngineStep(rewards, signals, outcomes, terminated, truncated, parts)

    def info(self, i: int, step: EngineStep | None = None) -> dict[str, Any]:
        """A small, JSON-friendly info dict for player i (the same keys and values as `NHEngine.info`)."""
        tick, _, build, fight_mode, hp0, hp1, _, _ = self._batch.brief(self._k)
        return fight_info(i, tick, _BUILDS[build], _FIGHT_MODES[fight_mode], (hp0, hp1), self._params.episode_id, step)

    # ---- read-only accessors for the fight tools (`osrs_rllib/replay/engine_views.py`) ----------------
    def events(self, i: int) -> dict[str, Any]:
        """Player i's events of the last tick as the core holds them (`FightBatch.events`: the hits it created,
        with styles as numbers, healing and wasted supplies); the Python engine's `sim.events[i]`."""
        return dict(self._batch.events(self._k, i))


AnyEngine = NHEngine | CoreEngine
"""Either engine: what `make_engine` returns and what the fight loops hand their hooks."""


def step_engines(engines: Sequence[AnyEngine], actions: Sequence[Sequence[Sequence[int] | None]]) -> list[EngineStep]:
    """One tick of several fights: one core call when they are every running fight of one `CoreFights`,
    otherwise one `step` each (Python engines, or engines from different batches)."""
    batch = engines[0].fights if engines and isinstance(engines[0], CoreEngine) else None
    if batch is None or not all(isinstance(e, CoreEngine) and e.fights is batch for e in engines):
        return [e.step(a) for e, a in zip(engines, actions, strict=True)]
    for e, a in zip(engines, actions, strict=True):
        e.stage(a)
    batch.step_staged()
    return [e.finish() for e in engines]


def check_engine(engine: str) -> str:
    """`engine` if it names an engine (`auto`, `core`, `python`), else a `ParamError` listing them."""
    if engine not in ENGINES:
        raise ParamError(f"unknown engine {engine!r}; valid choices: {list(ENGINES)}", "engine")
    return engine


def core_available() -> bool:
    """Whether the compiled core is built and importable here.

    Raises:
        StaleCoreError: it is built, but from other C sources than the checkout's: an error rather than a silent
            fall back (`engine: auto` would otherwise train on the Python engine after every pull that touches C),
            and the message says how to rebuild.
    """
    try:
        load_core()
    except StaleCoreError:
        raise
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
    `ImportError` that says how to build it; a stale core (`StaleCoreError`) is an error for both.
    """
    global _fallback_logged
    check_engine(engine)
    if engine == "core" or (engine == "auto" and core_available()):
        return CoreEngine(params, reward_weights, seed, observe_all)
    if engine == "auto" and not _fallback_logged:
        _fallback_logged = True
        _log.warning(
            "compiled simulator core not built: using the Python engine, about 30x slower (`pip install -e .` builds "
            "it; it needs a C compiler, gcc or clang)"
        )
    return NHEngine(params, reward_weights, seed, observe_all)


def make_engines(
    engine: str,
    n: int,
    params: FightParams | None = None,
    reward_weights: RewardWeights | None = None,
    observe_all: bool = False,
) -> list[NHEngine | CoreEngine]:
    """`n` engines for a loop that steps them together: on the core, the fights of one `CoreFights` (one core
    call per tick through `step_engines`); on Python, `n` separate engines. `engine` as for `make_engine`."""
    first = make_engine(engine, params, reward_weights, observe_all=observe_all)
    if isinstance(first, NHEngine):
        return [first] + [NHEngine(params, reward_weights, observe_all=observe_all) for _ in range(n - 1)]
    fights = CoreFights(n, reward_weights)
    return [fights.engine(k, params, observe_all=observe_all) for k in range(n)]


def use_rng(engine: NHEngine | CoreEngine, rng: np.random.Generator) -> None:
    """Give the engine the caller's generator for the next reset (the adapters' `engine.sim.rng = rng`)."""
    if isinstance(engine, CoreEngine):
        engine.rng = rng
    else:
        engine.sim.rng = rng
