"""`osrs-rllib outcome train|check`: a calibrated P(win) per tick, learnt from a model's own fights and stored in
its model file as the `winrate` extension (`policies/outcome.py`), then checked on fights it never saw.

Protocol (docs/outcome.md has the reasoning and the measured figures):

* **Fights.** The model plays `fights` fights against an opponent *mix* (`DEFAULT_MIX`: itself, the baseline
  and the ladder rungs), each opponent's share spread evenly over the model's trained builds and fight types
  (`osrs_rllib.evaluation.stratified.spread`), with the fight parameters it was trained with. Fight ``k`` (numbered over
  the whole run) uses simulator seed ``seed + k``; the model acts deterministically, ladder bots are seeded from
  ``(fight seed, 1)``. In self-play both seats are the model and both are recorded.
* **Samples.** One per tick and recorded seat: the observation the model acted on (stacked as the model
  stacks it: exactly what a serving client sends) and the seat's outcome, 1 if it won and 0 otherwise. A tie
  (both die on the same tick, or the fight is cut off at `max_episode_ticks`) is *not a win*: the model
  predicts P(win), as `osrs-rllib fight` counts win rates. ``tick`` is the number of game ticks already
  played when the observation was taken (0 for the reset observation).
* **Splits by fight**, never by tick (ticks of one fight are nearly copies of each other): per opponent, a
  seeded shuffle puts 70 % of the fights in training, 15 % in validation (early stopping and the Platt
  calibration) and 15 % in a test split reported at the end of training. Each recorded seat's ticks weigh
  1 / (its number of ticks) in training, so every trajectory counts once whatever its length.
* **Held out.** `check` plays new fights whose seeds must not overlap the training seeds recorded in the
  file (``extension_info.winrate.train_seeds``), by default the seeds right after them.

Metrics (`summarize`): expected calibration error over 10 equal-width bins of the predicted probability,
ECE = Σ_b (n_b / N) · |mean(y in b) − mean(p in b)| (bins [0, .1), …, [.9, 1]; the last includes 1); Brier
score mean((p − y)²); AUC = P(p⁺ > p⁻) + ½ P(p⁺ = p⁻) over (won, not won) pairs; log-loss. Every tick counts
once unless weights are given. The calibration bars (ECE <= 0.05, AUC >= 0.85) apply to ticks ``tick >= BAR_FROM_TICK``.
"""

from __future__ import annotations

import logging
import math
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from envs.nh.core_engine import AnyEngine, check_engine
from envs.nh.engine import EngineStep
from envs.nh.params import OPPONENT_AGENT, OPPONENT_BASELINE, FightParams
from envs.nh.sim import Outcome
from envs.opponents import LADDER
from osrs_rllib.evaluation.batched import LadderSeat, Seat, seat_seed

# The metrics' old address: tests and notebooks import them from here.
from osrs_rllib.evaluation.calibration import ECE_BINS as ECE_BINS
from osrs_rllib.evaluation.calibration import brier_score as brier_score
from osrs_rllib.evaluation.calibration import expected_calibration_error as expected_calibration_error
from osrs_rllib.evaluation.calibration import log_loss as log_loss
from osrs_rllib.evaluation.calibration import reliability_table as reliability_table
from osrs_rllib.evaluation.calibration import roc_auc as roc_auc
from osrs_rllib.evaluation.calibration import summarize as summarize
from osrs_rllib.evaluation.match import FightHooks, SeatedPlayer, play_match
from osrs_rllib.evaluation.stratified import spread
from policies.fight_rules import FightRules, fight_rules_of
from policies.model_file import MODEL_SUFFIX, ModelFile, load_model_file, save_model_file
from policies.outcome import WINRATE, FitResult, OutcomeConfig, attach_winrate, fit_outcome
from policies.torch_threads import torch_threads

logger = logging.getLogger(__name__)

