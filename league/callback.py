"""The league's Ray surface: it applies the league's decisions to an RLlib (old API stack) algorithm.

`League` (plain Python) decides; `LeagueRunner` does, once per training iteration, in the driver:

1. **Collect** the finished games from every environment (`pop_league_results`) and record them.
2. **Decide**: `League.on_iteration` returns snapshot / reset / evict events, applied in order. A snapshot
   copies the source policy's weights (``get_weights`` returns fresh numpy arrays, never the live tensors) into
   a file under the experiment (``league/<snapshot id>.npz``); a reset copies main's weights (or fresh, newly
   initialised ones, which the model builds itself: ``model.fresh_state(seed)``) into an exploiter and clears
   its optimiser state. An eviction leaves the file: the last checkpoint's league may still name the snapshot,
   and a run resumed from it loads those weights; the trainer deletes the files no kept checkpoint and no live
   player names once a new checkpoint is complete (`prune_store`).
3. **Plan** the next iteration: a fixed number of *opponent slots* (non-trainable policies
   ``league_slot_<i>``) receive the weights of snapshots drawn from the learners' opponent distributions,
   and every environment receives a `LeaguePlan`: per learner, the table of (seat-1 policy, opponent,
   kind, probability) it draws each episode from. Workers therefore hold at most `slots` frozen networks
   however large the pool grows (hundreds of snapshots cost disk, not worker memory).

Exactness: the snapshot mass of a learner's table is split evenly over its slots, and each slot's content
is an independent draw from that learner's snapshot distribution, so every episode's opponent follows the
league's distribution as of the slots' last draw. A slot's weights are pushed before the next sampling call
(Ray runs an actor's calls in order), and each plan carries a generation number, raised only when the slots
are redrawn: an episode that started under an older generation (its slot was refilled mid-fight) is counted
as played but not scored. Fights outlast an iteration, so the slots are redrawn every
`LeagueConfig.slot_refresh_interval` iterations (and whenever the league needs a different split of slots, or
a slot's snapshot left the pool), not every iteration: in between, each plan keeps the slots' snapshots and
only updates the probabilities.

The environment side is a small duck-typed protocol (`set_league_plan(plan)`, `pop_league_results()`), so
this module knows nothing of the game.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from common.atomic_files import atomic_path
from league.events import EvictEvent, ResetEvent, SnapshotEvent
from league.exploiters import FRESH
from league.league import League
from league.players import MAIN, player_kind

logger = logging.getLogger(__name__)

SLOT_PREFIX = "league_slot_"
MIRROR_POLICY = "main_mirror"
"""The frozen copy of main that plays the exploiters' games when main does not learn from them
(`LeagueConfig.main_learns_from_exploiters` false): main's weights, copied in after every iteration."""


def uses_mirror(config: Any) -> bool:
    """Whether a league of this `LeagueConfig` seats `MIRROR_POLICY` in the exploiters' games against main."""
    return not config.main_learns_from_exploiters and (config.main_exploiters + config.league_exploiters) > 0


def slot_policy_id(i: int) -> str:
    return f"{SLOT_PREFIX}{i}"


@dataclass(frozen=True)
class PlanEntry:
    """One row of a learner's opponent table: who sits in seat 1 and how likely the row is."""

    seat_policy: str | None
    """RLlib policy id acting for seat 1; None for an opponent that lives inside the environment."""
    opponent: str
    """League player id of the opponent (a snapshot id when `seat_policy` is a slot)."""
    kind: str
    """The mix kind that drew it (``prioritized``, ``pfsp``, ``self_play``, ...)."""
    prob: float


@dataclass(frozen=True)
class LeaguePlan:
    """What every environment needs to draw its episodes' players for one iteration (small, picklable)."""

    generation: int
    learners: tuple[str, ...]
    learner_probs: tuple[float, ...]
    tables: Mapping[str, tuple[PlanEntry, ...]]

    def draw(self, rng: np.random.Generator) -> tuple[str, PlanEntry]:
        learner = self.learners[int(rng.choice(len(self.learners), p=np.asarray(self.learner_probs)))]
        rows = self.tables[learner]
        entry = rows[int(rng.choice(len(rows), p=np.asarray([r.prob for r in rows])))]
        return learner, entry


