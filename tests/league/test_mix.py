"""`MixSampler`: drawn frequencies match the configured shares, unavailable kinds drop out, draws are seeded."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from league import League, LeagueConfig
from league.players import PlayerKind
from league.sampling import MixSampler, OpponentTable

SHARES = {
    "self_play": 0.3,
    "latest": 0.1,
    "prioritized": 0.2,
    "pfsp": 0.15,
    "scripted": 0.1,
    "baseline": 0.05,
    "target": 0.05,
    "scripted_tribrid": 0.05,
}
DRAWS = 5_000


def _full_league(shares: dict[str, float] = SHARES) -> League:
    league = League(LeagueConfig(opponent_mix=shares))
    for name in ("tribrid", "prayer_switcher"):
        league.add_scripted(name)
    league.add_baseline()
    league.add_target("/models/best.pt")
    for it in range(1, 6):
        league.add_snapshot("main", iteration=it, training_steps=it, created_at=0.0)
    return league


def test_kind_frequencies_match_the_shares() -> None:
    league = _full_league()
    rng = np.random.default_rng(0)
    kinds = Counter(league.sample_opponent("main", rng).kind for _ in range(DRAWS))
    for kind, share in SHARES.items():
        assert abs(kinds[kind] / DRAWS - share) < 0.02, (kind, kinds[kind] / DRAWS, share)


def test_table_entries_follow_each_strategy() -> None:
    league = _full_league()
    table = league.opponent_table("main")
    assert table.kind_shares() == pytest.approx(SHARES)
    entries = {(pid, kind): p for pid, kind, p in zip(table.ids, table.kinds, table.probs, strict=True)}
    assert entries[("main", "self_play")] == pytest.approx(0.3)
    assert entries[("main@v5", "latest")] == pytest.approx(0.1)
    assert entries[("scripted_tribrid", "scripted")] == pytest.approx(0.05)  # uniform over 2 scripted
    assert entries[("scripted_tribrid", "scripted_tribrid")] == pytest.approx(0.05)
    assert entries[("target_best", "target")] == pytest.approx(0.05)
    for v in range(1, 6):  # equal qualities, unplayed pairs: both past-self kinds are uniform
        assert entries[(f"main@v{v}", "prioritized")] == pytest.approx(0.2 / 5)
        assert entries[(f"main@v{v}", "pfsp")] == pytest.approx(0.15 / 5)


def test_kinds_without_candidates_are_renormalised_away() -> None:
    league = League(LeagueConfig(opponent_mix={"self_play": 0.5, "target": 0.3, "pfsp": 0.2}))
    assert league.opponent_table("main") == OpponentTable(("main",), ("self_play",), (1.0,))
    league.add_snapshot("main", created_at=0.0)
    assert league.opponent_table("main").kind_shares() == pytest.approx({"self_play": 0.5 / 0.7, "pfsp": 0.2 / 0.7})


def test_nobody_to_play_falls_back_to_self_play() -> None:
    league = League(LeagueConfig(opponent_mix={"target": 1.0}))
    assert league.sample_opponent("main", np.random.default_rng(0)) == ("main", "self_play")


def test_draws_are_deterministic_given_the_generator() -> None:
    league = _full_league()
    first = [league.sample_opponent("main", np.random.default_rng(42)) for _ in range(3)]
    again = [league.sample_opponent("main", np.random.default_rng(42)) for _ in range(3)]
    assert first == again
    seq_a = [league.sample_opponent("main", rng) for rng in [np.random.default_rng(9)] for _ in range(200)]
    seq_b = [league.sample_opponent("main", rng) for rng in [np.random.default_rng(9)] for _ in range(200)]
    assert seq_a == seq_b


def test_exploiters_play_their_fixed_mixes() -> None:
    league = League(LeagueConfig(main_exploiters=1, league_exploiters=1))
    league.add_snapshot("main", created_at=0.0)
    league.add_snapshot("main_exploiter_0", created_at=0.0)
    assert league.opponent_table("main_exploiter_0") == OpponentTable(("main",), ("main",), (1.0,))
    assert league.opponent_table("league_exploiter_0").ids == ("main@v1", "main_exploiter_0@v1")
    with pytest.raises(ValueError, match="only learners"):
        league.opponent_table("main@v1")


class _View:
    """A minimal `LeagueView` without a `League`, to test the sampler alone."""

    def snapshots_of(self, source: str) -> list[str]:
        return []

    def all_snapshots(self) -> list[str]:
        return []

    def quality(self, snapshot: str) -> float:
        return 0.0

    def win_rate(self, a: str, b: str) -> float:
        return 0.5

    def fixed_players(self, kind: PlayerKind) -> list[str]:
        return ["baseline"] if kind is PlayerKind.BASELINE else []

    def has_player(self, player_id: str) -> bool:
        return player_id == "baseline"


def test_mix_sampler_alone() -> None:
    sampler = MixSampler({"self_play": 3, "baseline": 1})
    rng = np.random.default_rng(5)
    counts = Counter(sampler.sample(_View(), "main", rng).opponent_id for _ in range(DRAWS))
    assert abs(counts["main"] / DRAWS - 0.75) < 0.02 and abs(counts["baseline"] / DRAWS - 0.25) < 0.02
    with pytest.raises(ValueError, match="positive share"):
        MixSampler({"self_play": 0})
