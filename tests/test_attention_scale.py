"""Chunked causal linear attention, and the statistics of the attention-scale MSE study
(streaming, replicate-level tail diagnostic, closed-form subsample SE, DARKFormer one-sample test)."""

from __future__ import annotations

import math

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="the attention harness needs JAX (pip install 'rfcheck[jax]')")

from rfcheck.attention import attention, causality_audit, enable_x64, mse  # noqa: E402
from rfcheck.attention import bench as abench  # noqa: E402
from rfcheck.stats import estimate_mean  # noqa: E402

pytestmark = pytest.mark.jax
KEY = jax.random.key(0)


@pytest.fixture(autouse=True)
def _x64():
    with enable_x64(True):
        yield


def _data(n=50, d=8, dv=3, scale=0.4, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, d)) * scale, rng.normal(size=(n, d)) * scale, rng.normal(size=(n, dv))


# ------------------------------------------------------------------ chunked causal linear attention
CASES = [("favor+", False, {}), ("favor++", True, {"oprf_a": -0.02}), ("rfa", True, {}), ("rfa", False, {"gate": 1}),
         ("hybrid", True, {})]


@pytest.mark.parametrize(("method", "stabilise", "kw"), CASES)
def test_chunked_equals_scan_and_masked_quadratic(method, stabilise, kw):
    """float64: chunk 7 (L = 50 padded), 50 (= L) and, for FAVOR+, 1 and 64 (> L): equal to 1e-10."""
    q, k, v = _data()
    kw = dict(kw)
    if "gate" in kw:
        kw["gate"] = 1 / (1 + np.exp(-np.random.default_rng(5).normal(size=len(q))))
    common = {"method": method, "causal": True, "key": KEY, "stabilise": stabilise, **kw}
    scan = np.asarray(attention(q, k, v, **common))
    quad = np.asarray(attention(q, k, v, quadratic=True, **common))
    tol = 1e-10 * float(np.max(np.abs(quad)))
    for chunk in (7, 50) + ((1, 64) if method == "favor+" else ()):
        ch = np.asarray(attention(q, k, v, causal_impl="chunked", chunk_size=chunk, **common))
        np.testing.assert_allclose(ch, scan, rtol=0, atol=tol, err_msg=f"chunk {chunk}")
        np.testing.assert_allclose(ch, quad, rtol=0, atol=tol, err_msg=f"chunk {chunk}")


@pytest.mark.parametrize(("method", "stabilise", "kw"), CASES)
def test_chunked_is_nan_robust_like_the_scan(method, stabilise, kw):
    """A NaN value or key at position i reaches the outputs at positions >= i only, with the
    scan's pattern (the value's column; every column for a key), and the causality audit's
    opt-in NaN perturbation passes (before 2026-11-25 the chunked path leaked a future NaN into
    earlier outputs of its chunk through 0 * NaN in the masked matrix products)."""
    q, k, v = _data()
    kw = dict(kw)
    if "gate" in kw:
        kw["gate"] = 1 / (1 + np.exp(-np.random.default_rng(5).normal(size=len(q))))
    common = {"method": method, "causal": True, "key": KEY, "stabilise": stabilise, **kw}
    for which, pos in (("v", 30), ("k", 12)):
        k2, v2 = k.copy(), v.copy()
        (v2[pos, 1:2] if which == "v" else k2[pos])[...] = np.nan
        scan = np.asarray(attention(q, k2, v2, **common))
        for chunk in (7, 16):
            ch = np.asarray(attention(q, k2, v2, causal_impl="chunked", chunk_size=chunk, **common))
            np.testing.assert_array_equal(np.isnan(ch), np.isnan(scan), err_msg=f"{which} chunk {chunk}")
            assert np.all(np.isfinite(ch[:pos])) and np.isnan(ch[pos:]).any(axis=1).all()
            ok = ~np.isnan(scan)
            np.testing.assert_allclose(ch[ok], scan[ok], rtol=0, atol=1e-10 * float(np.max(np.abs(scan[ok]))))
    rep = causality_audit(lambda q, k, v: attention(q, k, v, causal_impl="chunked", chunk_size=16, **common),
                          q, k, v, kinds=("normal", "large", "nan"))
    assert rep.causal, rep.worst


