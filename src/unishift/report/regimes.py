"""Entry points of the workflow's regime rules (docs/regimes.md §5): the regime maps of one task and
shift, and the Selector with its two references, from the per-sample record files, which carry
their sample's shift descriptors (:data:`unishift.evaluation.records.DESCRIPTOR_COLUMNS`)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from unishift.data.containers import derive_seed
from unishift.evaluation.records import COLUMNS, DESCRIPTOR_COLUMNS
from unishift.evaluation.stats import MIN_COVERAGE
from unishift.io import DamagedFileError, write_csv
from unishift.methods.base import SHIFTS
from unishift.regimes.descriptors import UNSUPERVISED_DESCRIPTORS, true_intensities
from unishift.regimes.maps import (
    regime_map,
    regime_map_2d,
    write_regime_map_2d,
    write_regime_maps,
)
from unishift.regimes.references import (
    ANSWERS,
    FACTS,
    N_BOOTSTRAP,
    TASK_COLUMNS,
    best_per_setup,
    bootstrap_interval,
    degenerate,
    relative_gain,
)
from unishift.regimes.references import COLUMNS as TRIVIAL_COLUMNS
from unishift.regimes.selector import (
    add_groups,
    best_method,
    best_single_method,
    best_single_records,
    chosen_records,
    complete_errors,
    oracle_records,
    select_methods,
)
from unishift.report.names import latex_escape
from unishift.report.names import title as make_title
from unishift.report.tables import load_records

# The Selector's column and record file name, and its group in the tables (docs/regimes.md §5.4).
SELECTOR = "Selector"
SELECTION_GROUP = "selection"
# the selection file's rows that are not configured methods (docs/regimes.md §4.3-§4.6): names a
# configured method may not take
PSEUDO_METHODS = (
    SELECTOR, "Oracle", "BestSingle", "Hybrid", "SetupOracle", "BestInHindsight", "Trivial",
)  # fmt: skip
SUMMARY_COLUMNS = (
    "method",
    "role",
    "mean_error",
    "ci_low",
    "ci_high",
    "n_finite",
    "gain_vs_best_single",
    "gain_ci_low",
    "gain_ci_high",
    "degenerate",
    "note",
)
GAIN_COLUMNS = (
    "group",
    "method",
    "n_samples",
    "mean_error",
    "best_single_error",
    "gain_vs_best_single",
    "gain_ci_low",
    "gain_ci_high",
)
SAMPLE = ["classifier", "dataset", "sample_id"]  # one sample of a task and shift

# The descriptors each shift's maps bin: its true intensities (what the protocol set), then the
# unsupervised estimates (what a user can compute from an unlabelled sample).
TRUE_INTENSITIES = {shift: true_intensities(shift) for shift in SHIFTS}


def map_descriptors(shift: str) -> tuple[str, ...]:
    if shift not in TRUE_INTENSITIES:
        raise ValueError(f"unknown shift {shift!r}; one of {sorted(TRUE_INTENSITIES)}")
    return (*TRUE_INTENSITIES[shift], *UNSUPERVISED_DESCRIPTORS)


def _records(files: Iterable[str | Path], task: str, shift: str, methods: list[str]):
    records = load_records(list(files))
    records = records[
        (records["task"] == task) & (records["shift"] == shift) & records["method"].isin(methods)
    ]
    absent = sorted(set(methods) - set(records["method"]))
    if absent:
        raise ValueError(f"no {task}/{shift} records of the methods {absent}")
    missing = [c for c in DESCRIPTOR_COLUMNS if c not in records.columns]
    if missing:
        raise ValueError(
            f"the {task}/{shift} records lack the descriptor columns {missing} (written before "
            "the descriptors existed?): rerun the evaluation"
        )
    return records.reset_index(drop=True)


def degenerate_of(records: pd.DataFrame, methods: list[str], trivial: pd.DataFrame):
    """The degenerate flag of one task and shift (docs/regimes.md §4.4), as the selection file
    computes it: the trivial answer's mean error over its samples against each method's mean of
    its finite errors, the methods below the coverage share left out; and the sentence that says
    so."""
    per_sample = records.groupby(SAMPLE).ngroups
    finite = records.groupby("method")["error"].agg(["mean", "count"])
    needed = np.ceil(np.round(MIN_COVERAGE * per_sample, 9))
    eligible = [m for m in methods if finite.loc[m, "count"] >= needed]
    flag, beaten = degenerate(
        float(trivial["error"].mean()), {m: float(finite.loc[m, "mean"]) for m in eligible}
    )
    return flag, f"the trivial answer beats {beaten} of the {len(eligible)} methods' mean error"


def _trivial_and_flag(records, methods, trivial_files, task, shift):
    """The trivial answers of a map's samples and its degenerate flag and note (None, None and ""
    without trivial files)."""
    trivial_files = list(trivial_files)
    if not trivial_files:
        return None, None, ""
    trivial = read_trivial(trivial_files, task, shift)
    return (trivial, *degenerate_of(records, methods, trivial))


def build_regime_maps(
    files: Iterable[str | Path],
    task: str,
    shift: str,
    methods: list[str],
    stem: str | Path,
    n_bins: int = 10,
    scheme: str = "quantile",
    trivial_files: Iterable[str | Path] = (),
    seed: int = 0,
    n_bootstrap: int = N_BOOTSTRAP,
    alpha: float = 0.05,
) -> tuple[list, dict[str, int]]:
    """The regime maps of one task and shift (docs/regimes.md §5.3), written to ``<stem>.csv``,
    ``.png`` and ``.tex``; returns the maps and, per descriptor, the samples left out as empty.
    With ``trivial_files`` (written by rule descriptors) the maps show the trivial answer and the degenerate
    flag; the maps' bootstrap is seeded by ``seed``, the task and the shift (the maps of samples
    with every descriptor draw the same resamples)."""
    records = _records(files, task, shift, methods)
    trivial, flag, note = _trivial_and_flag(records, methods, trivial_files, task, shift)
    maps, undefined = [], {}
    for descriptor in map_descriptors(shift):
        defined = np.isfinite(records[descriptor].to_numpy(dtype=float))
        undefined[descriptor] = len(records.loc[~defined, SAMPLE].drop_duplicates())
        if not defined.any():
            raise ValueError(
                f"the descriptor {descriptor!r} is empty on every {shift}-shift sample"
            )
        rmap = regime_map(
            records[defined],
            descriptor,
            n_bins=n_bins,
            scheme=scheme,
            methods=methods,
            alpha=alpha,
            n_bootstrap=n_bootstrap,
            seed=derive_seed(seed, "regime_map", shift, task),
            trivial=trivial,
        )
        maps.append(replace(rmap, degenerate=flag, degenerate_note=note))
    write_regime_maps(maps, stem, title=f"{make_title(task, shift)}: mean error by bin")
    return maps, undefined


# the two descriptors of the compound-shift grid (docs/regimes.md §3.1): what the protocol set
COMPOUND_AXES = ("true_label_shift", "true_mixture")


def build_regime_map_2d(
    files: Iterable[str | Path],
    task: str,
    methods: list[str],
    stem: str | Path,
    n_bins: int = 4,
    scheme: str = "quantile",
    trivial_files: Iterable[str | Path] = (),
    seed: int = 0,
    n_bootstrap: int = N_BOOTSTRAP,
    alpha: float = 0.05,
):
    """The two-dimensional regime map of one task under compound shift (label-shift intensity x
    mixture, docs/regimes.md §3.1), written to ``<stem>.csv`` and ``.png``; returns the map and the
    number of samples left out for an empty descriptor."""
    shift = "compound"
    records = _records(files, task, shift, methods)
    defined = np.isfinite(records[list(COMPOUND_AXES)].to_numpy(dtype=float)).all(axis=1)
    if not defined.any():
        raise ValueError(f"no {shift}-shift sample has both {COMPOUND_AXES}")
    trivial, flag, note = _trivial_and_flag(records, methods, trivial_files, task, shift)
    rmap = regime_map_2d(
        records[defined],
        *COMPOUND_AXES,
        n_bins=n_bins,
        scheme=scheme,
        methods=methods,
        alpha=alpha,
        n_bootstrap=n_bootstrap,
        seed=derive_seed(seed, "regime_map_2d", shift, task),
        trivial=trivial,
    )
    rmap = replace(rmap, degenerate=flag, degenerate_note=note)
    title = f"{make_title(task, shift)}: winner per cell"
    write_regime_map_2d(rmap, stem, title=title)
    return rmap, len(records.loc[~defined, SAMPLE].drop_duplicates())


def _counts(choices: pd.Series) -> str:
    return "; ".join(f"{m}: {n}" for m, n in choices.value_counts().items())


def _trivial_rows(files: Iterable[str | Path], shift: str) -> pd.DataFrame:
    """The rows of one shift in the trivial answers' files (:mod:`unishift.evaluation.trivial`'s,
    :data:`unishift.regimes.references.COLUMNS`); a file without those columns is named as
    damaged."""
    frames = []
    for path in files:
        frame = pd.read_csv(path)
        absent = sorted(set(TRIVIAL_COLUMNS) - set(frame.columns))
        if absent:
            raise DamagedFileError(path, f"no columns {absent}", "delete it and rerun snakemake")
        frames.append(frame)
    if not frames:
        raise ValueError(f"no trivial-answer files for {shift} shift")
    frame = pd.concat(frames, ignore_index=True)
    return frame[frame["shift"] == shift]


def _task_errors(rows: pd.DataFrame, task: str) -> pd.DataFrame:
    return rows[SAMPLE].assign(error=rows[TASK_COLUMNS[task]].to_numpy(dtype=float))


def read_trivial(files: Iterable[str | Path], task: str, shift: str) -> pd.DataFrame:
    """The trivial answer's error of each sample of one task and shift, with :data:`SAMPLE` and
    ``error`` (:func:`_trivial_rows`)."""
    return _task_errors(_trivial_rows(files, shift), task)


def selection_inputs(
    files: Iterable[str | Path],
    task: str,
    shift: str,
    methods: list[str],
    trivial_files: Iterable[str | Path] = (),
) -> tuple[pd.DataFrame, list[str], pd.DataFrame | None, pd.DataFrame | None]:
    """What the Selector and the Hybrid of one task and shift read: (records with their groups,
    the unsupervised descriptors they hold, the trivial answers' rows or None, the setup facts known
    at deployment per sample or None), the last two from ``trivial_files`` (the descriptors
    rule's), checked to cover every sample of the records."""
    records = add_groups(_records(files, task, shift, list(methods)))
    features = [f for f in UNSUPERVISED_DESCRIPTORS if records[f].notna().any()]
    trivial_files = list(trivial_files)
    if not trivial_files:
        return records, features, None, None
    rows = _trivial_rows(trivial_files, shift)
    trivial = _task_errors(rows, task).assign(method="Trivial")
    samples = records[SAMPLE].drop_duplicates()
    missing = len(samples) - len(trivial.merge(samples, on=SAMPLE))
    if missing or len(trivial) != len(samples):
        raise ValueError(
            f"the trivial answers cover {len(trivial)} samples, the records {len(samples)} "
            f"({missing} of these lack one): rerun the trivial rule"
        )
    return records, features, trivial, rows[[*SAMPLE, *FACTS]]


def hybrid_of(
    records: pd.DataFrame,
    facts: pd.DataFrame | None,
    features: list[str],
    methods: list[str],
    seed: int,
    task: str,
    shift: str,
    variants: tuple[str, ...] | None = None,
) -> pd.DataFrame:
    """The Hybrid's rows of one task and shift (:func:`unishift.regimes.hybrid.hybrid_records`)
    from :func:`selection_inputs`' records, features and facts, drawn from the config's ``seed``
    as the selector rule draws them; ``variants``: another pool than the Hybrid's own."""
    from unishift.regimes.hybrid import hybrid_records

    return hybrid_records(
        records if facts is None else records.merge(facts, on=SAMPLE, how="left"),
        features,
        methods,
        seed=derive_seed(seed, "hybrid", shift, task),
        facts=[] if facts is None else list(FACTS),
        variants=variants,
    )


def build_selection(
    files: Iterable[str | Path],
    task: str,
    shift: str,
    methods: list[str],
    layout: str,
    seed: int,
    records_path: str | Path,
    summary_path: str | Path,
    choices_path: str | Path,
    tex_path: str | Path | None = None,
    trivial_files: Iterable[str | Path] = (),
    gains_path: str | Path | None = None,
    n_bootstrap: int = N_BOOTSTRAP,
    alpha: float = 0.05,
    hybrid: bool = True,
) -> dict[str, pd.DataFrame]:
    """The Selector of one task and shift, with its references beside it (docs/regimes.md §4.4,
    §5.4): the best single method leave-one-group-out, the per-sample and the per-setup oracles,
    the best single method in hindsight, the trivial answer (from ``trivial_files``; the row is
    left out without them) and the Hybrid (``hybrid``); writes the files of docs/regimes.md §5.4
    (``records_path`` in the record layout ``layout``; the .tex with ``tex_path``; the per-group
    gains with ``gains_path``), each mean with its cluster-bootstrap interval (``n_bootstrap``
    resamples)."""
    methods = list(methods)
    records, features, trivial, facts = selection_inputs(files, task, shift, methods, trivial_files)
    selected = select_methods(
        records,
        features=features,
        methods=methods,
        seed=derive_seed(seed, "selector", shift, task),
    )
    oracle = oracle_records(records, methods)
    best = best_single_records(records, methods)
    overall = best_single_method(records, methods)
    _, info, errors = complete_errors(records, methods, ["group"])
    per_setup = best_per_setup(
        errors, methods, lambda part, names: best_method(part, names, MIN_COVERAGE, "in one setup")
    )
    setup_oracle = chosen_records(records, errors.index, per_setup, "SetupOracle", False)
    hindsight = chosen_records(
        records, errors.index, [overall] * len(errors), "BestInHindsight", False
    )
    pseudo = [selected, best, oracle, setup_oracle, hindsight]
    if trivial is not None:
        pseudo.append(trivial)

    hybrid_frame = None
    if hybrid:
        hybrid_frame = hybrid_of(records, facts, features, methods, seed, task, shift)
        pseudo.insert(1, hybrid_frame)
    # in the row order of the first method's record file (setups in table order)
    order = records.loc[records["method"] == methods[0], SAMPLE].reset_index(drop=True)
    ordered = order.merge(selected, on=SAMPLE, how="left", validate="one_to_one")
    write_csv(records_path, ordered[list(COLUMNS[layout])])
    choices = ordered[[*SAMPLE, "group", "chosen_method", "predicted_error", "error"]].rename(
        columns={"chosen_method": "selector_choice", "error": "selector_error"}
    )
    labelled = [(best, "best_single"), (oracle, "oracle")]
    if hybrid_frame is not None:
        labelled.insert(0, (hybrid_frame, "hybrid"))
    for frame, label in labelled:
        part = frame[[*SAMPLE, "chosen_method", "error"]].rename(
            columns={"chosen_method": f"{label}_choice", "error": f"{label}_error"}
        )
        choices = choices.merge(part, on=SAMPLE, how="left", validate="one_to_one")
    write_csv(choices_path, choices)

    roles = {
        SELECTOR: "selector: a method, a column of the tables",
        "Hybrid": "hybrid: a method (docs/regimes.md §4.6), not in the tables",
        "BestSingle": "the best single method of the other groups: a baseline, not in the tables",
        "Oracle": "the per-sample best method: an upper bound, not a method, kept out of ranks",
        "SetupOracle": "the best method per setup in hindsight: an upper bound, not a method",
        "BestInHindsight": "the best single method over all groups in hindsight: not a method",
        "Trivial": f"the trivial answer ({ANSWERS[task]}): a baseline, not in the tables",
    }
    notes = {
        SELECTOR: "chosen on " + _counts(selected["chosen_method"]),
        "BestSingle": "; ".join(
            f"{g}: {m}"
            for g, m in best.groupby("group", sort=True)["chosen_method"].first().items()
        ),
        "Oracle": "best on " + _counts(oracle["chosen_method"]),
        "SetupOracle": "best on " + _counts(setup_oracle["chosen_method"]),
        "BestInHindsight": overall,
    }
    if hybrid_frame is not None:
        notes["Hybrid"] = "; ".join(
            f"{g}: {v}"
            for g, v in hybrid_frame.groupby("group", sort=True)["variant"].first().items()
        )
    # mean error (NaN errors left out) and the number of finite errors per (pseudo-)method
    rows = pd.concat([*pseudo, records[["method", "error"]]], ignore_index=True)
    summary = rows.groupby("method")["error"].agg(mean_error="mean", n_finite="count")
    names = [f["method"].iloc[0] for f in pseudo]
    summary = summary.loc[names + methods].reset_index()
    summary["role"] = [roles.get(m, "method") for m in summary["method"]]
    summary["note"] = [notes.get(m, "") for m in summary["method"]]
    summary.loc[summary["method"] == overall, "note"] = "best single method over all groups"
    # a method that failed too often is shown and counted, and said never to have been chosen
    per_sample = records.groupby(SAMPLE).ngroups
    eligible = []
    for method in methods:
        scored = int(records.loc[records["method"] == method, "error"].notna().sum())
        if scored < np.ceil(np.round(MIN_COVERAGE * per_sample, 9)):
            summary.loc[summary["method"] == method, "note"] = (
                f"scored on {scored} of {per_sample} samples, fewer than {MIN_COVERAGE:.0%}: "
                "never chosen nor declared best (docs/regimes.md, Failures)"
            )
        else:
            eligible.append(method)

    # every (pseudo-)method's errors aligned by sample; clusters: the setups
    aligned = errors.reset_index()[SAMPLE].copy()
    for frame in pseudo:
        part = frame[[*SAMPLE, "error"]].rename(columns={"error": frame["method"].iloc[0]})
        aligned = aligned.merge(part, on=SAMPLE, how="left", validate="one_to_one")
    for method in methods:
        aligned[method] = errors[method].to_numpy(dtype=float)
    clusters = (
        aligned["classifier"].astype(str) + "\x00" + aligned["dataset"].astype(str)
    ).to_numpy()
    groups = info["group"].to_numpy()
    interval = {"n_resamples": n_bootstrap, "seed": seed, "alpha": alpha}
    bounds = [
        bootstrap_interval(aligned[m].to_numpy(dtype=float), clusters, **interval)
        for m in summary["method"]
    ]
    summary["ci_low"] = [b[0] for b in bounds]
    summary["ci_high"] = [b[1] for b in bounds]
    gains, gain_rows = {}, []
    reference = aligned["BestSingle"].to_numpy(dtype=float)
    for name in (SELECTOR, "Hybrid"):
        if name not in aligned.columns:
            continue
        pairs = np.column_stack([aligned[name].to_numpy(dtype=float), reference])
        gains[name] = (
            relative_gain(pairs),
            *bootstrap_interval(pairs, clusters, relative_gain, **interval),
        )
        for g in sorted(pd.unique(groups), key=str):
            rows_g = groups == g
            part = pairs[rows_g]
            gain_rows.append(
                {
                    "group": g,
                    "method": name,
                    "n_samples": int(rows_g.sum()),
                    "mean_error": float(np.nanmean(part[:, 0])),
                    "best_single_error": float(np.nanmean(part[:, 1])),
                    "gain_vs_best_single": relative_gain(part),
                    **dict(
                        zip(
                            ("gain_ci_low", "gain_ci_high"),
                            bootstrap_interval(part, clusters[rows_g], relative_gain, **interval),
                            strict=True,
                        )
                    ),
                }
            )
    for column, position in (("gain_vs_best_single", 0), ("gain_ci_low", 1), ("gain_ci_high", 2)):
        summary[column] = [gains[m][position] if m in gains else np.nan for m in summary["method"]]
    is_degenerate = False
    if trivial is not None:
        means = dict(zip(summary["method"], summary["mean_error"], strict=True))
        is_degenerate, beaten = degenerate(means["Trivial"], {m: means[m] for m in eligible})
        summary.loc[summary["method"] == "Trivial", "note"] = (
            f"beats {beaten} of the {len(eligible)} methods' overall mean error"
            + ("; more than half: a degenerate task and shift" if is_degenerate else "")
        )
    summary["degenerate"] = is_degenerate
    write_csv(summary_path, summary[list(SUMMARY_COLUMNS)])
    if gains_path is not None:
        write_csv(gains_path, pd.DataFrame(gain_rows, columns=list(GAIN_COLUMNS)))
    if tex_path is not None:
        Path(tex_path).write_text(selection_tex(summary, overall))
    return {
        "selector": ordered,
        "oracle": oracle,
        "best_single": best,
        "setup_oracle": setup_oracle,
        "hybrid": hybrid_frame,
        "summary": summary,
        "gains": pd.DataFrame(gain_rows, columns=list(GAIN_COLUMNS)),
    }


def selection_tex(summary: pd.DataFrame, overall: str) -> str:
    """The report's LaTeX tabular of the selection summary (docs/regimes.md §5.4): each row's mean
    error with its cluster-bootstrap interval, and a note when the task and shift is degenerate."""
    rows = summary.set_index("method")
    roles = {
        SELECTOR: "picks a method per sample, trained on the other groups",
        "Hybrid": "descriptors and disagreement, shrunk toward BestSingle or combined",
        "BestSingle": "best single method of the other groups",
        "Oracle": "per-sample best: an upper bound, not ranked",
        "SetupOracle": "per-setup best in hindsight: an upper bound",
        "Trivial": "trivial answer, scored as a method",
        overall: "best single method over all groups (in hindsight)",
    }
    lines = [
        r"\begin{tabular}{lrrrl}",
        r"\hline",
        r"method & mean error & interval & $n$ & what \\",
        r"\hline",
    ]
    for method, role in roles.items():
        if method not in rows.index:
            continue
        mean, n = rows.loc[method, "mean_error"], int(rows.loc[method, "n_finite"])
        value = f"{mean:.4f}" if np.isfinite(mean) else "--"
        low, high = rows.loc[method, "ci_low"], rows.loc[method, "ci_high"]
        ci = f"[{low:.4f}, {high:.4f}]" if np.isfinite(low) and np.isfinite(high) else "--"
        lines.append(f"{latex_escape(method)} & {value} & {ci} & {n} & {role} \\\\")
    lines += [r"\hline", r"\end{tabular}", ""]
    if bool(summary["degenerate"].iloc[0]):
        lines.insert(
            -1,
            r"\par\emph{Degenerate: the trivial answer beats more than half of the methods.}",
        )
    return "\n".join(lines)
