"""A faster rollout loop for RLlib's old API stack: every sub-environment of a runner steps in lockstep,
each policy acts once per tick on one batch, and trajectories are kept as plain lists until the end of the
fragment.

Why: profiling `configs/nh.yml` showed RLlib's generic sampler (`EnvRunnerV2`, its agent collectors,
connectors and per-agent `tree.map_structure` calls) spending more time per env step than the simulator
itself (0.49 of 0.80 ms). Our environments are simple in the ways that generic machinery is built for:
every live agent receives an observation and acts on every tick, and an episode's agents and policies are
fixed at reset. This loop keeps exactly RLlib's contract (the same `Policy.compute_actions_from_input_dict`
calls, the same SampleBatch columns, GAE as PPO's postprocessing computes it, `RolloutMetrics` per finished
episode, the same callbacks) and drops the rest.

What it supports and how that differs from `EnvRunnerV2`:

* any `MultiAgentEnv` whose acting agents are exactly those given an observation, each with a reward on
  every later tick until it is done (anything else raises a `RuntimeError` naming the agent);
* `policy_mapping_fn(agent_id, episode, worker)` is called once per agent per episode, with an episode
  object that has ``env_id`` and ``episode_id``;
* callbacks: ``on_episode_start``, ``on_episode_end``, ``on_postprocess_trajectory`` and ``on_sample_end``
  (not ``on_episode_step``, the per-tick one);
* trajectories are collected for trainable policies only (frozen snapshots and scripted policies act but
  their experience would be dropped by PPO anyway);
* advantages are GAE(γ, λ) with the critic's bootstrap value at fragment ends and at truncation, computed
  in one batched critic pass per policy instead of one forward pass per trajectory;
* `sampler_perf` reports milliseconds per env step (env, inference, the loop's own processing);
* episode ids come from the loop's own generator, seeded by ``debugging.seed`` and the worker index.

Settings it does not implement are refused when the worker is built (`unsupported_settings`), not ignored:
observation filters, output writers, counting agent steps, complete-episode batches, recurrent models and
``explore: False``.

When the sub-environments are NH fights on the compiled core (`envs/nh/core_engine.py`), the loop puts them on
one `FightBatch` at start-up and steps all of them in one core call per tick (`envs.rllib_env.step_envs`).

With the fights in one core call, most of an env step was Python around it, per seat and per tick: the
environment's observation, reward, info and done dicts, this loop walking them, flattening every observation again
and appending every row of every column to per-agent lists. So where it is exact, the loop takes the **array path**
(`osrs_rllib/training/sampling/arrays.py`, `envs.rllib_env.CoreEnvBatch`): observations, actions, rewards and done flags
stay arrays from the core's batch to the forward passes and the trajectory columns; per-seat dicts are built only
on a fight's last tick, where the callbacks and the episode metrics read them. Exact means: every sub-environment
is a `TrainingEnv` (or a plain `NHMultiAgentEnv`) on the shared compiled batch with one frame per observation and
no per-tick shaping (novelty reward, observation noise): `NHMultiAgentEnv.array_step_ok`. Everything else (the
Python engine, frame stacks, shaping, other environments) takes the dict path (this module's own loop), unchanged.
The two paths give the same batches bit for bit, the same episodes, metrics, league results and normaliser moments
(tests/osrs_rllib/test_lockstep_arrays.py); `benchmarks/sampler_step.py` times them side by side: on
`configs/nh.yml`'s fights (64 envs, its opponent kinds with two league slots), per env step, the dict path's env
~0.08 ms and its own bookkeeping ~0.03 ms, the array path's ~0.026 and ~0.017 ms. What is left of the env's time is
mostly the scripted rungs' decisions, one signals dict per fight and tick for the episode metrics, and the core.

Select it with ``runners.sampler: lockstep`` (the default); ``rllib`` uses RLlib's sampler unchanged.
"""

from __future__ import annotations

import random
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from ray.rllib.evaluation.metrics import RolloutMetrics
from ray.rllib.evaluation.postprocessing import compute_advantages
from ray.rllib.evaluation.rollout_worker import RolloutWorker
from ray.rllib.policy.sample_batch import MultiAgentBatch, SampleBatch, concat_samples

from envs.rllib_env import CoreEnvBatch, NHMultiAgentEnv, share_core_batch, step_envs
from osrs_rllib.training.sampling.arrays import ArrayPath
from osrs_rllib.training.sampling.trajectory import Trajectory, close_trajectory
from policies.rllib_model import nh_model_of

SB = SampleBatch


