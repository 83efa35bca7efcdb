"""The lockstep sampler's array path: a fragment of NH fights on one compiled batch, sampled with the fights'
observations, actions, rewards and done flags kept as arrays from the core to the forward passes and the
trajectory columns.

Why: with the fights in one core call per tick, the simulator is a small part of an env step; the rest was
Python around it, per seat and per tick: the environment's observation, reward, info and done dicts
(`envs.rllib_env.NHMultiAgentEnv.end_step`), the sampler walking those dicts, flattening each observation
again and appending every row of every column to per-agent lists. Here a tick is a few array operations for
all fights (`envs.rllib_env.CoreEnvBatch`): every seat's flat observation row is written into one
(envs, 2, width) array, each policy's forward pass reads its rows by index, and each trainable policy's
outputs are kept as one block per tick with the trajectory each row belongs to. Per-seat dicts are built only
where someone reads them: on a fight's last tick (its infos and episode metrics, the callbacks' episode). At the
fragment's end the blocks are sorted by trajectory (stably, so each trajectory's rows stay in time order) and
each trajectory becomes the same `SampleBatch` the dict path builds from its lists.

Everything with an order (episode ids, resets, callbacks, the opening order of trajectories, the forward passes'
batches and hence their random draws, the order of the finished trajectories) follows the dict path
(`LockstepSampler`) step for step, so both produce the same batches bit for bit
(tests/osrs_rllib/test_lockstep_arrays.py compares them on real fights). Between fragments the state lives in
the sampler's slots as the dict path keeps it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from ray.rllib.policy.sample_batch import SampleBatch

from envs.nh.contract import NUM_HEADS, check_action
from envs.rllib_env import AGENT_IDS, CoreEnvBatch
from osrs_rllib.training.sampling.trajectory import Trajectory, close_trajectory
from policies.rllib_model import nh_model_of

SB = SampleBatch
AGENT_SEATS = {agent: seat for seat, agent in enumerate(AGENT_IDS)}


class LockstepLoop(Protocol):
    """The parts of `osrs_rllib.training.sampling.lockstep.LockstepSampler` the array path works with: its worker, its
    slots (each sub-environment's episode, awaiting observations and open trajectories), its timings and its episode
    handling, so that both paths start, end and count episodes with the same code."""

    worker: Any
    slots: list[Any]
    _perf: dict[str, float]

    def _is_trainable(self, pid: str) -> bool: ...

    def _flattener(self, pid: str) -> Any: ...

    def _flatten(self, pid: str, obs: Any) -> np.ndarray: ...

    def _end_episode(self, slot: Any) -> None: ...


@dataclass
class _Block:
    """One trainable policy's forward pass of one tick: its rows' inputs and outputs, and whose rows they are."""

    obs: np.ndarray
    actions: np.ndarray
    logp: np.ndarray
    vf: np.ndarray
    dist: np.ndarray | None
    traj: np.ndarray
    """Per row, the index of its trajectory in `ArrayPath.trajectories`."""
    envs: np.ndarray
    seats: np.ndarray
    rewards: np.ndarray | None = None


class ArrayPath:
    """The array path of one `LockstepSampler` (see the module docstring); `fragment` replaces the dict path's
    loop over the fragment's ticks."""

    def __init__(self, sampler: LockstepLoop, batch: CoreEnvBatch) -> None:
        self.sampler = sampler
        self.batch = batch
        n = len(batch.envs)
        self.flat = np.zeros((n, 2, batch.flat_size), dtype=np.float32)
        """Each seat's flat observation awaiting its action (rows of seats that do not act are not read)."""
        self.acting = np.zeros((n, 2), dtype=bool)
        self.actions = np.zeros((n, 2, NUM_HEADS), dtype=np.int64)
        self.lengths = np.zeros(n, dtype=np.int64)
        self.totals = np.zeros(n, dtype=np.float64)
        self.agent_sums = np.zeros((n, 2), dtype=np.float64)
        self.traj_of = np.full((n, 2), -1, dtype=np.int64)
        self.trajectories: list[Trajectory] = []
        self.blocks: dict[str, list[_Block]] = {}
        self._groups: list[tuple[str, np.ndarray, np.ndarray]] | None = None
        self._checked: set[str] = set()

    # -- state between fragments lives in the sampler's slots ---------------------------------------
    def _load(self, k: int) -> None:
        slot = self.sampler.slots[k]
        episode = slot.episode
        self.acting[k] = False
        self.agent_sums[k] = 0.0
        for agent, row in slot.obs.items():
            seat = AGENT_SEATS[agent]
            self.acting[k, seat] = True
            self.flat[k, seat] = row
            self.agent_sums[k, seat] = episode.agent_rewards.get((agent, episode.policy_of[agent]), 0.0)
        self.lengths[k] = episode.length
        self.totals[k] = episode.total_reward
        self.traj_of[k] = -1
        self._groups = None

    def _store(self, k: int) -> None:
        """Write fight k's running figures back into its slot and episode (as the dict path keeps them)."""
        slot = self.sampler.slots[k]
        episode = slot.episode
        episode.length = int(self.lengths[k])
        episode.total_reward = float(self.totals[k])
        if episode.length:
            for agent in slot.obs:
                key = (agent, episode.policy_of[agent])
                episode.agent_rewards[key] = float(self.agent_sums[k, AGENT_SEATS[agent]])

    # -- one fragment ----------------------------------------------------------------------------------
    def fragment(self, length: int, done: list[Trajectory], bootstrap: list[tuple[Trajectory, np.ndarray]]) -> None:
        """`length` ticks of every fight; finished trajectories go to `done` and `bootstrap` as in the dict path,
        and the open ones stay in the slots with their rows gathered (`gather`)."""
        sampler, perf = self.sampler, self.sampler._perf
        self.trajectories, self.blocks = [], {}
        for k in range(len(self.batch.envs)):
            self._load(k)
        for _ in range(length):
            t0 = time.perf_counter()
            self._act()
            t1 = time.perf_counter()
            rewards, ended, results = self.batch.step(self.actions, self.acting)
            env_time = time.perf_counter() - t1
            self._record(rewards, ended, results, done, bootstrap)
            t2 = time.perf_counter()
            perf["inference"] += t1 - t0
            perf["env"] += env_time
            perf["processing"] += (t2 - t1) - env_time
        for k, slot in enumerate(sampler.slots):
            self._store(k)
            slot.obs = {agent: self.flat[k, AGENT_SEATS[agent]].copy() for agent in slot.obs}

    def _group_rows(self) -> list[tuple[str, np.ndarray, np.ndarray]]:
        """Per policy, in the dict path's order (first appearance over envs, then seats), its rows' envs and seats."""
        if self._groups is None:
            members: dict[str, tuple[list[int], list[int]]] = {}
            for k, slot in enumerate(self.sampler.slots):
                policy_of = slot.episode.policy_of
                for agent in slot.obs:
                    envs, seats = members.setdefault(policy_of[agent], ([], []))
                    envs.append(k)
                    seats.append(AGENT_SEATS[agent])
            self._groups = [(pid, np.asarray(e, dtype=np.intp), np.asarray(s, dtype=np.intp))
                            for pid, (e, s) in members.items()]  # fmt: skip
            for pid, _, _ in self._groups:
                self._check_layout(pid)
        return self._groups

    def _check_layout(self, pid: str) -> None:
        if pid in self._checked:
            return
        keys = self.sampler._flattener(pid).keys
        if keys != self.batch.keys:
            raise RuntimeError(f"policy {pid!r} flattens observations as {keys}, the array path as {self.batch.keys}")
        self._checked.add(pid)

    def _act(self) -> None:
        """`LockstepSampler._act` on arrays: the same forward passes on the same rows, in the same order."""
        sampler = self.sampler
        for pid, envs, seats in self._group_rows():
            policy = sampler.worker.policy_map[pid]
            obs = self.flat[envs, seats]
            trainable = sampler._is_trainable(pid)
            model = nh_model_of(policy)
            if model is not None:
                extra = model.act(obs, explore=True, trainable=trainable)
                acts = extra[SB.ACTIONS]
            else:
                acts, _, extra = policy.compute_actions_from_input_dict(SampleBatch({SB.OBS: obs}), explore=True)
                acts = np.asarray(acts)
            self.actions[envs, seats] = acts if acts.dtype.kind in "iu" else [check_action(a) for a in acts]
            if not trainable:
                continue
            logp, vf = extra.get(SB.ACTION_LOGP), extra.get(SB.VF_PREDS)
            if logp is None or vf is None:
                raise RuntimeError(
                    f"trainable policy {pid!r} returned no {SB.ACTION_LOGP}/{SB.VF_PREDS}; the "
                    "lockstep sampler serves PPO-style policies (use runners.sampler: rllib)"
                )
            ids = self.traj_of[envs, seats]
            missing = np.flatnonzero(ids < 0)
            for j in missing.tolist():
                ids[j] = self._open(int(envs[j]), int(seats[j]))
            n, dist = len(obs), extra.get(SB.ACTION_DIST_INPUTS)
            block = _Block(obs, acts, np.asarray(logp).reshape(n), np.asarray(vf).reshape(n), dist, ids, envs, seats)
            self.blocks.setdefault(pid, []).append(block)

    def _open(self, k: int, seat: int) -> int:
        """A trajectory for seat `seat` of fight k (the dict path's `_open_trajectory`, in the same order)."""
        slot = self.sampler.slots[k]
        agent = next(a for a in slot.obs if AGENT_SEATS[a] == seat)
        pid = slot.episode.policy_of[agent]
        index = list(slot.episode.policy_of).index(agent)
        traj = Trajectory(pid, agent, index, slot.episode.episode_id, int(self.lengths[k]))
        slot.trajectories[agent] = traj
        self.traj_of[k, seat] = len(self.trajectories)
        self.trajectories.append(traj)
        return int(self.traj_of[k, seat])

    def _record(
        self,
        rewards: np.ndarray,
        ended: np.ndarray,
        results: dict[int, Any],
        done: list[Trajectory],
        bootstrap: list[tuple[Trajectory, np.ndarray]],
    ) -> None:
        """`LockstepSampler._record` for every fight: rewards to the tick's rows and the episodes' sums (the same
        float64 additions in the same order), next observations, and the dict path's end of each finished fight."""
        for blocks in self.blocks.values():
            block = blocks[-1]
            if block.rewards is None:
                block.rewards = rewards[block.envs, block.seats]
        self.lengths += 1
        np.add(self.totals, rewards[:, 0], out=self.totals, where=self.acting[:, 0])
        np.add(self.totals, rewards[:, 1], out=self.totals, where=self.acting[:, 1])
        np.add(self.agent_sums, rewards, out=self.agent_sums, where=self.acting)
        self.batch.write_obs(self.flat)
        sampler = self.sampler
        for k in np.flatnonzero(ended).tolist():
            slot = sampler.slots[k]
            obs, _, terminateds, _, infos = results[k]
            slot.episode.last_infos.update(infos or {})
            for agent in list(slot.obs):
                term = bool(terminateds.get(agent, False)) or bool(terminateds.get("__all__", False))
                traj = slot.trajectories.pop(agent, None)
                if traj is not None:
                    close_trajectory(traj, term, obs.get(agent), sampler._flatten, done, bootstrap)
            self._store(k)
            sampler._end_episode(slot)
            self._load(k)

    # -- the fragment's columns ------------------------------------------------------------------------
    def gather(self) -> None:
        """Each trajectory's columns from its policy's blocks: rows sorted stably by trajectory keep time order."""
        for blocks in self.blocks.values():
            traj = np.concatenate([b.traj for b in blocks])
            order = np.argsort(traj, kind="stable")
            ids, starts, counts = np.unique(traj[order], return_index=True, return_counts=True)
            columns: dict[str, np.ndarray] = {
                SB.OBS: np.concatenate([b.obs for b in blocks])[order],
                SB.ACTIONS: np.concatenate([b.actions for b in blocks])[order],
                SB.REWARDS: np.concatenate([b.rewards for b in blocks]).astype(np.float32)[order],
                SB.ACTION_LOGP: np.concatenate([b.logp for b in blocks]).astype(np.float32)[order],
                SB.VF_PREDS: np.concatenate([b.vf for b in blocks]).astype(np.float32)[order],
            }
            if all(b.dist is not None for b in blocks):
                columns[SB.ACTION_DIST_INPUTS] = np.concatenate([b.dist for b in blocks])[order]
            for t, a, c in zip(ids.tolist(), starts.tolist(), counts.tolist(), strict=True):
                self.trajectories[t].gathered = {key: col[a : a + c] for key, col in columns.items()}