def test_chunked_with_heads_stabiliser_causality_and_power():
    """Heads go through; huge inputs stay finite (the causal running max); the audit passes
    for chunked attention and the same path without the mask differs (power)."""
    q, k, v = _data()
    qh, kh, vh = (np.stack([x, 2 * x]) for x in (q, k, v))
    out = np.asarray(attention(qh, kh, vh, method="rfa", causal=True, key=KEY, causal_impl="chunked", chunk_size=16))
    ref = np.asarray(attention(qh, kh, vh, method="rfa", causal=True, key=KEY))
    np.testing.assert_allclose(out, ref, rtol=0, atol=1e-10 * np.max(np.abs(ref)))
    big = 40.0  # |k|^2 / 2 in the hundreds: unstabilised trig features overflow
    a = attention(q * big, k * big, v, method="rfa", key=KEY, causal=True, causal_impl="chunked", chunk_size=16)
    assert np.all(np.isfinite(np.asarray(a)))
    rep = causality_audit(lambda q, k, v: attention(q, k, v, method="rfa", causal=True, key=KEY,
                                                    causal_impl="chunked", chunk_size=16), q, k, v,
                          kinds=("normal", "large"))
    assert rep.causal, rep.worst
    bi = attention(q, k, v, method="rfa", causal=False, key=KEY)
    assert float(np.max(np.abs(np.asarray(out[0]) - np.asarray(bi)))) > 1e-3


def test_chunked_float32():
    q, k, v = _data()
    with enable_x64(False):
        w = jax.random.normal(KEY, (64, 8))
        f32 = attention(np.float32(q), np.float32(k), np.float32(v), method="favor+", causal=True, projections=w,
                        causal_impl="chunked", chunk_size=16)
        assert f32.dtype == np.float32
    ref = np.asarray(attention(q, k, v, method="favor+", causal=True, projections=np.asarray(w, float)))
    np.testing.assert_allclose(np.asarray(f32), ref, rtol=0, atol=1e-5 * np.max(np.abs(ref)))


def test_chunked_options_are_validated():
    q, k, v = _data()
    with pytest.raises(ValueError, match="causal_impl"):
        attention(q, k, v, method="favor+", causal=True, key=KEY, causal_impl="fft")
    with pytest.raises(ValueError, match="chunk_size"):
        attention(q, k, v, method="favor+", causal=True, key=KEY, causal_impl="chunked", chunk_size=0)


def test_bench_has_a_chunked_row():
    assert ("favor+", True, "chunked") in abench.METHODS
    e = abench.measure_one("favor+", True, 256, d=8, num_features=8, repeats=1, impl="chunked")
    assert e["seconds"] > 0 and e["xla_bytes"] > 0


def test_bench_default_length_follows_the_device():
    """The sweep goes further on an accelerator; on this (CPU) device the CPU default applies."""
    assert abench.default_max_len("cpu") == abench.MAX_LEN_CPU == 65536
    assert abench.default_max_len("gpu") == abench.default_max_len("tpu") == abench.MAX_LEN_ACCELERATOR
    assert abench.default_max_len() == abench.default_max_len(jax.devices()[0].platform)


def test_devicecheck_float32_matches_the_float64_reference():
    """On this CPU the float32 run must agree with float64 to float32 rounding (1e-5 allows L-fold growth)."""
    from rfcheck.attention import devicecheck

    rows = devicecheck.device_errors(128, d=8, num_features=16, seed=3)
    assert {(r["method"], r["causal"], r["impl"]) for r in rows} == set(abench.METHODS)
    on_cpu = jax.devices()[0].platform == "cpu"  # elsewhere "default" may be TF32 (~3e-4 on an H200)
    for r in rows:
        assert 0 < r["err_highest"] < 1e-5 and 0 < r["err_default"] < (1e-5 if on_cpu else 1e-2), r



