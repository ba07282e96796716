"""LasCal (Popordanoska et al. 2024, docs/methods.md §2.5) for any number of classes: the search
(grid, RLLS weights, class-wise label-shift ECE: docs/multiclass.md §4, LasCal), its RLLS solvers
(docs/reproduction.md, "The RLLS solver") and the arithmetic of the authors' reference
implementation (docs/reproduction.md, "Arithmetic").
"""

from __future__ import annotations

import math

import numpy as np

from unishift.data.containers import LabelledSet, Sample, Setting
from unishift.methods.calibration.shared import (
    LOGIT_CONVENTIONS,
    as_logits,
    first_strict_minimum,
    scaled_softmax,
    softmax,
    temperature_grid,
)
from unishift.methods.calibration.temperature import TemperatureCalibrator
from unishift.numerics import float32_running_sum
from unishift.option_checks import check_choice

ESTIMATORS = ("vectorised", "loop")
SOLVERS = ("auto", "closed_form", "cvxpy")
ARITHMETICS = ("reference", "float64")
RLLS_ALPHA = 0.01
RLLS_DELTA = 0.05


# RLLS: theta = argmin ||C theta - b|| + lam ||theta||  s.t. theta >= -1;  w = 1 + theta


def rlls_lambda(n_source: int, n_classes: int = 2, alpha: float = RLLS_ALPHA) -> float:
    """alpha * rho with abstention's rho = 3 (2 ln(2K/delta) / (3 n) + sqrt(2 ln(2K/delta) / n))."""
    log_term = np.log(2 * n_classes / RLLS_DELTA)
    rho = 3 * (2 * log_term / (3 * n_source) + np.sqrt(2 * log_term / n_source))
    return alpha * rho


def rlls_system(source_pred, source_labels, target_pred, n_classes: int = 2):
    """(C, b) of RLLS with hard predictions: C[i, j] = share of source items predicted i with label j,
    b = share of target items predicted per class - the same share on the source."""
    source_pred = np.asarray(source_pred, dtype=int)
    target_pred = np.asarray(target_pred, dtype=int)
    C = np.zeros((n_classes, n_classes))
    np.add.at(C, (source_pred, np.asarray(source_labels, dtype=int)), 1.0)
    C /= len(source_pred)
    mu_t = np.bincount(target_pred, minlength=n_classes) / len(target_pred)
    mu_s = np.bincount(source_pred, minlength=n_classes) / len(source_pred)
    return C, mu_t - mu_s


def rlls_objective(theta, C, b, lam) -> float:
    return float(np.linalg.norm(C @ theta - b) + lam * np.linalg.norm(theta))


def rlls_cvxpy(C, b, lam) -> np.ndarray:
    """The problem as abstention's RLLSImbalanceAdapter states it to cvxpy (default solver)."""
    import cvxpy as cp

    theta = cp.Variable(C.shape[0])
    problem = cp.Problem(
        cp.Minimize(cp.pnorm(C @ theta - b) + lam * cp.pnorm(theta)), [-1 <= theta]
    )
    problem.solve()
    if theta.value is None:
        raise RuntimeError(f"cvxpy could not solve RLLS ({problem.status})")
    return np.asarray(theta.value, dtype=float)


def _face_minimiser(c_free, d, lam) -> float:
    """argmin over t >= -1 of ||c_free t - d|| + lam sqrt(1 + t^2), a convex 1-d problem, by
    bisection on the sign of a subgradient down to adjacent floats."""

    def slope(t):
        r0, r1 = c_free[0] * t - d[0], c_free[1] * t - d[1]
        norm_r = math.hypot(r0, r1)
        data = (c_free[0] * r0 + c_free[1] * r1) / norm_r if norm_r > 0 else 0.0
        return data + lam * t / math.sqrt(1.0 + t * t)

    lo = -1.0
    if slope(lo) >= 0:
        return lo
    hi = 1.0
    while slope(hi) < 0:
        hi *= 2.0
        if hi > 1e12:
            return hi
    for _ in range(2000):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if slope(mid) < 0:
            lo = mid
        else:
            hi = mid
    return lo if abs(slope(lo)) <= abs(slope(hi)) else hi


