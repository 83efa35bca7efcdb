"""The `League` aggregate: exact round trips, O(N) state, metrics, bookkeeping rules, and its imports."""

from __future__ import annotations

import ast
import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from league import EvictEvent, League, LeagueConfig, Outcome, SnapshotEvent
from league.players import Snapshot

LEAGUE_DIR = Path(__file__).resolve().parents[2] / "league"
OUTCOMES = st.sampled_from([Outcome.WIN, Outcome.DRAW, Outcome.LOSS])
OPERATIONS = st.lists(
    st.one_of(
        st.tuples(st.just("snapshot"), st.integers(0, 4)),
        st.tuples(st.just("game"), st.integers(0, 99), st.integers(0, 99), OUTCOMES, st.booleans()),
        st.tuples(st.just("sampled_game"), st.integers(0, 4), st.integers(0, 2**31 - 1), OUTCOMES),
        st.tuples(st.just("iterate"), st.integers(0, 3000)),
        st.tuples(st.just("fixed"), st.sampled_from(["tribrid", "noop", "baseline", "target"])),
    ),
    max_size=60,
)
CONFIGS = st.builds(
    LeagueConfig,
    snapshot_interval=st.integers(1, 4),
    main_exploiters=st.integers(0, 2),
    league_exploiters=st.integers(0, 2),
    exploiter_min_games=st.integers(1, 4),
    exploiter_step_budget=st.one_of(st.none(), st.integers(1, 5000)),
    max_snapshots=st.one_of(st.none(), st.integers(1, 6)),
    payoff_decay=st.sampled_from([0.5, 0.9, 0.99, 1.0]),
    seed=st.integers(0, 1000),
    opponent_mix=st.just({"self_play": 0.2, "latest": 0.2, "prioritized": 0.2, "pfsp": 0.2, "scripted": 0.2}),
)


def _apply(league: League, operations: list[tuple]) -> None:
    for op in operations:
        if op[0] == "snapshot":
            league.add_snapshot(league.learners[op[1] % len(league.learners)])
        elif op[0] == "game":
            players = league.players()
            a, b = players[op[1] % len(players)], players[op[2] % len(players)]
            league.record_game(a, b, op[3], kind=None if op[4] else "pfsp")
        elif op[0] == "sampled_game":
            learner = league.learners[op[1] % len(league.learners)]
            choice = league.sample_opponent(learner, np.random.default_rng(op[2]))
            league.record_game(learner, choice.opponent_id, op[3], kind=choice.kind)
        elif op[0] == "iterate":
            league.on_iteration(league.iteration + 1, league.env_steps + op[1])
        elif op[1] == "baseline":
            league.add_baseline()
        elif op[1] == "target":
            league.add_target(f"/models/{op[1]}.pt")
        else:
            league.add_scripted(op[1])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(config=CONFIGS, operations=OPERATIONS, more=OPERATIONS)
def test_round_trip_is_exact_and_behaves_the_same(config: LeagueConfig, operations: list, more: list) -> None:
    league = League(config, clock=_clock)
    _apply(league, operations)
    state = league.to_dict()
    back = League.from_dict(json.loads(json.dumps(state)), clock=_clock)
    assert back == league
    assert back.to_dict() == state
    # The copy then makes the same decisions (including the league's own generator's draws).
    _apply(league, more)
    _apply(back, more)
    assert back == league
    events = league.on_iteration(league.iteration + 7, league.env_steps + 10**7)
    assert events == back.on_iteration(back.iteration + 7, back.env_steps + 10**7)
    assert back == league


def _clock() -> float:
    return 1.7e9


def test_equality_sees_every_number() -> None:
    league = League()
    league.add_snapshot("main", created_at=1.0)
    other = League.from_dict(league.to_dict())
    other.qualities["main@v1"] -= 1e-12
    assert other != league
    other = League.from_dict(league.to_dict())
    other.rng.random()
    assert other != league


def test_state_is_linear_in_the_number_of_snapshots() -> None:
    """Main plays every snapshot three times: the state grows ~linearly and holds one payoff entry per pair."""

    def size(n: int) -> tuple[int, int]:
        league = League(LeagueConfig(main_exploiters=1, league_exploiters=1))
        for v in range(1, n + 1):
            league.add_snapshot("main", iteration=v, training_steps=v * 1000, created_at=1.7e9 + v)
            for outcome in (Outcome.WIN, Outcome.LOSS, Outcome.DRAW):
                league.record_game("main", f"main@v{v}", outcome, kind="pfsp")
        return len(json.dumps(league.to_dict())), len(league.payoff)

    small, pairs_small = size(100)
    large, pairs_large = size(400)
    assert (pairs_small, pairs_large) == (100, 400)
    assert large < 4.2 * small
    assert large / 400 < 600  # bytes per snapshot: metadata, quality, rating and one payoff pair


