"""LEAP, the simplified linear-equation CAP of Volpi et al. 2024 as the reference implementation
runs it (docs/methods.md §4.1, docs/multiclass.md §4): the test contingency table x_ij (true i,
predicted j) from k^2 linear equations, their exact solution when it is a distribution, else the
least-squares one over the k^2-simplex (QuaPy's SLSQP helper)."""

from __future__ import annotations

from itertools import product

import numpy as np

from unishift.data.containers import Sample, Setting
from unishift.data.quapy_loader import load_quapy
from unishift.methods.base import AccuracyPredictor, SampleContext
from unishift.methods.quantification.aggregative import PCC, KDEy
from unishift.option_checks import check_choice

QUANTIFIERS = {"KDEy": KDEy, "PCC": PCC}


def leap_equations(ratios: np.ndarray) -> np.ndarray:
    """The k^2 x k^2 matrix A, rows in this order: the shares sum to 1; label shift keeps the
    validation ratios x_ij / sum_j' x_ij' = r_ij for i, j >= 1; the predicted shares of j >= 1 are
    CC's and the true shares of i >= 1 the quantifier's estimates (:func:`leap_rhs`)."""
    k = ratios.shape[0]
    index = np.arange(k * k).reshape(k, k)
    A = np.zeros((k * k, k * k))
    A[0, :] = 1.0
    for row, (i, j) in enumerate(product(range(1, k), repeat=2), start=1):
        A[row, index[i, :]] = -ratios[i, j]
        A[row, index[i, j]] = 1.0 - ratios[i, j]
    for j in range(1, k):
        A[(k - 1) ** 2 + j, index[:, j]] = 1.0
        A[(k - 1) ** 2 + k - 1 + j, index[j, :]] = 1.0
    return A


def leap_rhs(cc_prevalence: np.ndarray, q_prevalence: np.ndarray) -> np.ndarray:
    k = len(cc_prevalence)
    return np.concatenate(
        [[1.0], np.zeros((k - 1) ** 2), np.asarray(cc_prevalence)[1:], np.asarray(q_prevalence)[1:]]
    )


def solve_contingency(A: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, bool]:
    """(k x k table, whether the simplex fallback ran)."""
    k = int(round(np.sqrt(len(b))))
    x = np.linalg.solve(A, b)
    if np.any(x < 0) or not np.isclose(x.sum(), 1.0):
        load_quapy()
        from quapy.functional import optim_minimize

        x = optim_minimize(lambda v: np.linalg.norm(A @ v - b, ord=2), n_classes=k * k)
        return np.asarray(x).reshape(k, k), True
    return x.reshape(k, k), False


class LEAP(AccuracyPredictor):
    """Predicted accuracy = trace of the estimated test contingency table; ``quantifier``:
    ``"KDEy"``, ``"PCC"`` or a factory of a quantifier. A true class without validation items (the
    reference implementation would divide by zero) gets ratios 0, recorded."""

    name, description = "LEAP", "LEAP with KDEy"
    adaptations = ("a2c", "a2q")
    assumption = "label"

    def __init__(self, quantifier="KDEy"):
        self.quantifier = quantifier

    def check_params(self):
        if not callable(self.quantifier):
            check_choice("quantifier", self.quantifier, tuple(QUANTIFIERS))

    def _fit(self, setting: Setting) -> None:
        table = setting.validation.confusion
        totals = table.sum(axis=1, keepdims=True)
        empty = [i for i in range(1, setting.n_classes) if totals[i, 0] == 0]
        if empty and setting.n_classes == 2:
            self.fit_fallback("LEAP: no validation positives; TPR taken as 0")
        elif empty:
            self.fit_fallback(
                f"LEAP: no validation items of class {empty}; their ratios taken as 0"
            )
        self.ratios_ = np.where(totals > 0, table / np.where(totals > 0, totals, 1.0), 0.0)
        self.A_ = leap_equations(self.ratios_)
        make = self.quantifier if callable(self.quantifier) else QUANTIFIERS[self.quantifier]
        self.quantifier_ = make().fit(setting)
        self.fit_notes.extend(self.quantifier_.fit_notes)

    def predict_table(self, sample: Sample, context: SampleContext | None = None) -> np.ndarray:
        """The estimated k x k contingency table (shares; rows true class, columns predicted class);
        the SLSQP branch is part of LEAP, not a fallback, so it is not noted."""
        k = sample.n_classes
        cc = np.bincount(sample.predictions, minlength=k) / len(sample)
        q = np.asarray(self.quantifier_.quantify(sample, self.context_for(context)), dtype=float)
        table, _ = solve_contingency(self.A_, leap_rhs(cc, q))
        return table

    def predict_accuracy(self, sample: Sample, context: SampleContext | None = None) -> float:
        table = self.predict_table(sample, context)
        return float(np.trace(table) / table.sum())


class LEAPPCC(LEAP):
    """LEAP with PCC as its quantifier (the LEAP^PCC column of the covariate-shift tables)."""

    name, display, description = "LEAP_PCC", r"LEAP$^{\text{PCC}}$", "LEAP with PCC"
    shifts = ("covariate",)

    def __init__(self, quantifier="PCC"):
        super().__init__(quantifier)
