"""Reference computations behind the ledger's checks: public, unit-tested numerical library code.

The independent side of a check -- a high-precision quadrature of a defining Gaussian
expectation, an exact moment, a series summed with a bound on its remainder, an exact
optimisation -- lives here, one module per family of estimators, so that a user's own claims
(:mod:`rfcheck.ledger`) can use the same references as the built-in ledger, and so that each is
tested on its own (against mpmath at 50 digits, closed forms, or Monte Carlo).  Claim modules
keep only what is specific to one printed result.
"""

__all__: list[str] = []