SELF = "self"
"""Opponent name of the model against itself (both seats recorded: balanced outcomes by construction); the
`--mix` word of `osrs-rllib outcome`, not training's ``self_play`` kind (`osrs_rllib.config.schema.SELF_PLAY`)."""
BASELINE = OPPONENT_BASELINE
DEFAULT_MIX: dict[str, float] = {
    SELF: 0.45,
    BASELINE: 0.15,
    "tribrid": 0.15,
    "prayer_switcher": 0.10,
    "stay_alive": 0.05,
    "random": 0.05,
    "noop": 0.05,
}
"""Share of the fights per opponent. A trained model beats the baseline and the rungs ~90-100 % of the time, so
those alone would teach "always win"; self-play supplies the losses and the close fights."""
WINRATE_FORMAT = "osrs-rllib-winrate/1"
"""Version of the `winrate` extension's input, label and metadata conventions (this module's docstring)."""
SPLIT_SHARES = (0.70, 0.15, 0.15)
"""Training, validation and test shares of each opponent's fights."""
SPLIT_NAMES = ("train", "val", "test")
PHASES: tuple[tuple[str, int, int | None], ...] = (
    ("0-19", 0, 19),
    ("20-49", 20, 49),
    ("50-99", 50, 99),
    ("100-199", 100, 199),
    ("200+", 200, None),
)
"""Fight phases by `tick` (game ticks already played), inclusive bounds."""
BAR_FROM_TICK = 20
"""The calibration bars apply from the 20th tick of a fight on: ticks with ``tick >= 20``."""
BAR_MAX_ECE = 0.05
BAR_MIN_AUC = 0.85
DEFAULT_PARALLEL = 64
"""Fights stepped in lockstep: one forward pass of the model serves all of them."""
_PREDICT_BATCH = 65536


class OutcomeError(ValueError):
    """Bad input to `train_winrate` / `check_winrate`: the message says what to change."""


# ---------------------------------------------------------------------------------------------------------
# Fights → samples
# ---------------------------------------------------------------------------------------------------------
@dataclass
class OutcomeData:
    """Per-tick samples of recorded trajectories (one trajectory = one seat of one fight).

    Per sample: ``obs`` (N, D) float32, ``won`` (N,) 0/1, ``tick`` (N,), ``traj`` (N,) index into the
    per-trajectory lists.
    """

    obs: np.ndarray
    won: np.ndarray
    tick: np.ndarray
    traj: np.ndarray
    fight: list[int] = field(default_factory=list)
    """Fight number of each trajectory (its simulator seed is ``seed + fight``)."""
    seat: list[int] = field(default_factory=list)
    opponent: list[str] = field(default_factory=list)
    build: list[str] = field(default_factory=list)
    fight_type: list[str] = field(default_factory=list)
    outcome: list[str] = field(default_factory=list)
    """``won``, ``lost`` or ``tied`` (a cut-off fight is ``tied``)."""
    length: list[int] = field(default_factory=list)

    @property
    def trajectories(self) -> int:
        return len(self.fight)

    def tick_weights(self) -> np.ndarray:
        """1 / (trajectory length) per sample: every trajectory weighs 1 in total."""
        return 1.0 / np.asarray(self.length, dtype=np.float64)[self.traj]

    def subset(self, trajectories: np.ndarray) -> OutcomeData:
        """The samples of the given trajectories (renumbered)."""
        keep = np.asarray(sorted(int(t) for t in trajectories), dtype=np.int64)
        remap = np.full(self.trajectories, -1, dtype=np.int64)
        remap[keep] = np.arange(len(keep))
        rows = remap[self.traj] >= 0
        pick: Callable[[list[Any]], list[Any]] = lambda xs: [xs[i] for i in keep]  # noqa: E731
        return OutcomeData(
            obs=self.obs[rows],
            won=self.won[rows],
            tick=self.tick[rows],
            traj=remap[self.traj[rows]],
            fight=pick(self.fight),
            seat=pick(self.seat),
            opponent=pick(self.opponent),
            build=pick(self.build),
            fight_type=pick(self.fight_type),
            outcome=pick(self.outcome),
            length=pick(self.length),
        )


