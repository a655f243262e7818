"""The sampler audit: built-in couplings pass; samplers with wrong row marginals are flagged
even when the ensemble is exactly orthogonal (d = 16 and d = 64, default budget)."""

from __future__ import annotations

import numpy as np
import pytest

from rfcheck.audit import audit_sampler
from rfcheck.custom import antithetic, columns, per_draw
from rfcheck.testing import Inconclusive, assert_sampler_valid


def _haar(rng, d):
    q, r = np.linalg.qr(rng.standard_normal((d, d)))
    return q * np.sign(np.diag(r))


def unsigned_qr(rng, M, d):
    """Orthogonal rows from QR without the sign fix: row i's i-th coordinate is always < 0."""
    q, _ = np.linalg.qr(rng.standard_normal((d, d)))
    return q.T[:M] * np.sqrt(rng.chisquare(d, M))[:, None]


def fixed_norm(rng, M, d):
    """Haar directions with norm sqrt(d) instead of chi_d."""
    return _haar(rng, d).T[:M] * np.sqrt(d)


def signed_axes(rng, M, d):
    """A random signed permutation of the axes times chi_d norms: orthogonal, not Gaussian."""
    p = np.eye(d)[rng.permutation(d)] * rng.choice([-1.0, 1.0], d)[:, None]
    return p[:M] * np.sqrt(rng.chisquare(d, M))[:, None]


def shared_norm(rng, M, d):
    """Haar directions, one chi_d norm shared by the whole block (rows N(0, I) marginally,
    norms dependent)."""
    return _haar(rng, d).T[:M] * np.sqrt(rng.chisquare(d))


@pytest.mark.parametrize("d", [16, 64])
@pytest.mark.parametrize("name", ["iid", "orf", "simrf"])
def test_builtin_couplings_pass(name, d):
    rep = assert_sampler_valid(name, d)
    assert rep.verdict == "HOLDS"
    assert {t.name for t in rep.tests} >= {"norm", "coordinate-ks", "unbiased"}
    assert (name == "iid") == ("structure" not in {t.name for t in rep.tests})


@pytest.mark.parametrize("d", [16, 64])
@pytest.mark.parametrize(("bad", "caught_by"), [
    (unsigned_qr, {"coordinate-ks", "coordinate-mean"}),
    (fixed_norm, {"norm"}),
    (signed_axes, {"coordinate-ks", "coordinate-var"}),
    (shared_norm, {"norm-independence"}),
])
def test_orthogonal_but_wrong_marginals_flagged(bad, caught_by, d):
    rep = audit_sampler(per_draw(bad), d, structure="orthogonal")
    assert rep.verdict == "REFUTED", str(rep)
    assert caught_by <= {t.name for t in rep.failures}, str(rep)
    assert "structure" not in {t.name for t in rep.failures}  # the geometry itself is right
    assert not rep.likely_transposed and not rep.notes  # wrong law, not a transposition
    with pytest.raises(AssertionError, match="REFUTED"):
        assert_sampler_valid(per_draw(bad), d, structure="orthogonal", check_layout=False)


def test_wrong_structure_claim_flagged():
    rep = audit_sampler("iid", 8, structure="orthogonal")
    assert [t.name for t in rep.failures] == ["structure"]
    rep = audit_sampler("orf", 8, structure="simplex")
    assert "structure" in {t.name for t in rep.failures}


def test_antithetic_rows_pass_marginals():
    """Rows w, -w are marginally N(0, I); their norms are equal by construction, which the
    norm-independence test (adjacent rows) reports."""
    rep = audit_sampler(antithetic("orf"), 8, 16, structure=None)
    assert [t.name for t in rep.failures] == ["norm-independence"], str(rep)


def test_bad_input():
    with pytest.raises(ValueError, match="d must"):
        audit_sampler("iid", 1)
    with pytest.raises(ValueError, match="structure"):
        audit_sampler("iid", 4, structure="hexagonal")
    with pytest.raises(ValueError, match="shape"):
        audit_sampler(lambda rng, n, M, d: np.zeros((n, M)), 4)
    with pytest.raises(ValueError, match="n must"):
        audit_sampler("iid", 4, n=10)


def test_inconclusive_is_not_an_assertion():
    """An undecided audit is not a refutation: pytest.raises(AssertionError) must not catch it."""
    assert not issubclass(Inconclusive, AssertionError)


# -- layouts: projections as columns ------------------------------------------------------------


def haar_columns(rng, M, d):
    """A correct Haar sampler that returns its projections as columns, (d, M)."""
    q = _haar(rng, d)
    return (q.T[:M] * np.sqrt(rng.chisquare(d, M))[:, None]).T


@pytest.mark.parametrize("d", [8, 16])
def test_transposed_square_sampler_is_named(d):
    """With M = d a (d, M) sampler passes the shape check; the audit refutes the rows, finds
    the columns of the same draws valid, and says the sampler is likely transposed."""
    rep = audit_sampler(per_draw(haar_columns), d, structure="orthogonal", n=500)
    assert rep.verdict == "REFUTED" and rep.likely_transposed, str(rep)
    assert "columns" in str(rep) and "custom.columns" in rep.notes[0]
    assert audit_sampler(per_draw(haar_columns, layout="columns"), d, structure="orthogonal", n=500).verdict == "HOLDS"
    assert audit_sampler(columns(lambda rng, n, M, d: np.stack([haar_columns(rng, M, d) for _ in range(n)])), d,
                         structure="orthogonal", n=500).verdict == "HOLDS"
    off = audit_sampler(per_draw(haar_columns), d, structure="orthogonal", n=500, check_layout=False)
    assert off.verdict == "REFUTED" and not off.likely_transposed


def test_transposed_rectangular_sampler_fails_the_shape_check_with_the_reason():
    with pytest.raises(ValueError, match=r"\(n, d, M\).*custom.columns"):
        audit_sampler(per_draw(haar_columns), 8, 4, n=200)
    rep = audit_sampler(per_draw(haar_columns, layout="columns"), 8, 4, structure="orthogonal", n=500)
    assert rep.verdict == "HOLDS", str(rep)


def test_layout_argument_validated():
    with pytest.raises(ValueError, match="layout"):
        per_draw(haar_columns, layout="cols")


def test_zero_rows_are_refuted_without_warnings():
    """A row of zeros has no direction: the audit refutes it (norm, structure) and does not trip
    on 0/0 -- the transposed re-audit of a square sampler meets such rows (SimRF+ blocks)."""

    def zero_row(rng, n, M, d):
        W = np.stack([_haar(rng, d).T[:M] * np.sqrt(rng.chisquare(d, M))[:, None] for _ in range(n)])
        W[:, 0] = 0.0
        return W

    rep = audit_sampler(zero_row, 6, structure="orthogonal", n=300)
    assert {"norm", "structure"} <= {t.name for t in rep.failures}, str(rep)
