"""Where a run's wall time goes: every second of a training run put under one named part.

Why: between evaluations the trainer samples and learns at one rate, yet a whole run averages far less;
the difference (evaluation fights in the driver, checkpoints, league snapshots, weight syncs, logging) is
invisible unless each second is put somewhere. `TimeAccount` does that for `osrs_rllib.training.trainer.Trainer`, and
the parts always sum to the wall time: what no part claims is ``other``.

The parts (`PARTS`), in the order a run meets them:

* ``startup``: everything before the first iteration (Ray's start, building the algorithm, a resume or a
  warm start, TensorBoard's writer);
* ``sampling``: RLlib's ``sample`` timer: the env runners stepping the fights and running the policies'
  forward passes, seen from the driver (the slowest runner, the batches' transfer, advantage standardisation);
* ``learning``: RLlib's ``load`` + ``learn`` timers: PPO's epochs of minibatch SGD in the driver;
* ``sync``: RLlib's ``synch_weights`` timer, the normalisation statistics' sync after the update (timed by
  `osrs_rllib.training.callbacks.TrainingCallbacks`, `NORMALIZER_SYNC_TIMER`) and the reward schedules' progress sent
  to the runners;
* ``rllib_other``: what remains of ``algo.train()``: RLlib collecting and summarising the runners' episode
  metrics, PPO's KL bookkeeping, the result dict (so the four parts above sum to ``algo.train()``'s time);
* ``evaluation``, ``checkpoint``, ``league`` (snapshots, slot refreshes, the league's bookkeeping) and
  ``logging`` (TensorBoard, the terminal, ``status.json``): timed by the trainer around its own calls
  (``with account.part("checkpoint"): ...``);
* ``other``: the wall time no part claims (the loop's own bookkeeping): wall time minus the named parts.

Inside ``sampling`` an estimate splits it further (`SAMPLING_SPLIT`): the runners' own per-step timings
(``sampler_perf``: env, inference, the sampler's processing) times the steps each runner took; its ``other`` is
the driver's sampling time beyond the runners' timed work (Ray's calls, the batches' transfer, the runners' untimed
work). The runners report their timings with finished episodes, averaged over RLlib's window of recent ones: an
iteration without them uses the last ones reported (before any, all of its sampling is ``other``).

RLlib's old API stack reports its timers as means over a window of iterations; the account reads each timer's
running total instead (`ray.util.timer._Timer._total_time`, pinned by tests/osrs_rllib/test_time_account.py),
so an iteration gets exactly its own seconds.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

PARTS = (
    "startup",
    "sampling",
    "learning",
    "sync",
    "rllib_other",
    "evaluation",
    "checkpoint",
    "league",
    "logging",
    "other",
)
"""Every part of a run's wall time, in the order a run meets them; ``other`` is the remainder."""
NAMED_PARTS = PARTS[:-1]
SAMPLING_SPLIT = ("env", "inference", "sampler", "other")
"""The estimated split of ``sampling`` (see the module docstring)."""

RLLIB_TIMERS: dict[str, tuple[str, ...]] = {
    "sampling": ("sample",),
    "learning": ("load", "learn"),
    "sync": ("synch_weights",),
}
"""RLlib's old-API-stack timers (``ray.rllib.utils.metrics``: SAMPLE_TIMER, LOAD_BATCH_TIMER,
LEARN_ON_BATCH_TIMER, SYNCH_WORKER_WEIGHTS_TIMER) behind each part; PPO's ``training_step`` enters each once
per iteration, and none of them nests in another."""
NORMALIZER_SYNC_TIMER = "normalizer_sync_time_ms"
"""The key under ``result["timers"]`` where the training callbacks put the normalisation sync's milliseconds."""

logger = logging.getLogger(__name__)


def rllib_timer_totals(algo: Any) -> dict[str, float]:
    """Seconds each of RLlib's timers has run in total (an algorithm without them, or another stack: {})."""
    timers = getattr(algo, "_timers", None) or {}
    totals = {}
    for name, timer in list(timers.items()):
        total = getattr(timer, "_total_time", None)
        if isinstance(total, int | float):
            totals[name] = float(total)
    return totals


