"""Tables built from fights: each checkpoint against each opponent, and per-head action distributions.

`checkpoint_table` is the slow part of a notebook (every checkpoint fights every opponent), so its rows
are cached in ``<experiment>/analysis/checkpoint_table.json``, keyed by everything that decides the
fights (the checkpoint's weights checksum, opponent, count, seed, build, options): re-running a notebook
replays nothing, and a retrained checkpoint of the same iteration is fought again.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch

from common.atomic_files import write_json_atomic
from common.stats import wilson_interval
from envs.nh.contract import HEADS, NUM_HEADS, OBS_SIZE, FrameStack
from envs.nh.masks import NUM_MASK
from league.players import GameResult
from league.players import Outcome as GameOutcome
from league.ratings import ratings_table
from osrs_rllib.analysis.experiments import ExperimentView, _experiment_dir, open_experiment
from osrs_rllib.analysis.fights import ACTION_COLUMNS, DEFAULT_PARALLEL_FIGHTS, play
from osrs_rllib.analysis.policies import AnalysisError, Policy, load_policy
from osrs_rllib.experiments import read_json
from policies.model_file import read_model_meta

CACHE_FILE = Path("analysis") / "checkpoint_table.json"
"""Where `checkpoint_table` keeps its rows, relative to the experiment directory."""
CACHE_FORMAT = "osrs-rllib-checkpoint-table/2"
"""/2: fights follow the checkpoint's training rules; /1 rows were played under the spec's defaults."""
TABLE_COLUMNS = (
    "iteration",
    "env_steps",
    "checkpoint",
    "opponent",
    "fights",
    "wins",
    "losses",
    "ties",
    "win_rate",
    "win_rate_low",
    "win_rate_high",
    "mean_ticks",
    "mean_damage_dealt",
    "mean_damage_received",
    "correct_prayer_rate",
    "off_prayer_rate",
)


def checkpoint_table(
    experiment: ExperimentView | str | os.PathLike[str],
    opponents: Sequence[str] = ("baseline",),
    fights: int = 100,
    seed: int = 0,
    build: Any = None,
    *,
    checkpoints: Sequence[int] | None = None,
    deterministic: bool = True,
    parallel: int = DEFAULT_PARALLEL_FIGHTS,
    workers: int = 1,
    cache: bool = True,
    **options: Any,
) -> pd.DataFrame:
    """Every kept checkpoint against every opponent: win rate with its 95 % Wilson interval, one row each.

    Args:
        experiment: An `ExperimentView` or an experiment directory.
        opponents: ``baseline``, ladder names or model files; fought as side B.
        fights: Fights per checkpoint and opponent; fight k uses seed + k, so the figures equal
            ``osrs-rllib fight CHECKPOINT/main.nhmodel OPPONENT --n fights --seed seed``.
        seed: Base seed.
        build: One build or several (spread evenly), as in `play`.
        checkpoints: Iterations to include (default: every kept checkpoint).
        deterministic: Greedy (True) or sampled actions for the checkpoints.
        parallel: Fights stepped together (see `play`).
        workers: Processes per `play` call.
        cache: Read and write ``<experiment>/analysis/checkpoint_table.json``.
        **options: Reset options (spec §13.1), as in `play`.

    Returns:
        Columns `TABLE_COLUMNS`, ordered by iteration then opponent; ``.attrs["rules"]`` lists the distinct rules
        the rows were played by (`play`: each checkpoint's training rules unless `options` set them).

    Raises:
        AnalysisError: No experiment, no checkpoint, or an unknown iteration or opponent.
        ModelFileError: A damaged checkpoint model or one from another contract version.

    Example:
        >>> table = checkpoint_table("experiments/nh", ["baseline", "tribrid"], fights=200)  # doctest: +SKIP
        >>> table.pivot(index="iteration", columns="opponent", values="win_rate")  # doctest: +SKIP
    """
    view = experiment if isinstance(experiment, ExperimentView) else open_experiment(experiment)
    cps = view.checkpoints
    if cps.empty:
        raise AnalysisError(f"experiment {view.path} has no complete checkpoint yet; train longer or wait")
    if checkpoints is not None:
        missing = sorted(set(checkpoints) - set(cps["iteration"]))
        if missing:
            raise AnalysisError(
                f"no kept checkpoint of iteration(s) {missing} in {view.path}; kept: {list(cps['iteration'])}"
            )
        cps = cps[cps["iteration"].isin(list(checkpoints))]
    opponent_policies = [load_policy(o) for o in opponents]  # fail on a bad name before the first fight
    cache_path = _experiment_dir(view) / CACHE_FILE
    stored = read_json(cache_path, {}) if cache else {}
    entries: dict[str, Any] = stored.get("entries", {}) if stored.get("format") == CACHE_FORMAT else {}
    rows = []
    dirty = False
    for _, cp in cps.iterrows():
        checksum = read_model_meta(cp["model"]).get("tensor_sha256")
        policy: Policy | None = None
        for opp_name, opp in zip(opponents, opponent_policies, strict=True):
            key = json.dumps(
                [Path(cp["path"]).name, checksum, str(opp_name), fights, seed, _jsonable(build), deterministic,
                 _jsonable(options)],
                sort_keys=True,
            )  # fmt: skip
            row = entries.get(key)
            if row is None:
                policy = policy or load_policy(cp["path"], deterministic=deterministic)
                games = play(policy, opp, fights, seed, build, parallel=parallel, workers=workers, **options)
                row = {**_summarise(games), "rules": games.attrs.get("rules")}
                entries[key] = row
                dirty = True
            rows.append(
                {
                    "iteration": int(cp["iteration"]),
                    "env_steps": int(cp["env_steps"]),
                    "checkpoint": Path(cp["path"]).name,
                    "opponent": opp.name,
                    **row,
                }
            )
    if cache and dirty:
        write_json_atomic(cache_path, {"format": CACHE_FORMAT, "entries": entries})
    table = pd.DataFrame(rows, columns=list(TABLE_COLUMNS))
    rules = [r.get("rules") for r in rows]
    table.attrs["rules"] = [r for i, r in enumerate(rules) if r is not None and r not in rules[:i]]
    return table


def _summarise(games: pd.DataFrame) -> dict[str, Any]:
    n = len(games)
    wins = int((games["winner"] == "a").sum())
    low, high = wilson_interval(wins, n)
    return {
        "fights": n,
        "wins": wins,
        "losses": int((games["winner"] == "b").sum()),
        "ties": int((games["winner"] == "tie").sum()),
        "win_rate": wins / n,
        "win_rate_low": low,
        "win_rate_high": high,
        "mean_ticks": float(games["ticks"].mean()),
        "mean_damage_dealt": float(games["damage_dealt"].mean()),
        "mean_damage_received": float(games["damage_received"].mean()),
        "correct_prayer_rate": _ratio(games["hits_received_protected"].sum(), games["hits_received"].sum()),
        "off_prayer_rate": _ratio(games["hits_off_prayer"].sum(), games["hits"].sum()),
    }


def _ratio(k: float, n: float) -> float | None:
    return float(k) / float(n) if n else None


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in sorted(value.items())}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(getattr(value, "value", value))


def table_ratings(table: pd.DataFrame) -> pd.DataFrame:
    """Elo and openskill ratings of checkpoints and opponents from a `checkpoint_table` (ties count as draws).

    Games are replayed interleaved across pairs (round-robin order), since Elo depends on the order.

    Example:
        >>> table_ratings(checkpoint_table("experiments/nh", ["baseline", "tribrid"]))  # doctest: +SKIP
    """
    queues = []
    for _, r in table.iterrows():
        a, b = str(r["checkpoint"]), str(r["opponent"])
        games = [GameOutcome.WIN] * int(r["wins"]) + [GameOutcome.LOSS] * int(r["losses"])
        games += [GameOutcome.DRAW] * int(r["ties"])
        # Spread each pair's results evenly so no pair's wins all come first.
        order = np.argsort((np.arange(len(games)) * 0.618033988749895) % 1.0, kind="stable")
        queues.append([GameResult(a, b, games[i]) for i in order])
    interleaved = [q[i] for i in range(max((len(q) for q in queues), default=0)) for q in queues if i < len(q)]
    return pd.DataFrame([row.to_dict() for row in ratings_table(interleaved)])


# ---------------------------------------------------------------------------------------------------------
# Action distributions
# ---------------------------------------------------------------------------------------------------------
def _states_from_frame(states: pd.DataFrame, policy: Policy) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """(stacked observations, masks, recorded actions or None) from per-tick rows of `play(record=True)`."""
    if "obs" not in states or "mask" not in states:
        raise AnalysisError("states must be the per-tick DataFrame of play(..., record=True) (columns obs and mask)")
    rows = states[states["obs"].notna()]
    if rows.empty:
        raise AnalysisError(
            "no recorded observations in these states (the simulator's baseline records none); "
            "use the rows of a side that a policy played, e.g. ticks[ticks.player == 'a']"
        )
    keys = [c for c in ("fight", "player") if c in rows]
    rows = rows.sort_values([*keys, "tick"], kind="stable") if "tick" in rows else rows
    obs_list, masks, actions = [], [], []
    has_actions = all(c in rows for c in ACTION_COLUMNS)
    for _, group in rows.groupby(keys, sort=False) if keys else [(None, rows)]:
        stack = FrameStack(policy.frame_stack, OBS_SIZE)
        for _, r in group.iterrows():
            obs_list.append(stack.push(np.asarray(r["obs"], dtype=np.float32)))
            masks.append(np.asarray(r["mask"], dtype=bool))
            if has_actions:
                actions.append([int(r[c]) for c in ACTION_COLUMNS])
    act = np.asarray(actions, dtype=np.int64) if has_actions else None
    if act is not None and (act < 0).any():
        act = None
    return np.stack(obs_list), np.stack(masks), act


def action_distribution(
    policy: Any,
    states: pd.DataFrame | tuple[np.ndarray, np.ndarray],
    *,
    along: str = "recorded",
) -> pd.DataFrame:
    """Mean probability of every value of every head over a set of states, to compare policies on them.

    The heads are autoregressive (spec §14.2): a head's distribution depends on the values chosen by the
    heads before it. To compare two checkpoints on equal terms both are conditioned on the same path: the
    actions recorded in `states` (``along="recorded"``, the default when they are there), or each policy's
    own greedy choices (``along="own"``). A scripted rung has no probabilities; its row is the share of the
    states in which it chose each value (fed the states in order, one fight at a time).

    Args:
        policy: Anything `load_policy` takes (not ``baseline``).
        states: Per-tick rows of `play(..., record=True)` (``obs``, ``mask`` and the ``act_*`` columns; pass
            whole fights of one side so frame stacks can be rebuilt), or ``(observations (N, D), masks
            (N, 45))`` already stacked for this policy.
        along: ``recorded`` or ``own`` (see above).

    Returns:
        Columns ``policy``, ``head``, ``value`` (the value's name in spec §14.1), ``index`` and
        ``probability``; each head's probabilities sum to 1.

    Raises:
        AnalysisError: The baseline, states without observations, or a bad `along`.

    Example:
        >>> _, ticks = play("experiments/nh/models/best.nhmodel", "baseline", fights=5, record=True)  # doctest: +SKIP
        >>> mine = ticks[ticks.player == "a"]  # doctest: +SKIP
        >>> early = action_distribution(exp.checkpoint("earliest"), mine)  # doctest: +SKIP
    """
    if along not in ("recorded", "own"):
        raise AnalysisError(f"along must be 'recorded' or 'own', got {along!r}")
    p = load_policy(policy)
    if p.kind == "baseline":
        raise AnalysisError("the simulator's baseline has no action distribution to read; pick a model or a rung")
    if isinstance(states, pd.DataFrame):
        obs, masks, recorded = _states_from_frame(states, p)
    else:
        obs, masks = (np.asarray(x) for x in states)
        recorded = None
        if obs.ndim != 2 or masks.shape != (len(obs), NUM_MASK):
            raise AnalysisError(
                f"expected observations (N, D) and masks (N, {NUM_MASK}), got {obs.shape} and {masks.shape}"
            )
    masks = masks.astype(bool)
    rows = []
    if p.model is not None:
        if obs.shape[1] != p.model.obs_size:
            raise AnalysisError(
                f"{p.name} expects observations of {p.model.obs_size} entries, got {obs.shape[1]} (frame stack "
                f"{p.frame_stack}); pass per-tick rows so they are stacked for it"
            )
        obs_t = torch.from_numpy(obs.astype(np.float32))
        mask_t = torch.from_numpy(masks.astype(np.float32))
        with torch.no_grad():
            if along == "recorded" and recorded is not None:
                path = torch.from_numpy(recorded)
            else:
                path, _ = p.model.module(obs_t, mask_t, True, None)
            probs = p.model.module.probabilities(obs_t, mask_t, path).numpy()  # (N, 12, MAX)
        mean = probs.mean(axis=0)
    else:
        chosen = p.act(obs, masks, seed=0)
        mean = np.zeros((NUM_HEADS, max(spec.size for spec in HEADS)))
        for h in range(NUM_HEADS):
            mean[h, : HEADS[h].size] = np.bincount(chosen[:, h], minlength=HEADS[h].size)[: HEADS[h].size] / len(chosen)
    for h, spec in enumerate(HEADS):
        total = float(mean[h, : spec.size].sum()) or 1.0
        for v, value_name in enumerate(spec.value_names):
            rows.append(
                {"policy": p.name, "head": spec.id, "value": value_name, "index": v, "probability": mean[h, v] / total}
            )
    return pd.DataFrame(rows)
