"""Many fights at once outside RLlib: `parallel` engines step in lockstep and each seat's player acts for all
live fights in one call, so a policy network runs one forward pass per tick instead of one per fight.

Every caller drives this loop through `osrs_rllib.evaluation.match.play_match`, the one way to play two sides over
builds and seats: evaluation (`osrs_rllib/evaluation/policy_fights.py`), the tournament of `osrs-rllib rate`
(`osrs_rllib/evaluation/rate.py`), `osrs-rllib fight` (`osrs_rllib/evaluation/fight.py`, with an `on_act` hook for its
replay recording), the data collection of `osrs-rllib outcome` and the analysis API.

Fight k is played with simulator seed ``seeds[k]``; a player sees the seeds of the rows it acts for, so a
scripted player can keep one bot per fight, seeded from it. When seat 1 has no player, the engine's own
opponent plays it (the in-simulator baseline of spec §18: ``params.opponent`` must say so). When seat 0 has
no player either, the simulator's baseline plays both seats (``params.first_player_baseline``).

A seat that `needs_opponent_action` (the prescient ladder rung, `envs.opponents.nh_ladder`) acts after the
other seat and is handed that seat's actions of the tick (``opponent_actions``); the other seat must then
be an ordinary player, not the in-simulator baseline (which decides inside the simulator) nor another
prescient seat.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from envs.nh.contract import OBS_SIZE, FrameStack
from envs.nh.core_engine import AnyEngine, make_engine, make_engines, step_engines
from envs.nh.engine import EngineStep
from envs.nh.params import OPPONENT_AGENT, FightParams
from envs.opponents import ScriptedPolicy, act_rows, make_opponent, needs_opponent_action

SeatAct = Callable[..., np.ndarray]
"""(stacked observations (B, D) float32, masks (B, 45) bool, fight seeds (B,)) → actions (B, 12) int64; a seat
that `needs_opponent_action` also takes ``opponent_actions=`` (B, 12) int64, the other seat's actions."""


def seat_seed(fight_seed: int, seat: int) -> int:
    """The seed of one seat's player in one fight (a scripted bot, or a sampling model's noise stream).

    Every host of the loop seeds this way (`fight`, evaluation, outcome, the analysis API), so one fight seed
    gives one fight wherever it is played, and the two seats never share a stream.
    """
    return int(np.random.SeedSequence((fight_seed, seat)).generate_state(1)[0])


class SeatNoise:
    """A sampling model's noise for one seat: one stream per fight, seeded with `seat_seed`, one torch seed drawn
    from it per tick, so a fight's sampled actions do not depend on which other fights share its batch (every
    host of a sampling model draws its noise here: `fight`, the analysis API)."""

    def __init__(self, seat: int) -> None:
        self.seat = seat
        self._rngs: dict[int, np.random.Generator] = {}

    def draw(self, fight_seeds: Sequence[int]) -> np.ndarray:
        """This tick's noise (B, heads, values) float32 for the given fights, in the model's `noise=` layout."""
        import torch

        from envs.nh.contract import MAX_HEAD_SIZE, NUM_HEADS

        rows = []
        for fight_seed in fight_seeds:
            rng = self._rngs.get(int(fight_seed))
            if rng is None:
                rng = self._rngs[int(fight_seed)] = np.random.default_rng(seat_seed(int(fight_seed), self.seat))
            gen = torch.Generator().manual_seed(int(rng.integers(0, 2**31 - 1)))
            rows.append(torch.rand(1, NUM_HEADS, MAX_HEAD_SIZE, generator=gen).numpy())
        return np.concatenate(rows)

    def forget(self, fight_seed: int) -> None:
        self._rngs.pop(int(fight_seed), None)


@dataclass(frozen=True)
class Seat:
    """A player in one seat: how it acts, the frame stacking its observations need, and whether it must see
    the other seat's actions of the tick first (a prescient rung)."""

    act: SeatAct
    frame_stack: int | Sequence[int] = 1
    needs_opponent_action: bool = False


class LadderSeat:
    """A ladder rung acting through the action interface: one bot per live fight, built with the seed
    `bot_seed(fight seed)`; `forget` a fight's bot when it ends to keep the table small."""

    def __init__(self, name: str, bot_seed: Callable[[int], int]) -> None:
        self.name = name
        self.bot_seed = bot_seed
        self.bots: dict[int, ScriptedPolicy] = {}
        self.needs_opponent_action = needs_opponent_action(name)

    def __call__(
        self, obs: np.ndarray, masks: np.ndarray, seeds: Sequence[int], opponent_actions: np.ndarray | None = None
    ) -> np.ndarray:
        bots = []
        for seed in seeds:
            bot = self.bots.get(seed)
            if bot is None:
                bot = self.bots[seed] = make_opponent(self.name, self.bot_seed(seed))
            bots.append(bot)
        return act_rows(bots, obs, masks, opponent_actions)

    def seat(self, frame_stack: int | Sequence[int] = 1) -> Seat:
        """This rung as a `Seat` (prescient rungs are marked so that `play_fights` hands them the other
        seat's actions)."""
        return Seat(self, frame_stack, self.needs_opponent_action)

    def forget(self, seed: int) -> None:
        self.bots.pop(seed, None)


@dataclass
class _Slot:
    engine: AnyEngine
    stacks: tuple[FrameStack, ...]
    fight: int = -1
    seed: int = 0
    active: bool = False


OnStart = Callable[[int, AnyEngine], None]
"""(fight index, engine just reset) → None."""
OnStep = Callable[[int, AnyEngine, EngineStep], None]
"""(fight index, engine, the tick's result) → None; called every tick, the last one included."""
OnAct = Callable[[int, AnyEngine, list[np.ndarray | None]], None]
"""(fight index, engine before the step, each seat's action of the tick, None for the simulator's baseline) → None;
called every tick just before the engine steps (a replay recorder reads the state the actions were chosen in)."""