@dataclass
class LockstepEpisode:
    """The slice of RLlib's episode API that callbacks and the mapping function use."""

    env_id: int
    episode_id: int
    length: int = 0
    total_reward: float = 0.0
    agent_rewards: dict[tuple[Any, str], float] = field(default_factory=dict)
    custom_metrics: dict[str, float] = field(default_factory=dict)
    user_data: dict[str, Any] = field(default_factory=dict)
    hist_data: dict[str, list[float]] = field(default_factory=dict)
    media: dict[str, Any] = field(default_factory=dict)
    policy_of: dict[Any, str] = field(default_factory=dict)
    last_infos: dict[Any, Any] = field(default_factory=dict)

    def last_info_for(self, agent_id: Any = "agent0") -> Any:
        return self.last_infos.get(agent_id)

    def policy_for(self, agent_id: Any = "agent0") -> str:
        return self.policy_of[agent_id]

    def get_agents(self) -> list[Any]:
        return list(self.policy_of)


@dataclass
class _Slot:
    """One sub-environment: its current episode, the observations awaiting actions and the open
    trajectories of trainable agents."""

    env: Any
    episode: LockstepEpisode
    obs: dict[Any, np.ndarray]
    trajectories: dict[Any, Trajectory]


class _Flattener:
    """Flattens one Dict observation exactly as RLlib's `DictFlatteningPreprocessor` does (sorted keys),
    so that the stored batch is what the model's `restore_original_dimensions` expects."""

    def __init__(self, policy: Any) -> None:
        space = getattr(policy.observation_space, "original_space", None)
        self.keys: tuple[str, ...] | None = tuple(sorted(space.spaces)) if hasattr(space, "spaces") else None

    def __call__(self, obs: Any) -> np.ndarray:
        if self.keys is None:
            return np.asarray(obs, dtype=np.float32).reshape(-1)
        return np.concatenate([np.asarray(obs[k], dtype=np.float32).reshape(-1) for k in self.keys])


def unsupported_settings(config: Any, policies: Mapping[str, Any] | None = None) -> list[str]:
    """What in an RLlib `AlgorithmConfig` (and its built policies) this loop would silently get wrong.

    Each entry names the setting and its value, so that the error points at the line of the config to change.
    """
    problems = []
    if config.observation_filter != "NoFilter":
        problems.append(f"observation_filter={config.observation_filter!r} (the loop applies no filter)")
    if config.output is not None:
        problems.append(f"output={config.output!r} (the loop writes no offline data)")
    if config.count_steps_by != "env_steps":
        problems.append(f"count_steps_by={config.count_steps_by!r} (the loop counts env steps)")
    if config.batch_mode != "truncate_episodes":
        problems.append(f"batch_mode={config.batch_mode!r} (the loop cuts fragments of fixed length)")
    if not config.explore:
        problems.append("explore=False (the loop always samples from the action distribution)")
    model = config.model or {}
    for key in ("use_lstm", "use_attention"):
        if model.get(key):
            problems.append(f"model.{key}=True (the loop keeps no recurrent state)")
    for pid, policy in (policies or {}).items():
        if policy.is_recurrent():
            problems.append(f"policy {pid!r} is recurrent (the loop keeps no recurrent state)")
    return problems


