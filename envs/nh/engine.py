"""The fight as an RL engine: simulator + observations + masks + signals + rewards for both players.

This is the layer both environment adapters (`envs/gym_env.py`, `envs/rllib_env.py`) translate; it
knows no spaces or agent-id dicts. Buffers are allocated once and filled in place each tick; the
adapters hand out copies because RLlib may keep references to what it receives.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from envs.nh.contract import CRITIC_SIZE, OBS_SIZE, PARTIAL_INDICES
from envs.nh.loadouts import Build
from envs.nh.masks import NUM_MASK, LoadoutFacts, loadout_facts, mask_values, pack_masks
from envs.nh.observation import ObservationEncoder, static_block
from envs.nh.params import FightParams
from envs.nh.rewards import REWARD_COMPONENTS, RewardWeights, compute_reward, signals_for
from envs.nh.sim import FightSim, Outcome, TickResult
from envs.nh.state import FightMode, Skill

_PARTIAL = np.asarray(PARTIAL_INDICES, dtype=np.intp)


@dataclass(slots=True)
class EngineStep:
    """Per-player results of one tick (index = player number)."""

    rewards: list[float]
    signals: list[dict[str, Any] | None]
    outcomes: tuple[Outcome | None, Outcome | None]
    terminated: bool
    truncated: bool
    reward_components: list[dict[str, float] | None] | None = None
    """Per player, this tick's reward split into `rewards.REWARD_COMPONENTS` (only when the engine records
    them, see `NHEngine.record_reward_components`)."""


def fight_info(
    i: int,
    tick: int,
    build: Build,
    fight_mode: FightMode,
    hp: tuple[int, int],
    episode_id: Any,
    step: EngineStep | None,
) -> dict[str, Any]:
    """Player i's info dict (both engines hand out this one): where the fight stands, and after a step the
    player's outcome and reward signals."""
    info: dict[str, Any] = {
        "tick": tick,
        "build": build.value,
        "fight_mode": fight_mode.value,
        "hp": hp[i],
        "opponent_hp": hp[1 - i],
        "episode_id": episode_id,
    }
    if step is not None:
        outcome = step.outcomes[i]
        if outcome is not None:
            info["outcome"] = outcome.value
        if step.signals[i] is not None:
            info["signals"] = step.signals[i]
    return info