def parse_mix(text: str) -> dict[str, float]:
    """``self=0.5,baseline=0.2,tribrid=0.3`` as a mix (shares are normalised to sum to 1).

    Raises:
        OutcomeError: An unknown opponent, a bad or negative share, or nothing left with a positive share.
    """
    mix: dict[str, float] = {}
    for part in (t.strip() for t in text.split(",") if t.strip()):
        name, sep, share = part.partition("=")
        try:
            mix[name.strip()] = float(share) if sep else 1.0
        except ValueError:
            raise OutcomeError(f"bad share {share!r} for {name!r} in --mix; write name=share, e.g. self=0.5") from None
    return check_mix(mix)


def check_mix(mix: Mapping[str, float]) -> dict[str, float]:
    """The mix normalised to shares summing to 1, zero shares dropped (see `parse_mix` for the errors)."""
    valid = (SELF, BASELINE, *LADDER)
    for name, share in mix.items():
        if name not in valid:
            raise OutcomeError(f"unknown opponent {name!r} in the mix; valid: {', '.join(valid)}")
        if not (math.isfinite(share) and share >= 0):
            raise OutcomeError(f"the share of {name!r} must be a finite number >= 0, got {share}")
    total = sum(mix.values())
    if total <= 0:
        raise OutcomeError(f"the mix {dict(mix)} gives no opponent a positive share")
    return {name: share / total for name, share in mix.items() if share > 0}


def allocate(fights: int, mix: Mapping[str, float]) -> dict[str, int]:
    """Fights per opponent: shares × fights rounded by largest remainder, so the counts sum to `fights`."""
    raw = {name: share * fights for name, share in mix.items()}
    counts = {name: math.floor(v) for name, v in raw.items()}
    for name in sorted(raw, key=lambda n: (counts[n] - raw[n], list(raw).index(n)))[: fights - sum(counts.values())]:
        counts[name] += 1
    return counts


def training_fight_params(model: ModelFile) -> dict[str, Any]:
    """The fight parameters the model trained with (its rules and settings, `policies.fight_rules`), minus what
    the seating decides: the fights its win probability is learnt and checked on."""
    return dict(fight_rules_of(model).training_options)


def fight_rules(model: ModelFile, params: Mapping[str, Any]) -> FightRules:
    """The rules `collect` plays `params` (`training_fight_params`, or what a winrate extension recorded from
    it) by, for the reports."""
    origin = f"training config of {model.path.name}"
    return FightRules.from_params(FightParams.from_options(dict(params)), origin, {model.path.name: model.frame_stack})


def _ladder_seed(fight_seed: int) -> int:
    return seat_seed(fight_seed, 1)


ProgressFn = Callable[[str, int, int], None]
"""(opponent, fights of it done, fights of it planned) → None."""


