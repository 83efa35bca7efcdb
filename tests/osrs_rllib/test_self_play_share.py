"""Self-play as a share of main's games, and the exploiters' games that main does or does not learn from.

Counted from outside the code that draws: the episodes' draws read back from real training environments (≥ 1,000
resets, against the asked share by a binomial test), and the batches RLlib's real sampler hands the learners: in a
self-play episode main's batch holds both seats; with ``league.main_learns_from_exploiters: false`` main's batch holds
no step of an exploiter's episode, which a frozen copy of main (`main_mirror`) plays instead.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from ray.rllib.policy.sample_batch import SampleBatch
from scipy import stats

from league.callback import MIRROR_POLICY, LeagueRunner
from osrs_rllib.config.schema import load_config
from osrs_rllib.training import build_algorithm_config, fixed_policies, make_league, register_everything

REPO = Path(__file__).resolve().parents[2]
SELF_PLAY_SHARE = 0.6
MAIN_SHARE = 0.75
MIX = [f"opponents.mix.{k}={v}" for k, v in
       {"baseline": 0.4, "self_play": SELF_PLAY_SHARE, "prioritized": 0, "prayer_switcher": 0, "tribrid": 0}.items()]
LEAGUE = ["league.main_exploiters=1", f"league.main_share={MAIN_SHARE}", "opponents.league_slots=1"]
SMALL = ["runners.num_env_runners=0", "runners.num_envs_per_env_runner=32", "ppo.train_batch_size=1024",
         "ppo.minibatch_size=256", "env.params.max_episode_ticks=40"]  # fmt: skip


def build(tmp_path: Path, learns: bool) -> tuple[Any, LeagueRunner]:
    cfg = load_config(REPO / "configs" / "smoke.yml",
                      [*MIX, *LEAGUE, *SMALL, f"league.main_learns_from_exploiters={str(learns).lower()}"])  # fmt: skip
    register_everything()
    runner = LeagueRunner(make_league(cfg), tmp_path, cfg.opponents.league_slots,
                          fixed_policies(cfg.opponents.scripted_in_env), seed=cfg.seed)  # fmt: skip
    algo = build_algorithm_config(cfg, tuple(runner.league.learners)).build_algo()
    runner.plan(algo)
    return algo, runner


def draws(algo: Any, episodes: int) -> list[tuple[str, str, str | None]]:
    """(learner, kind, seat-1 policy) of `episodes` resets of the real training envs."""
    envs = algo.env_runner_group.foreach_env(lambda env: env)[0]
    per_env = -(-episodes // len(envs))

    def reset(env: Any) -> list[tuple[str, str, str | None]]:
        out = []
        for _ in range(per_env):
            env.reset()
            out.append((env.draw.learner, env.draw.kind, env.draw.policy_id))
        return out

    return [row for per_runner in algo.env_runner_group.foreach_env(reset) for rows in per_runner for row in rows]


@pytest.mark.usefixtures("ray_session")
def test_self_play_is_the_share_of_mains_episodes_asked(tmp_path: Path) -> None:
    algo, _ = build(tmp_path, learns=False)
    try:
        rows = draws(algo, 1_600)
    finally:
        algo.stop()
    learners = Counter(learner for learner, _, _ in rows)
    assert stats.binomtest(learners["main"], len(rows), MAIN_SHARE).pvalue > 1e-3, learners
    mains = [(kind, seat) for learner, kind, seat in rows if learner == "main"]
    kinds = Counter(kind for kind, _ in mains)
    assert set(kinds) == {"self_play", "baseline"}, kinds
    assert stats.binomtest(kinds["self_play"], len(mains), SELF_PLAY_SHARE).pvalue > 1e-3, kinds
    assert {seat for kind, seat in mains if kind == "self_play"} == {"main"}  # main in both seats
    exploiters = {seat for learner, _, seat in rows if learner != "main"}
    assert exploiters == {MIRROR_POLICY}  # the exploiter's games: the frozen copy of main in seat 1


def sampled_episodes(algo: Any, rounds: int) -> dict[str, dict[int, set[int]]]:
    """Per trainable policy, each episode id in its batches and the seats (agent indices) it learned from."""
    seen: dict[str, dict[int, set[int]]] = {}
    for _ in range(rounds):
        batch = algo.env_runner_group.local_env_runner.sample()
        for pid, policy_batch in batch.policy_batches.items():
            per = seen.setdefault(pid, {})
            for eps, agent in zip(policy_batch[SampleBatch.EPS_ID], policy_batch[SampleBatch.AGENT_INDEX], strict=True):
                per.setdefault(int(eps), set()).add(int(agent))
    return seen


@pytest.mark.usefixtures("ray_session")
@pytest.mark.parametrize("learns", [False, True])
def test_main_learns_from_the_exploiters_games_only_when_asked(tmp_path: Path, learns: bool) -> None:
    algo, _ = build(tmp_path, learns=learns)
    try:
        mirror = algo.get_policy(MIRROR_POLICY) if not learns else None
        if mirror is not None:  # the mirror holds main's weights (and its statistics) exactly
            main_state, mirror_state = algo.get_policy("main").model.state_dict(), mirror.model.state_dict()
            for name, value in main_state.items():
                np.testing.assert_array_equal(mirror_state[name].numpy(), value.numpy(), err_msg=name)
        seen = sampled_episodes(algo, 6)
    finally:
        algo.stop()
    assert MIRROR_POLICY not in seen  # frozen: it never learns
    main, exploiter = seen["main"], seen["main_exploiter_0"]
    shared = set(main) & set(exploiter)
    assert len(exploiter) > 20 and len(main) > 40
    both_seats = [e for e, seats in main.items() if seats == {0, 1} and e not in exploiter]
    assert len(both_seats) > 10  # self-play: main learns from both seats of its own games
    assert all(seats == {0} for e, seats in exploiter.items())  # the exploiter learns from its own seat only
    if learns:
        assert len(shared) > 10 and all(main[e] == {1} for e in shared)  # main in seat 1 of the exploiter's games
    else:
        assert not shared  # not one step of an exploiter's game reached main's batch
