"""The training environment, which draws each episode's opponent from the mix at reset, and RLlib's
policy-mapping function, which reads that draw back.

Each episode's opponent is drawn once, at reset, by the environment (the in-simulator baseline of spec §18
has to be decided there: it changes who acts). The draw names a *kind* (``baseline``, ``self_play`` or a
ladder rung) and, for kinds that put a policy in player 1's seat, that policy's id; the mapping function
then reads the draw back from the episode's environment. Sampling and mapping therefore never disagree.
The mix itself is `osrs_rllib/training/sampling/opponent_mix.py`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from envs.nh.core_engine import CoreEngine
from envs.nh.engine import EngineStep
from envs.rllib_env import AGENT_IDS, NHMultiAgentEnv
from osrs_rllib.config import BASELINE, SELF_PLAY
from osrs_rllib.evaluation import EpisodeMetrics
from osrs_rllib.training.sampling.opponent_mix import (
    LEAGUE_KINDS,
    LEARNER_POLICY,
    OpponentDraw,
    OpponentMix,
    draw_for_kind,
)
from osrs_rllib.training.sampling.shaping import NoveltyReward, ObservationNoise

LEARNER_AGENT, OPPONENT_AGENT = AGENT_IDS


class TrainingEnv(NHMultiAgentEnv):
    """`NHMultiAgentEnv` whose opponent is drawn from the mix at every reset, with per-episode metrics.

    Extra config keys: ``opponent_mix`` (kind → share), ``mix_seed`` and ``league`` (true: players are drawn
    from the `LeaguePlan` the driver pushes each iteration, see `league/callback.py`, and finished games are
    reported back through `pop_league_results`). The last info of ``player_0`` in an episode carries
    ``episode_metrics`` (see `osrs_rllib/evaluation/episode_metrics.py`) and ``opponent_kind``.
    """

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        cfg = dict(config or {})
        mix = cfg.pop("opponent_mix", {BASELINE: 1.0})
        mix_seed = cfg.pop("mix_seed", None)
        self.league_mode = bool(cfg.pop("league", False))
        scripted_in_env = bool(cfg.pop("scripted_in_env", True))
        novelty, noise = cfg.pop("novelty", None), cfg.pop("observation_noise", None)
        super().__init__(cfg)
        fixed = {k: v for k, v in mix.items() if k not in LEAGUE_KINDS} or {BASELINE: 1.0}
        self.mix = OpponentMix(fixed, scripted_in_env=scripted_in_env)
        self.plan: Any = None
        self._league_results: list[Any] = []
        worker = getattr(config, "worker_index", 0)
        vector = getattr(config, "vector_index", 0)
        seed_seq = np.random.SeedSequence([int(mix_seed or 0), int(worker or 0), int(vector or 0)])
        self._mix_rng = np.random.default_rng(seed_seq if mix_seed is not None else None)
        self.draw: OpponentDraw = self.mix.draws[self.mix.kinds[0]]
        self.metrics = EpisodeMetrics()
        self.engine.record_reward_components = True  # per-component reward sums for TensorBoard
        self.env_steps = 0.0
        """The trainer's sampled env steps, which the novelty and noise schedules follow (`set_env_steps`)."""
        self.novelty, self.noise = learner_shaping(novelty, noise, cfg.get("frame_stack", 1), seed_seq)
        self._novelty_return = 0.0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[dict, dict]:
        opts = dict(options or {})
        if "opponent" in opts:  # an explicit opponent (tests, tools) bypasses the mix
            kind = str(opts.pop("opponent"))
            self.draw = draw_for_kind(SELF_PLAY if kind == "agent" else kind)
        elif self.league_mode and self.plan is not None:
            learner, entry = self.plan.draw(self._mix_rng)
            self.draw = OpponentDraw(entry.kind, entry.seat_policy, learner, entry.opponent, self.plan.generation)
        else:
            self.draw = self.mix.sample(self._mix_rng)
        opts["opponent"] = self.draw.env_opponent
        obs, infos = super().reset(seed=seed, options=opts)
        self.metrics.reset(self.engine, self.draw.kind)
        if self.novelty is not None or self.noise is not None:
            self._novelty_return = 0.0
            self._shape(obs, None)
        return obs, infos

    def learner_seats(self) -> tuple[int, ...]:
        """Seats the learner plays this episode: seat 0, and seat 1 in self-play (an opponent seat is never one)."""
        return (0, 1) if self.draw.policy_id is not None and self.draw.policy_id == self.draw.learner else (0,)

    def _shape(self, obs: dict[str, Any], rewards: dict[str, float] | None) -> None:
        """Novelty reward (after a step) and observation noise for the learner's seats
        (`osrs_rllib/training/sampling/shaping.py`); the critic's input and the opponents' observations are left as they
        are."""
        for i in self.learner_seats():
            agent = AGENT_IDS[i]
            if agent not in obs:
                continue
            if self.novelty is not None:
                if rewards is None:
                    self.novelty.observe(self.engine.obs[i])
                else:
                    bonus = self.novelty.reward(self.engine.obs[i], self.env_steps)
                    rewards[agent] += bonus
                    self._novelty_return += bonus if i == 0 else 0.0
            if self.noise is not None:
                seen = dict(obs[agent])
                seen["observations"] = self.noise.apply(seen["observations"], self.env_steps)
                obs[agent] = seen

    def set_env_steps(self, steps: float) -> None:
        """The trainer's sampled env steps: the position of the novelty and noise schedules."""
        self.env_steps = float(steps)

    def on_engine_step(self, step: EngineStep) -> None:
        self.metrics.record(step)

    def on_core_tick(self) -> None:
        engine = self.engine
        assert isinstance(engine, CoreEngine)
        parts = engine.reward_parts(0) if engine.record_reward_components else None
        self.metrics.record_tick(engine.signals(0), parts)

    def array_step_ok(self) -> bool:
        """The array path (`envs.rllib_env.CoreEnvBatch`) steps this environment exactly as `step` does unless
        the learner's rewards or observations are shaped every tick (novelty, observation noise) or a subclass
        adds per-tick work."""
        frames = all(s.offsets == (0,) for s in (*self._stacks, *self._critic_stacks))
        shaped = self.novelty is not None or self.noise is not None
        return type(self) is TrainingEnv and isinstance(self.engine, CoreEngine) and frames and not shaped

    def end_step(self, step: EngineStep) -> tuple[dict, dict, dict, dict, dict]:
        obs, rewards, terminateds, truncateds, infos = super().end_step(step)
        if self.novelty is not None or self.noise is not None:
            self._shape(obs, rewards)
        if terminateds["__all__"] or truncateds["__all__"]:
            info = infos.setdefault(LEARNER_AGENT, {})
            info["opponent_kind"] = self.draw.kind
            summary = self.metrics.summary()
            if self.novelty is not None:
                summary["novelty_return"] = self._novelty_return
            info["episode_metrics"] = summary
            if self.league_mode and self.draw.opponent:
                from league.callback import LeagueResult

                score = summary["won"] + 0.5 * summary["tied"]
                self._league_results.append(
                    LeagueResult(
                        self.draw.learner,
                        self.draw.opponent,
                        self.draw.kind,
                        score,
                        self.draw.generation,
                        int(summary["fight_ticks"]),
                    )
                )
        return obs, rewards, terminateds, truncateds, infos

    def set_league_plan(self, plan: Any) -> None:
        """The driver's plan for the next iteration (see `league/callback.py`)."""
        self.plan = plan

    def pop_league_results(self) -> list[Any]:
        results, self._league_results = self._league_results, []
        return results


