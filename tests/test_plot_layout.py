"""Figures a reader can read: no overlapping text, every panel labelled (rfcheck.plots.layout_problems)."""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from rfcheck import report
from rfcheck.plots import layout_problems

ROOT = Path(__file__).resolve().parents[1]
LEDGER = json.loads((ROOT / "results" / "ledger" / "ledger.json").read_text())


def test_layout_problems_sees_overlaps_and_missing_labels():
    fig, (a, b) = plt.subplots(1, 2)
    a.set_xlabel("x")
    a.set_ylabel("y")
    a.text(0.5, 0.5, "some text", transform=a.transAxes)
    a.set_title("panel")
    a.yaxis.label.set_position((0.5, 0.5))
    b.set_xticks([0.0, 0.01], ["a long label", "another long label"])
    problems = layout_problems(fig)
    plt.close(fig)
    assert "axes 2 has no y label" in problems
    assert any(p.startswith("overlap: 'a long label'") for p in problems)
    fig, ax = plt.subplots()
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    fig.tight_layout()
    assert layout_problems(fig) == []
    plt.close(fig)


@pytest.mark.parametrize("entry", [e for e in LEDGER if e["verdict"] in ("REFUTED", "MIXED")], ids=lambda e: e["id"])
def test_counterexample_plots_read_cleanly(entry, tmp_path, monkeypatch):
    """Every REFUTED/MIXED plot of the stored ledger: values spanning hundreds of decades, of both
    signs, on a signed log axis with a few labelled decades (symlog crowded its labels)."""
    seen = []
    close = plt.close
    monkeypatch.setattr(plt, "close", lambda fig=None: (seen.append(layout_problems(fig)), close(fig)))
    if report.plot_refuted(entry, tmp_path / "p.png") is None:
        pytest.skip("no plottable points")
    assert seen == [[]]


def test_an_inequality_is_drawn_as_one(tmp_path, monkeypatch):
    """hrf.text-h2-lambda-max is a bound (lhs <= rhs): its plot names the sides, shades the region
    where the bound holds and says holds/violated -- not printed/reference on an equality diagonal."""
    entry = next(e for e in LEDGER if e["id"] == "hrf.text-h2-lambda-max")
    figs = []
    monkeypatch.setattr(plt, "close", lambda fig=None: figs.append(fig))
    assert report.plot_refuted(entry, tmp_path / "p.png") is not None
    left, right = figs[0].axes
    assert (right.get_xlabel(), right.get_ylabel()) == ("lhs", "rhs")
    assert [t.get_text() for t in left.get_legend().get_texts()] == ["lhs", "rhs"]
    legend = [t.get_text() for t in right.get_legend().get_texts()]
    assert legend == ["lhs <= rhs", "holds", "violated"]
    assert "lhs vs rhs" in figs[0]._suptitle.get_text()
    plt.close(figs[0])
    equality = next(e for e in LEDGER if e["id"] == "crt.eq1")
    figs.clear()
    assert report.plot_refuted(equality, tmp_path / "q.png") is not None
    assert figs[0].axes[1].get_xlabel().startswith("reference")
    assert [t.get_text() for t in figs[0].axes[1].get_legend().get_texts()] == ["agree", "disagree"]