class _Collector:
    """Accumulates the recorded trajectories of `collect`, one opponent's fights at a time."""

    def __init__(
        self, model: ModelFile, seed: int, parallel: int, progress: ProgressFn | None, engine: str = "auto"
    ) -> None:
        self.model = model
        self.engine = engine
        self.seed = seed
        self.parallel = parallel
        self.progress = progress
        self.data = OutcomeData(np.zeros((0, model.obs_size), np.float32), np.zeros(0), np.zeros(0), np.zeros(0))
        self.obs: list[np.ndarray] = []
        self.ticks: list[int] = []

    def _seat(self, seat: int, fight_of: dict[int, int], buffers: dict[tuple[int, int], list[np.ndarray]]) -> Seat:
        module = self.model.module

        def act(obs: np.ndarray, masks: np.ndarray, fight_seeds: Sequence[int]) -> np.ndarray:
            for j, s in enumerate(fight_seeds):
                buffers.setdefault((fight_of[int(s)], seat), []).append(obs[j].copy())
            with torch.no_grad():
                actions, _ = module(torch.from_numpy(obs), torch.from_numpy(masks.astype(np.float32)), True, None)
            return actions.numpy()

        return Seat(act, self.model.frame_stack)

    def play(self, opponent: str, first: int, n: int, fight_params: Mapping[str, Any]) -> None:
        """Fights ``first … first + n − 1`` against `opponent`."""
        seeds = [self.seed + first + k for k in range(n)]
        fight_of = {s: first + k for k, s in enumerate(seeds)}
        options = {**fight_params, "include_opponent_observation": False}
        options["opponent"] = OPPONENT_BASELINE if opponent == BASELINE else OPPONENT_AGENT
        plan = spread(FightParams.from_options(options), n)
        buffers: dict[tuple[int, int], list[np.ndarray]] = {}
        recorded = (0, 1) if opponent == SELF else (0,)
        ladder = LadderSeat(opponent, _ladder_seed) if opponent in LADDER else None
        seat1 = self._seat(1, fight_of, buffers) if opponent == SELF else ladder.seat() if ladder else None
        data = self.data
        done = 0

        def on_step(local: int, engine: AnyEngine, step: EngineStep) -> None:
            nonlocal done
            if not (step.terminated or step.truncated):
                return
            k = first + local
            for seat in recorded:
                frames = buffers.pop((k, seat))
                outcome = step.outcomes[seat]
                self.obs.append(np.stack(frames))
                self.ticks.append(len(frames))
                data.fight.append(k)
                data.seat.append(seat)
                data.opponent.append(opponent)
                data.build.append(engine.build.value)
                data.fight_type.append(engine.fight_mode.value)
                data.outcome.append(outcome.value if outcome is not None else Outcome.TIED.value)
                data.length.append(len(frames))
            done += 1  # play_match makes the ladder bot forget the fight
            if self.progress is not None and (done % 50 == 0 or done == n):
                self.progress(opponent, done, n)

        started = time.perf_counter()
        side_b = None if seat1 is None else SeatedPlayer(seat1, None if ladder is None else ladder.forget)
        play_match(
            SeatedPlayer(self._seat(0, fight_of, buffers)),
            side_b,
            plan,
            seeds,
            [0] * n,  # the model in seat 0 every fight
            parallel=max(1, min(self.parallel, n)),
            engine=self.engine,
            hooks=FightHooks(on_step=on_step),
        )
        logger.info("%d fights against %s in %.1f s", n, opponent, time.perf_counter() - started)

    def finish(self) -> OutcomeData:
        data = self.data
        lengths = np.asarray(data.length, dtype=np.int64)
        data.obs = np.concatenate(self.obs).astype(np.float32, copy=False)
        data.traj = np.repeat(np.arange(len(lengths)), lengths)
        data.tick = np.concatenate([np.arange(n, dtype=np.int32) for n in lengths])
        won = np.asarray([o == Outcome.WON.value for o in data.outcome], dtype=np.float32)
        data.won = won[data.traj]
        return data


def collect(
    model: ModelFile,
    fights: int,
    seed: int,
    mix: Mapping[str, float],
    fight_params: Mapping[str, Any],
    *,
    parallel: int = DEFAULT_PARALLEL,
    progress: ProgressFn | None = None,
    engine: str = "auto",
) -> OutcomeData:
    """Play `fights` fights of `model` against the mix and record every model seat's ticks (module docstring).

    `engine` picks the simulator (`make_engine`: ``auto``, ``core``, ``python``); the fights are the same on both.

    Raises:
        OutcomeError: `fights` < 1, or fight parameters the simulator rejects.
    """
    if fights < 1:
        raise OutcomeError(f"fights must be at least 1, got {fights}")
    counts = allocate(fights, check_mix(mix))
    try:
        FightParams.from_options(dict(fight_params))
    except ValueError as exc:
        raise OutcomeError(f"invalid fight parameters: {exc}") from None
    try:
        check_engine(engine)
    except ValueError as exc:
        raise OutcomeError(str(exc)) from None
    collector = _Collector(model, seed, parallel, progress, engine)
    with torch_threads(1):  # a small network: extra threads only fight the simulator for the cores
        first = 0
        for opponent, n in counts.items():
            if n:
                collector.play(opponent, first, n, fight_params)
            first += n
    return collector.finish()