@dataclass(frozen=True)
class LeagueResult:
    """One finished episode as an environment reports it."""

    learner: str
    opponent: str
    kind: str
    score: float
    """The learner's result: 1 win, 0.5 tie, 0 loss."""
    generation: int
    env_steps: int


def weights_checksum(weights: Mapping[str, Any]) -> str:
    """SHA-256 over a policy's weights (sorted names, dtypes, shapes, bytes): equal weights, equal sums."""
    import hashlib

    digest = hashlib.sha256()
    for name in sorted(weights):
        arr = np.ascontiguousarray(np.asarray(weights[name]))
        digest.update(f"{name}|{arr.dtype}|{arr.shape}|".encode())
        digest.update(arr.tobytes())
    return digest.hexdigest()


@dataclass
class LeagueRunner:
    """Drives `league` against `algorithm` (see the module docstring).

    Args:
        league: The league (restored from a checkpoint or new).
        store_dir: Where snapshot weights are written (one ``.npz`` per snapshot).
        slots: Number of opponent slots (frozen policies on every worker).
        fixed_policies: For each fixed player the policy that plays it (``scripted_tribrid``) or None when
            the environment plays it itself (the in-simulator ``baseline``).
        seed: Seed of the slot draws.
    """

    league: League
    store_dir: Path
    slots: int
    fixed_policies: Mapping[str, str | None]
    seed: int = 0
    generation: int = 0
    slot_contents: list[tuple[str, str] | None] = field(default_factory=list)
    slot_groups: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    """The snapshots in the slots per (learner, kind), in slot order, as last drawn."""
    plans_since_draw: int = 0
    drawn_probability: dict[tuple[str, str, str], float] = field(default_factory=dict)
    """(learner, kind, snapshot) → the snapshot's chance within its kind when the slots were last drawn: the p_i of
    the quality update (`League.record_game`) for every game the slot plays until the next draw."""
    played: dict[str, int] = field(default_factory=dict)
    learner_steps: dict[str, int] = field(default_factory=dict)
    _rng: np.random.Generator = field(init=False, repr=False)
    _loaded: dict[int, str] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self.store_dir = Path(self.store_dir)
        self._rng = np.random.default_rng(self.seed + self.generation)
        if not self.slot_contents:
            self.slot_contents = [None] * self.slots

    # -- weights on disk -----------------------------------------------------------------------------
    def snapshot_path(self, snapshot_id: str) -> Path:
        return self.store_dir / f"{snapshot_id}.npz"

    def save_weights(self, snapshot_id: str, weights: Mapping[str, Any]) -> Path:
        path = self.snapshot_path(snapshot_id)
        with atomic_path(path) as tmp, open(tmp, "wb") as f:
            np.savez(f, **{k: np.asarray(v) for k, v in weights.items()})
        return path

    def load_weights(self, snapshot_id: str) -> dict[str, np.ndarray]:
        with np.load(self.snapshot_path(snapshot_id)) as data:
            return {k: data[k] for k in data.files}

    def snapshot_ids(self) -> set[str]:
        """The snapshots the live league holds (the ones whose weights must stay on disk)."""
        return set(self.league.snapshots)

    def prune_store(self, keep: Iterable[str]) -> list[Path]:
        """Delete the weights of snapshots neither `keep` (those the kept checkpoints' leagues name) nor the live
        league holds, and leftovers of interrupted writes; returns what was deleted."""
        wanted = set(keep) | self.snapshot_ids()
        removed = []
        if not self.store_dir.is_dir():
            return removed
        for path in self.store_dir.iterdir():
            stale_tmp = path.name.startswith(".") and path.name.endswith(".tmp")
            if stale_tmp or (path.suffix == ".npz" and path.stem not in wanted):
                path.unlink(missing_ok=True)
                removed.append(path)
        return removed

    # -- the iteration -------------------------------------------------------------------------------
    def after_iteration(self, algorithm: Any, iteration: int, env_steps: int) -> dict[str, float]:
        """Collect, decide, plan (see the module docstring); returns metrics for TensorBoard."""
        results = self.collect(algorithm)
        scored = 0
        for r in results:
            self.played[r.kind] = self.played.get(r.kind, 0) + 1
            self.learner_steps[r.learner] = self.learner_steps.get(r.learner, 0) + r.env_steps
            if r.generation != self.generation and player_kind(r.opponent) == "snapshot":
                continue  # its slot may have been refilled mid-fight: played, not scored
            drawn = self.drawn_probability.get((r.learner, r.kind, r.opponent))
            self.league.record_game(r.learner, r.opponent, r.score, kind=r.kind, drawn_probability=drawn)
            scored += 1
        events = self.league.on_iteration(iteration, env_steps, dict(self.learner_steps) or None)
        self.apply(algorithm, events)
        self.plan(algorithm)
        metrics = dict(self.league.metrics())
        metrics["league/games_this_iteration"] = float(len(results))
        metrics["league/games_scored_this_iteration"] = float(scored)
        metrics["league/events/snapshots"] = float(sum(isinstance(e, SnapshotEvent) for e in events))
        metrics["league/events/resets"] = float(sum(isinstance(e, ResetEvent) for e in events))
        total = sum(self.played.values())
        for kind, count in self.played.items():
            metrics[f"league/played_share/{kind}"] = count / total
        return metrics

    def collect(self, algorithm: Any) -> list[LeagueResult]:
        def pop(env: Any) -> list[LeagueResult]:
            return list(env.pop_league_results()) if hasattr(env, "pop_league_results") else []

        gathered = algorithm.env_runner_group.foreach_env(pop)
        return [r for per_runner in gathered for per_env in per_runner for r in per_env]

    def apply(self, algorithm: Any, events: Iterable[Any]) -> None:
        touched: list[str] = []
        for event in events:
            if isinstance(event, SnapshotEvent):
                weights = algorithm.get_policy(event.source).get_weights()
                self.save_weights(event.snapshot_id, weights)
                logger.info("league: snapshot %s of %s", event.snapshot_id, event.source)
            elif isinstance(event, ResetEvent):
                target = algorithm.get_policy(event.player_id)
                # Not `set_weights(get_weights())`: RLlib's `set_weights` casts every float64 array to float32
                # (`convert_to_torch_tensor`), so main's running normalisers (float64 mean and var) reached the
                # exploiter rounded (relative 4e-8 in obs_norm.mean, measured). The state dict copies them exactly;
                # `load_state_dict` copies values, so the two learners share no tensor.
                if event.to == FRESH:
                    state = target.model.fresh_state(self.fresh_seed(event.player_id))
                else:
                    state = algorithm.get_policy(event.to).model.state_dict()
                target.model.load_state_dict(state)
                # RLlib's torch policies keep their Adam optimisers in the private `_optimizers` (no public
                # accessor); read without a default so that a rename fails here instead of keeping the old
                # Adam moments, and tests/osrs_rllib/test_framework_internals.py pins the attribute.
                for optimizer in target._optimizers:
                    optimizer.state.clear()
                touched.append(event.player_id)
                logger.info("league: reset %s to %s (%s)", event.player_id, event.to, event.reason)
            elif isinstance(event, EvictEvent):
                logger.info("league: evicted %s (its weights stay until no checkpoint names it)", event.snapshot_id)
        if touched:
            algorithm.env_runner_group.sync_weights(policies=touched)

    def fresh_seed(self, exploiter: str) -> int:
        """The seed of `exploiter`'s next fresh weights: one per (run seed, exploiter, reset count), so two
        exploiters never draw the same network and a resumed run (the count is in the saved league) redraws
        the same one."""
        index = list(self.league.exploiters).index(exploiter)
        resets = self.league.exploiters[exploiter].resets
        return int(np.random.SeedSequence([self.seed, index, resets]).generate_state(1)[0])

    def _seat_policy(self, learner: str, opponent: str) -> str | None:
        if opponent == MAIN and learner != MAIN and not self.league.config.main_learns_from_exploiters:
            return MIRROR_POLICY
        if opponent == learner or opponent == MAIN or opponent in self.league.exploiters:
            return opponent
        if opponent in self.fixed_policies:
            return self.fixed_policies[opponent]
        raise ValueError(f"league opponent {opponent!r} has no policy to play it")

    def plan(self, algorithm: Any) -> LeaguePlan:
        """Refill the slots when due (`_redraw_due`) and push a new `LeaguePlan` to every environment."""
        learners = tuple(self.league.learners)
        tables = {learner: self.league.opponent_table(learner) for learner in learners}
        # Snapshot mass per (learner, kind): each such group gets its own slots, so the share of every kind
        # is exact in every plan; only which snapshot fills a slot is drawn.
        groups: dict[tuple[str, str], list[tuple[str, float]]] = {}
        for learner, table in tables.items():
            for pid, kind, p in zip(table.ids, table.kinds, table.probs, strict=True):
                if pid in self.league.snapshots and p > 0:
                    groups.setdefault((learner, kind), []).append((pid, p))
        mass = {g: sum(p for _, p in rows) for g, rows in groups.items()}
        if len(mass) > self.slots:
            raise ValueError(
                f"the league needs {len(mass)} opponent slots (one per learner and snapshot kind: "
                f"{sorted(mass)}), but only {self.slots} are configured; raise opponents.league_slots"
            )
        slots_for = _share_slots(mass, self.slots)
        contents: list[tuple[str, str] | None] = []
        plan_tables: dict[str, list[PlanEntry]] = {
            learner: [
                PlanEntry(self._seat_policy(learner, pid), pid, kind, p)
                for pid, kind, p in zip(table.ids, table.kinds, table.probs, strict=True)
                if pid not in self.league.snapshots and p > 0
            ]
            for learner, table in tables.items()
        }
        redraw = self._redraw_due(slots_for)
        if redraw:
            self.generation += 1
            self.plans_since_draw = 0
            self.slot_groups = {}
            self.drawn_probability = {}
            for group, rows in groups.items():
                probs = np.asarray([p for _, p in rows]) / mass[group]
                draws = self._rng.choice(len(rows), size=slots_for[group], p=probs)
                self.slot_groups[group] = [rows[int(k)][0] for k in draws]
                self.drawn_probability.update({(*group, rows[int(k)][0]): float(probs[k]) for k in draws})
        self.plans_since_draw += 1
        for (learner, kind), pids in self.slot_groups.items():
            for pid in pids:
                plan_tables[learner].append(
                    PlanEntry(slot_policy_id(len(contents)), pid, kind, mass[(learner, kind)] / len(pids))
                )
                contents.append((pid, kind))
        final: dict[str, tuple[PlanEntry, ...]] = {}
        for learner, rows in plan_tables.items():
            total = sum(r.prob for r in rows)
            final[learner] = tuple(PlanEntry(r.seat_policy, r.opponent, r.kind, r.prob / total) for r in rows)
        contents += [None] * (self.slots - len(contents))
        self._fill_slots(algorithm, contents)
        if uses_mirror(self.league.config):
            self._mirror_main(algorithm)
        plan = LeaguePlan(
            generation=self.generation,
            learners=learners,
            learner_probs=tuple(self.league.learner_shares().values()),
            tables=final,
        )
        algorithm.env_runner_group.foreach_env(lambda env: env.set_league_plan(plan))
        return plan

    def _redraw_due(self, slots_for: Mapping[tuple[str, str], int]) -> bool:
        """Whether this plan redraws the slots: the first plan (also after a resume, whose workers hold no slot
        weights), every `slot_refresh_interval` plans, a change in how many slots each (learner, kind) gets (a
        first snapshot, a new exploiter), or a slot holding a snapshot that has left the pool."""
        if not self.slot_groups or self.plans_since_draw >= self.league.config.slot_refresh_interval:
            return True
        if {g: len(p) for g, p in self.slot_groups.items()} != dict(slots_for):
            return True
        return any(pid not in self.league.snapshots for pids in self.slot_groups.values() for pid in pids)

    def _mirror_main(self, algorithm: Any) -> None:
        """Copy main's weights into `MIRROR_POLICY` (state dict to state dict: the float64 statistics exactly, as a
        reset does) and push them to the runners, so the exploiters' next games face main as it is now."""
        algorithm.get_policy(MIRROR_POLICY).model.load_state_dict(algorithm.get_policy(MAIN).model.state_dict())
        algorithm.env_runner_group.sync_weights(policies=[MIRROR_POLICY])

    def _fill_slots(self, algorithm: Any, contents: list[tuple[str, str] | None]) -> None:
        changed = []
        for i, content in enumerate(contents):
            if content is None:
                continue
            snapshot_id = content[0]
            if self._loaded.get(i) != snapshot_id:
                algorithm.get_policy(slot_policy_id(i)).set_weights(self.load_weights(snapshot_id))
                self._loaded[i] = snapshot_id
                changed.append(slot_policy_id(i))
        self.slot_contents = contents
        if changed:
            algorithm.env_runner_group.sync_weights(policies=changed)

    # -- checkpoints ---------------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        return {
            "league": self.league.to_dict(),
            "generation": self.generation,
            "played": dict(self.played),
            "learner_steps": dict(self.learner_steps),
            "rng": self._rng.bit_generator.state,
        }

    @classmethod
    def from_state(
        cls,
        state: Mapping[str, Any],
        store_dir: Path,
        slots: int,
        fixed_policies: Mapping[str, str | None],
        seed: int = 0,
    ) -> LeagueRunner:
        runner = cls(
            league=League.from_dict(state["league"]),
            store_dir=store_dir,
            slots=slots,
            fixed_policies=fixed_policies,
            seed=seed,
            generation=int(state.get("generation", 0)),
            played={str(k): int(v) for k, v in (state.get("played") or {}).items()},
            learner_steps={str(k): int(v) for k, v in (state.get("learner_steps") or {}).items()},
        )
        if state.get("rng") is not None:  # states written before the slot draws' generator was saved lack it
            runner._rng.bit_generator.state = state["rng"]
        return runner

    @staticmethod
    def snapshot_ids_in(state: Mapping[str, Any]) -> set[str]:
        """The snapshots a saved `state_dict` names (whose weights a run resumed from it will load)."""
        return {str(s["player_id"]) for s in (state.get("league") or {}).get("snapshots", [])}

    def slot_checksums(self, algorithm: Any) -> list[dict[str, str]]:
        """Per env runner (local first), each slot's weight checksum: what the workers actually play with."""

        def sums(worker: Any) -> dict[str, str]:
            out = {}
            for i in range(self.slots):
                policy = worker.policy_map.get(slot_policy_id(i))
                if policy is not None:
                    out[slot_policy_id(i)] = weights_checksum(policy.get_weights())
            return out

        return algorithm.env_runner_group.foreach_env_runner(sums, local_env_runner=True)


def _share_slots(mass: Mapping[Any, float], slots: int) -> dict[Any, int]:
    """Split `slots` over groups in proportion to their probability mass, at least one slot each (the
    caller checks there are enough); leftover slots go to the groups with the largest remainders."""
    if not mass:
        return {}
    total = sum(mass.values())
    exact = {g: slots * m / total for g, m in mass.items()}
    shares = {g: max(1, int(x)) for g, x in exact.items()}
    while sum(shares.values()) > slots:
        biggest = max((g for g in shares if shares[g] > 1), key=lambda g: shares[g] - exact[g])
        shares[biggest] -= 1
    for g in sorted(exact, key=lambda g: exact[g] - shares[g], reverse=True):
        if sum(shares.values()) >= slots:
            break
        shares[g] += 1
    return shares