def test_eviction_keeps_quality_comparisons_inside_one_learner() -> None:
    league = League(LeagueConfig(main_exploiters=1, max_snapshots=3))
    league.add_snapshot("main_exploiter_0", created_at=0.0)
    league.add_snapshot("main", created_at=0.0)
    league.add_snapshot("main", created_at=0.0)
    league.qualities["main@v1"] = -1.0  # main beat v1 often
    events = league.add_snapshot("main", created_at=0.0)
    assert [type(e) for e in events] == [SnapshotEvent, EvictEvent]
    assert events[1].snapshot_id == "main@v1"
    league.qualities["main@v2"] = league.qualities["main@v3"] = 0.0
    events = league.add_snapshot("main", created_at=0.0)
    assert events[1].snapshot_id == "main@v2"  # equal qualities: the oldest goes
    assert list(league.snapshots) == ["main_exploiter_0@v1", "main@v3", "main@v4"]
    assert league.payoff.games("main", "main@v1") == 0 and "main@v1" not in league.ratings


def test_games_of_evicted_snapshots_are_ignored() -> None:
    league = League(LeagueConfig(max_snapshots=1))
    league.add_snapshot("main", created_at=0.0)
    league.add_snapshot("main", created_at=0.0)
    league.record_game("main", "main@v1", Outcome.WIN)  # an episode that ended after the eviction
    assert len(league.payoff) == 0 and "main@v1" not in league.ratings


def test_snapshot_metadata_and_inherited_ratings() -> None:
    league = League()
    league.record_game("main", "baseline", Outcome.WIN)
    (event,) = league.add_snapshot("main", iteration=4, training_steps=12_345, created_at=99.0)
    assert event.snapshot.to_dict() == {
        "player_id": "main@v1",
        "source": "main",
        "version": 1,
        "training_steps": 12_345,
        "iteration": 4,
        "created_at": 99.0,
        "reason": "manual",
        "env_steps": 0,
    }
    assert league.ratings.get("main@v1").mu == league.ratings.get("main").mu
    assert league.ratings.get("main@v1").elo == 1516.0
    with pytest.raises(ValueError, match="only learners"):
        league.add_snapshot("main@v1")


def test_snapshot_records_the_runs_env_steps_beside_its_sources_share() -> None:
    """A model exported from a snapshot states the run's env steps, as a final model does; an exploiter's own
    training steps are only its share of them."""
    league = League(LeagueConfig(main_exploiters=1, snapshot_interval=1, exploiter_min_games=10**9))
    (main_snap,) = league.on_iteration(1, 8192, learner_steps={"main": 4096, "main_exploiter_0": 4096})
    assert (main_snap.snapshot.env_steps, main_snap.snapshot.training_steps) == (8192, 4096)
    (event,) = league.add_snapshot("main_exploiter_0", reason="step_budget")
    assert (event.snapshot.env_steps, event.snapshot.training_steps) == (8192, 4096)
    old = event.snapshot.to_dict()
    del old["env_steps"]  # a league.json written before snapshots recorded it still loads
    assert Snapshot.from_dict(old).env_steps is None


def test_fixed_players() -> None:
    league = League()
    assert league.add_target("/models/a/best.pt") == "target_best"
    assert league.fixed["target_best"].path == "/models/a/best.pt"
    assert league.add_target("/models/a/best.pt") == "target_best"  # idempotent
    with pytest.raises(ValueError, match="another name"):
        league.add_target("/models/b/best.pt")
    assert league.add_target("/models/b/best.pt", name="best_b") == "target_best_b"
    with pytest.raises(ValueError, match="fixed players are"):
        league.add_fixed_player("main@v1")


def test_metrics_are_flat_finite_floats() -> None:
    league = League(LeagueConfig(main_exploiters=1, league_exploiters=1))
    league.add_scripted("tribrid")
    league.add_snapshot("main", created_at=0.0)
    rng = np.random.default_rng(3)
    for learner in league.learners:
        for _ in range(20):
            choice = league.sample_opponent(learner, rng)
            league.record_game(learner, choice.opponent_id, Outcome(float(rng.choice([0.0, 0.5, 1.0]))), choice.kind)
    league.record_game("main", "scripted_tribrid", Outcome.WIN, kind="scripted")
    metrics = league.metrics()
    for key in (
        "league/size",
        "league/main/games/scripted",
        "league/main/win_rate/scripted",
        "league/main_exploiter_0/games/main",
        "league/main_exploiter_0/win_rate_vs_main",
        "league/main_exploiters/win_rate_vs_main",
        "league/quality/entropy",
        "league/pfsp_weight/mean",
        "league/main/elo",
        "league/main/conservative_rating",
    ):
        assert key in metrics, key
    assert metrics["league/main/games/scripted"] == 1.0 and metrics["league/main/win_rate/scripted"] == 1.0
    assert all(type(v) is float and math.isfinite(v) for v in metrics.values())
    assert metrics["league/size"] == 1.0
    assert metrics["league/main_exploiter_0/games/main"] == 20.0