def _smooth_stationary_points(C, b, lam) -> list[np.ndarray]:
    """Points where both norms are differentiable and C^T u + lam v = 0 (u, v the unit residual and
    unit theta). ||C^T u|| = lam fixes the angle of u in closed form; then r = s u, theta = t v solve
    a 2x2 linear system."""
    M = C @ C.T
    mean, half_diff, cross = (M[0, 0] + M[1, 1]) / 2, (M[0, 0] - M[1, 1]) / 2, M[0, 1]
    amplitude = math.hypot(half_diff, cross)
    if amplitude == 0 or lam == 0:
        return []
    ratio = (lam * lam - mean) / amplitude
    if abs(ratio) > 1:
        return []
    phase, spread = math.atan2(cross, half_diff), math.acos(ratio)
    points = []
    for two_phi in (phase + spread, phase - spread):
        for phi in (two_phi / 2, two_phi / 2 + math.pi):
            u = np.array([math.cos(phi), math.sin(phi)])
            v = -(C.T @ u) / lam
            system = np.column_stack([u, -(C @ v)])
            if abs(np.linalg.det(system)) < 1e-300:
                continue
            _, t = np.linalg.solve(system, -b)
            points.append(t * v)
    return points


def _newton_polish(theta, C, b, lam) -> np.ndarray:
    """A few guarded Newton steps on the smooth objective (the angle formula loses digits when
    acos is near +-1)."""
    best, best_f = theta, rlls_objective(theta, C, b, lam)
    for _ in range(6):
        r = C @ best - b
        nr, nt = np.linalg.norm(r), np.linalg.norm(best)
        if nr == 0 or nt == 0 or np.any(best <= -1):
            break
        u, v = r / nr, best / nt
        grad = C.T @ u + lam * v
        hess = C.T @ (np.eye(2) - np.outer(u, u)) @ C / nr + lam * (np.eye(2) - np.outer(v, v)) / nt
        try:
            step = np.linalg.solve(hess, grad)
        except np.linalg.LinAlgError:
            break
        candidate = best - step
        f = rlls_objective(candidate, C, b, lam)
        if not f < best_f or np.any(candidate < -1):
            break
        best, best_f = candidate, f
    return best


def rlls_closed_form(C, b, lam) -> np.ndarray:
    """Exact minimiser of the two-class RLLS problem: the best feasible candidate among the faces
    theta_i = -1 (1-d convex problems) and their corner, and the interior points where 0 is a
    subgradient (theta = 0, the minimum-norm zero residual, the smooth stationary points)."""
    C, b = np.asarray(C, dtype=float), np.asarray(b, dtype=float)
    # on the face theta_i = -1, -C[:, i] moves to the right-hand side
    face_0 = np.array([-1.0, _face_minimiser(C[:, 1], b + C[:, 0], lam)])
    face_1 = np.array([_face_minimiser(C[:, 0], b + C[:, 1], lam), -1.0])
    candidates = [np.zeros(2), np.array([-1.0, -1.0]), np.linalg.pinv(C) @ b, face_0, face_1]
    candidates += [_newton_polish(p, C, b, lam) for p in _smooth_stationary_points(C, b, lam)]
    feasible = [c for c in candidates if np.all(np.isfinite(c)) and np.all(c >= -1)]
    return min(feasible, key=lambda c: rlls_objective(c, C, b, lam))


def rlls_weights(
    source_pred, source_labels, target_pred, n_classes: int = 2, solver: str = "auto"
) -> np.ndarray:
    if solver == "closed_form" and n_classes != 2:
        raise ValueError(f"solver='closed_form' solves two-class RLLS only; k = {n_classes}")
    C, b = rlls_system(source_pred, source_labels, target_pred, n_classes)
    lam = rlls_lambda(len(source_pred), n_classes)
    closed_form = solver == "closed_form" or (solver == "auto" and n_classes == 2)
    theta = rlls_closed_form(C, b, lam) if closed_form else rlls_cvxpy(C, b, lam)
    return 1.0 + theta


# Label-shift ECE estimator (LasCal's criterion, one class)


