"""The league as one plain-Python aggregate: players, payoff, qualities, ratings and exploiter states.

The training side drives it with three calls and applies what it returns::

    league = League(LeagueConfig(main_exploiters=1))
    league.add_scripted("tribrid"); league.add_baseline()
    choice = league.sample_opponent("main", rng)          # OpponentChoice(opponent_id, kind), per episode
    league.record_game("main", choice.opponent_id, Outcome.WIN, kind=choice.kind)
    events = league.on_iteration(iteration, env_steps)   # SnapshotEvent / ResetEvent / EvictEvent, in order
    state = league.to_dict()                              # JSON-ready, goes into every checkpoint

Memory: everything kept is metadata and numbers, O(N) in snapshots; the payoff table holds only pairs that
have played (see `league.payoff`), so hundreds of snapshots are cheap. Nothing here knows the game or Ray.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np

from league.config import LeagueConfig
from league.events import EvictEvent, LeagueEvent, ResetEvent, SnapshotEvent
from league.exploiters import (
    FRESH,
    ExploiterRole,
    ExploiterState,
    checkpoint_reason,
    make_exploiters,
    recent_win_rate,
    should_reset,
)
from league.payoff import PayoffTable
from league.players import (
    BASELINE,
    FIXED_KINDS,
    MAIN,
    FixedPlayer,
    Outcome,
    PlayerKind,
    Snapshot,
    as_outcome,
    player_kind,
    scripted_id,
    snapshot_id,
    target_id,
)
from league.ratings import Ratings
from league.sampling import (
    CURRENT_MAIN,
    PFSP,
    PRIORITIZED,
    SELF_PLAY,
    MixSampler,
    OpponentChoice,
    OpponentTable,
    entropy,
    initial_quality,
    lowered_quality,
    pfsp_probabilities,
    pfsp_weights,
    softmax,
)

logger = logging.getLogger(__name__)

STATE_FORMAT = 1
"""Version of the `League.to_dict` layout; bump it when the layout changes."""
MAIN_EXPLOITER_MIX: dict[str, float] = {CURRENT_MAIN: 1.0}
"""Main exploiters play only the current main policy."""
LEAGUE_EXPLOITER_MIX: dict[str, float] = {PFSP: 1.0}
"""League exploiters play PFSP over every frozen snapshot."""


def _opponent_kind_of(learner: str, opponent: str) -> str:
    """Kind of a game for the metrics when the caller did not say which mix kind drew it."""
    if opponent == learner:
        return SELF_PLAY
    return str(player_kind(opponent))


class League:
    """League state and decisions (see `docs/league.md`).

    Args:
        config: The league's settings; the default is main alone with prioritized past-self and PFSP.
        clock: Wall-clock source for `Snapshot.created_at` (Unix seconds); tests pass a fixed one.
    """

    def __init__(self, config: LeagueConfig | None = None, clock: Callable[[], float] = time.time) -> None:
        self.config = config if config is not None else LeagueConfig()
        c = self.config
        self.snapshots: dict[str, Snapshot] = {}
        """Frozen snapshots by id, oldest first."""
        self.qualities: dict[str, float] = {}
        """Quality score of every snapshot (relative to the other snapshots of the same source)."""
        self.next_version: dict[str, int] = {}
        self.fixed: dict[str, FixedPlayer] = {}
        self.payoff = PayoffTable(c.payoff_decay)
        self.ratings = Ratings(c.elo_k, c.elo_start)
        self.exploiters: dict[str, ExploiterState] = make_exploiters(
            c.main_exploiters, c.league_exploiters, c.exploiter_min_games
        )
        self.kind_stats: dict[str, dict[str, list[float]]] = {}
        """learner → kind → [games, decayed score, decayed games]: what each learner actually played."""
        self.iteration = 0
        self.env_steps = 0
        self.last_main_snapshot_iteration = 0
        self.probe_scores: deque[float] = deque(maxlen=c.probe_window)
        """The exploitability probe: a main exploiter's score in each of the latest games it played against main."""
        self.probe_at_checkpoint: float | None = None
        """The latest main exploiter's window win rate when it was checkpointed: how far a full budget took it."""
        self.clock = clock
        self.rng = np.random.default_rng(c.seed)
        """The league's own generator (league-exploiter reset draws); serialised with the state."""
        self._samplers = self._make_samplers()

    def _make_samplers(self) -> dict[ExploiterRole | str, MixSampler]:
        c = self.config
        kwargs = {"eta": c.eta, "weighting": c.pfsp_weighting, "p": c.pfsp_p}
        return {
            MAIN: MixSampler(c.mix, **kwargs),
            ExploiterRole.MAIN: MixSampler(MAIN_EXPLOITER_MIX, **kwargs),
            ExploiterRole.LEAGUE: MixSampler(LEAGUE_EXPLOITER_MIX, **kwargs),
        }

    # -----------------------------------------------------------------------------------------------------
    # Players
    # -----------------------------------------------------------------------------------------------------

    @property
    def learners(self) -> list[str]:
        """``main`` then the exploiters: the players whose weights train."""
        return [MAIN, *self.exploiters]

    def learner_shares(self) -> dict[str, float]:
        """Each learner's share of the episodes, in `learners` order: main's is `LeagueConfig.main_share`, the
        exploiters split the rest; equal shares when it is unset (and all of them when main trains alone)."""
        learners = self.learners
        share = self.config.main_share
        if share is None or len(learners) == 1:
            return {pid: 1.0 / len(learners) for pid in learners}
        rest = (1.0 - share) / (len(learners) - 1)
        return {pid: share if pid == MAIN else rest for pid in learners}

    def players(self) -> list[str]:
        """Every player the league knows: learners, snapshots (oldest first), fixed players."""
        return [*self.learners, *self.snapshots, *self.fixed]

    def has_player(self, player_id: str) -> bool:
        return (
            player_id == MAIN or player_id in self.exploiters or player_id in self.snapshots or player_id in self.fixed
        )

    def add_fixed_player(self, player_id: str, path: str | None = None) -> FixedPlayer:
        """Register a scripted opponent, the baseline or a target; registering the same player again is a no-op."""
        kind = player_kind(player_id)
        if kind not in FIXED_KINDS:
            raise ValueError(
                f"{player_id!r} is a {kind} id; fixed players are 'scripted_<name>', 'baseline' or 'target_<slug>'"
            )
        if (kind is PlayerKind.TARGET) != (path is not None):
            raise ValueError(f"{player_id!r}: a target needs the path of its model file, other fixed players none")
        player = FixedPlayer(player_id, kind, path)
        known = self.fixed.get(player_id)
        if known is not None and known != player:
            raise ValueError(
                f"{player_id!r} is already registered with path {known.path!r}; give the target at {path!r} "
                "another name (add_target(path, name=...))"
            )
        self.fixed[player_id] = player
        return player

    def add_scripted(self, name: str) -> str:
        return self.add_fixed_player(scripted_id(name)).player_id

    def add_baseline(self) -> str:
        return self.add_fixed_player(BASELINE).player_id

    def add_target(self, path: str, name: str | None = None) -> str:
        """Register a fixed model file as ``target_<slug>`` (slug of `name`, else of the file's stem)."""
        return self.add_fixed_player(target_id(path, name), path=path).player_id

    def add_snapshot(
        self,
        source: str,
        iteration: int | None = None,
        training_steps: int | None = None,
        created_at: float | None = None,
        reason: str = "manual",
    ) -> list[LeagueEvent]:
        """Freeze learner `source` into a new snapshot; returns its `SnapshotEvent` and any evictions.

        The snapshot enters at the highest quality among its source's snapshots (OpenAI Five) and starts at
        its source's current ratings. When the pool exceeds ``max_snapshots`` the lowest-quality other
        snapshot is evicted (the oldest among equal qualities).
        """
        if source != MAIN and source not in self.exploiters:
            raise ValueError(f"only learners are snapshotted; {source!r} is not one of {self.learners}")
        version = self.next_version.get(source, 1)
        self.next_version[source] = version + 1
        snap = Snapshot(
            player_id=snapshot_id(source, version),
            source=source,
            version=version,
            training_steps=int(training_steps if training_steps is not None else self._steps_of(source)),
            iteration=int(iteration if iteration is not None else self.iteration),
            created_at=float(created_at if created_at is not None else self.clock()),
            reason=reason,
            env_steps=self.env_steps,
        )
        self.qualities[snap.player_id] = initial_quality([self.qualities[s] for s in self.snapshots_of(source)])
        self.snapshots[snap.player_id] = snap
        self.ratings.copy_rating(source, snap.player_id)
        events: list[LeagueEvent] = [SnapshotEvent(snap)]
        events += self._evict_over_cap(keep=snap.player_id)
        return events

    def _evict_over_cap(self, keep: str) -> list[LeagueEvent]:
        cap = self.config.max_snapshots
        events: list[LeagueEvent] = []
        while cap is not None and len(self.snapshots) > cap:
            events.append(self._remove_snapshot(self._eviction_victim(keep)))
        return events

    def _eviction_victim(self, keep: str) -> str:
        """The lowest-quality snapshot of the learner with the most snapshots, the oldest among equals.

        Qualities are only comparable between snapshots of one learner (they move when that learner beats
        them), so the choice is made inside the largest group; `keep` (the snapshot just added) is spared.
        """
        groups: dict[str, list[str]] = {}
        for sid, snap in self.snapshots.items():
            if sid != keep:
                groups.setdefault(snap.source, []).append(sid)
        largest = max(groups.values(), key=len)
        _, _, victim = min((self.qualities[sid], age, sid) for age, sid in enumerate(largest))
        return victim

    def _remove_snapshot(self, player_id: str) -> EvictEvent:
        del self.snapshots[player_id]
        del self.qualities[player_id]
        self.payoff.remove_player(player_id)
        self.ratings.remove(player_id)
        logger.info("league: evicted snapshot %s (pool over max_snapshots=%s)", player_id, self.config.max_snapshots)
        return EvictEvent(player_id)

    def _steps_of(self, learner: str) -> int:
        state = self.exploiters.get(learner)
        return state.steps if state is not None else self.env_steps

    # -----------------------------------------------------------------------------------------------------
    # LeagueView (what the sampling strategies read)
    # -----------------------------------------------------------------------------------------------------

    def snapshots_of(self, source: str) -> list[str]:
        return [s for s, snap in self.snapshots.items() if snap.source == source]

    def all_snapshots(self) -> list[str]:
        return list(self.snapshots)

    def quality(self, snapshot: str) -> float:
        return self.qualities[snapshot]

    def win_rate(self, a: str, b: str) -> float:
        """P[`a` beats `b`] from the decayed payoff (0.5 when unplayed)."""
        return self.payoff.win_rate(a, b)

    def fixed_players(self, kind: PlayerKind) -> list[str]:
        return [p for p, player in self.fixed.items() if player.kind is kind]

    # -----------------------------------------------------------------------------------------------------
    # Sampling
    # -----------------------------------------------------------------------------------------------------

    def _sampler_for(self, learner: str) -> MixSampler:
        if learner == MAIN:
            return self._samplers[MAIN]
        if learner in self.exploiters:
            return self._samplers[self.exploiters[learner].role]
        raise ValueError(f"only learners pick opponents; {learner!r} is not one of {self.learners}")

    def opponent_table(self, for_player: str) -> OpponentTable:
        """`for_player`'s whole opponent distribution, flattened (small and picklable, to push to samplers)."""
        return self._sampler_for(for_player).table(self, for_player)

    def sample_opponent(self, for_player: str, rng: np.random.Generator) -> OpponentChoice:
        """Draw `for_player`'s next opponent and the mix kind that drew it; deterministic given `rng`."""
        return self.opponent_table(for_player).sample(rng)

    # -----------------------------------------------------------------------------------------------------
    # Results
    # -----------------------------------------------------------------------------------------------------

    def record_game(
        self,
        player_a: str,
        player_b: str,
        outcome: Outcome | float,
        kind: str | None = None,
        drawn_probability: float | None = None,
    ) -> None:
        """Count one finished game: payoff, ratings, qualities, exploiter windows and per-kind statistics.

        Args:
            player_a: The learner whose opponent was drawn (by convention; any two players may be given).
            player_b: Its opponent.
            outcome: `player_a`'s result (or its score 1, 0.5, 0).
            kind: The mix kind that drew `player_b` (`OpponentChoice.kind`); None infers it from the id.
                Only games drawn by ``prioritized`` (or of unknown kind) lower a snapshot's quality, since
                the 1/(N·p_i) step assumes the snapshot was drawn with probability p_i.
            drawn_probability: p_i as it was when `player_b` was drawn (its chance within the kind); None uses
                today's. Training holds a drawn snapshot in an opponent slot for many games, and each win lowers
                today's p_i: stepping by today's 1/p_i compounds over those games until p_i underflows to 0 (a
                `past-self` study run crashed on it, docs/league.md). With the draw's p_i a snapshot's expected
                step is OpenAI Five's, where every game is drawn anew.
        """
        outcome = as_outcome(outcome)
        kind_a, kind_b = player_kind(player_a), player_kind(player_b)
        for pid, k in ((player_a, kind_a), (player_b, kind_b)):
            if k is PlayerKind.SNAPSHOT and pid not in self.snapshots:
                logger.debug("league: ignoring a game of %s, which is no longer in the pool", pid)
                return
        self._count_kind(player_a, player_b, outcome, kind)
        if player_a == player_b:
            return
        self._count_kind(player_b, player_a, outcome.flipped(), None)
        self.payoff.record(player_a, player_b, outcome)
        self.ratings.update(player_a, player_b, outcome)
        if kind in (None, PRIORITIZED):
            self._lower_quality_on_win(player_a, player_b, outcome, drawn_probability)
        if kind is None:
            self._lower_quality_on_win(player_b, player_a, outcome.flipped())
        for pid, o in ((player_a, outcome), (player_b, outcome.flipped())):
            if pid in self.exploiters:
                self.exploiters[pid].record(o.score)
                if self.exploiters[pid].role is ExploiterRole.MAIN and MAIN in (player_a, player_b):
                    self.probe_scores.append(o.score)

    def _count_kind(self, learner: str, opponent: str, outcome: Outcome, kind: str | None) -> None:
        if learner != MAIN and learner not in self.exploiters:
            return
        kind = kind if kind is not None else _opponent_kind_of(learner, opponent)
        stats = self.kind_stats.setdefault(learner, {}).setdefault(kind, [0, 0.0, 0.0])
        decay = self.config.payoff_decay
        stats[0] += 1
        stats[1] = stats[1] * decay + outcome.score
        stats[2] = stats[2] * decay + 1.0

    def _lower_quality_on_win(
        self, learner: str, opponent: str, outcome: Outcome, drawn_probability: float | None = None
    ) -> None:
        """OpenAI Five: when `learner` beats its own snapshot i, q_i ← q_i − η/(N·p_i)."""
        if outcome is not Outcome.WIN or opponent not in self.qualities:
            return
        if self.snapshots[opponent].source != learner:
            return
        pool = self.snapshots_of(learner)
        if drawn_probability is None:
            drawn_probability = float(softmax([self.qualities[s] for s in pool])[pool.index(opponent)])
        if drawn_probability <= 0:
            return  # a chance that underflowed to 0: the snapshot cannot have been drawn by its quality
        self.qualities[opponent] = lowered_quality(
            self.qualities[opponent], self.config.eta, len(pool), drawn_probability
        )

    # -----------------------------------------------------------------------------------------------------
    # Decisions
    # -----------------------------------------------------------------------------------------------------

    def on_iteration(
        self, iteration: int, env_steps: int, learner_steps: Mapping[str, int] | None = None
    ) -> list[LeagueEvent]:
        """Take the league's decisions after training iteration `iteration`; returns them in the order to apply.

        Args:
            iteration: Training iterations completed so far.
            env_steps: Env steps sampled so far (cumulative).
            learner_steps: Cumulative training steps per learner, when the training side tracks them; a learner
                missing from it (or every learner, when None) is credited with `env_steps`.

        Returns:
            Main's `SnapshotEvent` every ``snapshot_interval`` iterations; for each exploiter that earned it, a
            `SnapshotEvent` followed by a `ResetEvent` (to ``exploiter_reset_to``) when it is reset; `EvictEvent`s right
            after the snapshot that pushed the pool over ``max_snapshots``.
        """
        self.iteration = int(iteration)
        self.env_steps = int(env_steps)
        steps = dict(learner_steps or {})
        events: list[LeagueEvent] = []
        interval = self.config.snapshot_interval
        if interval is not None and self.iteration - self.last_main_snapshot_iteration >= interval:
            events += self.add_snapshot(MAIN, training_steps=steps.get(MAIN, self.env_steps), reason="interval")
            self.last_main_snapshot_iteration = self.iteration
        c = self.config
        for pid, state in self.exploiters.items():
            state.steps = int(steps.get(pid, self.env_steps))
            reason = checkpoint_reason(state, c.exploiter_win_threshold, c.exploiter_min_games, c.exploiter_step_budget)
            if reason is None:
                continue
            events += self.add_snapshot(pid, training_steps=state.steps, reason=reason)
            if state.role is ExploiterRole.MAIN:
                self.probe_at_checkpoint = recent_win_rate(state.recent_scores)
            state.checkpoints += 1
            state.steps_at_checkpoint = state.steps
            state.recent_scores.clear()
            if should_reset(state.role, self.rng, c.league_exploiter_reset_probability):
                events.append(self._reset_exploiter(state, reason))
        return events

    def _reset_exploiter(self, state: ExploiterState, reason: str) -> ResetEvent:
        """Reset (``exploiter_reset_to``): its old results no longer describe it, so they are dropped, and it is
        rated where its new weights start: main's rating for a copy of main, a new player's for fresh weights."""
        state.resets += 1
        to = self.config.exploiter_reset_to
        self.payoff.remove_player(state.player_id)
        if to == FRESH:
            self.ratings.remove(state.player_id)  # rated again from elo_start, as a new player
        else:
            self.ratings.copy_rating(to, state.player_id)
        return ResetEvent(state.player_id, to, reason)

    # -----------------------------------------------------------------------------------------------------
    # Metrics
    # -----------------------------------------------------------------------------------------------------

    def metrics(self) -> dict[str, float]:
        """Flat ``league/...`` scalars for TensorBoard: size, what was played, distributions, exploiters, ratings."""
        out: dict[str, float] = {
            "league/size": float(len(self.snapshots)),
            "league/fixed_players": float(len(self.fixed)),
            "league/payoff_pairs": float(len(self.payoff)),
        }
        for learner, kinds in self.kind_stats.items():
            for kind, (games, score, weight) in kinds.items():
                out[f"league/{learner}/games/{kind}"] = float(games)
                out[f"league/{learner}/win_rate/{kind}"] = score / weight if weight > 0 else 0.5
        pool = self.snapshots_of(MAIN)
        if pool:
            q = [self.qualities[s] for s in pool]
            out |= _distribution_stats("league/quality", q, softmax(q))
        everyone = self.all_snapshots()
        if everyone:
            rates = [self.win_rate(MAIN, s) for s in everyone]
            c = self.config
            weights = pfsp_weights(rates, c.pfsp_weighting, c.pfsp_p)
            out |= _distribution_stats(
                "league/pfsp_weight", weights, pfsp_probabilities(rates, c.pfsp_weighting, c.pfsp_p)
            )
        vs_main = []
        for pid, state in self.exploiters.items():
            rate = self.win_rate(pid, MAIN)
            out[f"league/{pid}/win_rate_vs_main"] = rate
            out[f"league/{pid}/recent_win_rate"] = recent_win_rate(state.recent_scores) or 0.0
            out[f"league/{pid}/checkpoints"] = float(state.checkpoints)
            out[f"league/{pid}/resets"] = float(state.resets)
            if state.role is ExploiterRole.MAIN:
                vs_main.append(rate)
        if vs_main:
            out["league/main_exploiters/win_rate_vs_main"] = float(np.mean(vs_main))
            out |= self.probe_metrics()
        main = self.ratings.get(MAIN)
        out |= {
            "league/main/elo": main.elo,
            "league/main/mu": main.mu,
            "league/main/sigma": main.sigma,
            "league/main/conservative_rating": main.conservative,
        }
        return out

    def probe_metrics(self) -> dict[str, float]:
        """The exploitability probe (``league/probe/...``): the main exploiters' rolling win rate against main, the
        games in its window, and the window win rate the latest main exploiter had reached when it was checkpointed."""
        out = {"league/probe/window_games": float(len(self.probe_scores))}
        if self.probe_scores:
            out["league/probe/exploiter_win_rate"] = float(np.mean(self.probe_scores))
        if self.probe_at_checkpoint is not None:
            out["league/probe/win_rate_at_checkpoint"] = self.probe_at_checkpoint
        return out

    # -----------------------------------------------------------------------------------------------------
    # Serialisation
    # -----------------------------------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The whole state as JSON-ready builtins; `League.from_dict` restores it exactly (generator included)."""
        return {
            "format": STATE_FORMAT,
            "config": self.config.to_dict(),
            "iteration": self.iteration,
            "env_steps": self.env_steps,
            "last_main_snapshot_iteration": self.last_main_snapshot_iteration,
            "snapshots": [s.to_dict() for s in self.snapshots.values()],
            "qualities": dict(self.qualities),
            "next_version": dict(self.next_version),
            "fixed_players": [p.to_dict() for p in self.fixed.values()],
            "payoff": self.payoff.to_dict(),
            "ratings": self.ratings.to_dict(),
            "exploiters": [s.to_dict() for s in self.exploiters.values()],
            "kind_stats": {
                learner: {k: list(v) for k, v in kinds.items()} for learner, kinds in self.kind_stats.items()
            },
            "rng": self.rng.bit_generator.state,
            "probe": {"scores": list(self.probe_scores), "at_checkpoint": self.probe_at_checkpoint},
        }

    @classmethod
    def from_dict(cls, values: Mapping[str, Any], clock: Callable[[], float] = time.time) -> League:
        """Rebuild a league from `to_dict`'s output (after a JSON round trip too)."""
        if values.get("format") != STATE_FORMAT:
            raise ValueError(
                f"league state format {values.get('format')!r} is not {STATE_FORMAT}; it was written by another version"
            )
        league = cls(LeagueConfig.from_dict(values["config"]), clock)
        league.iteration = int(values["iteration"])
        league.env_steps = int(values["env_steps"])
        league.last_main_snapshot_iteration = int(values["last_main_snapshot_iteration"])
        league.snapshots = {s["player_id"]: Snapshot.from_dict(s) for s in values["snapshots"]}
        league.qualities = {k: float(v) for k, v in values["qualities"].items()}
        league.next_version = {k: int(v) for k, v in values["next_version"].items()}
        league.fixed = {p["player_id"]: FixedPlayer.from_dict(p) for p in values["fixed_players"]}
        league.payoff = PayoffTable.from_dict(values["payoff"])
        league.ratings = Ratings.from_dict(values["ratings"])
        league.exploiters = {s["player_id"]: ExploiterState.from_dict(s) for s in values["exploiters"]}
        league.kind_stats = {
            learner: {k: [int(v[0]), float(v[1]), float(v[2])] for k, v in kinds.items()}
            for learner, kinds in values["kind_stats"].items()
        }
        league.rng.bit_generator.state = values["rng"]
        probe = values.get("probe") or {}  # a state saved before the probe existed has none
        league.probe_scores.extend(float(x) for x in probe.get("scores", []))
        at_checkpoint = probe.get("at_checkpoint")
        league.probe_at_checkpoint = float(at_checkpoint) if at_checkpoint is not None else None
        return league

    def __eq__(self, other: object) -> bool:
        """Equal when the serialised states are equal (same players, numbers and generator state)."""
        if not isinstance(other, League):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]


def _distribution_stats(prefix: str, values: Iterable[float], probabilities: Iterable[float]) -> dict[str, float]:
    """min/mean/max of `values` and the entropy (nats) of `probabilities`, under `prefix`."""
    v = np.asarray(list(values), dtype=np.float64)
    return {
        f"{prefix}/min": float(v.min()),
        f"{prefix}/mean": float(v.mean()),
        f"{prefix}/max": float(v.max()),
        f"{prefix}/entropy": entropy(list(probabilities)),
    }