class NHEngine:
    """One NH fight with everything a learner needs, for player 0 and (when acted for) player 1."""

    def __init__(
        self,
        params: FightParams | None = None,
        reward_weights: RewardWeights | None = None,
        seed: int | None = None,
        observe_all: bool = False,
    ) -> None:
        self.sim = FightSim(params, seed)
        self.observe_all = observe_all
        """Build observations and masks for both players every tick, whoever acts."""
        self.reward_weights = reward_weights or RewardWeights()
        self.progress = 0.0
        """Training progress (completed rollouts) for the reward schedules of spec §17.4."""
        self.record_reward_components = False
        """Also split each reward into its components (for metrics; costs a few µs per tick)."""
        self.obs = np.zeros((2, OBS_SIZE), dtype=np.float32)
        self.masks = np.zeros((2, NUM_MASK), dtype=bool)
        self._static = np.zeros((2, OBS_SIZE), dtype=np.float32)
        self._facts: list[LoadoutFacts] = []
        self._encoders: list[ObservationEncoder] = []
        self._prev_signals: list[dict[str, Any] | None] = [None, None]

    @property
    def params(self) -> FightParams:
        return self.sim.params

    @property
    def rng(self) -> np.random.Generator:
        """The fight's generator (the simulator's): both engines name it `rng`."""
        return self.sim.rng

    @rng.setter
    def rng(self, rng: np.random.Generator) -> None:
        self.sim.rng = rng

    @property
    def self_play(self) -> bool:
        return not self.sim.players[1].is_baseline

    # What fight loops read of a fight, the same on both engines (`CoreEngine` has these too), so that
    # `fight`, `rate`, evaluation and the tools run on either.
    @property
    def tick(self) -> int:
        return self.sim.tick

    @property
    def done(self) -> bool:
        return self.sim.done

    @property
    def build(self) -> Build:
        return self.sim.build

    @property
    def fight_mode(self) -> FightMode:
        return self.sim.fight_mode

    def hitsplats(self, i: int) -> tuple[int, ...]:
        """The hitsplats player i was shown on the last tick (damage it took, spec §4.5)."""
        return tuple(self.sim.players[i].hitsplats)

    def reset(self, seed: int | None = None, params: FightParams | None = None) -> None:
        """Reset the fight and compute every player's first observation and masks (spec §16.1)."""
        self.sim.reset(seed, params)
        self._facts = [loadout_facts(p.loadout) for p in self.sim.players]
        for i, p in enumerate(self.sim.players):
            self._static[i] = static_block(p.loadout, self.sim.fight_mode)
        shared: dict[int, Any] = {}
        self._encoders = [
            ObservationEncoder(self.sim, p, self._static[i], shared) for i, p in enumerate(self.sim.players)
        ]
        self._prev_signals = [None, None]
        self._observe()

    def _observe(self) -> None:
        sim = self.sim
        need_opp = self.observe_all or self.self_play or sim.params.include_opponent_observation
        for i, p in enumerate(sim.players):
            if (i == 1 and not need_opp) or (i == 0 and p.is_baseline and not self.observe_all):
                continue
            known_lunar = sim.stats[i].known_lunar_opponent
            mask = mask_values(sim, p, self._facts[i], known_lunar)
            pack_masks(mask, self.masks[i])
            self._encoders[i].encode(mask, self.obs[i])

    def base_hp(self, i: int) -> int:
        """Player i's base hitpoints: the signals count damage and healing as fractions of it (§17.1)."""
        return int(self.sim.players[i].base[Skill.HITPOINTS])

    def critic_obs(self, i: int, out: np.ndarray | None = None) -> np.ndarray:
        """Player i's 269-entry critic input: own 176 entries + the opponent's 93 partial ones (§15.3)."""
        v = out if out is not None else np.zeros(CRITIC_SIZE, dtype=np.float32)
        v[:OBS_SIZE] = self.obs[i]
        if self.sim.params.include_opponent_observation or self.self_play:
            v[OBS_SIZE:] = self.obs[1 - i][_PARTIAL]
        else:
            v[OBS_SIZE:] = 0.0
        return v

    def step(self, actions: Sequence[Sequence[int] | None]) -> EngineStep:
        """Simulate one tick with the agents' actions and return rewards and signals per player."""
        res: TickResult = self.sim.step(actions)
        self._observe()
        rewards: list[float] = [0.0, 0.0]
        signals: list[dict[str, Any] | None] = [None, None]
        parts: list[dict[str, float] | None] | None = [None, None] if self.record_reward_components else None
        for i, p in enumerate(self.sim.players):
            if p.is_baseline:
                continue
            s = signals_for(self.sim, p)
            outcome = res.outcomes[i]
            # Every component, 0.0 where no term of it applied this tick: the same keys every tick (and in the
            # compiled core), so TensorBoard's per-component curves all start at the first iteration.
            own = dict.fromkeys(REWARD_COMPONENTS, 0.0) if parts is not None else None
            rewards[i] = compute_reward(self.reward_weights, s, self._prev_signals[i], outcome, self.progress, own)
            if parts is not None:
                parts[i] = own
            signals[i] = s
            self._prev_signals[i] = s
        return EngineStep(rewards, signals, res.outcomes, res.terminated, res.truncated, parts)

    def info(self, i: int, step: EngineStep | None = None) -> dict[str, Any]:
        """A small, JSON-friendly info dict for player i."""
        sim = self.sim
        hp = (sim.players[0].hp, sim.players[1].hp)
        return fight_info(i, sim.tick, sim.build, sim.fight_mode, hp, sim.params.episode_id, step)

