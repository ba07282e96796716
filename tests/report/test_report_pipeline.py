"""End to end: per-sample result files -> tables, CD diagram, plot and the comparison with the paper."""

import numpy as np
import pandas as pd

from unishift.evaluation.records import COLUMNS, K_CLASS, TWO_CLASS
from unishift.report.paper import load_paper
from unishift.report.pipeline import (
    build_accuracy,
    build_cd,
    build_error_by_shift,
    build_reproduction,
    build_table,
    with_class_counts,
)

# config order; the baseline CC moves to the front
METHODS = ["PCC", "CC", "PACC", "EMQ", "KDEy"]


def _write_results(tmp_path, alter=None):
    """Per-sample files whose cell means are the paper's quantification-CS numbers (BERT rows)."""
    cells = load_paper("cells")
    cells = cells[(cells["task"] == "quantification") & (cells["shift"] == "covariate")]
    cells = cells[(cells["classifier"] == "BERT") & cells["method"].isin(METHODS)]
    rng = np.random.default_rng(0)
    paths = []
    for method, block in cells.groupby("method"):
        rows = []
        for cell in block.itertuples():
            # symmetric noise around the published mean keeps the mean exact up to float error
            noise = rng.normal(0, 0.01, 50)
            errors = cell.value + np.concatenate([noise, -noise])
            if alter == (method, cell.dataset):
                errors = errors + 0.02
            for s, e in enumerate(errors):
                rows.append(
                    {"shift": "covariate", "task": "quantification", "method": method, "classifier": "BERT",
                         "dataset": cell.dataset, "sample_id": s, "shift_intensity": (s % 10) / 10 + 0.05,
                         "true_value": 0.5, "estimate": 0.5 + e, "error": e, "ece": np.nan, "ece_positive": np.nan,
                         "brier": np.nan, "status": "ok", "reason": ""}
                )  # fmt: skip
        path = tmp_path / "eval" / f"{method}.csv"
        path.parent.mkdir(parents=True, exist_ok=True)
        pd.DataFrame(rows, columns=COLUMNS[TWO_CLASS]).to_csv(path, index=False)
        paths.append(path)
    return paths


def test_pipeline_end_to_end(tmp_path):
    paths = _write_results(tmp_path, alter=("PACC", "rt->yelp"))
    result = build_table(
        paths, "quantification", "covariate", METHODS, tmp_path / "tables", n_samples=100
    )
    assert result.names == ["CC", "PCC", "PACC", "EMQ", "KDEy"]
    assert [d for _, d in result.setups] == [
        "imdb->rt",
        "imdb->yelp",
        "rt->imdb",
        "rt->yelp",
        "yelp->imdb",
        "yelp->rt",
    ]
    tex = (tmp_path / "tables" / "quantification_covariate.tex").read_text()
    assert r"\texttt{imdb}$\rightarrow$\texttt{rt} & $0.045$\cellcolor{" in tex
    build_cd(result, tmp_path / "cd")
    assert (tmp_path / "cd" / "quantification_covariate.png").exists()
    assert (
        "Quantification under Covariate Shift"
        in (tmp_path / "cd" / "quantification_covariate.tex").read_text()
    )
    build_error_by_shift(paths, "quantification", "covariate", tmp_path / "plots")
    assert (tmp_path / "plots" / "quantification_covariate_err_by_shift.pdf").exists()

    repro = build_reproduction(
        tmp_path / "tables" / "quantification_covariate.csv",
        tmp_path / "tables" / "quantification_covariate_summary.csv",
        "quantification",
        "covariate",
        tmp_path / "repro" / "quantification_covariate.csv",
        tmp_path / "repro" / "quantification_covariate.md",
    )
    ours = repro.dropna(subset=["ours"])
    assert len(ours) == 30  # 5 methods x 6 BERT rows; the rest of the paper's table is "missing"
    assert (repro["verdict"] == "missing").sum() == 216 - 30
    flagged = ours[ours["verdict"] != "equal"]
    assert flagged[["method", "dataset", "verdict"]].values.tolist() == [
        ["PACC", "rt->yelp", "differs"]
    ]
    md = (tmp_path / "repro" / "quantification_covariate.md").read_text()
    assert "| differs | 1 |" in md and "| PCC |" in md and "Win rates equal at 2 decimals" in md


