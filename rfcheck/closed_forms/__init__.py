"""Closed forms of the papers' results, corrected where a printed formula is wrong: the exact
side of the ledger's checks and of the Monte Carlo tests (the estimators themselves are in
:mod:`rfcheck.estimators`, the independent numerical references in :mod:`rfcheck.references`).

One module per paper: :mod:`rfcheck.closed_forms.crt` (Chefs' Random Tables),
:mod:`rfcheck.closed_forms.darkformer` (DARKFormer), :mod:`rfcheck.closed_forms.hrf` (Hybrid
Random Features), :mod:`rfcheck.closed_forms.rfa` (Random Feature Attention) and
:mod:`rfcheck.closed_forms.simrf` (Simplex Random Features).  Every result cites its equation;
the scalar ones are context-generic definitions (:func:`rfcheck.backends.formula`) with a
float64, an mpmath and a sympy face.  The package exports no names itself; import the modules.
"""

__all__: list[str] = []
