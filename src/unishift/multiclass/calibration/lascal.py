"""LasCal for k classes (Popordanoska et al. 2024): the binary search with a k-class RLLS.

LasCal is class-wise by design: for each grid temperature T it estimates class importance weights
w = 1 + θ by RLLS from hard predictions and scores softmax(z / T) by the mean over the k classes of
the label-shift ECE estimator of each class (docs/methods.md §2.5); the first strict minimum wins.
Everything but RLLS is already class-generic in the binary module (the estimator takes one class's
confidences and weight at a time) and is reused here, arithmetic switches included.

RLLS: θ = argmin ||C θ - b|| + λ ||θ|| subject to θ >= -1, C[i, j] the share of validation items
predicted i with label j, b the predicted-class shares of the sample minus those of validation,
λ = 0.01 ρ(n, k) (abstention's ρ with K = k). It is a second-order cone problem; for two classes the
binary module solves it exactly in closed form, for k classes ``solver="cvxpy"`` states it to cvxpy
(the problem as abstention's RLLS adapter states it; cvxpy is in the lock). ``solver="auto"``
(default) takes the closed form for k = 2 and cvxpy otherwise, so two classes give the binary
LasCal's numbers (tests/test_multiclass_binary_invariant.py).

Hard predictions do not change with T > 0 (softmax(z / T) keeps the arg-max of z), so RLLS is solved
once per distinct prediction pattern, in practice once per sample.
"""

from __future__ import annotations

import numpy as np

from unishift.methods.base import check_choice
from unishift.methods.calibration.lascal import (
    ARITHMETICS,
    LasCalSearch,
    _argmax,
    _scaled_softmaxes,
    _torch_scaled_softmaxes,
    ece_label_shift_vectorised,
    lascal_logits,
    rlls_closed_form,
    rlls_cvxpy,
    rlls_lambda,
    torch_scaled_softmax,
    uncalibrated_like_ref,
)
from unishift.methods.calibration.shared import (
    LOGIT_CONVENTIONS,
    first_strict_minimum,
    scaled_softmax,
    temperature_grid,
)
from unishift.multiclass.base import MulticlassCalibrator
from unishift.multiclass.calibration.emq import ThenEM

SOLVERS = ("auto", "cvxpy", "closed_form")


def rlls_system(source_pred, source_labels, target_pred, n_classes: int):
    """(C, b) of RLLS with hard predictions for k classes (the binary ``rlls_system`` for k = 2)."""
    source_pred = np.asarray(source_pred, dtype=int)
    target_pred = np.asarray(target_pred, dtype=int)
    C = np.zeros((n_classes, n_classes))
    np.add.at(C, (source_pred, np.asarray(source_labels, dtype=int)), 1.0)
    C /= len(source_pred)
    mu_t = np.bincount(target_pred, minlength=n_classes) / len(target_pred)
    mu_s = np.bincount(source_pred, minlength=n_classes) / len(source_pred)
    return C, mu_t - mu_s


def rlls_weights(source_pred, source_labels, target_pred, n_classes: int, solver: str = "auto"):
    check_choice("solver", solver, SOLVERS)
    if solver == "closed_form" and n_classes != 2:
        raise ValueError(f"solver='closed_form' solves two-class RLLS only; k = {n_classes}")
    C, b = rlls_system(source_pred, source_labels, target_pred, n_classes)
    lam = rlls_lambda(len(source_pred), n_classes)
    use_closed_form = solver == "closed_form" or (solver == "auto" and n_classes == 2)
    theta = rlls_closed_form(C, b, lam) if use_closed_form else rlls_cvxpy(C, b, lam)
    return 1.0 + theta


def _mean_of_classes(per_class: list, arithmetic: str):
    """The classes' mean loss; float32 with REF's arithmetic ((a + b) / 2 for two classes)."""
    if arithmetic == "reference":
        total = np.asarray(per_class[0], dtype=np.float32)
        for loss in per_class[1:]:
            total = total + np.asarray(loss, dtype=np.float32)
        return total / np.float32(len(per_class))
    return sum(per_class[1:], per_class[0]) / len(per_class)


def lascal_losses(z_source, y_source, z_target, solver="auto", temps=None, arithmetic="reference"):
    """LasCal's loss at every grid temperature: the mean over the k classes of the label-shift ECE."""
    check_choice("arithmetic", arithmetic, ARITHMETICS)
    temps = temperature_grid() if temps is None else temps
    y_source = np.asarray(y_source, dtype=int)
    k = np.asarray(z_source).shape[1]
    scaled = _torch_scaled_softmaxes if arithmetic == "reference" else _scaled_softmaxes
    src, tgt = scaled(z_source, temps), scaled(z_target, temps)
    pred_src, pred_tgt = _argmax(src), _argmax(tgt)
    weights = np.empty((len(temps), k))
    solved: dict[bytes, np.ndarray] = {}
    for r in range(len(temps)):
        key = pred_src[r].tobytes() + b"|" + pred_tgt[r].tobytes()
        if key not in solved:
            solved[key] = rlls_weights(pred_src[r], y_source, pred_tgt[r], k, solver)
        weights[r] = solved[key]
    per_class = [
        ece_label_shift_vectorised(
            np.ascontiguousarray(src[..., c]),
            np.ascontiguousarray(tgt[..., c]),
            y_source == c,
            weights[:, c],
            arithmetic=arithmetic,
        )
        for c in range(k)
    ]
    return _mean_of_classes(per_class, arithmetic)


