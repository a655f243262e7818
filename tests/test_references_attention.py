"""rfcheck.references.attention: the exact max-relative-error grid of the HRF attention-scale claim
against the float64 study code and against itself at 50 digits."""

from __future__ import annotations

import math

import mpmath
import pytest

from rfcheck.references import attention as ref


@pytest.mark.parametrize("r", [1.0, 1.5])
@pytest.mark.parametrize("base", ["trig", "pos"])
def test_grid_maxima_agree_with_the_float64_study_and_with_50_digits(r, base):
    from rfcheck.attention.maxrel import exact_max_rel_error, sphere_grid_data

    hyb, bas, err = ref.grid_max_log_rel_errors(r, 16, base, 30)
    hyb50, bas50, _ = ref.grid_max_log_rel_errors(r, 16, base, 50)
    with mpmath.workdps(50):
        assert abs(hyb - hyb50) <= err and abs(bas - bas50) <= err
    assert err < 1e-20 * (abs(hyb) + abs(bas))
    ex = exact_max_rel_error(r, sphere_grid_data(16, 4, r)[2])
    assert math.isclose(float(hyb), math.log(ex["hybrid"]["eps_max"]), rel_tol=1e-9, abs_tol=1e-12)
    assert math.isclose(float(bas), math.log(ex[base]["eps_max"]), rel_tol=1e-9, abs_tol=1e-12)
    assert hyb < bas  # the printed ordering (sec 4) at these radii


def test_grid_maxima_reject_bad_arguments():
    with pytest.raises(ValueError):
        ref.grid_max_log_rel_errors(1.0, 16, "gauss", 20)
    with pytest.raises(ValueError):
        ref.grid_max_log_rel_errors(1.0, 1, "trig", 20)