def play_fights(
    params: FightParams | Sequence[FightParams],
    seeds: Sequence[int],
    seat0: Seat | None,
    seat1: Seat | None,
    *,
    parallel: int,
    on_start: OnStart | None = None,
    on_step: OnStep | None = None,
    on_act: OnAct | None = None,
    engine: str = "auto",
) -> None:
    """Play one fight per seed, `parallel` at a time; report through `on_start`, `on_act` and `on_step` (see
    module).

    `engine` is `make_engine`'s choice: ``auto`` (the default) / ``core`` step the compiled core (the same fights,
    bit for bit), every live fight in one core call per tick; ``python`` the Python engine, for hooks that read
    the simulator's own objects (``engine.sim``).

    `params` is one set for every fight, or one per fight (e.g. a build per fight, to spread a tournament
    evenly over builds); every fight must agree on who plays each seat. ``seat0=None`` (and ``seat1=None``) lets
    the simulator's baseline play both seats, which the params must ask for (``first_player_baseline``).
    """
    per_fight = [params] * len(seeds) if isinstance(params, FightParams) else list(params)
    if len(per_fight) != len(seeds):
        raise ValueError(f"{len(per_fight)} fight params for {len(seeds)} seeds; give one per fight or one for all")
    for p in {p.opponent for p in per_fight}:
        if seat1 is None and p == OPPONENT_AGENT:
            raise ValueError("seat 1 needs a player when the engine's opponent is an agent")
        if seat1 is not None and p != OPPONENT_AGENT:
            raise ValueError(f"seat 1 is played by the engine ({p!r}); pass seat1=None")
    for first_baseline in {p.first_player_baseline for p in per_fight}:
        if first_baseline and seat0 is not None:
            raise ValueError("seat 0 is played by the engine (first_player_baseline); pass seat0=None")
        if not first_baseline and seat0 is None:
            raise ValueError("seat 0 needs a player unless the params set first_player_baseline")
    if seat0 is None:
        if seat1 is not None:
            raise ValueError("the simulator's baseline plays seat 0 only when it plays seat 1 too; pass seat1=None")
        _play_baselines(per_fight, seeds, on_start, on_step, on_act, engine)
        return
    seats = (seat0,) if seat1 is None else (seat0, seat1)
    if seat1 is None and seat0.needs_opponent_action:
        raise ValueError(
            "a prescient seat cannot face the in-simulator baseline: the baseline decides inside the simulator, "
            "so its action of the tick is not known before the prescient seat must act"
        )
    if seat1 is not None and seat0.needs_opponent_action and seat1.needs_opponent_action:
        raise ValueError("two prescient seats cannot meet: each would have to act after the other")
    order = (1, 0) if seat0.needs_opponent_action else (0, 1)
    queue = list(range(len(seeds)))[::-1]
    engines = make_engines(engine, max(1, min(parallel, len(seeds))), per_fight[0] if per_fight else None)
    slots = [_Slot(e, tuple(FrameStack(s.frame_stack, OBS_SIZE) for s in seats)) for e in engines]

    def start(slot: _Slot) -> None:
        slot.fight = queue.pop()
        slot.seed = int(seeds[slot.fight])
        slot.engine.reset(seed=slot.seed, params=per_fight[slot.fight])
        for stack in slot.stacks:
            stack.reset()
        slot.active = True
        if on_start is not None:
            on_start(slot.fight, slot.engine)

    for slot in slots:
        if queue:
            start(slot)
    while True:
        live = [s for s in slots if s.active]
        if not live:
            return
        fight_seeds = [s.seed for s in live]
        chosen: list[np.ndarray] = [np.empty(0)] * len(seats)
        for i in order if len(seats) > 1 else (0,):
            seat = seats[i]
            obs = np.stack([s.stacks[i].push(s.engine.obs[i]) for s in live])
            masks = np.stack([s.engine.masks[i] for s in live])
            if seat.needs_opponent_action:
                chosen[i] = seat.act(obs, masks, fight_seeds, opponent_actions=chosen[1 - i])
            else:
                chosen[i] = seat.act(obs, masks, fight_seeds)
        actions = [[chosen[0][j], chosen[1][j] if len(chosen) > 1 else None] for j in range(len(live))]
        if on_act is not None:
            for slot, acts in zip(live, actions, strict=True):
                on_act(slot.fight, slot.engine, acts)
        steps = step_engines([s.engine for s in live], actions)  # one core call for every live fight
        for slot, step in zip(live, steps, strict=True):
            if on_step is not None:
                on_step(slot.fight, slot.engine, step)
            if step.terminated or step.truncated:
                slot.active = False
                if queue:
                    start(slot)


def _play_baselines(
    per_fight: Sequence[FightParams],
    seeds: Sequence[int],
    on_start: OnStart | None,
    on_step: OnStep | None,
    on_act: OnAct | None,
    engine_name: str,
) -> None:
    """The simulator's baseline in both seats: nobody outside the engine acts, so there is no batch to share and
    the fights run one after another on one engine."""
    engine = make_engine(engine_name, per_fight[0]) if per_fight else None
    for k, seed in enumerate(seeds):
        assert engine is not None
        engine.reset(seed=int(seed), params=per_fight[k])
        if on_start is not None:
            on_start(k, engine)
        while True:
            actions: list[np.ndarray | None] = [None, None]
            if on_act is not None:
                on_act(k, engine, actions)
            step = engine.step(actions)
            if on_step is not None:
                on_step(k, engine, step)
            if step.terminated or step.truncated:
                break
