"""Settings outside the training config checked through `common.validation`: a single value (`problem_with`),
the ladder's levels (`NHSkill`) and the cloning options (`BCSettings`), each worded like a config error."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from pydantic import ValidationError

from common.validation import PositiveCount, PositiveNumber, Probability, problem_with
from envs.opponents import LEVELS, NHSkill
from osrs_rllib.training.bc.learn import BCError, BCSettings, BCSettingsError


@pytest.mark.parametrize(
    ("value", "kind", "expected"),
    [
        (2.5, PositiveNumber, None),
        (3, PositiveNumber, None),
        (-1, PositiveNumber, "got -1 (an integer); expected a positive number"),
        (float("inf"), PositiveNumber, "got inf (a number); expected a positive number"),
        (True, PositiveCount, "got True (true/false); expected a positive integer"),
        ("0.5", Probability, "got '0.5' (a string); expected a probability in [0, 1]"),
    ],
)
def test_problem_with_a_single_value(value: Any, kind: Any, expected: str | None) -> None:
    assert problem_with(value, kind) == expected


@pytest.mark.parametrize(
    ("change", "field", "expected"),
    [
        ({"prayer_accuracy": 1.5}, "prayer_accuracy", "expected a probability in [0, 1]"),
        ({"prayer_delay_ticks": 11}, "prayer_delay_ticks", "expected a whole number of ticks in 0..10"),
        ({"eat_below_hp": -0.1}, "eat_below_hp", "expected an HP / level fraction in [0, 2]"),
        ({"predict_prayer": 1}, "predict_prayer", "Input should be a valid boolean"),
        ({"fixed_style": 0}, "fixed_style", "expected MAGIC, RANGED or MELEE"),
        ({"name": "two words"}, "name", "expected a lower-case identifier"),
    ],
)
def test_a_ladder_level_refuses_a_bad_parameter(change: dict[str, Any], field: str, expected: str) -> None:
    with pytest.raises(ValidationError) as caught:
        dataclasses.replace(LEVELS[0], **change)
    (error,) = caught.value.errors()
    assert error["loc"] == (field,) and expected in error["msg"]


def test_a_ladder_level_combo_eats_below_its_routine_eating() -> None:
    with pytest.raises(ValidationError) as caught:
        dataclasses.replace(LEVELS[0], combo_below_hp=0.9)
    (error,) = caught.value.errors()
    assert error["ctx"]["error"].field == "combo_below_hp"
    assert all(isinstance(level, NHSkill) for level in LEVELS)


@pytest.mark.parametrize(
    ("options", "key", "message"),
    [
        ({"lr": -1.0}, "lr", "got -1.0 (a number); expected a positive number"),
        ({"lr": float("nan")}, "lr", "got nan (a number); expected a positive number"),
        ({"holdout": 1.0}, "holdout", "got 1.0 (a number); expected a share of the fights in [0, 1)"),
        ({"epochs": 0}, "epochs", "got 0 (an integer); expected a positive integer"),
        ({"lrr": 0.1}, "lrr", "unknown key; expected one of batch_size, epochs, grad_clip, holdout, lr, "
                              "lr_final_fraction, seed, threads (did you mean 'lr'?)"),
    ],
)
def test_cloning_options_name_the_bad_one(options: dict[str, Any], key: str, message: str) -> None:
    with pytest.raises(BCSettingsError) as caught:
        BCSettings.from_options(options)
    assert (caught.value.key, caught.value.detail) == (key, message)
    assert isinstance(caught.value, BCError)  # the command reports it as any other bad input


def test_cloning_options_keep_their_defaults() -> None:
    settings = BCSettings.from_options({"seed": 7, "epochs": 2})
    assert (settings.seed, settings.epochs, settings.batch_size) == (7, 2, 1024)
    assert dataclasses.asdict(BCSettings()) == {"epochs": 6, "batch_size": 1024, "lr": 1e-3, "lr_final_fraction": 0.1,
                                                "grad_clip": 1.0, "holdout": 0.1, "seed": 0, "threads": 1}