def split_fights(data: OutcomeData, seed: int, shares: Sequence[float] = SPLIT_SHARES) -> list[np.ndarray]:
    """Trajectory indices of each split; whole fights go to one split (both seats of a self-play fight
    together), shuffled per opponent with `seed` so every split meets every opponent."""
    rng = np.random.default_rng(np.random.SeedSequence((seed, 13)))
    out: list[list[int]] = [[] for _ in shares]
    for opponent in dict.fromkeys(data.opponent):
        fights = sorted({f for f, o in zip(data.fight, data.opponent, strict=True) if o == opponent})
        order = rng.permutation(len(fights))
        bounds = np.floor(np.cumsum((0.0, *shares)) / sum(shares) * len(fights) + 1e-9).astype(int)
        for s in range(len(shares)):
            chosen = {fights[i] for i in order[bounds[s] : bounds[s + 1]]}
            out[s] += [t for t, f in enumerate(data.fight) if f in chosen]
    return [np.asarray(sorted(idx), dtype=np.int64) for idx in out]


# ---------------------------------------------------------------------------------------------------------
# Reports
# ---------------------------------------------------------------------------------------------------------
def predict(model: ModelFile, obs: np.ndarray) -> np.ndarray:
    """P(win) from the model file's `winrate` extension, in batches."""
    return np.concatenate(
        [model.extension(WINRATE, obs[i : i + _PREDICT_BATCH]) for i in range(0, len(obs), _PREDICT_BATCH)]
    ).astype(np.float64)


def _slice(p: np.ndarray, y: np.ndarray, sel: np.ndarray) -> dict[str, Any] | None:
    return summarize(p[sel], y[sel]) if sel.any() else None


def report(data: OutcomeData, p: np.ndarray) -> dict[str, Any]:
    """Metrics of predictions `p` on `data`: the bar slice (``tick >= BAR_FROM_TICK``) with its reliability
    table and a fight-weighted variant, every tick, and the bar slice split by phase, opponent, build and fight
    type; plus whether the bars hold."""
    y = data.won
    bar = data.tick >= BAR_FROM_TICK
    traj_opp = np.asarray(data.opponent, dtype=object)[data.traj]
    traj_build = np.asarray(data.build, dtype=object)[data.traj]
    traj_type = np.asarray(data.fight_type, dtype=object)[data.traj]
    headline = _slice(p, y, bar)
    weights = np.zeros(len(p))
    if bar.any():  # every trajectory's bar ticks weigh 1 in total
        n_bar = np.bincount(data.traj[bar], minlength=data.trajectories)
        weights[bar] = 1.0 / n_bar[data.traj[bar]]
    out: dict[str, Any] = {
        "from_tick": BAR_FROM_TICK,
        "fights": len(set(data.fight)),
        "trajectories": data.trajectories,
        "fight_win_rate": float(np.mean([o == Outcome.WON.value for o in data.outcome])),
        "bar": headline,
        "bar_fight_weighted": summarize(p[bar], y[bar], weights[bar]) if bar.any() else None,
        "reliability": reliability_table(p[bar], y[bar]) if bar.any() else [],
        "all_ticks": summarize(p, y),
        "by_phase": {
            name: _slice(p, y, (data.tick >= lo) & (data.tick <= (hi if hi is not None else np.iinfo(np.int64).max)))
            for name, lo, hi in PHASES
        },
        "by_opponent": {o: _slice(p, y, bar & (traj_opp == o)) for o in dict.fromkeys(data.opponent)},
        "by_build": {b: _slice(p, y, bar & (traj_build == b)) for b in sorted(set(data.build))},
        "by_fight_type": {t: _slice(p, y, bar & (traj_type == t)) for t in sorted(set(data.fight_type))},
    }
    auc = headline["auc"] if headline else None
    out["bars"] = {
        "max_ece": BAR_MAX_ECE,
        "min_auc": BAR_MIN_AUC,
        "ece_ok": bool(headline is not None and headline["ece"] <= BAR_MAX_ECE),
        "auc_ok": bool(auc is not None and auc >= BAR_MIN_AUC),
    }
    return out


