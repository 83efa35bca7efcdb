"""PFSP weightings (AlphaStar) against hand-computed numbers, for win rates x = (0.2, 0.5, 0.9)."""

from __future__ import annotations

import numpy as np
import pytest

from league.sampling import f_hard, f_linear, f_linear_capped, f_var, pfsp_probabilities, pfsp_weights

RATES = (0.2, 0.5, 0.9)


@pytest.mark.parametrize(
    ("weighting", "p", "weights", "probabilities"),
    [
        # (1-x)^2 = .64, .25, .01; sum .9
        ("hard", 2.0, (0.64, 0.25, 0.01), (0.64 / 0.9, 0.25 / 0.9, 0.01 / 0.9)),
        # (1-x)^3 = .512, .125, .001; sum .638
        ("hard", 3.0, (0.512, 0.125, 0.001), (0.512 / 0.638, 0.125 / 0.638, 0.001 / 0.638)),
        # x(1-x) = .16, .25, .09; sum .5
        ("var", 2.0, (0.16, 0.25, 0.09), (0.32, 0.5, 0.18)),
        # 1-x = .8, .5, .1; sum 1.4
        ("linear", 2.0, (0.8, 0.5, 0.1), (4 / 7, 5 / 14, 1 / 14)),
        # min(.5, 1-x) = .5, .5, .1; sum 1.1
        ("linear_capped", 2.0, (0.5, 0.5, 0.1), (5 / 11, 5 / 11, 1 / 11)),
    ],
)
def test_weightings_by_hand(weighting: str, p: float, weights: tuple, probabilities: tuple) -> None:
    np.testing.assert_allclose(pfsp_weights(RATES, weighting, p), weights, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(pfsp_probabilities(RATES, weighting, p), probabilities, rtol=1e-12)


def test_the_named_functions() -> None:
    assert f_hard(0.25) == 0.5625 and f_hard(0.25, p=1.0) == 0.75
    assert f_var(0.25) == 0.1875
    assert f_linear(0.25) == 0.75
    assert f_linear_capped(0.25) == 0.5 and f_linear_capped(0.75) == 0.25


@pytest.mark.parametrize(
    ("weighting", "rates"), [("hard", (1.0, 1.0)), ("linear", (1.0, 1.0)), ("var", (0.0, 1.0, 1.0))]
)
def test_all_zero_weights_fall_back_to_uniform(weighting: str, rates: tuple) -> None:
    assert pfsp_weights(rates, weighting).sum() == 0.0
    np.testing.assert_array_equal(pfsp_probabilities(rates, weighting), np.full(len(rates), 1 / len(rates)))


def test_edge_cases() -> None:
    assert pfsp_probabilities([], "hard").size == 0
    np.testing.assert_array_equal(pfsp_probabilities([0.5, 0.5, 0.5], "var"), np.full(3, 1 / 3))
    with pytest.raises(ValueError, match="valid choices"):
        pfsp_weights([0.5], "squared")