def test_league_imports_no_ray_no_torch_and_nothing_of_the_application() -> None:
    forbidden = {"ray", "torch", "gymnasium", "envs", "policies", "osrs_rllib", "serving"}
    for path in LEAGUE_DIR.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            for name in names:
                assert name.split(".")[0] not in forbidden, f"{path.name} imports {name}"
    code = "import sys, league.league; bad = {'ray', 'torch'} & set(sys.modules); assert not bad, bad"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=LEAGUE_DIR.parent)


class _Algorithm:
    """What `LeagueRunner` touches of an RLlib algorithm, in one process: the plan it pushes to the environments,
    the finished games they report (`results`), and the slot policies it fills."""

    def __init__(self) -> None:
        self.plans: list[Any] = []
        self.results: list[Any] = []
        self.env_runner_group = self

    def foreach_env(self, fn: Any) -> list[list[Any]]:
        algo = self

        class Env:
            def set_league_plan(self, plan: Any) -> None:
                algo.plans.append(plan)

            def pop_league_results(self) -> list[Any]:
                popped, algo.results = algo.results, []
                return popped

        return [[fn(Env())]]

    def get_policy(self, _policy_id: str) -> Any:
        return type("Policy", (), {"set_weights": lambda _self, _weights: None})()

    def sync_weights(self, policies: list[str]) -> None:
        pass


@pytest.mark.parametrize(("main_share", "expected"), [(None, [1 / 3, 1 / 3, 1 / 3]), (0.6, [0.6, 0.2, 0.2])])
def test_main_share_is_how_often_the_environments_draw_main(
    tmp_path: Path, main_share: float | None, expected: list[float]
) -> None:
    """Counts the learners the environments' own draw (`LeaguePlan.draw`) produces over 30,000 episodes."""
    from league.callback import LeagueRunner

    config = LeagueConfig(main_exploiters=1, league_exploiters=1, main_share=main_share, opponent_mix={"baseline": 1})
    league = League(config)
    league.add_fixed_player("baseline")
    runner = LeagueRunner(league, tmp_path, slots=2, fixed_policies={"baseline": None})
    algo = _Algorithm()
    runner.plan(algo)
    (plan,) = algo.plans
    assert plan.learners == ("main", "main_exploiter_0", "league_exploiter_0")
    rng = np.random.default_rng(0)
    draws = [plan.draw(rng)[0] for _ in range(30_000)]
    shares = [draws.count(learner) / len(draws) for learner in plan.learners]
    assert shares == pytest.approx(expected, abs=0.015)
    assert League(LeagueConfig(main_share=0.6)).learner_shares() == {"main": 1.0}  # alone, main has them all


def test_a_snapshot_held_in_a_slot_is_lowered_by_the_chance_it_was_drawn_with(tmp_path: Path) -> None:
    """A slot plays its snapshot for many games between draws. Stepping each win by today's 1/p_i compounded (each
    win lowers p_i) until p_i underflowed and a study run crashed (ZeroDivisionError); each win now steps by the
    draw's p_i, so 400 straight wins lower the quality by exactly 400·η/(N·p_draw)."""
    from league.callback import LeagueResult, LeagueRunner

    league = League(LeagueConfig(opponent_mix={"prioritized": 1.0}, snapshot_interval=None))
    runner = LeagueRunner(league, tmp_path, slots=1, fixed_policies={})
    for i in range(1, 21):
        (event,) = league.add_snapshot("main", iteration=i)
        runner.save_weights(event.snapshot_id, {"w": np.zeros(1, np.float32)})
    algo = _Algorithm()
    runner.plan(algo)
    ((held, _),) = runner.slot_contents
    p_draw = runner.drawn_probability[("main", "prioritized", held)]
    assert p_draw == pytest.approx(1 / 20)  # equal qualities
    algo.results = [LeagueResult("main", held, "prioritized", 1.0, runner.generation, 100)] * 400
    runner.after_iteration(algo, iteration=1, env_steps=8192)
    expected = -400 * league.config.eta / (20 * p_draw)
    assert league.qualities[held] == pytest.approx(expected)
    assert sum(league.opponent_table("main").probs) == pytest.approx(1.0)