# ---------------------------------------------------------------------------------------------------------
# train / check
# ---------------------------------------------------------------------------------------------------------
def default_output(model_path: Path) -> Path:
    """``best.nhmodel`` → ``best.winrate.nhmodel`` beside it (an existing ``.winrate`` is not doubled)."""
    stem = model_path.name[: -len(MODEL_SUFFIX)] if model_path.name.endswith(MODEL_SUFFIX) else model_path.stem
    if not stem.endswith(f".{WINRATE}"):
        stem += f".{WINRATE}"
    return model_path.with_name(stem + MODEL_SUFFIX)


@dataclass
class TrainResult:
    path: Path
    fights: int
    samples: dict[str, int]
    fit: FitResult
    test: dict[str, Any]
    info: dict[str, Any]
    seconds: dict[str, float]


def train_winrate(
    model_path: str | os.PathLike[str],
    fights: int,
    *,
    out: str | os.PathLike[str] | None = None,
    in_place: bool = False,
    seed: int = 0,
    mix: Mapping[str, float] | None = None,
    config: OutcomeConfig | None = None,
    parallel: int = DEFAULT_PARALLEL,
    progress: ProgressFn | None = None,
    engine: str = "auto",
) -> TrainResult:
    """Play fights, train the outcome model and write the model file with the `winrate` extension.

    The new file is written atomically: to `out`, or over the model itself with `in_place`, or by default to
    ``<name>.winrate.nhmodel`` beside it. An outcome model already in the file is replaced.
    `engine` picks the simulator of the fights (`collect`).

    Raises:
        OutcomeError: Too few fights to split, a bad mix, both `out` and `in_place`, or a file carrying other
            extensions (they would be lost).
        ModelFileError: The model file cannot be loaded.
    """
    path = Path(model_path)
    if out is not None and in_place:
        raise OutcomeError("give either --out or --in-place, not both")
    mix = check_mix(mix if mix is not None else DEFAULT_MIX)
    cfg = config or OutcomeConfig(seed=seed)
    if fights < 20:
        raise OutcomeError(f"--fights {fights} is too few to split into training, validation and test; use >= 20")
    if seed < 0:
        raise OutcomeError(f"seed must be >= 0, got {seed}")
    model = load_model_file(path).single("a win-probability head")
    others = [e for e in model.extensions if e != WINRATE]
    if others:
        raise OutcomeError(f"{path} carries other extensions ({', '.join(others)}) that rewriting it would drop")
    target = path if in_place else Path(out) if out is not None else default_output(path)
    params = training_fight_params(model)
    seconds: dict[str, float] = {}
    started = time.perf_counter()
    data = collect(model, fights, seed, mix, params, parallel=parallel, progress=progress, engine=engine)
    seconds["fights"] = time.perf_counter() - started
    parts = [data.subset(idx) for idx in split_fights(data, seed)]
    empty = [name for name, part in zip(SPLIT_NAMES, parts, strict=True) if part.trajectories == 0]
    if empty:
        raise OutcomeError(f"the {', '.join(empty)} split got no fights; play more fights")
    train, val, test = parts
    for name, part in (("training", train), ("validation", val)):
        if len(set(part.won.tolist())) < 2:
            raise OutcomeError(
                f"the {name} fights were all {'won' if part.won[0] else 'not won'}; play more fights or give "
                "self-play a larger share of the mix"
            )
    started = time.perf_counter()
    fit = fit_outcome(train.obs, train.won, train.tick_weights(), val.obs, val.won, val.tick_weights(), cfg)
    seconds["training"] = time.perf_counter() - started
    with torch.no_grad():
        p_test = fit.network(torch.from_numpy(test.obs)).numpy().astype(np.float64)
    test_report = report(test, p_test)
    info: dict[str, Any] = {
        "format": WINRATE_FORMAT,
        "input": f"the actor observation (spec §15) stacked at offsets {model.frame_stack}, {model.obs_size} entries",
        "output": "P(win) in [0, 1] of the player whose observation it is (a tie is not a win)",
        "train_seeds": [seed, seed + fights],
        "fights": fights,
        "mix": mix,
        "fight_params": params,
        "rules": fight_rules(model, params).to_dict(),
        "deterministic": True,
        "splits": {name: part.trajectories for name, part in zip(SPLIT_NAMES, parts, strict=True)},
        "samples": {name: len(part.won) for name, part in zip(SPLIT_NAMES, parts, strict=True)},
        "config": cfg.to_dict(),
        "best_epoch": fit.best_epoch,
        "epochs": fit.epochs,
        "platt": list(fit.platt),
        "val_log_loss": fit.val_loss_calibrated,
        "test": {k: test_report[k] for k in ("bar", "by_phase", "bars")},
        "policy_sha256": model.meta.get("tensor_sha256"),
        "source": str(path),
        "trained_unix": time.time(),
    }
    network = attach_winrate(model.module, model.meta, fit.network)
    save_model_file(network, target, frame_stack=model.frame_stack, metadata=model.metadata, extensions={WINRATE: info})
    logger.info("wrote %s with the winrate extension", target)
    return TrainResult(
        path=target,
        fights=fights,
        samples=info["samples"],
        fit=fit,
        test=test_report,
        info=info,
        seconds=seconds,
    )