def test_devicecheck_reports_a_wrong_device_result(monkeypatch):
    """A float32 result that is off by 1% (planted) is reported as such, at both precisions."""
    import rfcheck.attention as ra
    from rfcheck.attention import devicecheck

    real = ra.attention

    def planted(q, k, v, **kw):
        out = real(q, k, v, **kw)
        return out * 1.01 if out.dtype == np.float32 else out

    monkeypatch.setattr(ra, "attention", planted)
    rows = devicecheck.device_errors(64, d=8, num_features=16, seed=3)
    assert all(0.009 < r["err_highest"] < 0.011 and 0.009 < r["err_default"] < 0.011 for r in rows), rows


@pytest.mark.parametrize("method,causal,impl", (*abench.METHODS, ("hybrid", True, "chunked"), ("rfa", False, "scan")))
def test_precision_reaches_every_matmul(method, causal, impl):
    """Every dot_general the harness traces carries the requested precision (HIGHEST by default), so float32
    is float32 on GPUs too (JAX's default allows TF32 there); a bad name is a ValueError."""
    import re

    q = np.ones((8, 4), np.float32)
    kw = {} if method == "exact" else {"key": KEY}
    for prec, want in ((None, "HIGHEST"), ("default", "DEFAULT"), ("high", "HIGH")):
        extra = {} if prec is None else {"precision": prec}
        jaxpr = str(jax.make_jaxpr(lambda q, extra=extra: attention(q, q, q, method=method, causal=causal,
                                                                    causal_impl=impl, **kw, **extra))(q))
        found = re.findall(r"precision=\(?(?:Precision\.)?(\w+)", jaxpr)
        assert found and set(found) == {want}, (prec, found)
    if method != "exact":
        from rfcheck.attention import attention_features, unnormalised_attention

        jaxpr = str(jax.make_jaxpr(lambda q: unnormalised_attention(q, q, method=method, key=KEY))(q))
        assert set(re.findall(r"precision=\(?(?:Precision\.)?(\w+)", jaxpr)) == {"HIGHEST"}
        with pytest.raises(ValueError, match="precision must be one of"):
            attention_features(q, q, method=method, key=KEY, precision="tf32")
    with pytest.raises(ValueError, match="precision must be one of"):
        attention(q, q, q, method=method, causal=causal, precision="float16", **kw)


def test_cli_precision_choices_are_the_harness_precisions():
    from rfcheck import cli
    from rfcheck.attention._api import PRECISIONS

    parser = cli.build_parser()
    bench = next(a for a in parser._subparsers._group_actions[0].choices["bench"]._actions if a.dest == "precision")
    # the parser's default is None (so that the engine bench can refuse the option); 'highest' applies
    assert tuple(bench.choices) == PRECISIONS and bench.default is None
    assert cli.ATTENTION_DEFAULTS["precision"] == "highest"


def test_bench_progress_rows_match_the_table():
    e = {"method": "favor+", "causal": True, "impl": "chunked", "L": 1024, "seconds": 0.5, "peak_bytes": 2**21,
         "xla_bytes": None, "note": "", "device": "gpu"}
    row = abench.format_entry(e)
    assert row.split() == ["favor+", "causal", "chunked", "1024", "0.5", "2.0", "-"]
    assert row in abench.format_bench([e]).splitlines()


# ------------------------------------------------------------------ replicate-level statistics
def test_streaming_blocks_and_batches_do_not_change_the_study():
    """Query blocks / draw batches only reorganise float64 sums: the replicates agree to rounding."""
    q, k = mse.isotropic_data(24, 6, scale=0.5, seed=2)
    kw = {"num_features": 6, "n_draws": 64, "seed": 1, "variants": ("prf-iid", "prf-orf", "oprf-orf")}
    a = mse.run_study(q, k, block=24, batch=64, **kw)
    b = mse.run_study(q, k, block=5, batch=16, **kw)
    for nm in a.variants:
        for key in ("mse_mean", "se", "output_mse", "max_rel_rmse"):
            assert a.variants[nm][key] == pytest.approx(b.variants[nm][key], rel=1e-12), (nm, key)
    c = mse.run_study(q, k, block=7, batch=16, per_entry=False, **kw)
    assert "max_rel_rmse" not in c.variants["prf-iid"]
    assert c.variants["prf-iid"]["mse_mean"] == pytest.approx(a.variants["prf-iid"]["mse_mean"], rel=1e-12)


