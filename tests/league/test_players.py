"""The player-id scheme: every id is a valid RLlib policy id and reads back as what it names."""

from __future__ import annotations

import pytest

from league.players import (
    BASELINE,
    MAIN,
    Outcome,
    PlayerKind,
    as_outcome,
    is_learner,
    is_valid_policy_id,
    league_exploiter_id,
    main_exploiter_id,
    parse_snapshot_id,
    player_kind,
    scripted_id,
    snapshot_id,
    target_id,
)


@pytest.mark.parametrize(
    ("player_id", "kind"),
    [
        (MAIN, PlayerKind.MAIN),
        (main_exploiter_id(0), PlayerKind.MAIN_EXPLOITER),
        (league_exploiter_id(3), PlayerKind.LEAGUE_EXPLOITER),
        (snapshot_id(MAIN, 7), PlayerKind.SNAPSHOT),
        (snapshot_id(main_exploiter_id(1), 2), PlayerKind.SNAPSHOT),
        (scripted_id("tribrid"), PlayerKind.SCRIPTED),
        (BASELINE, PlayerKind.BASELINE),
        (target_id("/models/nh/best.pt"), PlayerKind.TARGET),
    ],
)
def test_ids_name_their_kind_and_are_valid_policy_ids(player_id: str, kind: PlayerKind) -> None:
    assert player_kind(player_id) is kind
    assert is_valid_policy_id(player_id)


def test_the_documented_spellings() -> None:
    assert snapshot_id(MAIN, 3) == "main@v3"
    assert snapshot_id(main_exploiter_id(0), 1) == "main_exploiter_0@v1"
    assert snapshot_id(league_exploiter_id(2), 5) == "league_exploiter_2@v5"
    assert scripted_id("tribrid") == "scripted_tribrid"
    assert parse_snapshot_id("main_exploiter_0@v12") == ("main_exploiter_0", 12)
    assert parse_snapshot_id("main") is None


def test_target_ids_drop_the_path_characters_rllib_forbids() -> None:
    assert target_id("/models/best run.pt") == "target_best_run"
    assert target_id("/a/b/nh-v3.model.pt") == "target_nh-v3_model"
    assert target_id("/a/b/best.pt", name="last year's champion") == "target_last_year_s_champion"
    for path in ("C:\\x\\y.pt", "/x:y/z?.pt", 'a"b<c>|d.pt'):
        assert is_valid_policy_id(target_id(path))
    with pytest.raises(ValueError, match="pass a name"):
        target_id("/a/b/.pt", name="::")


@pytest.mark.parametrize("bad", ["", "target:x", "a/b", "x.", "x ", 'a"b'])
def test_policy_id_check_rejects_what_rllib_rejects(bad: str) -> None:
    assert not is_valid_policy_id(bad)


def test_unknown_ids_are_errors_that_list_the_scheme() -> None:
    with pytest.raises(ValueError, match="scripted_<name>"):
        player_kind("mystery")
    with pytest.raises(ValueError):
        player_kind("main_exploiter_x")


def test_learners_and_outcomes() -> None:
    assert is_learner(MAIN) and is_learner("league_exploiter_0")
    assert not is_learner("main@v1") and not is_learner(BASELINE)
    assert as_outcome(1) is Outcome.WIN and as_outcome(0.5) is Outcome.DRAW and as_outcome(0.0) is Outcome.LOSS
    assert Outcome.WIN.flipped() is Outcome.LOSS and Outcome.DRAW.flipped() is Outcome.DRAW
    with pytest.raises(ValueError, match=r"score of 1, 0\.5 or 0"):
        as_outcome(0.7)