class TimeAccount:
    """The run's seconds per part, in total and per iteration (a lap).

    Parts nest safely: a part entered inside another takes its seconds out of the outer one, so no second
    is counted twice.

    Args:
        clock: Seconds, monotonic (tests pass their own).
        sampler: ``lockstep`` (its timings are per env step) or ``rllib`` (per step of a runner's vector
            of envs); only the sampling split uses it.
        env_runners: Remote env runners (0: the driver samples).
        envs_per_runner: Envs each runner steps.
    """

    def __init__(
        self,
        clock: Callable[[], float] = time.perf_counter,
        *,
        sampler: str = "lockstep",
        env_runners: int = 0,
        envs_per_runner: int = 1,
    ) -> None:
        self.clock = clock
        self.sampler = sampler
        self.env_runners = env_runners
        self.envs_per_runner = max(1, envs_per_runner)
        self.start()

    @classmethod
    def for_config(cls, cfg: Any, clock: Callable[[], float] = time.perf_counter) -> TimeAccount:
        """The account of a run of `cfg` (an `osrs_rllib.config.schema.TrainConfig`)."""
        runners = cfg.runners
        known = runners.num_env_runners if isinstance(runners.num_env_runners, int) else 0  # `auto`: set at build
        return cls(clock, sampler=runners.sampler, env_runners=known, envs_per_runner=runners.num_envs_per_env_runner)

    def start(self) -> float:
        """Start (again) from nothing: the run's wall time counts from here. Returns the Unix time of the start
        (the run's record states its wall time from it)."""
        self._started = self.clock()
        self.totals: dict[str, float] = dict.fromkeys(NAMED_PARTS, 0.0)
        self.sampling_split: dict[str, float] = dict.fromkeys(SAMPLING_SPLIT, 0.0)
        self.iterations = 0
        self.env_steps = 0
        """Env steps sampled by this run's iterations (a resume counts only its own)."""
        self.algorithm_s = 0.0
        """Seconds inside ``algo.train()``: the rate "between evaluations" is env steps over these."""
        self.laps: list[dict[str, float]] = []
        self._open: list[float] = []  # seconds taken by parts nested in each open part
        self._rllib_before: dict[str, float] = {}
        self._last_per_step: dict[str, Any] = {}
        self._lap_at = self._started
        self._lap_totals = dict(self.totals)
        self._lap_split = dict(self.sampling_split)
        return time.time()

    # -- putting seconds under parts ---------------------------------------------------------------------
    def add(self, name: str, seconds: float) -> None:
        """Put `seconds` under part `name` (one of `NAMED_PARTS`)."""
        if name not in self.totals:
            raise ValueError(f"unknown part {name!r}; the parts are {', '.join(NAMED_PARTS)}")
        self.totals[name] += seconds
        if self._open:  # an enclosing part does not count these seconds again
            self._open[-1] += seconds

    @contextmanager
    def part(self, name: str) -> Iterator[None]:
        """Time the block under part `name`, less the parts nested in it."""
        if name not in self.totals:
            raise ValueError(f"unknown part {name!r}; the parts are {', '.join(NAMED_PARTS)}")
        t0 = self.clock()
        self._open.append(0.0)
        try:
            yield
        finally:
            nested = self._open.pop()
            self.add(name, self.clock() - t0 - nested)
            if self._open:  # `add` passed up this part's own seconds; its nested ones go up too
                self._open[-1] += nested

    def rest_to(self, name: str) -> None:
        """Put every second so far that no part claims under `name` (e.g. ``startup`` when the loop begins)."""
        self.add(name, max(0.0, self.wall_s() - sum(self.totals.values())))

    def wall_s(self) -> float:
        return self.clock() - self._started

    # -- RLlib's iteration -----------------------------------------------------------------------------------
    def loop_started(self, algo: Any) -> None:
        """The first iteration is next: what came before is start-up, and RLlib's timers count from here."""
        self.rest_to("startup")
        self._rllib_before = rllib_timer_totals(algo)
        self.lap()  # the start-up is no iteration's

    def algorithm_iteration(self, algo: Any, result: Mapping[str, Any], seconds: float) -> None:
        """Split one ``algo.train()`` of `seconds` into sampling, learning, sync and ``rllib_other`` from RLlib's
        timers (their growth since the last call) and the normalisation sync's time in `result`."""
        now = rllib_timer_totals(algo)
        if not now and log_once():
            logger.warning("RLlib's timers are not readable here: algo.train() is accounted as rllib_other")
        grown = {k: v - self._rllib_before.get(k, 0.0) for k, v in now.items()}
        self._rllib_before = now
        timers = result.get("timers") or {}
        parts = {part: sum(grown.get(t, 0.0) for t in names) for part, names in RLLIB_TIMERS.items()}
        parts["sync"] += float(timers.get(NORMALIZER_SYNC_TIMER, 0.0)) / 1000
        scale = min(1.0, seconds / sum(parts.values())) if sum(parts.values()) > 0 else 1.0
        for part, value in parts.items():  # RLlib's clock is time.time(): never more than the call took
            self.add(part, value * scale)
        self.add("rllib_other", max(0.0, seconds - sum(parts.values()) * scale))
        steps = int(result.get("num_env_steps_sampled_this_iter") or 0)
        self.env_steps += steps
        self.algorithm_s += seconds
        self._split_sampling(parts["sampling"] * scale, steps, result)

    def _split_sampling(self, sampling: float, steps: int, result: Mapping[str, Any]) -> None:
        perf = (result.get("env_runners") or {}).get("sampler_perf") or {}
        per_step = {
            "env": perf.get("mean_env_wait_ms"),
            "inference": perf.get("mean_inference_ms"),
            "sampler": (perf.get("mean_raw_obs_processing_ms") or 0.0) + (perf.get("mean_action_processing_ms") or 0.0),
        }
        if perf.get("mean_env_wait_ms") is None:
            per_step = self._last_per_step
        self._last_per_step = per_step
        if per_step.get("env") is None or steps <= 0:
            self.sampling_split["other"] += sampling  # no timings yet: unexplained
            return
        divisor = 1.0 if self.sampler == "lockstep" else float(self.envs_per_runner)
        runners = max(1, self.env_runners)  # they sample side by side
        work = {k: float(v or 0.0) / divisor / 1000 * steps / runners for k, v in per_step.items()}
        total = sum(work.values())
        scale = min(1.0, sampling / total) if total > 0 else 0.0
        for k, v in work.items():
            self.sampling_split[k] += v * scale
        self.sampling_split["other"] += max(0.0, sampling - total * scale)

    # -- laps (iterations) and the summary -----------------------------------------------------------------
    def lap(self) -> dict[str, float]:
        """Seconds per part since the last lap (``other`` included, so they sum to ``wall``), with ``wall`` and
        the sampling split as ``sampling/<piece>``."""
        now = self.clock()
        out = {name: self.totals[name] - self._lap_totals[name] for name in NAMED_PARTS}
        wall = now - self._lap_at
        out["other"] = wall - sum(out.values())
        out.update({f"sampling/{k}": self.sampling_split[k] - self._lap_split[k] for k in SAMPLING_SPLIT})
        out["wall"] = wall
        self._lap_at, self._lap_totals, self._lap_split = now, dict(self.totals), dict(self.sampling_split)
        return out

    def end_iteration(self, writer: Any, iteration: int) -> dict[str, float]:
        """Close the iteration's lap and write it to TensorBoard (``time/<part>_s``, ``time/<part>_share`` of the
        iteration's wall time, ``time/wall_s``); the writing is the next iteration's logging."""
        lap = self.lap()
        self.iterations += 1
        self.laps.append(lap)
        if writer is not None:
            with self.part("logging"):
                wall = lap["wall"]
                for name, seconds in lap.items():
                    if name in ("startup", "wall"):
                        continue
                    writer.add_scalar(f"time/{name}_s", seconds, iteration)
                    if "/" not in name:
                        writer.add_scalar(f"time/{name}_share", seconds / wall if wall > 0 else 0.0, iteration)
                writer.add_scalar("time/wall_s", wall, iteration)
        return lap

    def summary(self) -> dict[str, Any]:
        """The run's account so far (what ``run.json`` keeps under ``time_account``)."""
        wall = self.wall_s()
        parts = {name: self.totals[name] for name in NAMED_PARTS}
        parts["other"] = wall - sum(parts.values())
        loop_wall = wall - parts["startup"]
        return {
            "wall_s": wall,
            "parts_s": parts,
            "shares": {k: v / wall if wall > 0 else 0.0 for k, v in parts.items()},
            "sampling_split_s": dict(self.sampling_split),
            "iterations": self.iterations,
            "env_steps": self.env_steps,
            "algorithm_s": self.algorithm_s,
            "loop_wall_s": loop_wall,
            "whole_run_env_steps_per_s": self.env_steps / loop_wall if loop_wall > 0 else None,
            "between_evaluations_env_steps_per_s": self.env_steps / self.algorithm_s if self.algorithm_s > 0 else None,
        }

    def table(self) -> str:
        """One short table of the run's account (printed when ``train`` and ``exploit`` end)."""
        return format_table(self.summary())


