"""LEAP, the simplified linear-equation CAP of Volpi et al. 2024 as REF runs it (docs/methods.md §4.1)."""

from __future__ import annotations

import numpy as np

from unishift.methods.base import AccuracyPredictor, Sample, SampleContext, Setting, check_choice

QUANTIFIERS = ("KDEy", "PCC")


def _build_quantifier(name: str):
    from unishift.methods.quantification.reference import PCC, KDEy

    return KDEy() if name == "KDEy" else PCC()


def leap_system(
    tpr: float, cc_prevalence: float, q_prevalence: float
) -> tuple[np.ndarray, np.ndarray]:
    """A x = b over x = (x00, x01, x10, x11), x_tp = share of items of true class t predicted as p.

    Rows: the shares sum to 1; the test keeps the validation ratio x11 / (x10 + x11) = tpr; the
    predicted-positive share is the CC estimate; the true-positive share is the quantifier's estimate.
    The determinant is 1 for every tpr, so the system is never singular.
    """
    A = np.array(
        [
            [1.0, 1.0, 1.0, 1.0],
            [0.0, 0.0, -tpr, 1.0 - tpr],
            [0.0, 1.0, 0.0, 1.0],
            [0.0, 0.0, 1.0, 1.0],
        ]
    )
    b = np.array([1.0, 0.0, cc_prevalence, q_prevalence])
    return A, b


def solve_table(A: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, bool]:
    """The exact solution if it is a distribution, else SLSQP on the simplex (QuaPy's optim_minimize).

    Returns the 2 x 2 table (rows true class, columns predicted class) and whether the fallback ran.
    """
    x = np.linalg.solve(A, b)
    if np.any(x < 0) or not np.isclose(x.sum(), 1.0):
        from quapy.functional import optim_minimize

        x = optim_minimize(lambda v: np.linalg.norm(A @ v - b, ord=2), n_classes=4)
        return x.reshape(2, 2), True
    return x.reshape(2, 2), False


class LEAP(AccuracyPredictor):
    """Contingency-table estimate from a CC estimate, a quantifier's estimate and the validation TPR.

    ``quantifier``: KDEy (the LEAP column) or PCC (LEAP^PCC), or a factory of a Quantifier. A validation set without positives has no
    TPR; REF would divide by zero, we use tpr = 0 and record it (docs/methods.md §4.1).
    """

    name, description = "LEAP", "LEAP with KDEy"
    defaults = {"quantifier": "KDEy"}
    adaptations = ("a2c", "a2q")

    def __init__(self, quantifier="KDEy"):
        if not callable(quantifier):
            check_choice("quantifier", quantifier, QUANTIFIERS)
        self.quantifier = quantifier

    def fit(self, setting: Setting):
        self.fit_notes = []
        validation = setting.validation
        table = np.zeros((2, 2))
        np.add.at(table, (validation.labels.astype(int), validation.predictions), 1.0)
        self.validation_table_ = table
        if table[1].sum() > 0:
            self.tpr_ = float(table[1, 1] / table[1].sum())
        else:
            self.tpr_ = 0.0
            self.fit_notes.append(("fallback", "LEAP: no validation positives; TPR taken as 0"))
        self.quantifier_ = self._make_quantifier().fit(setting)
        self.fit_notes.extend(getattr(self.quantifier_, "fit_notes", []) or [])
        return self

    def _make_quantifier(self):
        # a callable (a Quantifier class or factory) lets tests plug in an oracle quantifier
        if callable(self.quantifier):
            return self.quantifier()
        return _build_quantifier(self.quantifier)

    def predict_table(self, sample: Sample, context: SampleContext) -> np.ndarray:
        """The estimated 2 x 2 contingency table (shares; rows true class, columns predicted class)."""
        cc_prevalence = float(np.mean(sample.predictions))
        q_prevalence = float(self.quantifier_.quantify(sample, context))
        # The SLSQP branch is part of LEAP's definition, not a failure, so it is not noted.
        table, _ = solve_table(*leap_system(self.tpr_, cc_prevalence, q_prevalence))
        return table

    def predict_accuracy(self, sample: Sample, context: SampleContext) -> float:
        table = self.predict_table(sample, context)
        return float(np.trace(table) / table.sum())


class LEAPPCC(LEAP):
    """LEAP with PCC as its quantifier (the LEAP^PCC column of the covariate-shift tables)."""

    name, display, description = "LEAP_PCC", r"LEAP$^{\text{PCC}}$", "LEAP with PCC"
    shifts = ("covariate",)
    defaults = {"quantifier": "PCC"}

    def __init__(self, quantifier="PCC"):
        super().__init__(quantifier)