def test_closed_form_subsample_mean_has_an_honest_se():
    """The subsample mean lies within its SE-derived band of the all-pairs mean (z-test, 5 sigma)."""
    q, k = mse.isotropic_data(120, 32, scale=0.5, seed=4)
    full, se0 = mse._closed_form_mean(q, k, "prf", "orf", 16, 0.0, max_pairs=10**9)
    assert se0 == 0.0
    zs = []
    for s in range(4):
        sub, se = mse._closed_form_mean(q, k, "prf", "orf", 16, 0.0, max_pairs=2000, seed=s)
        assert 0 < se < 0.05 * full
        zs.append((sub - full) / se)
    assert max(abs(z) for z in zs) < 5, zs
    assert mse._closed_form_mean(q, k, "prf", "simrf", 16, 0.0) is None
    # large norms: per-pair MSEs span orders of magnitude, the subsample SE is not trusted -> raise
    qb, kb = mse.isotropic_data(120, 8, scale=0.8, seed=4)
    with pytest.raises(ValueError, match="not trusted"):
        mse._closed_form_mean(qb, kb, "prf", "orf", 16, 0.0, max_pairs=2000)


def test_tail_stats_on_replicates():
    rng = np.random.default_rng(0)
    light = mse.tail_stats(rng.gamma(4.0, size=4000))
    assert light["trustworthy"] and light["hill_alpha"] > 4 and abs(light["kurtosis"] - 4.5) < 1.5
    heavy = mse.tail_stats(rng.pareto(1.5, size=4000))  # infinite variance: no CLT
    assert not heavy["trustworthy"] and heavy["hill_alpha"] < 2.5 and heavy["r_needed"] > 4000


def test_heavy_tailed_replicates_stay_inconclusive():
    """The tail diagnostic is applied to the per-draw replicates the SE comes from; a genuinely
    heavy-tailed case (PosRF at |q|, |k| ~ 2.5 in d = 4: per-draw lognormal-like error
    with a huge kurtosis) stays INCONCLUSIVE at R = 2000, and no heavy ordering is declared
    HOLDS (the paired rule of ``difference_trusted`` rejects these tails as well)."""
    q, k = mse.isotropic_data(16, 4, scale=2.5, seed=0)
    st = mse.run_study(q, k, num_features=4, n_draws=2000, seed=0, batch=500, variants=("prf-iid", "prf-orf"))
    for e in st.entries:
        assert e["verdict"] == "INCONCLUSIVE", mse.format_study(st)
        assert not e["tails"]["trustworthy"]
        assert e["tails"]["kurtosis"] > 30
    assert st.variants["prf-iid"]["tails"]["r_needed"] > 2000


def test_light_tailed_replicates_are_decided_at_moderate_R():
    """Small norms (|q|, |k| ~ 0.5, d = 32): per-draw pair-averaged errors are light-tailed
    (kurtosis ~ 5), so R = 2000 replicates decide the equalities (HOLDS) and SimRF <= ORF
    (HOLDS); ORF <= iid is resolved (z ~ -4) although its relative SE is 25% -- the rule for
    differences looks at their tails, not at SE / |mean| (= 1 / |z|)."""
    q, k = mse.isotropic_data(32, 32, scale=0.5, seed=1)
    st = mse.run_study(q, k, num_features=8, n_draws=2000, seed=3, batch=500,
                       variants=("prf-iid", "prf-orf", "prf-simrf"))
    v = {e["id"]: e for e in st.entries}
    msg = mse.format_study(st)
    assert v["attention.mse.prf-iid.M8"]["verdict"] == "HOLDS", msg
    assert v["attention.mse.prf-orf.M8"]["verdict"] == "HOLDS", msg
    assert v["attention.order.prf-simrf<=prf-orf.M8"]["verdict"] == "HOLDS", msg
    o = v["attention.order.prf-orf<=prf-iid.M8"]
    assert o["z"] < 0 and o["verdict"] != "REFUTED", msg
    assert o["verdict"] == "HOLDS" or abs(o["z"]) <= o["z_crit"], msg
    for e in st.entries:
        assert e["tails"]["max_share"] <= 0.05 and e["tails"]["tail_cv"] <= 1, msg


