"""The Arb face (``backend="arb"``) of the SimRF closed forms whose helpers were written for balls.

Each ball must contain the 50-digit mpmath value (widened by 1e-45 relative for mpmath's own
error), at edge points (``v = 0``, ``v = 1e-150`` where the gaps cancel to ``v^4``, ``cos theta =
-1`` exactly and within 1e-12 of it, ``d = 1024``, large ``z``) and at random points of each
domain; and it must be tight (relative radius < 1e-25 at 128 bits) where nothing cancels.
"""

from __future__ import annotations

from typing import Any

import mpmath
import numpy as np
import pytest
from flint import arb

from rfcheck.arb_backend import to_ball, workprec
from rfcheck.closed_forms import simrf as cf

EDGE = [
    ("log_conformity_kernel", dict(w=1e-80, v=0.7, d=5)),
    ("log_conformity_kernel", dict(w=200.0, v=100.0, d=1024)),
    ("log_conformity_kernel", dict(w=0.0, v=3.0, d=2)),
    ("equal_norm_conformity_bound", dict(v=1.3, w=2.0, d=7, m=4)),
    ("equal_norm_conformity_bound", dict(v=1.3, w=2.0, d=7, m=2)),
    ("log_conformity_orf", dict(v=1e-150, d=7)),
    ("log_conformity_orf", dict(v=25.0, d=1)),
    ("log_conformity_angle", dict(v=1e-50, d=3, cos_theta=1.0)),
    ("log_conformity_angle", dict(v=2.0, d=3, cos_theta=-1.0)),
    ("log_conformity_angle", dict(v=5.0, d=1024, cos_theta=-0.5)),
    ("log_conformity_angle", dict(v=0.0, d=4, cos_theta=0.2)),
    ("log_conformity_simrf", dict(v=2.3, d=2)),
    ("log_conformity_simrf", dict(v=1e-120, d=6)),
    ("log_pdf_wij_iid", dict(w=0.0, d=1)),
    ("log_pdf_wij_iid", dict(w=0.0, d=3)),
    ("pdf_wij_iid", dict(w=30.0, d=200)),
    ("log_pdf_wij_angle", dict(w=2.0, d=10, cos_theta=-1.0)),
    ("log_pdf_wij_angle", dict(w=0.0, d=3, cos_theta=-1.0)),
    ("log_pdf_wij_angle", dict(w=1e-3, d=3, cos_theta=-1.0 + 1e-12)),
    ("log_pdf_wij_angle", dict(w=4.0, d=64, cos_theta=0.9)),
    ("pdf_wij_angle", dict(w=2.0, d=10, cos_theta=-0.7)),
    ("log_prf_orthogonality_gap", dict(v=1e-150, d=7)),
    ("log_prf_orthogonality_gap", dict(v=0.0, d=7)),
    ("log_prf_orthogonality_gap", dict(v=20.0, d=1024)),
    ("orf_simrf_conformity_gap", dict(v=1e-60, d=2)),
    ("orf_simrf_conformity_gap", dict(v=0.0, d=5)),
    ("orf_simrf_conformity_gap", dict(v=4.0, d=64)),
    ("rff_orthogonality_gap", dict(z=1e-100, d=5, m=3)),
    ("rff_orthogonality_gap", dict(z=20.0, d=5, m=3)),
    ("rff_orthogonality_gap", dict(z=20.0, d=6, m=6)),
    ("rff_orthogonality_gap", dict(z=1.0, d=4, m=1)),
    ("rff_mse_ratio_asymptotic", dict(z=0.0, d=5, m=3)),
    ("rff_mse_ratio_asymptotic", dict(z=1e-200, d=5, m=3)),
    ("rff_mse_ratio_asymptotic", dict(z=40.0, d=5, m=5)),
    ("small_v_mse_coefficient", dict(d=64, m=10)),
    ("small_v_mse_coefficient", dict(d=2, m=2)),
    ("small_v_prefactor_simrf", dict(d=1024)),
    ("small_v_prefactor_simrf", dict(d=3)),
]


def _random_points(rng: np.random.Generator) -> list[tuple[str, dict[str, Any]]]:
    def v() -> float:
        return float(10 ** rng.uniform(-3, 0.6))

    def d(hi: int = 64) -> int:
        return int(rng.integers(2, hi + 1))

    def c() -> float:
        return float(rng.uniform(-1, 1))

    out = []
    for _ in range(3):
        dd = d()
        out += [
            ("log_conformity_kernel", dict(w=v(), v=v(), d=d(1024))),
            ("equal_norm_conformity_bound", dict(v=v(), w=v(), d=d(), m=int(rng.integers(2, 50)))),
            ("log_conformity_orf", dict(v=v(), d=d(1024))),
            ("log_conformity_angle", dict(v=v(), d=d(32), cos_theta=c())),
            ("log_conformity_simrf", dict(v=v(), d=d(32))),
            ("log_pdf_wij_iid", dict(w=v(), d=d(1024))),
            ("log_pdf_wij_angle", dict(w=v(), d=d(32), cos_theta=c())),
            ("log_prf_orthogonality_gap", dict(v=v(), d=d(1024))),
            ("orf_simrf_conformity_gap", dict(v=v(), d=d(32))),
            ("rff_orthogonality_gap", dict(z=v(), d=dd, m=int(rng.integers(1, dd + 1)))),
            ("rff_mse_ratio_asymptotic", dict(z=v(), d=dd, m=int(rng.integers(1, dd + 1)))),
            ("small_v_mse_coefficient", dict(d=dd, m=int(rng.integers(1, dd + 1)))),
            ("small_v_prefactor_simrf", dict(d=d(1024))),
        ]
    return out


POINTS = EDGE + _random_points(np.random.default_rng(20261126))


@pytest.mark.parametrize("name,kw", POINTS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(POINTS)])
def test_ball_contains_the_50_digit_value(name: str, kw: dict[str, Any]) -> None:
    f = getattr(cf, name)
    ref = f(**kw, backend="mpmath", dps=50)
    b = f(**kw, backend="arb", prec=128)
    assert isinstance(b, arb) and (b.is_finite() or not mpmath.isfinite(ref)), f"{name}{kw}: {b}"
    with workprec(400):
        r = to_ball(ref)
        if not mpmath.isfinite(ref):
            assert b.mid() == r and b.contains(r), f"{name}{kw}: {b} is not {ref}"
            return
        if ref == 0:
            assert b.contains(0) and abs(b).upper() < 1e-30
            return
        widened = b + arb(0, (abs(r) * arb("1e-45")).upper())
        assert widened.contains(r), f"{name}{kw}: ball {b.str(40, radius=True)} misses mpmath {ref}"
        rel = b.rad() / abs(b.mid())
    cancels = name in ("rff_orthogonality_gap", "small_v_prefactor_simrf", "small_v_mse_coefficient")
    assert float(rel) < (1e-15 if cancels else 1e-25), f"{name}{kw}: loose ball {b}"