def check_winrate(
    model_path: str | os.PathLike[str],
    fights: int,
    *,
    seed: int | None = None,
    mix: Mapping[str, float] | None = None,
    parallel: int = DEFAULT_PARALLEL,
    progress: ProgressFn | None = None,
    engine: str = "auto",
) -> dict[str, Any]:
    """Play held-out fights and report the `winrate` extension's calibration and discrimination (`report`).

    Defaults: the mix and fight parameters it was trained with, seeds right after the training seeds.
    `engine` picks the simulator of the fights (`collect`).

    Raises:
        OutcomeError: The file has no winrate extension, or the seeds overlap the training seeds.
        ModelFileError: The model file cannot be loaded.
    """
    model = load_model_file(model_path)
    if WINRATE not in model.extensions:
        raise OutcomeError(
            f"{model_path} has no winrate extension; add one with `osrs-rllib outcome train {model_path} --fights N`"
        )
    info = model.extension_info(WINRATE)
    lo, hi = (int(v) for v in info.get("train_seeds", (0, 0)))
    start = hi if seed is None else seed
    if start < 0:
        raise OutcomeError(f"seed must be >= 0, got {start}")
    if fights < 1:
        raise OutcomeError(f"fights must be at least 1, got {fights}")
    if start < hi and lo < start + fights:
        raise OutcomeError(
            f"seeds {start}..{start + fights - 1} overlap the training seeds {lo}..{hi - 1} recorded in {model_path}: "
            f"held-out fights must be new; use --seed {hi} or higher"
        )
    chosen_mix = check_mix(mix if mix is not None else info.get("mix") or DEFAULT_MIX)
    params = info.get("fight_params") or training_fight_params(model)
    started = time.perf_counter()
    data = collect(model, fights, start, chosen_mix, params, parallel=parallel, progress=progress, engine=engine)
    elapsed = time.perf_counter() - started
    out = report(data, predict(model, data.obs))
    out.update(
        model=str(model_path),
        seeds=[start, start + fights],
        train_seeds=[lo, hi],
        mix=chosen_mix,
        rules=fight_rules(model, params).to_dict(),
        seconds=elapsed,
    )
    return out
