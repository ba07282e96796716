"""End to end: per-sample result files -> tables, CD diagram, plot and the comparison with the paper."""

import numpy as np
import pandas as pd

from unishift.evaluation import RECORD_COLUMNS
from unishift.report.paper import load_paper
from unishift.report.pipeline import (
    build_accuracy,
    build_cd,
    build_error_by_shift,
    build_reproduction,
    build_table,
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
        pd.DataFrame(rows, columns=RECORD_COLUMNS).to_csv(path, index=False)
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