def ece_label_shift_loop(
    conf_source, conf_target, source_is_class, weight, n_bins=15, p=2, arithmetic="float64"
):
    """One class's label-shift ECE estimate as the reference implementation's loop (its float32
    rate; with ``arithmetic="reference"`` a float32 sum: docs/reproduction.md, "Arithmetic")."""
    conf_source, conf_target = np.asarray(conf_source), np.asarray(conf_target)
    n_s, n_t = len(conf_source), len(conf_target)
    edges = np.interp(np.linspace(0, n_t, n_bins + 1), np.arange(n_t), np.sort(conf_target))
    cast = np.float32 if arithmetic == "reference" else float
    total = cast(0.0)
    for lower, upper in zip(edges[:-1], edges[1:]):
        in_source = (conf_source > lower) & (conf_source <= upper)
        in_target = (conf_target > lower) & (conf_target <= upper)
        if in_target.sum() > 1:
            normalizer = (n_t - 1) / n_s
            weighted = np.float32(weight) * np.float32(source_is_class[in_source].sum())
            expected = np.float32(normalizer) * weighted / np.float32(in_target.sum() - 1)
            for point in conf_target[in_target]:
                total = cast(total + cast(abs(float(point) - float(expected)) ** p))
    return cast(total / cast(n_t))


