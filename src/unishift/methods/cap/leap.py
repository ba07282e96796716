"""LEAP, the simplified linear-equation CAP of Volpi et al. 2024 as REF runs it (docs/methods.md §4.1):
the test contingency table from k^2 linear equations.

Unknowns x_ij = share of test items of true class i predicted as j. Equations, in this order:
(1) the shares sum to 1; (2) for every true class i >= 1 and predicted class j >= 1, label shift keeps
the validation ratio x_ij / sum_j' x_ij' = r_ij ((k-1)^2 equations); (3) for j >= 1 the predicted
share sum_i x_ij is the CC estimate (k-1); (4) for i >= 1 the true share sum_j x_ij is the internal
quantifier's estimate (k-1). That is 1 + (k-1)^2 + 2(k-1) = k^2 equations, LEAP's square system; for
k = 2 it is the binary method's system row for row (docs/methods.md §4.1). The exact solution is used when
it is a distribution, else the least-squares solution over the k^2-simplex (QuaPy's SLSQP helper).
"""

from __future__ import annotations

import numpy as np

from unishift.choices import check_choice
from unishift.data.containers import Sample, Setting
from unishift.methods.base import AccuracyPredictor, SampleContext
from unishift.methods.quantification.aggregative import PCC, KDEy
from unishift.quapy_loader import load_quapy

QUANTIFIERS = ("KDEy", "PCC")


def leap_equations(ratios: np.ndarray) -> np.ndarray:
    """The k^2 x k^2 matrix A (right-hand side: see :func:`leap_rhs`); ``ratios`` are r_ij."""
    k = ratios.shape[0]
    index = np.arange(k * k).reshape(k, k)
    A = np.zeros((k * k, k * k))
    row = 0
    A[row, :] = 1.0
    row += 1
    for i in range(1, k):
        for j in range(1, k):
            A[row, index[i, :]] = -ratios[i, j]
            A[row, index[i, j]] = 1.0 - ratios[i, j]
            row += 1
    for j in range(1, k):
        A[row, index[:, j]] = 1.0
        row += 1
    for i in range(1, k):
        A[row, index[i, :]] = 1.0
        row += 1
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
    """Predicted accuracy = trace of the estimated test contingency table.

    ``quantifier``: ``"KDEy"`` (the LEAP column), ``"PCC"`` (LEAP^PCC) or a factory of a quantifier
    (tests plug in an oracle). A true class without validation items has no ratios; REF would divide
    by zero, we take them as 0 and record it (for two classes: a validation set without positives
    has no TPR, taken as 0).
    """

    name, description = "LEAP", "LEAP with KDEy"
    adaptations = ("a2c", "a2q")
    assumption = "label"

    def __init__(self, quantifier="KDEy"):
        if not callable(quantifier):
            check_choice("quantifier", quantifier, QUANTIFIERS)
        self.quantifier = quantifier

    def _make_quantifier(self):
        if callable(self.quantifier):
            return self.quantifier()
        return KDEy() if self.quantifier == "KDEy" else PCC()

    def fit(self, setting: Setting):
        self.fit_notes = []
        table = setting.validation.confusion
        totals = table.sum(axis=1, keepdims=True)
        empty = [i for i in range(1, setting.n_classes) if totals[i, 0] == 0]
        if empty and setting.n_classes == 2:
            self.fit_notes.append(("fallback", "LEAP: no validation positives; TPR taken as 0"))
        elif empty:
            self.fit_notes.append(
                ("fallback", f"LEAP: no validation items of class {empty}; their ratios taken as 0")
            )
        with np.errstate(invalid="ignore", divide="ignore"):
            self.ratios_ = np.where(totals > 0, table / np.where(totals > 0, totals, 1.0), 0.0)
        self.A_ = leap_equations(self.ratios_)
        self.quantifier_ = self._make_quantifier().fit(setting)
        self.fit_notes.extend(getattr(self.quantifier_, "fit_notes", []) or [])
        return self

    def predict_table(self, sample: Sample, context: SampleContext) -> np.ndarray:
        """The estimated k x k contingency table (shares; rows true class, columns predicted
        class). The SLSQP branch is part of LEAP's definition, not a failure, so it is not noted."""
        k = sample.n_classes
        cc = np.bincount(sample.predictions, minlength=k) / len(sample)
        q = np.asarray(self.quantifier_.quantify(sample, context), dtype=float)
        table, _ = solve_contingency(self.A_, leap_rhs(cc, q))
        return table

    def predict_accuracy(self, sample: Sample, context: SampleContext) -> float:
        table = self.predict_table(sample, context)
        return float(np.trace(table) / table.sum())


class LEAPPCC(LEAP):
    """LEAP with PCC as its quantifier (the LEAP^PCC column of the covariate-shift tables)."""

    name, display, description = "LEAP_PCC", r"LEAP$^{\text{PCC}}$", "LEAP with PCC"
    shifts = ("covariate",)

    def __init__(self, quantifier="PCC"):
        super().__init__(quantifier)
