"""The mutations of the mutation check (``python -m tests.mutation.run``): small, realistic bugs, one per
entry, each an exact snippet of one file and its replacement.

Keep each snippet unique in its file and as short as that allows; when the code changes, the runner
reports a mutation whose snippet no longer applies as stale, and the entry must be updated (not
dropped). ``tests`` overrides the test files of the area.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

SRC = "src/unishift/"


@dataclass(frozen=True)
class Mutation:
    id: str
    area: str
    file: str
    old: str
    new: str
    description: str
    tests: tuple[str, ...] = ()
    slow: bool = False  # needs a workflow run
    held_out: bool = False  # written after the tests, no test written against it


AREA_TESTS = {
    "metrics": (
        "tests/evaluation/test_metrics.py",
        "tests/evaluation/test_ece_precision.py",
        "tests/evaluation/test_evaluate.py",
    ),
    "binning": (
        "tests/methods/test_binning.py",
        "tests/methods/adapt/test_adapt_reductions.py",
        "tests/methods/calibration/test_calibration_adapted.py",
    ),
    "adapt": (
        "tests/methods/adapt/test_adapt_reductions.py",
        "tests/methods/adapt/test_reduction_lemmas.py",
        "tests/methods/adapt/test_adapt_registry.py",
    ),
    "calibrators": (
        "tests/methods/calibration/test_reference_calibrators_sharing_fallbacks.py",
        "tests/methods/calibration/test_calibration_adapted.py",
        "tests/methods/calibration/test_calibration_lascal.py",
        "tests/calibration_settings.py",
        "tests/methods/calibration/test_reference_calibrators_values.py",
        "tests/methods/test_method_values.py",
    ),
    "quantifiers": (
        "tests/methods/quantification/test_quantifiers_by_hand.py",
        "tests/methods/test_method_values.py",
    ),
    "cap": ("tests/methods/cap/test_cap_methods.py", "tests/methods/test_method_values.py"),
    "stats": (
        "tests/evaluation/test_stats_ranks_cd.py",
        "tests/evaluation/test_stats_significance.py",
        "tests/evaluation/test_stats_oracles.py",
    ),
    "tables": (
        "tests/report/test_report_tables.py",
        "tests/report/test_report_pipeline.py",
        "tests/report/test_report_figures.py",
        "tests/report/test_report_table_values.py",
    ),
    "protocols": (
        "tests/protocols/test_upp_sampling.py",
        "tests/protocols/test_mixture_protocol.py",
    ),
    "data": ("tests/data/test_data_uci.py", "tests/test_io_damaged_files.py"),
    "evaluation": ("tests/evaluation/test_evaluate.py",),
}


def m(id, area, file, old, new, description, tests=(), slow=False) -> Mutation:
    return Mutation(id, area, file, old, new, description, tuple(tests), slow)


ERRORS = SRC + "evaluation/metrics.py"
BINNING = SRC + "methods/binning.py"
TO_CAL = SRC + "methods/adapt/to_calibration.py"
TO_CAP = SRC + "methods/adapt/to_cap.py"
TO_Q = SRC + "methods/adapt/to_quantification.py"
COMMON = SRC + "methods/adapt/common.py"
SHARED = SRC + "methods/calibration/shared.py"
HEAD2TAIL = SRC + "methods/calibration/head2tail.py"
CPCS = SRC + "methods/calibration/cpcs.py"
TRANSCAL = SRC + "methods/calibration/transcal.py"
EMQ = SRC + "methods/calibration/emq.py"
PACCAL = SRC + "methods/calibration/paccal_sigma.py"
DMCAL = SRC + "methods/calibration/dmcal.py"
LASCAL = SRC + "methods/calibration/lascal.py"
PLATT = SRC + "methods/calibration/platt.py"
BASE = SRC + "methods/base.py"
AGGREGATIVE = SRC + "methods/quantification/aggregative.py"
EMQ_QUANTIFIERS = SRC + "methods/quantification/emq.py"
DOMAIN_WEIGHTS = SRC + "methods/domain_weights.py"
CONTAINERS = SRC + "data/containers.py"
TABLE = SRC + "methods/adapt/table.py"
LEAP = SRC + "methods/cap/leap.py"
ATC = SRC + "methods/cap/atc.py"
DOC = SRC + "methods/cap/doc.py"
SIGNIFICANCE = SRC + "evaluation/stats.py"
RANKS = SRC + "evaluation/stats.py"
CD = SRC + "evaluation/stats.py"
TABLES = SRC + "report/tables.py"
SAMPLING = SRC + "protocols/sampling.py"
MIXTURE = SRC + "protocols/mixture.py"
LABEL_SHIFT = SRC + "data/label_shift.py"
UCI = SRC + "data/uci.py"
EVALUATION = SRC + "evaluation/evaluate.py"

MUTATIONS = [
    # ---------------------------------------------------------------- metrics
    m(
        "M1",
        "metrics",
        ERRORS,
        "in_bin = (scores > lower) & (scores <= upper)",
        "in_bin = (scores >= lower) & (scores < upper)",
        "ECE bins [l, u) instead of (l, u] (float32 arithmetic, the default)",
    ),
    m(
        "M1b",
        "metrics",
        ERRORS,
        "gaps = [_binned_gap_float64(scores, targets, edges, True) for",
        "gaps = [_binned_gap_float64(scores, targets, edges, False) for",
        "ECE bins [l, u) instead of (l, u] (float64 option)",
    ),
    m(
        "M2",
        "metrics",
        ERRORS,
        "posteriors[:, 1], labels.astype(float), edges, right_closed=False",
        "posteriors[:, 1], labels.astype(float), edges, right_closed=True",
        "positive-class ECE bins (l, u] instead of [l, u)",
    ),
    m(
        "M3",
        "metrics",
        ERRORS,
        "index = np.clip(index, 0, len(edges) - 2)",
        "index = np.clip(index, 0, None)",
        "a score of exactly 1.0 gets a bin of its own (no upper clip)",
    ),
    m(
        "M4",
        "metrics",
        ERRORS,
        "return np.argmax(np.asarray(posteriors), axis=1)",
        "return np.shape(posteriors)[1] - 1 - np.argmax(np.asarray(posteriors)[:, ::-1], axis=1)",
        "ECE and accuracy: a tie predicted as the highest class (a 0.5 tie as class 1)",
    ),
    m(
        "M5",
        "metrics",
        ERRORS,
        "return float(np.sum(counts[filled] / n * gaps**2))",
        "return float(np.sum(counts[filled] / n * np.abs(gaps)))",
        "ECE with absolute instead of squared gaps",
    ),
    m(
        "M6",
        "metrics",
        ERRORS,
        "return float(round_float32(np.mean(np.asarray(gaps, np.float32)), 4)) * 100",
        "return float(round_float32(np.mean(np.asarray(gaps, np.float32)) * 100, 4))",
        "ECE rounded after scaling by 100 (float32 arithmetic, the default)",
    ),
    m(
        "M6b",
        "metrics",
        ERRORS,
        "return round(float(np.mean(gaps)), 4) * 100",
        "return round(float(np.mean(gaps)) * 100, 4)",
        "ECE rounded after scaling by 100 (float64 option)",
    ),
    m(
        "M7",
        "metrics",
        ERRORS,
        "return float(np.mean((labels.astype(float) - posteriors[:, 1]) ** 2))",
        "return float(np.mean((labels.astype(float) - posteriors[:, 0]) ** 2))",
        "Brier score on the negative-class column",
    ),
    m(
        "M8",
        "metrics",
        ERRORS,
        "N_BINS = 15",
        "N_BINS = 10",
        "ECE with 10 bins instead of 15",
    ),
    # ---------------------------------------------------------------- binning (B1-B3)
    m(
        "B1",
        "binning",
        BINNING,
        "return [(scores >= lo) & (scores < hi) for lo, hi",
        "return [(scores >= lo) & (scores <= hi) for lo, hi",
        "binning: bins closed on both sides",
    ),
    m(
        "B2",
        "binning",
        BINNING,
        "return [(scores >= lo) & (scores < hi) for lo, hi",
        "return [(scores > lo) & (scores <= hi) for lo, hi",
        "binning: bins (l, u] instead of [l, u)",
    ),
    m(
        "B3",
        "binning",
        BINNING,
        "    edges[-1] += 1e-5\n",
        "",
        "isometric bins: a score of exactly 1.0 falls in no bin",
    ),
    m(
        "B4",
        "binning",
        BINNING,
        "y[interior] = np.maximum.accumulate(y[:-1])[1:]",
        "y[1:-1] = np.maximum(y[1:-1], y[:-2])",
        "B1: pairwise maximum instead of the running maximum",
    ),
    m(
        "B5",
        "binning",
        BINNING,
        "y[interior] = (y[:-2] + y[1:-1] + y[2:]) / 3.0",
        "y[interior] = (y[:-2] + y[1:-1] + y[1:-1]) / 3.0",
        "B1: smoothing window uses the point twice instead of its right neighbour",
    ),
    m(
        "B6",
        "binning",
        BINNING,
        "y[missing] = np.interp(x[missing], x[~missing], y[~missing])",
        "y[missing] = np.interp(np.flatnonzero(missing), np.flatnonzero(~missing), y[~missing])",
        "B1: empty bins imputed by position instead of abscissa",
    ),
    m(
        "B7",
        "binning",
        BINNING,
        "return np.column_stack([1.0 - calibrated, calibrated])",
        "return np.column_stack([calibrated, 1.0 - calibrated])",
        "apply_map returns the columns swapped",
    ),
    # ---------------------------------------------------------------- the six adaptations
    m(
        "A1",
        "adapt",
        BINNING,
        "abscissae[b] = scores[mask].mean()",
        "abscissae[b] = np.median(scores[mask])",
        "rho2zeta: abscissa at the bin median instead of the bin mean",
    ),
    m(
        "A2",
        "adapt",
        TO_CAL,
        "return accuracy if upper_side else 1.0 - accuracy",
        "return 1.0 - accuracy if upper_side else accuracy",
        "alpha2zeta: bin side flipped",
    ),
    m(
        "A3",
        "adapt",
        BINNING,
        "ordinates = np.full(len(abscissae), np.nan)",
        "ordinates = np.full(len(abscissae), 0.0)",
        "binned rho2zeta / alpha2zeta maps: an empty bin gets ordinate 0 instead of being imputed",
    ),
    m(
        "A4",
        "adapt",
        TO_CAP,
        "correct += float(np.sum(calibrated[:, cls]))",
        "correct += float(np.sum(calibrated[:, 1]))",
        "zeta2alpha: positive column summed on the predicted negatives too",
    ),
    m(
        "A5",
        "adapt",
        COMMON,
        "return float(prevalence[1]) if cls == 1 else 1.0 - float(prevalence[1])",
        "return float(prevalence[1])",
        "rho2alpha: the negatives' positive rate not complemented",
    ),
    m(
        "A6",
        "adapt",
        TO_Q,
        "share[cls] = accuracy",
        "share[-1 - cls] = accuracy",
        "alpha2rho: partitions swapped",
    ),
    m(
        "A7",
        "adapt",
        TO_Q,
        "return counts / len(sample)",
        "return counts / len(part)",
        "alpha2rho: normalised by the last part's size (stale loop variable)",
    ),
    m(
        "A8",
        "adapt",
        TO_Q,
        "self.prior_ = setting.prevalence_of(self.train_prevalence)",
        "self.prior_ = setting.validation.prevalence",
        "EMQ on calibrated posteriors ignores its prior source",
    ),
    m(
        "A9",
        "adapt",
        COMMON,
        "self.inner_[cls] = self._fit_part(setting, masks[cls], part_tag(cls))",
        "self.inner_[cls] = self._fit_part(setting, masks[(cls + 1) % k], part_tag(cls))",
        "partitioned fit: each model fitted on the other prediction partition",
    ),
    # ---------------------------------------------------------------- calibrators
    m(
        "C1",
        "calibrators",
        DOMAIN_WEIGHTS,
        "return proba[:, :1] / proba[:, 1:]",
        "return proba[:, 1:] / proba[:, :1]",
        "domain-classifier weights inverted",
    ),
    m(
        "C2",
        "calibrators",
        TRANSCAL,
        "eta_1 = -cov_1 / np.var(omega, ddof=1)",
        "eta_1 = cov_1 / np.var(omega, ddof=1)",
        "TransCal: variance term eta_1 with its sign flipped",
    ),
    m(
        "C3",
        "calibrators",
        TRANSCAL,
        "- eta_2 * source_confidence",
        "+ eta_2 * source_confidence",
        "TransCal: second control variate with its sign flipped",
    ),
    m(
        "C4",
        "calibrators",
        TRANSCAL,
        "omega = weights ** x[1]",
        "omega = weights",
        "TransCal: lambda not applied to the weights",
    ),
    m(
        "C5",
        "calibrators",
        CPCS,
        "return np.mean(brier * weights)",
        "return np.mean(brier)",
        "CPCS: Brier loss not importance-weighted",
    ),
    m(
        "C6",
        "calibrators",
        PLATT,
        "as_posteriors(self.calibrated_.predict_proba(sample.posteriors)[:, 1])",
        "as_posteriors(self.calibrated_.predict_proba(sample.posteriors)[:, 0])",
        "Platt returns the negative class's calibrated probability as the positive's",
    ),
    m(
        "C7",
        "calibrators",
        PACCAL,
        "float(self.matrix_[1, 1]), float(self.matrix_[1, 0])",
        "float(self.matrix_[1, 1]), float(self.matrix_[0, 1])",
        "PacCal: fpr read from the wrong cell of the confusion matrix",
    ),
    m(
        "C8",
        "calibrators",
        PACCAL,
        "if np.any(adjusted > 1) or np.any(adjusted < 0):",
        "if np.any(adjusted > 1) and np.any(adjusted < 0):",
        "PacCal: sigma only when values leave [0, 1] on both sides",
    ),
    m(
        "C9",
        "calibrators",
        DMCAL,
        "hist_neg, hist_pos = (h.flatten()[::-1] for h",
        "hist_neg, hist_pos = (h.flatten() for h",
        "DMCal: histograms indexed by the negative posterior",
    ),
    m(
        "C10",
        "calibrators",
        DMCAL,
        "positive = hist_pos * prevalence[1] + DMCAL_EPSILON",
        "positive = hist_pos * prevalence[0] + DMCAL_EPSILON",
        "DMCal: positive histogram mixed with the negative prevalence",
    ),
    m(
        "C11",
        "calibrators",
        EMQ_QUANTIFIERS,  # the EM prior the EMQ calibrator shares with the quantifier
        "self.prior_ = setting.prevalence_of(self.train_prevalence)",
        "self.prior_ = setting.prevalence_of("
        '{"training": "validation", "validation": "training"}[self.train_prevalence])',
        "EMQ calibrators: training and validation prior swapped",
    ),
    m(
        "C12",
        "calibrators",
        LASCAL,
        "pred_src, pred_tgt = np.argmax(src, axis=-1), np.argmax(tgt, axis=-1)",
        "pred_src, pred_tgt = (\n"
        "        p.shape[-1] - 1 - np.argmax(p[..., ::-1], axis=-1) for p in (src, tgt)\n"
        "    )",
        "LasCal: a 0.5 tie predicted as class 1",
    ),
    m(
        "C13",
        "calibrators",
        ERRORS,  # data.containers takes its argmax_predictions from metrics
        "    return np.argmax(np.asarray(posteriors), axis=1)",
        "    return np.shape(posteriors)[1] - 1 - np.argmax(np.asarray(posteriors)[:, ::-1], axis=1)",
        "crisp predictions: a 0.5 tie predicted as class 1",
        tests=(
            "tests/methods/calibration/test_reference_calibrators_sharing_fallbacks.py",
            "tests/calibration_settings.py",
            "tests/methods/cap/test_cap_methods.py",
            "tests/methods/adapt/test_adapt_reductions.py",
        ),
    ),
    m(
        "C14",
        "calibrators",
        SHARED,
        "return int(np.argmin(np.where(valid, losses, np.inf)))",
        "return len(losses) - 1 - int(np.argmin(np.where(valid, losses, np.inf)[::-1]))",
        "temperature grid search keeps the last instead of the first minimum",
    ),
    m(
        "C15",
        "calibrators",
        LASCAL,
        "return C, mu_t - mu_s",
        "return C, mu_s - mu_t",
        "RLLS right-hand side with its sign flipped",
    ),
    m(
        "C16",
        "calibrators",
        HEAD2TAIL,
        "for c in np.setdiff1d(np.arange(n_classes), head):",
        "for c in np.intersect1d(np.arange(n_classes), head):",
        "Head2Tail: the head class reweighted instead of the tail",
    ),
    m(
        "C17",
        "calibrators",
        LASCAL,
        'below[r] = np.searchsorted(edges[r], values[r], side="left")',
        'below[r] = np.searchsorted(edges[r], values[r], side="right")',
        "LasCal's ECE estimator: bins [l, u) instead of (l, u]",
    ),
    # ---------------------------------------------------------------- quantifiers
    m(
        "Q1",
        "quantifiers",
        EMQ_QUANTIFIERS,
        "self.prior_ = setting.prevalence_of(self.train_prevalence)",
        "self.prior_ = setting.prevalence_of("
        '{"training": "validation", "validation": "training"}[self.train_prevalence])',
        "EMQ: training and validation prior swapped",
    ),
    m(
        "Q2",
        "quantifiers",
        AGGREGATIVE,
        "def __init__(self, bandwidth: float = 0.1,",
        "def __init__(self, bandwidth: float = 0.05,",
        "KDEy bandwidth 0.05 instead of 0.1",
    ),
    m(
        "Q3",
        "quantifiers",
        AGGREGATIVE,
        "labels = np.concatenate([labels, missing])",
        "labels = np.concatenate([labels, [1 - c for c in missing]])",
        "KDEy: the uniform kernel given to the present class",
    ),
    m(
        "Q4",
        "quantifiers",
        EMQ_QUANTIFIERS,
        "self.fallback_prior_ = setting.prevalence_of(self.fallback_prevalence)",
        'self.fallback_prior_ = setting.prevalence_of("training")',
        "EMQ-BCTS fallback ignores its configured prior source",
    ),
    m(
        "Q5",
        "quantifiers",
        EMQ_QUANTIFIERS,
        "def em(prior: np.ndarray, posteriors: np.ndarray, epsilon: float = 1e-4):",
        "def em(prior: np.ndarray, posteriors: np.ndarray, epsilon: float = 1e-6):",
        "EM stopping tolerance 1e-6 instead of 1e-4",
    ),
    # ---------------------------------------------------------------- CAP methods
    m(
        "P1",
        "cap",
        LEAP,
        "table / np.where(totals > 0, totals, 1.0), 0.0)",
        "table / np.where(totals > 0, table.sum(axis=0), 1.0), 0.0)",
        "LEAP: precision instead of recall",
    ),
    m(
        "P2",
        "cap",
        LEAP,
        "A[row, index[i, :]] = -ratios[i, j]",
        "A[row, index[:, i]] = -ratios[i, j]",
        "LEAP: tpr row on the wrong cell",
    ),
    m(
        "P3",
        "cap",
        ATC,
        "return float(np.mean(max_confidence(sample.posteriors) >= self.threshold_))",
        "return float(np.mean(max_confidence(sample.posteriors) > self.threshold_))",
        "ATC: items at the threshold not counted",
    ),
    m(
        "P4",
        "cap",
        ATC,
        "return float(thresholds[np.argmin(gaps)])",
        "return float(thresholds[min(np.argmin(gaps) + 1, len(thresholds) - 1)])",
        "ATC: threshold taken one item too far (off by one)",
    ),
    m(
        "P5",
        "cap",
        DOC,
        "drops = self.val_accuracy_ - correct[indices].mean(axis=1)",
        "drops = correct[indices].mean(axis=1) - self.val_accuracy_",
        "DoC: accuracy drop with its sign flipped",
    ),
    m(
        "P6",
        "cap",
        DOC,
        "draw(labels, self.sample_size, self.repeats, self.seed, n_classes=n_classes)",
        "draw(labels, self.sample_size, self.repeats, self.seed + 1, n_classes=n_classes)",
        "DoC: validation samples drawn with the wrong seed",
    ),
    # ---------------------------------------------------------------- statistics
    m(
        "S1",
        "stats",
        SIGNIFICANCE,
        "bold[j] = bool(np.isnan(pvalues[j]) or pvalues[j] >= alpha)",
        "bold[j] = bool(pvalues[j] >= alpha)",
        'bolding: a NaN p-value no longer counted as "not different"',
    ),
    m(
        "S2",
        "stats",
        CD,
        "adjacency = adjusted >= alpha",
        "adjacency = raw >= alpha",
        "CD graph built from raw instead of Holm-adjusted p-values",
    ),
    m(
        "S3",
        "stats",
        CD,
        "if friedman.pvalue < alpha:",
        "if True:",
        "CD: the Friedman gate removed",
    ),
    m(
        "S4",
        "stats",
        CD,
        "adjusted[order] = np.maximum.accumulate(scaled)",
        "adjusted[order] = scaled",
        "Holm without the step-down running maximum",
    ),
    m(
        "S5",
        "stats",
        CD,
        'errors[:, i], errors[:, j], zero_method="pratt", method="asymptotic"',
        'errors[:, i], errors[:, j], zero_method="wilcox", method="asymptotic"',
        "CD: Wilcoxon drops zero differences instead of Pratt's handling",
    ),
    m(
        "S6",
        "stats",
        RANKS,
        "float(np.sum((avg_ranks - (k + 1) / 2.0) ** 2))",
        "float(np.sum((avg_ranks - k / 2.0) ** 2))",
        "Friedman statistic centred on k/2",
    ),
    m(
        "S7",
        "stats",
        RANKS,
        "df1, df2 = k - 1, (k - 1) * (n - 1)",
        "df1, df2 = k - 1, (k - 1) * n",
        "Iman-Davenport with the wrong denominator degrees of freedom",
    ),
    m(
        "S8",
        "stats",
        RANKS,
        'method="average", axis=1)',
        'method="min", axis=1)',
        "ties get the minimum instead of the average rank",
    ),
    m(
        "S9",
        "stats",
        SIGNIFICANCE,
        "beats = (np.isfinite(mine) & ~np.isfinite(theirs)) | (mine <= theirs)",
        "beats = (np.isfinite(mine) & ~np.isfinite(theirs)) | (mine < theirs)",
        "win rates: ties no longer count as wins",
    ),
    m(
        "S10",
        "stats",
        SIGNIFICANCE,
        "gate_open = bool(dagger[i - 1, j])",
        "gate_open = True",
        "win rates: binomial tests no longer sequentially gated",
    ),
    m(
        "S11",
        "stats",
        SIGNIFICANCE,
        "p = float(stats.binom.sf(k_i - 1, n, 1.0 - i / (r + 1)))",
        "p = float(stats.binom.sf(k_i - 1, n, 1.0 - i / r))",
        "win rates: wrong binomial null",
    ),
    m(
        "S12",
        "stats",
        SIGNIFICANCE,
        "keep = np.isfinite(x) & np.isfinite(y)",
        "keep = np.isfinite(x)",
        "Wilcoxon keeps pairs whose other value is NaN",
    ),
    m(
        "S13",
        "stats",
        SIGNIFICANCE,
        "out[j] = f\"{'green' if v <= 0 else 'red'}!{tone}\"",
        "out[j] = f\"{'green' if v < 0 else 'red'}!{tone}\"",
        "colours: the row's midpoint coloured red",
    ),
    m(
        "S14",
        "stats",
        RANKS,
        "errors = np.where(finite, errors, 2.0 * top + 1.0)",
        "errors = np.where(finite, errors, top)",
        "a failed sample ties with the worst finite error",
    ),
    m(
        "S15",
        "stats",
        SIGNIFICANCE,
        "return np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)",
        "return np.where(counts > 0, sums / values.shape[0], np.nan)",
        "cell means divide by all samples, errored ones included",
    ),
    # ---------------------------------------------------------------- tables
    m(
        "T1",
        "tables",
        TABLES,
        "experiments = np.vstack(values)\n",
        "experiments = values[-1]\n",
        "win rates and ranks taken from the last setup only",
    ),
    m(
        "T2",
        "tables",
        TABLES,
        "bold = np.vstack([bold_row(v, alpha, min_coverage).bold for v in values])",
        "bold = np.vstack([bold_row(values[0], alpha, min_coverage).bold for v in values])",
        "every row bolded like the first",
    ),
    m(
        "T3",
        "tables",
        TABLES,
        "avg = rank_matrix(experiments, RANK_DECIMALS).mean(axis=0)",
        "avg = rank_matrix(experiments, None).mean(axis=0)",
        "ranks on unrounded errors",
    ),
    m(
        "T4",
        "tables",
        TABLES,
        "rank_bold=top_ranked(avg, len(references), methods_covered),",
        "rank_bold=top_ranked(avg, 1, methods_covered),",
        "only the first average rank bolded",
    ),
    m(
        "T5",
        "tables",
        TABLES,
        'values=[metric, "status"])\n            value = wide[metric]',
        'values=["error", "status"])\n            value = wide["error"]',
        "the Brier table reports the ECE",
    ),
    m(
        "T6",
        "tables",
        TABLES,
        'classifiers = classifiers or order_classifiers(frame["classifier"])',
        'classifiers = order_classifiers(frame["classifier"])',
        "table rows ignore the configured classifier order",
    ),
    m(
        "T7",
        "tables",
        TABLES,
        'number = f"{mean:.3f}"',
        'number = f"{mean:.2f}"',
        "LaTeX cells with 2 instead of 3 decimals",
    ),
    # ---------------------------------------------------------------- protocols
    m(
        "R1",
        "protocols",
        SAMPLING,
        '_draw("UPP", labels, n_classes, seed, sample_size',
        '_draw("UPP", labels, n_classes, seed + 1, sample_size',
        "UPP drawn with the wrong seed",
    ),
    m(
        "R2",
        "protocols",
        SAMPLING,
        '_draw("NPP", np.zeros(n_items), 2, seed, sample_size',
        '_draw("NPP", np.zeros(n_items), 2, 0, sample_size',
        "NPP drawn with the wrong seed",
    ),
    m(
        "R3",
        "protocols",
        LABEL_SHIFT,
        'intensity = np.abs(prevalence - float(splits["prevalence_full"]))',
        'intensity = prevalence - float(splits["prevalence_full"])',
        "label-shift intensity without the absolute value",
        tests=("tests/protocols/test_upp_sampling.py", "tests/data/test_data_uci.py"),
    ),
    m(
        "R4",
        "protocols",
        MIXTURE,
        "return np.round(np.linspace(0, sample_size, repeats)).astype(np.int64)",
        "return np.floor(np.linspace(0, sample_size, repeats)).astype(np.int64)",
        "mixture target counts floored instead of rounded",
    ),
    m(
        "R5",
        "protocols",
        MIXTURE,
        "rows.append(np.concatenate([from_source, n_source + from_target]))",
        "rows.append(np.concatenate([from_source, from_target]))",
        "mixture target indices not offset by the source size",
    ),
    # ---------------------------------------------------------------- data loading
    m(
        "D1",
        "data",
        UCI,
        "        if actual != file.sha256:",
        '        if file.location == "data_root" and actual != file.sha256:',
        "checksum skipped for package-shipped files",
    ),
    m(
        "D2",
        "data",
        UCI,
        'zip(parts, ("red", "white"))',
        'zip(parts, ("white", "red"))',
        "wine quality: colours swapped",
    ),
    m(
        "D3",
        "data",
        LABEL_SHIFT,
        "training, validation = dataset.training.split_stratified(0.5, random_state=seed)",
        "training, validation = dataset.training.split_stratified(0.5, random_state=0)",
        "classifier-training / validation split ignores the seed",
    ),
    m(
        "D4",
        "data",
        LABEL_SHIFT,
        'arrays["prevalence_full"] = np.array(dataset.training.prevalence()[1])',
        'arrays["prevalence_full"] = np.array(dataset.test.prevalence()[1])',
        "shift intensity measured from the test pool's prevalence",
    ),
    # ---------------------------------------------------------------- evaluation
    m(
        "E1",
        "evaluation",
        EVALUATION,
        '"error": top if ece == "top_label" else positive,',
        '"error": positive if ece == "top_label" else top,',
        "the calibration table reports the other ECE definition",
    ),
    m(
        "E2",
        "evaluation",
        EVALUATION,
        "true_value = accuracy(sample.posteriors, labels)",
        "true_value = float(np.mean(labels))",
        "CAP truth is the prevalence instead of the accuracy",
    ),
]

# ---------------------------------------------------------------- one library (issue 21): the record
# layouts, the ECE each layout stores, and what the metrics and the driver refuse
PLAN = SRC + "workflow/config_access.py"
CHECKS = SRC + "workflow/checks.py"
REPORT_PIPELINE = SRC + "report/pipeline.py"
MUTATIONS += [
    m(
        "L1",
        "evaluation",
        EVALUATION,
        "    if ece not in ECE_CHOICES[layout]:\n        hint",
        "    if ece not in ECE_CHOICES[TWO_CLASS] + ECE_CHOICES[K_CLASS]:\n        hint",
        "the driver accepts an ECE its record layout does not store (ranks the other one)",
    ),
    m(
        "L2",
        "evaluation",
        EVALUATION,
        '"rae": quantification_rae(truth, estimate, sample_size=len(labels)),',
        '"rae": quantification_rae(truth, estimate, sample_size=2 * len(labels)),',
        "the k-class RAE smoothed with half QuaPy's eps",
    ),
    m(
        "L3",
        "evaluation",
        EVALUATION,
        'estimate = check_prevalence(output, k, "the quantifier\'s estimate")',
        "estimate = np.asarray(output, dtype=float).reshape(-1)",
        "a quantifier's output is scored without checking it is a prevalence vector on the simplex",
    ),
    m(
        "L4",
        "metrics",
        ERRORS,
        "    posteriors = check_posteriors(posteriors)\n    labels = check_labels(labels, "
        "posteriors.shape[1])\n    return float(np.mean(argmax_predictions(posteriors) == labels))",
        "    return float(np.mean(argmax_predictions(posteriors) == np.asarray(labels)))",
        "the accuracy scores NaN rows, probabilities outside [0, 1] and unknown labels",
    ),
    m(
        "L5",
        "tables",
        TABLES,
        "if len(layouts) > 1:",
        "if len(layouts) > 2:",
        "per-sample files of both record layouts are read into one table",
    ),
    m(
        "L6",
        "tables",
        REPORT_PIPELINE,
        'setups = [(clf, f"{ds} (k={int(classes[ds])})") for clf, ds in result.setups]',
        "setups = [(clf, ds) for clf, ds in result.setups]",
        "the k-class tables do not name each data set's number of classes",
    ),
    m(
        "L7",
        "evaluation",
        CHECKS,
        "        if ece not in ECE_CHOICES[layout]:\n            needs",
        "        if False:\n            needs",
        "the config check accepts an ECE the data of a shift do not store",
        tests=("tests/workflow/test_config_checks.py",),
    ),
    m(
        "L8",
        "evaluation",
        PLAN,
        "return TWO_CLASS if two_class(collection, options) else K_CLASS",
        "return TWO_CLASS",
        "every shift planned in the two-class layout (binary-only methods pass on k-class data)",
        tests=("tests/workflow/test_config_checks.py",),
    ),
]

# ---------------------------------------------------------------- end to end (--slow: a workflow run each)
PIPELINE = SRC + "report/pipeline.py"
EVALUATE_SCRIPT = "workflow/scripts/evaluate.py"
EVALUATION_INPUTS = "workflow/rules/common.smk"
VALUES = ("tests/workflow/test_workflow_values.py",)

MUTATIONS += [
    m(
        "W1",
        "workflow",
        PIPELINE,
        "    records = load_records(result_files)\n    _check_complete_if_known(records, methods, "
        "result_files, classifiers, datasets, n_samples)\n    result = compute_table(",
        "    records = load_records(result_files)\n"
        '    records["error"] = records["ece_positive"].where(records["task"] == "calibration", '
        'records["error"])\n    _check_complete_if_known(records, methods, '
        "result_files, classifiers, datasets, n_samples)\n    result = compute_table(",
        "the calibration table reports the other ECE definition (table layer)",
        tests=VALUES,
        slow=True,
    ),
    m(
        "W2",
        "workflow",
        EVALUATION_INPUTS,
        '"posteriors", dataset=dataset, classifier=classifier',
        '"posteriors", dataset=dataset, classifier=label_classifiers()[0]',
        "evaluation pairs data sets with the wrong classifiers' posteriors",
        tests=VALUES,
        slow=True,
    ),
    m(
        "W4",
        "workflow",
        EVALUATION_INPUTS,
        "return [(d, c) for c in label_classifiers() for d in label_datasets()]",
        "return [(d, c) for d in label_datasets() for c in label_classifiers()]",
        "the per-method record file lists the setups data-set-major, not in the tables' row order",
        tests=("tests/evaluation/test_evaluation_jobs.py",),
        slow=True,
    ),
    m(
        "W3",
        "workflow",
        EVALUATE_SCRIPT,
        "    ece=params.ece,\n",
        '    ece="positive_class",\n',
        "the evaluation job ignores the configured ECE definition",
        tests=VALUES,
        slow=True,
    ),
]

# ---------------------------------------------------------------- held out
# Added after the tests above were written, and no test was written for them: their score says how
# well the tests generalise beyond the bugs they were written against.
TO_Q_FILE = TO_Q
HELD_OUT = [
    m(
        "H1",
        "metrics",
        ERRORS,
        "        posteriors[:, 1], labels.astype(float), edges",
        "        posteriors.max(axis=1), labels.astype(float), edges",
        "positive-class ECE on the top-label confidence",
    ),
    m(
        "H2",
        "binning",
        BINNING,
        "        edges[0] -= 1e-5\n",
        "        edges[0] += 1e-5\n",
        "q2c bins: a score of exactly 0 falls in no bin",
    ),
    m(
        "H3",
        "adapt",
        TO_Q_FILE,
        "positive = float(np.mean(calibrated[:, 1]))",
        "positive = float(np.mean(calibrated[:, 1] > 0.5))",
        "zeta2rho counts calibrated predictions instead of averaging posteriors",
    ),
    m(
        "H4",
        "calibrators",
        TRANSCAL,
        "bounds=((1.0, None), (0.0, 1.0))",
        "bounds=((0.5, None), (0.0, 1.0))",
        "TransCal: temperature allowed below 1",
    ),
    m(
        "H5",
        "calibrators",
        HEAD2TAIL,
        'alpha: float = 0.9,\n        head: str = "frequency",',
        'alpha: float = 0.8,\n        head: str = "frequency",',
        "Head2Tail: tail share 0.8 instead of 0.9",
    ),
    m(
        "H6",
        "quantifiers",
        CONTAINERS,
        "return np.array([1.0 - positive, positive])",
        "return np.array([positive, 1.0 - positive])",
        "EM started from the swapped prior",
    ),
    m(
        "H7",
        "cap",
        DOC,
        "shift = max_confidence(sample.posteriors).mean() - self.val_confidence_",
        "shift = self.val_confidence_ - max_confidence(sample.posteriors).mean()",
        "DoC: confidence shift with its sign flipped at prediction time",
    ),
    m(
        "H8",
        "stats",
        RANKS,
        'mask[candidates[np.argsort(avg_ranks[candidates], kind="stable")[:r]]] = True',
        'mask[candidates[np.argsort(avg_ranks[candidates], kind="stable")[: r + 1]]] = True',
        "one average rank too many bolded",
    ),
    m(
        "H9",
        "stats",
        SIGNIFICANCE,
        "means: np.ndarray, max_tone: int = 40, eligible",
        "means: np.ndarray, max_tone: int = 50, eligible",
        "colour tones up to 50 instead of 40",
    ),
    m(
        "H10",
        "tables",
        TABLES,
        "n_samples=np.vstack([np.isfinite(v).sum(axis=0) for v in values]),",
        "n_samples=np.vstack([np.full(v.shape[1], len(v)) for v in values]),",
        "sample counts include errored samples",
    ),
    m(
        "H11",
        "protocols",
        MIXTURE,
        "            from_source = np.random.choice(n_source, sample_size - m_k, replace=True)\n"
        "            from_target = np.random.choice(n_target, m_k, replace=True)\n",
        "            from_target = np.random.choice(n_target, m_k, replace=True)\n"
        "            from_source = np.random.choice(n_source, sample_size - m_k, replace=True)\n",
        "mixture draws the target items first (another random stream)",
    ),
    m(
        "H12",
        "data",
        LABEL_SHIFT,
        'predicted = argmax_predictions(posteriors["P_test"])\n'
        '    posteriors["test_accuracy"] = np.array(np.mean(predicted == splits["y_test"]))',
        'predicted = argmax_predictions(posteriors["P_val"])\n'
        '    posteriors["test_accuracy"] = np.array(np.mean(predicted == splits["y_val"]))',
        "classifier accuracy measured on the validation half",
    ),
    m(
        "H13",
        "evaluation",
        EVALUATION,
        '"estimate": float(calibrated[:, 1].mean()),',
        '"estimate": float(calibrated[:, 0].mean()),',
        "calibration records the negative class's mean posterior as the estimate",
    ),
    m(
        "H14",
        "cap",
        LEAP,
        "if np.any(x < 0) or not np.isclose(x.sum(), 1.0):",
        "if np.any(x < -1e-3) or not np.isclose(x.sum(), 1.0):",
        "LEAP accepts slightly negative shares instead of projecting",
    ),
]
# Missed by an earlier check, then a test was written against it: no longer a measure of how the
# tests generalise (H4: test_reference_calibrators_values.py::test_transcal_never_sharpens_the_target_posteriors).
TESTED_SINCE = {"H4"}
MUTATIONS += [replace(held, held_out=held.id not in TESTED_SINCE) for held in HELD_OUT]

# ---------------------------------------------------------------- multiclass branch (issue 14)
MULTICLASS_TESTS = ("tests/workflow/test_config_checks.py",)
REGRESSION = ("tests/methods/test_method_regression.py",)
MUTATIONS += [
    m(
        "MC1",
        "multiclass",
        COMMON,
        "for cls in reversed(range(self.n_classes_)):",
        "for cls in range(self.n_classes_):",
        "partitioned adaptations visit the parts in class order (other stream draws for k = 2)",
        tests=REGRESSION,
    ),
    m(
        "MC2",
        "multiclass",
        UCI,
        "if kept < least:",
        "if kept < least - 1:",
        "a data set left with two classes passes the minimum-support check",
        tests=(*MULTICLASS_TESTS, "tests/data/test_data_uci.py"),
    ),
    m(
        "MC3",
        "multiclass",
        SRC + "methods/registry.py",
        "if shift is not None and shift not in spec.shifts:",
        "if shift is not None and shift not in spec.shifts and False:",
        "a method of the other shift passes the config check",
        tests=MULTICLASS_TESTS,
    ),
    m(
        "MC4",
        "multiclass",
        ERRORS,
        'if precision == "float32":\n        gaps = [_binned_gap_float32(',
        'if precision == "float32" and False:\n        gaps = [_binned_gap_float32(',
        "the float32 ECEs (top-label and class-wise, any k) bin in float64",
        tests=("tests/evaluation/test_metrics.py", "tests/evaluation/test_ece_precision.py"),
    ),
    m(
        "MC12",
        "multiclass",
        ERRORS,
        "return float(round_float32(np.mean(np.asarray(gaps, np.float32)), 4)) * 100",
        "return round(float(np.mean(np.asarray(gaps, np.float32))), 4) * 100",
        "the float32 ECEs (class-wise: their float32 mean) rounded in float64 instead of as a float32",
        tests=("tests/evaluation/test_ece_precision.py",),
    ),
    # ---------------------------------------------------------------- shared domain weights
    m(
        "DW1",
        "calibrators",
        SRC + "methods/domain_weights.py",
        "            upsampling_indices(key.n_training, n_target, rng)",
        "            pass",
        "a precomputed call does not replay its up-sampling draw (the stream falls behind)",
        tests=("tests/workflow/test_domain_weight_artifacts.py",),
    ),
    m(
        "DW2",
        "calibrators",
        SRC + "methods/base.py",
        "if k[:1] == (PRECOMPUTED,)}",
        "if k[:1] == (PRECOMPUTED,) and False}",
        "a prediction part's context does not see the precomputed weights",
        tests=("tests/workflow/test_domain_weight_artifacts.py",),
    ),
    m(
        "DW3",
        "calibrators",
        SRC + "methods/adapt/common.py",
        "{None: None, SAMPLE: PREDICTED_CLASSES}.get(",
        "{None: None, SAMPLE: SAMPLE}.get(",
        "the zeta2alpha adaptations read the whole-sample weights file",
        tests=("tests/workflow/test_domain_weight_artifacts.py",),
    ),
]
MC_LASCAL = ("tests/methods/calibration/test_calibration_lascal.py",)
MC_HEAD2TAIL = (
    "tests/methods/calibration/test_calibration_head2tail.py",
    "tests/methods/test_method_regression.py",
)
MC_ADDED = ("tests/methods/test_k_class_methods.py",)
MUTATIONS += [
    m(
        "MC5",
        "multiclass",
        LASCAL,
        "np.add.at(C, (source_pred, np.asarray(source_labels, dtype=int)), 1.0)",
        "np.add.at(C, (np.asarray(source_labels, dtype=int), source_pred), 1.0)",
        "the k-class RLLS confusion matrix transposed (rows labels, columns predictions)",
        tests=MC_LASCAL,
    ),
    m(
        "MC6",
        "multiclass",
        LASCAL,
        "lam = rlls_lambda(len(source_pred), n_classes)",
        "lam = rlls_lambda(len(source_pred))",
        "the k-class RLLS penalty computed for two classes",
        tests=MC_LASCAL,
    ),
    m(
        "MC7",
        "multiclass",
        HEAD2TAIL,
        'np.argsort(-counts, kind="stable")',
        'np.argsort(counts, kind="stable")',
        "Head2Tail's head taken from the least frequent classes",
        tests=MC_HEAD2TAIL,
    ),
    m(
        "MC8",
        "multiclass",
        HEAD2TAIL,
        "shift_mean = (M[c] @ means) * (1 - alpha) + means[c] * alpha",
        "shift_mean = (M[c] @ means) * alpha + means[c] * (1 - alpha)",
        "Head2Tail's shifted mean gives the tail class the head classes' share",
        tests=MC_HEAD2TAIL,
    ),
    m(
        "MC9",
        "multiclass",
        EMQ,
        "super()._fit(setting)\n        self.prior_ = setting.prevalence_of(self.train_prevalence)",
        'super()._fit(setting)\n        self.prior_ = setting.prevalence_of("validation")',
        "EMQ_TransCal's and EMQ_LasCal's EM (ThenEM) starts from the validation prevalence",
        tests=MC_ADDED,
    ),
    m(
        "MC10",
        "multiclass",
        TABLE,
        '("c2a", "DMCal"): Row(BOTH, {"n_bins": 10}',
        '("c2a", "DMCal"): Row(BOTH, {"n_bins": 8}',
        "DMCal_c2a with DMCal's 8 bins instead of the binary column's 10",
        tests=MC_ADDED,
    ),
    m(
        "MC11",
        "multiclass",
        LEAP,
        '    def __init__(self, quantifier="PCC"):\n        super().__init__(quantifier)',
        '    def __init__(self, quantifier="PCC"):\n        super().__init__("KDEy")',
        "LEAP_PCC (and LEAP_PCC_a2q) wraps LEAP with KDEy",
        tests=MC_ADDED,
    ),
    m(
        "TH1",
        "data",
        SRC + "classifiers/specs.py",
        "    with threadpool_limits(limits=1):\n        yield",
        "    with threadpool_limits(limits=None):\n        yield",
        "the classifiers fit and predict with the machine's thread count (k-NN ties, MLP last bits)",
        tests=("tests/classifiers/test_classifier_threads.py",),
    ),
    m(
        "TH2",
        "data",
        LABEL_SHIFT,
        "    with one_thread():\n        model = make_classifier(classifier, seed)",
        "    if True:\n        model = make_classifier(classifier, seed)",
        "the set-up's classifier is fitted with the machine's thread count",
        tests=("tests/classifiers/test_classifier_threads.py",),
    ),
    m(
        "TH3",
        "data",
        SRC + "lm/device.py",
        "    torch.set_num_threads(count)\n",
        "    torch.set_num_threads(previous)\n",
        "the language-model jobs keep the job's thread count instead of covariate_shift.lm.cpu_threads",
        tests=("tests/workflow/test_hub_offline.py",),
        slow=True,
    ),
    m(
        "TH4",
        "data",
        LABEL_SHIFT,
        '        if samples is not None:\n            posteriors["P_samples"] = np.stack(\n'
        '                [model.predict_proba(splits["X_test"][idx]) for idx in samples["indices"]]\n'
        "            )\n",
        '    if samples is not None:\n        posteriors["P_samples"] = np.stack(\n'
        '            [model.predict_proba(splits["X_test"][idx]) for idx in samples["indices"]]\n'
        "        )\n",
        "the per-sample posteriors are predicted outside the one-thread pool",
        tests=("tests/classifiers/test_classifier_threads.py",),
    ),
]