def _bin_index(values: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Bin of each value under lower < v <= upper, -1 for none (rows: temperatures), for
    non-decreasing edges: searchsorted(side="left") counts the edges strictly below a value."""
    below = np.empty(values.shape, dtype=np.intp)
    for r in range(values.shape[0]):
        below[r] = np.searchsorted(edges[r], values[r], side="left")
    n_bins = edges.shape[1] - 1
    return np.where((below >= 1) & (below <= n_bins), below - 1, -1)


def ece_label_shift_vectorised(
    conf_source, conf_target, source_is_class, weights, n_bins=15, p=2, arithmetic="float64"
):
    """The estimator for every temperature at once: rows of ``conf_*`` are temperatures and
    ``weights`` holds the class weight of each temperature (``arithmetic`` as in the loop)."""
    conf_source, conf_target = np.asarray(conf_source), np.asarray(conf_target)
    n_temps, n_s = conf_source.shape
    n_t = conf_target.shape[1]
    positions, nodes = np.linspace(0, n_t, n_bins + 1), np.arange(n_t)
    edges = np.array([np.interp(positions, nodes, row) for row in np.sort(conf_target, axis=1)])
    bin_t = _bin_index(conf_target, edges)
    bin_s = _bin_index(conf_source, edges)
    offsets = (np.arange(n_temps) * n_bins)[:, None]
    size = n_temps * n_bins
    count_t = np.bincount((bin_t + offsets)[bin_t >= 0], minlength=size).reshape(n_temps, n_bins)
    positives = (bin_s >= 0) & np.asarray(source_is_class, dtype=bool)[None, :]
    count_s = np.bincount((bin_s + offsets)[positives], minlength=size).reshape(n_temps, n_bins)
    normalizer = np.float32((n_t - 1) / n_s)
    with np.errstate(divide="ignore", invalid="ignore"):
        weighted = np.asarray(weights, dtype=np.float32)[:, None] * count_s.astype(np.float32)
        expected = (normalizer * weighted / (count_t - 1).astype(np.float32)).astype(float)
    safe_bin = np.where(bin_t >= 0, bin_t, 0)
    counted = (bin_t >= 0) & np.take_along_axis(count_t > 1, safe_bin, axis=1)
    gap = np.where(counted, conf_target - np.take_along_axis(expected, safe_bin, axis=1), 0.0)
    terms = np.abs(gap) ** p
    if arithmetic == "float64":
        out = np.sum(terms, axis=1) / n_t
    else:
        # The reference implementation adds the terms bin after bin, each bin's points in sample
        # order; the zero terms of points outside the counted bins leave a float32 sum unchanged
        # wherever they fall.
        order = np.argsort(np.where(counted, bin_t, n_bins), axis=1, kind="stable")
        total = float32_running_sum(np.take_along_axis(terms, order, axis=1), axis=1)
        out = total / np.float32(n_t)
    # Rounding can make interpolated edges step back by an ulp; those rows take the
    # reference implementation's loop.
    for r in np.flatnonzero(~np.all(np.diff(edges, axis=1) >= 0, axis=1)):
        out[r] = ece_label_shift_loop(
            conf_source[r], conf_target[r], source_is_class, weights[r], n_bins, p, arithmetic
        )
    return out


# The search


def _scaled_softmaxes(z: np.ndarray, temps: np.ndarray) -> np.ndarray:
    return softmax(np.asarray(z, dtype=float)[None, :, :] / temps.astype(float)[:, None, None])


def _torch_scaled_softmaxes(z: np.ndarray, temps: np.ndarray) -> np.ndarray:
    """softmax(z / T) for every T as PyTorch computes it in float64 (the reference
    implementation's arithmetic)."""
    import torch

    scaled = (
        torch.from_numpy(np.asarray(z, dtype=float))[None, :, :]
        / torch.from_numpy(temps.astype(float))[:, None, None]
    )
    return torch.softmax(scaled, dim=-1).numpy()


def scaled_softmaxes(z: np.ndarray, temps: np.ndarray, arithmetic: str) -> np.ndarray:
    """softmax(z / T) for every grid temperature T (rows), in the search's ``arithmetic``."""
    scaled = _torch_scaled_softmaxes if arithmetic == "reference" else _scaled_softmaxes
    return scaled(z, temps)


def torch_log(posteriors: np.ndarray) -> np.ndarray:
    """``torch.log`` of float64 posteriors (``prob2logits`` of the reference implementation;
    differs from ``np.log`` in the last bit of some values)."""
    import torch

    return torch.log(torch.from_numpy(np.asarray(posteriors, dtype=float))).numpy()


def _mean_of_classes(per_class: list, arithmetic: str):
    """The classes' mean loss; with the reference implementation's arithmetic torch's float32
    mean ((a + b) / 2 for two classes)."""
    dtype = np.float32 if arithmetic == "reference" else np.float64
    return sum(np.asarray(loss, dtype=dtype) for loss in per_class) / dtype(len(per_class))


def lascal_losses(
    z_source,
    y_source,
    z_target,
    estimator: str = "vectorised",
    solver: str = "auto",
    temps: np.ndarray | None = None,
    arithmetic: str = "reference",
    source_softmaxes: np.ndarray | None = None,
) -> np.ndarray:
    """LasCal's loss (mean over the k classes of the label-shift ECE) at every grid temperature,
    float32 with ``arithmetic="reference"``. ``estimator="loop"`` is the reference implementation's
    procedure written out plainly (the tests' oracle); ``"vectorised"`` does all temperatures at
    once. ``source_softmaxes``: :func:`scaled_softmaxes` of ``z_source`` at ``temps``, when the
    caller keeps them across samples (they depend on the source alone)."""
    check_choice("estimator", estimator, ESTIMATORS)
    check_choice("solver", solver, SOLVERS)
    check_choice("arithmetic", arithmetic, ARITHMETICS)
    temps = temperature_grid() if temps is None else temps
    y_source = np.asarray(y_source, dtype=int)
    k = np.asarray(z_source).shape[1]
    src = (
        scaled_softmaxes(z_source, temps, arithmetic)
        if source_softmaxes is None
        else source_softmaxes
    )
    tgt = scaled_softmaxes(z_target, temps, arithmetic)
    # hard predictions as abstention computes them (first maximum, a NaN counts as the maximum)
    pred_src, pred_tgt = np.argmax(src, axis=-1), np.argmax(tgt, axis=-1)
    # The weights depend on the temperature only through the hard predictions: the vectorised
    # search solves once per distinct prediction pattern, the loop (as the reference
    # implementation) at every temperature.
    weights = np.empty((len(temps), k))
    solved: dict = {}
    for r in range(len(temps)):
        key = r if estimator == "loop" else pred_src[r].tobytes() + b"|" + pred_tgt[r].tobytes()
        if key not in solved:
            solved[key] = rlls_weights(pred_src[r], y_source, pred_tgt[r], k, solver)
        weights[r] = solved[key]
    if estimator == "loop":
        per_class = [
            [
                ece_label_shift_loop(
                    src[r, :, c], tgt[r, :, c], y_source == c, w, arithmetic=arithmetic
                )
                for r, w in enumerate(weights[:, c])
            ]
            for c in range(k)
        ]
        return _mean_of_classes(per_class, arithmetic)
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


def lascal_temperature(
    z_source,
    y_source,
    z_target,
    estimator: str = "vectorised",
    solver: str = "auto",
    arithmetic: str = "reference",
    source_softmaxes: np.ndarray | None = None,
) -> tuple[float, np.ndarray]:
    """(temperature, losses); the temperature is -1.0 (the reference implementation's sentinel)
    when no loss is finite (``source_softmaxes``: :func:`lascal_losses`')."""
    temps = temperature_grid()
    losses = lascal_losses(
        z_source, y_source, z_target, estimator, solver, temps, arithmetic, source_softmaxes
    )
    best = first_strict_minimum(losses)
    return (-1.0 if best is None else float(temps[best])), losses


def lascal_key(
    convention: str, setting: Setting, solver: str = "auto", arithmetic: str = "reference"
) -> tuple:
    return ("lascal_T", convention, setting.key, solver, arithmetic)


class LasCal(TemperatureCalibrator):
    """LasCal: the grid temperature minimising the label-shift ECE estimate with RLLS weights,
    searched once per sample and shared through the context; the reference implementation's
    uncalibrated output on any exception is kept and recorded. Logits for k classes:
    docs/multiclass.md §4, LasCal."""

    name = "LasCal"
    description = "LasCal (Popordanoska et al. 2024) [reference code: LasCal-P / LasCal]"
    adaptations = ("c2q", "c2a", "emq")
    assumption = "label"
    calibration_notion = "class-wise"

    def __init__(self, logits: str = "S", solver: str = "auto", arithmetic: str = "reference"):
        self.logits = logits
        self.solver = solver
        self.arithmetic = arithmetic

    def check_params(self):
        check_choice("logits", self.logits, LOGIT_CONVENTIONS)
        check_choice("solver", self.solver, SOLVERS)
        check_choice("arithmetic", self.arithmetic, ARITHMETICS)

    def _logits(self, data: LabelledSet | Sample) -> np.ndarray:
        # the reference implementation's S-logits: torch.log
        if self.logits == "S" and self.arithmetic == "reference":
            with np.errstate(divide="ignore"):
                return torch_log(data.posteriors)
        return as_logits(self.logits, data)

    def _fit(self, setting: Setting) -> None:
        if self.solver == "closed_form" and setting.n_classes != 2:
            raise ValueError(
                f"LasCal: solver='closed_form' solves two-class RLLS only; this problem has "
                f"{setting.n_classes} classes (use 'auto' or 'cvxpy')"
            )
        super()._fit(setting)
        self.source_softmaxes_ = None  # computed at the first sample's search

    def calibrate(self, sample, context=None):
        context = self.context_for(context)
        # Logits are taken outside the reference implementation's catch-all, so that a configuration
        # error is raised.
        target = self._logits(sample)

        def search() -> tuple[float | None, str | None]:
            """(temperature, None), or (None, why) when the search failed."""
            try:
                y = self.setting_.validation.labels
                if self.source_softmaxes_ is None:  # the same for every sample of the setting
                    self.source_softmaxes_ = scaled_softmaxes(
                        self.source_logits_, temperature_grid(), self.arithmetic
                    )
                temperature, _ = lascal_temperature(
                    self.source_logits_,
                    y,
                    target,
                    solver=self.solver,
                    arithmetic=self.arithmetic,
                    source_softmaxes=self.source_softmaxes_,
                )
                return temperature, None
            # as the reference implementation's `except Exception` around the whole LasCal call
            except Exception as err:
                return None, f"LasCal failed ({type(err).__name__}: {err})"

        key = lascal_key(self.logits, self.setting_, self.solver, self.arithmetic)
        temperature, failure = context.cached(key, search)
        if temperature is None:
            context.note("fallback", f"{failure}; uncalibrated posteriors returned")
            # The reference implementation's output after a failure: the input if its rows sum to 1,
            # else its softmax
            if np.isclose(target.sum(axis=1), 1).all():
                return np.array(target, dtype=float)
            return softmax(target)
        if temperature == -1.0:
            # the note's words (the reference implementation's sentinel) are in result files
            context.note(
                "fallback", "LasCal: no finite loss on the grid; REF's sentinel T = -1 kept"
            )
        # PyTorch's softmax, as the reference implementation's output; T = -1 flips z
        if self.arithmetic == "reference":
            return _torch_scaled_softmaxes(target, np.array([temperature]))[0]
        return scaled_softmax(target, temperature)