def lascal_search(convention, setting, sample, context, solver="auto", arithmetic="reference"):
    """The sample's LasCal temperature, computed once per context, convention, validation set,
    solver and arithmetic; a failing search is kept with its reason (the binary rule)."""
    z_src = lascal_logits(convention, setting.validation, arithmetic)
    z_tgt = lascal_logits(convention, sample, arithmetic)

    def compute() -> LasCalSearch:
        try:
            temps = temperature_grid()
            losses = lascal_losses(
                z_src, setting.validation.labels, z_tgt, solver, temps, arithmetic
            )
            best = first_strict_minimum(losses)
            return LasCalSearch(-1.0 if best is None else float(temps[best]))
        except Exception as err:  # the binary LasCal's fallback: uncalibrated posteriors
            return LasCalSearch(None, f"LasCal failed ({type(err).__name__}: {err})")

    if context is None:
        return compute()
    key = ("multiclass_lascal_T", convention, setting.key, solver, arithmetic)
    return context.cached(key, compute)


class LasCal(MulticlassCalibrator):
    """LasCal's grid temperature for k classes.

    Args:
        logits: "S" log-posteriors (default; softmax(S / T) is temperature scaling of the
            classifier's posteriors), "L" true logits (covariate table), "P" posteriors as logits
            (the binary label-shift table's convention; for k classes a narrow family).
        solver: RLLS solver, "auto" (closed form for k = 2, cvxpy otherwise), "cvxpy" or
            "closed_form" (k = 2 only).
        arithmetic: "reference" (the binary LasCal's: PyTorch softmax and log, float32 losses) or
            "float64".
    """

    name, display, binary_name = "LasCal", "LasCal", "LasCal"
    group = "reference"
    assumption = "label"
    calibration_notion = "class-wise"
    defaults = {"logits": "S", "solver": "auto", "arithmetic": "reference"}
    # the covariate tables' temperature-type calibrators read the language model's true logits
    shift_defaults = {"covariate": {"logits": "L"}}
    description = "LasCal (Popordanoska et al. 2024): label-shift ECE temperature, k-class RLLS"

    def __init__(self, logits: str = "S", solver: str = "auto", arithmetic: str = "reference"):
        check_choice("logits", logits, LOGIT_CONVENTIONS)
        check_choice("solver", solver, SOLVERS)
        check_choice("arithmetic", arithmetic, ARITHMETICS)
        self.logits = logits
        self.solver = solver
        self.arithmetic = arithmetic

    def fit(self, setting):
        if self.solver == "closed_form" and setting.n_classes != 2:
            raise ValueError(
                f"LasCal: solver='closed_form' solves two-class RLLS only; this problem has "
                f"{setting.n_classes} classes (use 'auto' or 'cvxpy')"
            )
        self.fit_notes = []
        self.setting_ = setting
        return self

    def calibrate(self, sample, context):
        target = lascal_logits(self.logits, sample, self.arithmetic)
        search = lascal_search(
            self.logits, self.setting_, sample, context, self.solver, self.arithmetic
        )
        if search.temperature is None:
            if context is not None:
                context.note("fallback", f"{search.failure}; uncalibrated posteriors returned")
            return uncalibrated_like_ref(target)
        if search.temperature == -1.0 and context is not None:
            context.note("fallback", "LasCal: no finite loss on the grid; sentinel T = -1 kept")
        if self.arithmetic == "reference":
            return torch_scaled_softmax(target, search.temperature)
        return scaled_softmax(target, search.temperature)


class EMQLasCal(ThenEM, LasCal):
    """LasCal then EM from ``train_prevalence`` (the binary EMQ_LasCal calibrator, label shift)."""

    name, display, group = "EMQ_LasCal", r"EMQ$^{\text{LasCal}}$", "adapted"
    binary_name = "EMQ_LasCal"
    shifts = ("label",)
    calibration_notion = "canonical"
    defaults = {**LasCal.defaults, "train_prevalence": "training"}
    shift_defaults = {}
    description = "LasCal (S-logits) then EM from the classifier-training prevalence"

    def __init__(
        self,
        logits: str = "S",
        solver: str = "auto",
        arithmetic: str = "reference",
        train_prevalence: str = "training",
    ):
        super().__init__(logits, solver, arithmetic)
        self._set_prior_source(train_prevalence)


__all__ = ["EMQLasCal", "LasCal", "lascal_losses", "rlls_system", "rlls_weights"]
