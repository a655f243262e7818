"""CRT Figure 2: the closed-form log-variances behind the curves agree with Monte Carlo where
the variance is estimable (rfcheck.estimators.crt.mc_crosscheck)."""

from __future__ import annotations

import math

import pytest

from rfcheck import stats
from rfcheck.estimators import crt as crt_est


@pytest.mark.parametrize(("regime", "sigma"), [("sphere", 0.1), ("normal", 0.05)])
def test_fig2_closed_forms_match_monte_carlo(regime, sigma):
    rows = crt_est.mc_crosscheck(regime, sigma, n_pairs=2, n_trials=200_000, seed=0)
    assert len(rows) == 2 * len(crt_est.METHODS)
    ok = [r for r in rows if r["trustworthy"]]
    assert len(ok) >= 8  # the check must decide something, not only skip heavy tails
    zc = stats.z_critical(1e-3, len(ok))
    for r in ok:
        assert abs(r["z"]) < zc, r
    # power: a closed form 20% too large is rejected wherever the SE allows it: se_log < 0.02
    # puts the expected |z| of that error at log(1.2)/0.02 = 9, far above z_crit ~ 4
    tight = [r for r in ok if r["se_log"] < 0.02]
    assert tight
    for r in tight:
        assert abs((r["mc"] - (r["closed_form"] + math.log(1.2))) / r["se_log"]) > zc


def test_untrustworthy_rows_carry_no_z():
    rows = crt_est.mc_crosscheck("heterogen", 0.3, n_pairs=1, n_trials=20_000, seed=1)
    bad = [r for r in rows if not r["trustworthy"]]
    assert bad and all(math.isnan(r["z"]) and r["reason"] for r in bad if math.isfinite(r["se_log"]))
