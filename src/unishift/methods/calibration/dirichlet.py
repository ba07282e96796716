"""Dirichlet calibration (Kull et al. 2019) in its matrix-scaling form with ODIR regularisation:
q = softmax(W ln p + b), fitted on the validation set by minimising the mean log-loss plus
``reg_lambda`` / (k (k - 1)) times the sum of the squared off-diagonal entries of W plus
``reg_mu`` / k times the sum of the squared b (docs/methods.md §6.2). Ignores the test sample."""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize
from scipy.special import log_softmax, softmax

from unishift.data.containers import Sample, Setting
from unishift.methods.base import Calibrator, SampleContext

EPS = np.finfo(float).eps


def log_posteriors(posteriors: np.ndarray) -> np.ndarray:
    return np.log(np.clip(np.asarray(posteriors, dtype=float), EPS, 1.0))


def odir_objective(params, features, onehot, reg_lambda, reg_mu):
    """The regularised mean log-loss of (W, b) packed in ``params`` (W row-major, then b), and its
    gradient."""
    n, k = onehot.shape
    weights, bias = params[: k * k].reshape(k, k), params[k * k :]
    log_q = log_softmax(features @ weights.T + bias, axis=1)
    off_diagonal = weights - np.diag(np.diag(weights))
    lam = reg_lambda / (k * (k - 1))
    mu = reg_mu / k
    loss = -np.sum(onehot * log_q) / n + lam * np.sum(off_diagonal**2) + mu * np.sum(bias**2)
    residual = (np.exp(log_q) - onehot) / n
    grad_weights = residual.T @ features + 2 * lam * off_diagonal
    grad_bias = residual.sum(axis=0) + 2 * mu * bias
    return loss, np.concatenate([grad_weights.ravel(), grad_bias])


class Dirichlet(Calibrator):
    """Starts from the identity map (W = I, b = 0) and runs L-BFGS-B to ``tol``; the authors pick
    the two strengths by cross-validation, here they are fixed (switch ``reg_lambda``, ``reg_mu``).
    A fit that does not converge keeps its last iterate, recorded in ``fit_notes``."""

    name, group, description = "Dirichlet", "field", "Dirichlet calibration with ODIR, 1e-3 / 1e-3"
    calibration_notion = "canonical"

    def __init__(self, reg_lambda: float = 1e-3, reg_mu: float = 1e-3, tol: float = 1e-10):
        self.reg_lambda = reg_lambda
        self.reg_mu = reg_mu
        self.tol = tol

    def check_params(self):
        for key in ("reg_lambda", "reg_mu"):
            if not getattr(self, key) >= 0:
                raise ValueError(f"Dirichlet: {key}={getattr(self, key)!r} must be >= 0")

    def _fit(self, setting: Setting) -> None:
        validation = setting.validation
        k = setting.n_classes
        features = log_posteriors(validation.posteriors)
        onehot = np.eye(k)[validation.labels]
        start = np.concatenate([np.eye(k).ravel(), np.zeros(k)])
        result = minimize(
            odir_objective,
            start,
            args=(features, onehot, self.reg_lambda, self.reg_mu),
            jac=True,
            method="L-BFGS-B",
            options={"maxiter": 2000, "ftol": self.tol, "gtol": 1e-8},
        )
        if not result.success:
            self.fit_fallback(f"Dirichlet: L-BFGS-B did not converge ({result.message})")
        self.weights_ = result.x[: k * k].reshape(k, k)
        self.bias_ = result.x[k * k :]

    def calibrate(self, sample: Sample, context: SampleContext | None = None) -> np.ndarray:
        return softmax(log_posteriors(sample.posteriors) @ self.weights_.T + self.bias_, axis=1)
