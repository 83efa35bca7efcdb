"""`LeagueConfig`: defaults, checks and error messages that name the key and the closest valid one."""

from __future__ import annotations

import json

import pytest

from league.config import LeagueConfig, LeagueConfigError


def test_defaults() -> None:
    c = LeagueConfig()
    assert (c.snapshot_interval, c.eta, c.pfsp_weighting, c.pfsp_p, c.payoff_decay) == (10, 0.01, "hard", 2.0, 0.99)
    assert (c.main_exploiters, c.league_exploiters, c.exploiter_win_threshold) == (0, 0, 0.7)
    assert (c.exploiter_min_games, c.exploiter_step_budget, c.league_exploiter_reset_probability) == (
        100,
        5_000_000,
        0.25,
    )
    assert (c.elo_k, c.elo_start, c.max_snapshots, c.seed, c.main_share) == (32.0, 1500.0, None, 0, None)
    assert c.mix == {"self_play": 0.5, "prioritized": 0.3, "pfsp": 0.2}


def test_round_trip_through_json() -> None:
    c = LeagueConfig(opponent_mix={"self_play": 1, "scripted_tribrid": 0.5}, max_snapshots=50, main_exploiters=2)
    assert LeagueConfig.from_dict(json.loads(json.dumps(c.to_dict()))) == c
    assert LeagueConfig.from_dict(None) == LeagueConfig()


def test_unknown_key_names_the_closest_valid_one() -> None:
    with pytest.raises(LeagueConfigError, match="did you mean 'snapshot_interval'") as info:
        LeagueConfig.from_dict({"snapshot_intervall": 5})
    assert info.value.key == "snapshot_intervall"
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize(
    ("values", "key", "match"),
    [
        ({"opponent_mix": {"self_pay": 1.0}}, "opponent_mix.self_pay", "did you mean 'self_play'"),
        ({"opponent_mix": {"pfsp": -1.0}}, "opponent_mix.pfsp", "share ≥ 0"),
        ({"opponent_mix": {"pfsp": 0.0}}, "opponent_mix", "every share is zero"),
        ({"opponent_mix": {"main": 1.0}}, "opponent_mix.main", "unknown opponent kind"),
        ({"pfsp_weighting": "hardd"}, "pfsp_weighting", "did you mean 'hard'"),
        ({"payoff_decay": 0.0}, "payoff_decay", r"\(0, 1\]"),
        ({"snapshot_interval": 0}, "snapshot_interval", "positive integer"),
        ({"exploiter_win_threshold": 1.5}, "exploiter_win_threshold", "probability"),
        ({"max_snapshots": 0}, "max_snapshots", "or null"),
        ({"main_exploiters": True}, "main_exploiters", "non-negative integer"),
        ({"eta": 0}, "eta", "positive number"),
        ({"main_share": 1.0}, "main_share", r"\(0, 1\), or null"),
        ({"main_share": 0.0}, "main_share", r"\(0, 1\), or null"),
    ],
)
def test_invalid_values(values: dict, key: str, match: str) -> None:
    with pytest.raises(LeagueConfigError, match=match) as info:
        LeagueConfig.from_dict(values)
    assert info.value.key == key


def test_mix_accepts_fixed_player_ids() -> None:
    c = LeagueConfig(opponent_mix={"self_play": 0.8, "scripted_tribrid": 0.1, "target_best": 0.1})
    assert set(c.mix) == {"self_play", "scripted_tribrid", "target_best"}


def test_mix_is_read_only_and_the_config_hashable() -> None:
    c = LeagueConfig()
    with pytest.raises(TypeError):
        c.opponent_mix["pfsp"] = 1.0  # type: ignore[index]
    assert hash(c) == hash(LeagueConfig())


def test_pydantic_validates_it_like_from_dict() -> None:
    """The application's schema may embed the dataclass directly (``__pydantic_config__`` forbids extras)."""
    from pydantic import TypeAdapter, ValidationError

    adapter = TypeAdapter(LeagueConfig)
    assert adapter.validate_python({"opponent_mix": {"self_play": 1}}) == LeagueConfig(opponent_mix={"self_play": 1.0})
    with pytest.raises(ValidationError, match="snapshot_intervall"):
        adapter.validate_python({"snapshot_intervall": 3})
    with pytest.raises(ValidationError, match="did you mean 'self_play'"):
        adapter.validate_python({"opponent_mix": {"self_pay": 1}})