def format_table(summary: Mapping[str, Any]) -> str:
    """`TimeAccount.summary` as the table ``train`` and ``exploit`` print when they end."""
    wall, parts = summary["wall_s"], summary["parts_s"]
    iterations = summary.get("iterations") or 0
    lines = [f"where the time went: {wall:,.1f} s wall, {iterations} iteration{'' if iterations == 1 else 's'}",
             f"  {'part':<13} {'seconds':>9} {'share':>7} {'per iteration':>14}"]  # fmt: skip
    split = summary.get("sampling_split_s") or {}
    for name in PARTS:
        seconds = parts.get(name, 0.0)
        per = f"{seconds / iterations:>12.2f} s" if iterations and name != "startup" else ""
        lines.append(f"  {name:<13} {seconds:>9.1f} {seconds / wall if wall > 0 else 0.0:>7.1%} {per:>14}")
        if name == "sampling" and seconds > 0 and split:
            pieces = ", ".join(f"{k} {v / seconds:.0%}" for k, v in split.items())
            lines.append(f"    (estimated: {pieces})")
    whole, between = summary.get("whole_run_env_steps_per_s"), summary.get("between_evaluations_env_steps_per_s")
    if whole is not None and between:
        lines.append(
            f"  env steps/s: {whole:,.0f} over the run after start-up, {between:,.0f} inside algo.train() "
            f"({whole / between:.0%})"
        )
    return "\n".join(lines)


_warned: list[bool] = []


def log_once() -> bool:
    """True the first time only (a missing timer is said once per process, not every iteration)."""
    if _warned:
        return False
    _warned.append(True)
    return True


def accounted(part: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A method of an object with an ``account`` (a `TimeAccount`) whose every call is timed under `part`."""

    def wrap(method: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(method)
        def timed(self: Any, *args: Any, **kwargs: Any) -> Any:
            with self.account.part(part):
                return method(self, *args, **kwargs)

        return timed

    return wrap