def learner_shaping(
    novelty: Mapping[str, Any] | None, noise: Mapping[str, Any] | None, frame_stack: Any, seed: np.random.SeedSequence
) -> tuple[NoveltyReward | None, ObservationNoise | None]:
    """The novelty reward and observation noise of `TrainingEnv`'s ``novelty`` and ``observation_noise`` config
    (`train.env_config` passes them only when on); the noise draws from its own stream of the env's seed."""
    from envs.nh.contract import frame_offsets
    from osrs_rllib.config import StepSchedule

    reward = None
    if novelty:
        reward = NoveltyReward(StepSchedule.parse(novelty["scale"]).value_at, novelty["entries"], novelty["clip"])
    added = None
    if noise:
        rng = np.random.default_rng(seed.spawn(1)[0])
        frames = len(frame_offsets(frame_stack))
        added = ObservationNoise(StepSchedule.parse(noise["std"]).value_at, noise["entries"], frames, rng)
    return reward, added


def policy_mapping_fn(agent_id: str, episode: Any = None, worker: Any = None, **kwargs: Any) -> str:
    """RLlib's mapping: seat 0 the learner, seat 1 whatever the episode's environment drew."""
    env = episode_env(episode, worker)
    if agent_id == LEARNER_AGENT:
        return env.draw.learner if env is not None else LEARNER_POLICY
    if env is None or env.draw.policy_id is None:
        raise RuntimeError(
            f"no opponent policy for {agent_id!r}: the episode's environment is not a TrainingEnv or drew the "
            "in-simulator baseline, which has no agent"
        )
    return env.draw.policy_id


def episode_env(episode: Any, worker: Any) -> TrainingEnv | None:
    """The sub-environment an (old API stack) episode runs in."""
    base_env = getattr(worker, "async_env", None)
    if base_env is None or episode is None:
        return None
    envs = base_env.get_sub_environments()
    env_id = getattr(episode, "env_id", 0) or 0
    env = envs[int(env_id)] if 0 <= int(env_id) < len(envs) else None
    return env if isinstance(env, TrainingEnv) else None