class LockstepSampler:
    """The rollout loop of one `LockstepRolloutWorker` (see the module docstring)."""

    def __init__(self, worker: RolloutWorker, arrays: bool = True) -> None:
        self.worker = worker
        seed = worker.config.seed
        self._episode_ids = random.Random(None if seed is None else f"{seed}/{worker.worker_index}")
        """Episode ids: seeded, and apart from the global `random` that other code may draw from."""
        self.envs = list(worker.async_env.get_sub_environments())
        if not self.envs:
            raise RuntimeError("the lockstep sampler needs the worker's sub-environments (an env runner with envs)")
        self.batched = all(isinstance(e, NHMultiAgentEnv) for e in self.envs) and share_core_batch(self.envs)
        """Whether the sub-environments' fights are one compiled batch, stepped in one core call per tick."""
        exact = self.batched and arrays and all(e.array_step_ok() for e in self.envs)
        self.arrays = ArrayPath(self, CoreEnvBatch(self.envs)) if exact else None
        """The array path (`osrs_rllib/training/sampling/arrays.py`) where it is exact; `arrays=False` keeps the dict
        path."""
        fragment = worker.config.get_rollout_fragment_length(worker.worker_index)
        self.fragment_length = int(fragment)
        self.slots: list[_Slot] = []
        self._metrics: list[RolloutMetrics] = []
        self._flatteners: dict[str, _Flattener] = {}
        self._perf = {"env": 0.0, "inference": 0.0, "processing": 0.0}
        self._perf_steps = 0
        self._trainable: dict[str, bool] = {}  # per sample() call: the league may change what trains

    # -- episodes ---------------------------------------------------------------------------------
    def _flattener(self, pid: str) -> _Flattener:
        flat = self._flatteners.get(pid)
        if flat is None:
            flat = self._flatteners[pid] = _Flattener(self.worker.policy_map[pid])
        return flat

    def _flatten(self, pid: str, obs: Any) -> np.ndarray:
        return self._flattener(pid)(obs)

    def _start_episode(self, env_id: int) -> _Slot:
        env = self.envs[env_id]
        episode = LockstepEpisode(env_id, self._episode_ids.randrange(2**62))
        obs, infos = env.reset()
        worker = self.worker
        for agent in obs:
            episode.policy_of[agent] = worker.policy_mapping_fn(agent, episode, worker=worker)
        episode.last_infos = dict(infos or {})
        worker.callbacks.on_episode_start(
            worker=worker, base_env=worker.async_env, policies=worker.policy_map, episode=episode, env_index=env_id
        )
        slot = _Slot(env, episode, {}, {})
        self._take_obs(slot, obs)
        return slot

    def _take_obs(self, slot: _Slot, obs: Mapping[Any, Any]) -> None:
        episode = slot.episode
        slot.obs = {}
        for agent, o in obs.items():
            pid = episode.policy_of.get(agent)
            if pid is None:
                raise RuntimeError(f"agent {agent!r} appeared in the middle of an episode; the lockstep sampler "
                                   "needs every episode's agents at reset (use runners.sampler: rllib)")
            slot.obs[agent] = self._flatten(pid, o)

    def _open_trajectory(self, slot: _Slot, agent: Any) -> Trajectory | None:
        traj = slot.trajectories.get(agent)
        if traj is None:
            pid = slot.episode.policy_of[agent]
            if not self._is_trainable(pid):
                return None
            index = list(slot.episode.policy_of).index(agent)
            traj = slot.trajectories[agent] = Trajectory(pid, agent, index, slot.episode.episode_id,
                                                          slot.episode.length)
        return traj

    def _is_trainable(self, pid: str) -> bool:
        trainable = self._trainable.get(pid)
        if trainable is None:
            check = self.worker.is_policy_to_train  # None: every policy trains (RLlib's convention)
            trainable = self._trainable[pid] = check is None or bool(check(pid))
        return trainable

    # -- the loop ---------------------------------------------------------------------------------
    def sample(self) -> MultiAgentBatch:
        if not self.slots:
            self.slots = [self._start_episode(i) for i in range(len(self.envs))]
        self._trainable = {}
        done: list[Trajectory] = []
        bootstrap: list[tuple[Trajectory, np.ndarray]] = []
        perf = self._perf
        if self.arrays is not None:
            self.arrays.fragment(self.fragment_length, done, bootstrap)
        for _ in range(self.fragment_length if self.arrays is None else 0):
            t0 = time.perf_counter()
            actions = self._act()
            t1 = time.perf_counter()
            if self.batched:
                results = step_envs(self.envs, actions)
            else:
                results = [slot.env.step(actions[env_id]) for env_id, slot in enumerate(self.slots)]
            env_time = time.perf_counter() - t1
            for slot, (obs, rewards, terminateds, truncateds, infos) in zip(self.slots, results, strict=True):
                self._record(slot, obs, rewards, terminateds, truncateds, infos, done, bootstrap)
            t2 = time.perf_counter()
            perf["inference"] += t1 - t0
            perf["env"] += env_time
            perf["processing"] += (t2 - t1) - env_time
        t3 = time.perf_counter()
        if self.arrays is not None:
            self.arrays.gather()
        for slot in self.slots:  # the fragment ends: cut every open trajectory, bootstrapped from its next obs
            for agent, traj in slot.trajectories.items():
                if traj.size:
                    bootstrap.append((traj, slot.obs[agent]))
            slot.trajectories = {}
        batch = self._build(done, bootstrap)
        perf["processing"] += time.perf_counter() - t3
        self._perf_steps += self.fragment_length * len(self.slots)
        return batch

    def _act(self) -> list[dict[Any, Any]]:
        """One batched forward pass per policy over every agent awaiting an action."""
        groups: dict[str, list[tuple[int, Any]]] = {}
        for env_id, slot in enumerate(self.slots):
            policy_of = slot.episode.policy_of
            for agent in slot.obs:
                groups.setdefault(policy_of[agent], []).append((env_id, agent))
        actions: list[dict[Any, Any]] = [{} for _ in self.slots]
        for pid, members in groups.items():
            policy = self.worker.policy_map[pid]
            obs = np.stack([self.slots[e].obs[a] for e, a in members])
            model = nh_model_of(policy)
            if model is not None:  # the NH network acts directly: the same draws without RLlib's per-call cost
                extra = model.act(obs, explore=True, trainable=self._is_trainable(pid))
                acts = extra[SB.ACTIONS]
            else:
                acts, _, extra = policy.compute_actions_from_input_dict(SampleBatch({SB.OBS: obs}), explore=True)
                acts = np.asarray(acts)
            logp = extra.get(SB.ACTION_LOGP)
            vf = extra.get(SB.VF_PREDS)
            dist = extra.get(SB.ACTION_DIST_INPUTS)
            for row, (env_id, agent) in enumerate(members):
                actions[env_id][agent] = acts[row]
                slot = self.slots[env_id]
                traj = self._open_trajectory(slot, agent)
                if traj is None:
                    continue
                if logp is None or vf is None:
                    raise RuntimeError(f"trainable policy {pid!r} returned no {SB.ACTION_LOGP}/{SB.VF_PREDS}; the "
                                       "lockstep sampler serves PPO-style policies (use runners.sampler: rllib)")
                traj.obs.append(slot.obs[agent])
                traj.actions.append(acts[row])
                traj.logp.append(float(logp[row]))
                traj.vf_preds.append(float(vf[row]))
                if dist is not None:
                    traj.dist_inputs.append(dist[row])
        return actions

    def _record(
        self,
        slot: _Slot,
        obs: Mapping[Any, Any],
        rewards: Mapping[Any, float],
        terminateds: Mapping[Any, bool],
        truncateds: Mapping[Any, bool],
        infos: Mapping[Any, Any],
        done: list[Trajectory],
        bootstrap: list[tuple[Trajectory, np.ndarray]],
    ) -> None:
        episode = slot.episode
        episode.length += 1
        episode.last_infos.update(infos or {})
        for agent in slot.obs:
            if agent not in rewards:
                raise RuntimeError(f"agent {agent!r} acted but got no reward; the lockstep sampler needs a reward for "
                                   "every acting agent on every tick (use runners.sampler: rllib)")
            r = float(rewards[agent])
            episode.total_reward += r
            key = (agent, episode.policy_of[agent])
            episode.agent_rewards[key] = episode.agent_rewards.get(key, 0.0) + r
            traj = slot.trajectories.get(agent)
            if traj is not None:
                traj.rewards.append(r)
        episode_over = bool(terminateds.get("__all__")) or bool(truncateds.get("__all__"))
        for agent in list(slot.obs):
            term = bool(terminateds.get(agent, False)) or bool(terminateds.get("__all__", False))
            trunc = bool(truncateds.get(agent, False)) or bool(truncateds.get("__all__", False))
            if not (term or trunc or episode_over):
                continue
            traj = slot.trajectories.pop(agent, None)
            if traj is not None:
                close_trajectory(traj, term, obs.get(agent), self._flatten, done, bootstrap)
        if episode_over:
            self._end_episode(slot)
            return
        self._take_obs(slot, {a: o for a, o in obs.items() if not (terminateds.get(a) or truncateds.get(a))})

    def _end_episode(self, slot: _Slot) -> None:
        worker = self.worker
        episode = slot.episode
        worker.callbacks.on_episode_end(
            worker=worker,
            base_env=worker.async_env,
            policies=worker.policy_map,
            episode=episode,
            env_index=episode.env_id,
        )
        self._metrics.append(
            RolloutMetrics(
                episode_length=episode.length,
                episode_reward=episode.total_reward,
                agent_rewards=dict(episode.agent_rewards),
                custom_metrics=dict(episode.custom_metrics),
                perf_stats={},
                hist_data=dict(episode.hist_data),
                media=dict(episode.media),
            )
        )
        self.slots[episode.env_id] = self._start_episode(episode.env_id)

    # -- batches ----------------------------------------------------------------------------------
    def _bootstrap_values(self, bootstrap: list[tuple[Trajectory, np.ndarray]]) -> dict[int, float]:
        """Critic values of the observations trajectories were cut at, one forward pass per policy."""
        by_policy: dict[str, list[tuple[int, np.ndarray]]] = {}
        for i, (traj, obs) in enumerate(bootstrap):
            by_policy.setdefault(traj.policy_id, []).append((i, obs))
        values: dict[int, float] = {}
        for pid, items in by_policy.items():
            policy = self.worker.policy_map[pid]
            with torch.no_grad():
                obs = torch.as_tensor(np.stack([o for _, o in items]), device=policy.device)
                policy.model({SB.OBS: obs})
                v = policy.model.value_function().cpu().numpy().reshape(-1)
            for (i, _), value in zip(items, v, strict=True):
                values[i] = float(value)
        return values

    def _build(self, done: list[Trajectory], bootstrap: list[tuple[Trajectory, np.ndarray]]) -> MultiAgentBatch:
        worker = self.worker
        values = self._bootstrap_values(bootstrap)
        finished = [(t, 0.0) for t in done] + [(t, values[i]) for i, (t, _) in enumerate(bootstrap)]
        per_policy: dict[str, list[SampleBatch]] = {}
        for traj, last_r in finished:
            policy = worker.policy_map[traj.policy_id]
            n = traj.size
            if n == 0:
                continue
            terminateds = np.zeros(n, dtype=bool)
            truncateds = np.zeros(n, dtype=bool)
            terminateds[-1] = traj.terminated
            truncateds[-1] = traj.truncated
            rows = traj.columns()
            columns: dict[str, Any] = {
                SB.OBS: rows[SB.OBS],
                SB.ACTIONS: rows[SB.ACTIONS],
                SB.REWARDS: rows[SB.REWARDS],
                SB.TERMINATEDS: terminateds,
                SB.TRUNCATEDS: truncateds,
                SB.ACTION_LOGP: rows[SB.ACTION_LOGP],
                SB.ACTION_PROB: np.exp(rows[SB.ACTION_LOGP]),
                SB.VF_PREDS: rows[SB.VF_PREDS],
                SB.EPS_ID: np.full(n, traj.episode_id, dtype=np.int64),
                SB.AGENT_INDEX: np.full(n, traj.agent_index, dtype=np.int64),
                SB.T: np.arange(traj.t0, traj.t0 + n, dtype=np.int64),
            }
            if SB.ACTION_DIST_INPUTS in rows:
                columns[SB.ACTION_DIST_INPUTS] = rows[SB.ACTION_DIST_INPUTS]
            batch = SampleBatch(columns)
            cfg = policy.config
            batch = compute_advantages(
                batch,
                last_r,
                cfg.get("gamma", 0.99),
                cfg.get("lambda", 1.0),
                use_gae=cfg.get("use_gae", True),
                use_critic=cfg.get("use_critic", True),
            )
            worker.callbacks.on_postprocess_trajectory(
                worker=worker,
                episode=None,
                agent_id=traj.agent_id,
                policy_id=traj.policy_id,
                policies=worker.policy_map,
                postprocessed_batch=batch,
                original_batches={},
            )
            per_policy.setdefault(traj.policy_id, []).append(batch)
        env_steps = self.fragment_length * len(self.slots)
        return MultiAgentBatch({pid: concat_samples(b) for pid, b in per_policy.items()}, env_steps)

    # -- metrics ----------------------------------------------------------------------------------
    def pop_metrics(self) -> list[RolloutMetrics]:
        """Finished episodes since the last call, each carrying the loop's timings per env step (ms)."""
        metrics, self._metrics = self._metrics, []
        if self._perf_steps:
            scale = 1000.0 / self._perf_steps
            perf = {
                "mean_env_wait_ms": self._perf["env"] * scale,
                "mean_inference_ms": self._perf["inference"] * scale,
                "mean_raw_obs_processing_ms": self._perf["processing"] * scale,
                "mean_action_processing_ms": 0.0,
            }
            if metrics:  # timings ride on finished episodes, as with RLlib's sampler
                metrics = [m._replace(perf_stats=perf) for m in metrics]
                self._perf = dict.fromkeys(self._perf, 0.0)
                self._perf_steps = 0
        return metrics


class LockstepRolloutWorker(RolloutWorker):
    """`RolloutWorker` that samples with `LockstepSampler` (``config.env_runners(env_runner_cls=...)``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        problems = unsupported_settings(self.config, self.policy_map)
        if problems:
            raise ValueError(
                "the lockstep sampler (runners.sampler: lockstep) does not support: " + "; ".join(problems)
                + ". Change these settings or use runners.sampler: rllib."
            )

    def sample(self, **kwargs: Any) -> MultiAgentBatch:
        sampler = self.__dict__.get("_lockstep")
        if sampler is None:
            sampler = self.__dict__["_lockstep"] = LockstepSampler(self)
        batch = sampler.sample()
        self.callbacks.on_sample_end(worker=self, samples=batch)
        return batch

    def get_metrics(self) -> list[RolloutMetrics]:
        sampler = self.__dict__.get("_lockstep")
        return sampler.pop_metrics() if sampler is not None else []