def test_ordering_rule_for_differences():
    """Paired differences: tails decide trust, not the relative SE (= 1/|z|); a heavy-tailed
    difference with a large z stays INCONCLUSIVE; one-sample tests keep the full diagnostic."""
    light = {"tail_cv": 0.3, "max_share": 0.01, "trustworthy": False}  # rel SE 0.13 made it untrusted
    heavy = {"tail_cv": 3.0, "max_share": 0.4, "trustworthy": False}
    assert mse.ordering_verdict({"tails": light, "z": -7.7, "z_crit": 3.7}) == "HOLDS"
    assert mse.ordering_verdict({"tails": light, "z": 7.7, "z_crit": 3.7}) == "REFUTED"
    assert mse.ordering_verdict({"tails": light, "z": -2.0, "z_crit": 3.7}) == "INCONCLUSIVE"
    assert mse.ordering_verdict({"tails": heavy, "z": -50.0, "z_crit": 3.7}) == "INCONCLUSIVE"
    assert mse.ordering_verdict({"tails": light, "z": -50.0, "z_crit": 3.7, "paired": False}) == "INCONCLUSIVE"


def test_darkformer_isotropic_side_is_exact_prf_and_one_sample_test_is_reported():
    """dark-isotropic is PosRF-iid on the same draws (identical replicates), so its exact MSE is
    the closed form; the one-sample test of the aligned proposal against it is an entry."""
    qa, ka, lam = mse.anisotropic_data(24, 6, top=0.1, condition=10, seed=2)
    st = mse.run_study(qa, ka, num_features=8, n_draws=256, seed=5, batch=128, variants=("prf-iid",), dark_cov=lam)
    assert st.variants["dark-isotropic"]["mse_mean"] == st.variants["prf-iid"]["mse_mean"]
    assert st.variants["dark-isotropic"]["closed_form"] == st.variants["prf-iid"]["closed_form"]
    ids = [e["id"] for e in st.entries]
    assert "attention.order.dark-aligned<=exact(dark-isotropic).M8" in ids
    e = next(x for x in st.entries if x["id"].startswith("attention.order.dark-aligned<=exact"))
    cf = st.variants["prf-iid"]["closed_form"]
    assert e["paired_diff"] == pytest.approx(st.variants["dark-aligned"]["mse_mean"] - cf, rel=1e-12)
    assert e["z"] == pytest.approx(e["paired_diff"] / e["se"], rel=1e-12)


def test_replicate_se_matches_the_spread_of_independent_studies():
    """The SE from R replicates predicts the spread of the mean across independent seeds
    (ratio of empirical to predicted SD within a chi-square band for 12 studies)."""
    q, k = mse.isotropic_data(16, 6, scale=0.5, seed=3)
    means, ses = [], []
    for s in range(12):
        st = mse.run_study(q, k, num_features=6, n_draws=256, seed=100 + s, batch=256, variants=("prf-orf",),
                           per_entry=False)
        means.append(st.variants["prf-orf"]["mse_mean"])
        ses.append(st.variants["prf-orf"]["se"])
    ratio = float(np.std(means, ddof=1) / np.sqrt(np.mean(np.square(ses))))
    # chi2_11 / 11 has a 0.1%..99.9% range of about [0.15, 2.8] for the variance ratio
    assert math.sqrt(0.15) < ratio < math.sqrt(2.8), ratio
    est = estimate_mean(np.asarray(means))
    cf = mse._closed_form_mean(q, k, "prf", "orf", 6, 0.0)[0]
    assert abs(est.value - cf) < 5 * est.se