def test_build_accuracy_against_paper(tmp_path):
    paper = load_paper("accuracy_label").drop(columns="table")
    ours = paper.copy()
    ours.loc[(ours["classifier"] == "MLP") & (ours["dataset"] == "yeast"), "accuracy"] = 0.75
    ours.to_csv(tmp_path / "acc.csv", index=False)
    repro = build_accuracy(
        tmp_path / "acc.csv", "label", tmp_path / "acc.tex", tmp_path / "acc_repro.csv"
    )
    assert repro["verdict"].value_counts().to_dict() == {"equal": 39, "differs": 1}
    assert (
        r"\texttt{yeast} & 0.771 & 0.750 & 0.300 & 0.749 \\" in (tmp_path / "acc.tex").read_text()
    )
    lm = load_paper("accuracy_covariate").drop(columns="table")
    lm.to_csv(tmp_path / "lm.csv", index=False)
    repro = build_accuracy(
        tmp_path / "lm.csv", "covariate", tmp_path / "lm.tex", tmp_path / "lm_repro.csv"
    )
    assert (repro["verdict"] == "equal").all() and len(repro) == 27
    assert (
        r"\multirow{3}{*}{BERT} & \texttt{imdb} & 0.751 & 0.689 & 0.734 \\"
        in (tmp_path / "lm.tex").read_text()
    )


def _k_class_results(tmp_path, classes):
    """Per-sample files of two quantifiers in the k-class layout on data sets of ``classes``
    (data set -> number of classes), with one classifier."""
    rng = np.random.default_rng(1)
    paths = []
    for method in ("CC", "PACC"):
        rows = []
        for dataset, k in classes.items():
            for s in range(20):
                error = rng.uniform(0, 0.1) + (0.05 if method == "CC" else 0.0)
                rows.append(
                    {"shift": "label", "task": "quantification", "method": method, "classifier": "LR",
                     "dataset": dataset, "n_classes": k, "sample_id": s, "shift_intensity": s / 20,
                     "error": error, "true_prevalence": "[]", "estimated_prevalence": "[]",
                     "ae": error, "rae": 2 * error, "status": "ok", "reason": ""}
                )  # fmt: skip
        path = tmp_path / "eval" / f"{method}.csv"
        path.parent.mkdir(parents=True, exist_ok=True)
        pd.DataFrame(rows, columns=COLUMNS[K_CLASS]).to_csv(path, index=False)
        paths.append(path)
    return paths


def test_k_class_tables_name_each_data_sets_classes_in_the_tex_only(tmp_path):
    paths = _k_class_results(tmp_path, {"cmc": 3, "yeast": 4})
    info = {"CC": ("CC", "baseline"), "PACC": ("PACC", "reference")}
    result = build_table(
        paths, "quantification", "label", ["CC", "PACC"], tmp_path / "tables",
        classifiers=["LR"], datasets=["cmc", "yeast"], n_samples=20, method_info=info,
    )  # fmt: skip
    assert [d for _, d in result.setups] == ["cmc", "yeast"]  # the keys of the files
    tex = (tmp_path / "tables" / "quantification_label.tex").read_text()
    assert r"\texttt{cmc (k=3)}" in tex and r"\texttt{yeast (k=4)}" in tex
    cells = pd.read_csv(tmp_path / "tables" / "quantification_label.csv")
    assert sorted(set(cells["dataset"])) == ["cmc", "yeast"]
    # the two-class layout names no number of classes
    two = _write_results(tmp_path / "two")
    build_table(two, "quantification", "covariate", METHODS, tmp_path / "two_tables")
    assert "(k=" not in (tmp_path / "two_tables" / "quantification_covariate.tex").read_text()


def test_with_class_counts_reads_the_records_of_the_k_class_layout(tmp_path):
    paths = _k_class_results(tmp_path, {"cmc": 3, "wine-quality": 5})
    records = pd.concat([pd.read_csv(p) for p in paths])
    info = {"CC": ("CC", "baseline"), "PACC": ("PACC", "reference")}
    result = build_table(
        paths, "quantification", "label", ["CC", "PACC"], tmp_path / "t", method_info=info
    )
    named = with_class_counts(result, records)
    assert named.setups == [("LR", "cmc (k=3)"), ("LR", "wine-quality (k=5)")]
    assert named.means is result.means  # only the row names change
    assert with_class_counts(result, records.drop(columns="n_classes")) is result
