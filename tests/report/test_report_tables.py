import json
import re

import numpy as np
import pandas as pd
import pytest

from unishift.evaluation.records import COLUMNS, K_CLASS, TWO_CLASS
from unishift.io import DamagedFileError, write_csv
from unishift.report.appendix import render_accuracy_covariate_tex, render_accuracy_label_tex
from unishift.report.tables import (
    compute_table,
    load_records,
    read_records,
    render_table_tex,
    write_table_csv,
    write_table_tex,
)

INFO = {
    "B": ("Naive", "baseline"),
    "R1": ("ATC", "reference"),
    "R2": (r"LEAP$^{\text{PCC}}$", "reference"),
    "A1": (r"PCC$_{\rho 2 \alpha}$", "adapted"),
    "A2": ("DMCal", "adapted"),
}
SETUPS = [("LR", "cmc.3"), ("LR", "yeast"), ("NB", "cmc.3"), ("NB", "yeast")]
N = 30


def _records(values: dict, status: dict | None = None) -> pd.DataFrame:
    """values[(method, clf, ds)] -> array of N per-sample errors."""
    rows = []
    for (method, clf, ds), errs in values.items():
        for s, e in enumerate(errs):
            st = (status or {}).get((method, clf, ds, s), "ok")
            rows.append(
                {"shift": "label", "task": "cap", "method": method, "classifier": clf, "dataset": ds,
                     "sample_id": s, "shift_intensity": s / N, "true_value": 0.5, "estimate": 0.5,
                     "error": np.nan if st == "error" else e, "ece": np.nan, "ece_positive": np.nan,
                     "brier": np.nan, "status": st, "reason": "boom" if st != "ok" else ""}
            )  # fmt: skip
    return pd.DataFrame(rows, columns=COLUMNS[TWO_CLASS]).sample(frac=1.0, random_state=0)


def k_class_records(frame: pd.DataFrame, n_classes: int = 3) -> pd.DataFrame:
    """The same records in the k-class layout (a run whose data have ``n_classes`` classes): the
    same errors, prevalence vectors, AE and RAE columns, the class-wise ECE for the positive one."""
    frame = frame.assign(
        n_classes=n_classes,
        true_prevalence=json.dumps([1 / n_classes] * n_classes),
        estimated_prevalence=json.dumps([1 / n_classes] * n_classes),
        ae=frame["error"],
        rae=frame["error"],
        ece_classwise=frame["ece_positive"],
    )
    return frame[list(COLUMNS[K_CLASS])]


def _values(seed=0):
    rng = np.random.default_rng(seed)
    offsets = {"A1": 0.0, "R1": 0.05, "B": 0.5, "R2": 0.3, "A2": 0.2}
    out = {}
    for clf, ds in SETUPS:
        base = rng.uniform(0, 0.1, N)
        for m, off in offsets.items():
            out[(m, clf, ds)] = base + off + rng.normal(0, 0.002, N)
    return out


def _table(values, status=None, methods=("A1", "R1", "B", "R2", "A2")):
    return compute_table(_records(values, status), "cap", "label", list(methods), method_info=INFO)


def test_columns_grouped_in_config_order_and_rows_in_paper_order():
    result = _table(_values(), methods=("A2", "R2", "A1", "B", "R1"))
    assert result.names == ["B", "R2", "R1", "A2", "A1"]
    assert result.setups == SETUPS


def test_means_bold_colours_wins_ranks():
    values = _values()
    result = _table(values)
    names = result.names  # B, R1, R2, A1, A2
    for s, (clf, ds) in enumerate(SETUPS):
        for j, m in enumerate(names):
            assert result.means[s, j] == pytest.approx(values[(m, clf, ds)].mean())
        # A1 is best by a clear margin and everything else is significantly worse
        assert result.bold[s].tolist() == [False, False, False, True, False]
        assert result.colours[s][names.index("A1")] == "green!40"
        assert result.colours[s][names.index("B")] == "red!40"
    # A1 beats both references on every experiment, B on none, A2 beats R2 only
    wins = result.wins
    assert wins.rates[:, names.index("A1")].tolist() == [1.0, 1.0]
    assert wins.rates[:, names.index("B")].tolist() == [0.0, 0.0]
    assert wins.rates[:, names.index("A2")].tolist() == [1.0, 0.0]
    assert wins.dagger[:, names.index("A1")].tolist() == [True, True]
    assert wins.dagger[:, names.index("A2")].tolist() == [True, False]
    assert result.avg_ranks.tolist() == [5.0, 2.0, 4.0, 1.0, 3.0]
    assert result.rank_bold.tolist() == [False, True, False, True, False]


def test_errored_cell_is_na_and_counted():
    values = _values()
    status = {("R2", "NB", "yeast", s): "error" for s in range(N)}
    status.update({("A2", "LR", "cmc.3", s): "fallback" for s in range(5)})
    status[("A2", "LR", "yeast", 0)] = "error"
    result = _table(values, status)
    names = result.names
    s = SETUPS.index(("NB", "yeast"))
    assert np.isnan(result.means[s, names.index("R2")])
    assert not result.bold[s, names.index("R2")]
    assert result.colours[s][names.index("R2")] is None
    assert result.n_errors[s, names.index("R2")] == N
    assert result.n_fallbacks[SETUPS.index(("LR", "cmc.3")), names.index("A2")] == 5
    partial = SETUPS.index(("LR", "yeast"))
    assert result.n_samples[partial, names.index("A2")] == N - 1
    assert result.means[partial, names.index("A2")] == pytest.approx(
        values[("A2", "LR", "yeast")][1:].mean()
    )
    tex = render_table_tex(result)
    assert " & n/a & " in tex
    assert r"LEAP$^{\text{PCC}}$: 0 fallbacks, 30 errors" in tex
    assert "DMCal: 5 fallbacks, 1 error." in tex
    failures = result.failures()
    assert failures.set_index("method").loc["A2"].tolist() == ["DMCal", 5, 1]


def test_misaligned_samples_are_rejected():
    values = _values()
    records = _records(values)
    drop = records[
        (records.method == "B") & (records.classifier == "LR") & (records.dataset == "yeast")
    ].index[:1]
    with pytest.raises(ValueError, match="sample ids differ"):
        compute_table(records.drop(drop), "cap", "label", list(INFO), method_info=INFO)
    with pytest.raises(ValueError, match="expected 100"):
        compute_table(records, "cap", "label", list(INFO), method_info=INFO, n_samples=100)
    with pytest.raises(ValueError, match="duplicate"):
        compute_table(
            pd.concat([records, records.iloc[:1]]), "cap", "label", list(INFO), method_info=INFO
        )


def test_tex_layout():
    result = _table(_values())
    tex = render_table_tex(result)
    lines = tex.splitlines()
    assert lines[0] == r"\resizebox{\textwidth}{!}{%"
    assert lines[1] == r"\begin{tabular}{cc|c|cc|cc} \toprule"
    assert lines[2] == (
        r"\multicolumn{2}{c}{} & \multicolumn{1}{c|}{Baselines} & \multicolumn{2}{c|}{Reference} & "
        r"\multicolumn{2}{c}{Adapted Methods} \\"
    )
    assert lines[3].startswith(r"\multicolumn{2}{c}{} & \begin{sideways}Naive\;\end{sideways} & ")
    assert lines[3].endswith(r"\begin{sideways}DMCal\;\end{sideways} \\\midrule")
    assert lines[4].startswith(
        r"\multirow{2}{*}{\begin{sideways}\parbox{\dimexpr2\normalbaselineskip-4pt\relax}{\centering\scriptsize Logistic Regression}\end{sideways}} & \texttt{cmc.3} & $"
    )
    assert lines[5].startswith(r" & \texttt{yeast} & ") and lines[5].endswith(r"\\\midrule")
    assert lines[6].startswith(
        r"\multirow{2}{*}{\begin{sideways}\parbox{\dimexpr2\normalbaselineskip-4pt\relax}{\centering\scriptsize Naïve Bayes}\end{sideways}}"
    )
    assert lines[7].endswith(r"\\\bottomrule")
    assert lines[8].startswith(
        # "Wins" fits two rows in one line, as the paper sets it; the classifiers' names do not
        r"\multirow{2}{*}{\begin{sideways}Wins\;\end{sideways}} &  $\Pr(M\succ {1}R)$ &$\dag 0.00\%$".replace(
            r"\dag 0.00", "0.00"
        )
    )
    assert r"$\dag 100.00\%$" in lines[8] and " & --- & --- & " in lines[8]
    assert lines[9].endswith(r"\\\bottomrule")
    assert (
        lines[10]
        == r"  & Ave Rank &5.00 & \textbf{2.00} & 4.00 & \textbf{1.00} & 3.00 \\\bottomrule"
    )
    assert lines[11:] == [r"\end{tabular}", "}%"]
    cell = re.findall(r"\$\\textbf\{(\d\.\d{3})\}\$\\cellcolor\{green!40\}", lines[4])
    assert len(cell) == 1


def test_outputs_are_deterministic(tmp_path):
    values = _values()
    for run in ("a", "b"):
        result = _table(values)
        write_table_csv(result, tmp_path / run / "cap_label.csv")
        write_table_tex(result, tmp_path / run / "cap_label.tex")
    for name in ("cap_label.csv", "cap_label_summary.csv", "cap_label.tex"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    cells = pd.read_csv(tmp_path / "a" / "cap_label.csv")
    assert list(cells.columns[:8]) == [
        "classifier", "dataset", "method", "group", "mean_error", "n_samples", "n_fallbacks", "n_errors"
    ]  # fmt: skip
    assert len(cells) == len(SETUPS) * 5
    summary = pd.read_csv(tmp_path / "a" / "cap_label_summary.csv")
    assert summary.set_index("method").loc["A1", "wins_1"] == 1.0


def test_load_records_roundtrip(tmp_path):
    records = _records(_values())
    path = tmp_path / "x.csv"
    records.to_csv(path, index=False)
    loaded = load_records([path])
    assert loaded["dataset"].map(type).eq(str).all() and loaded["reason"].isna().all()
    assert set(loaded["classifier"]) == {"LR", "NB"}
    bad = tmp_path / "bad.csv"
    records.drop(columns="brier").to_csv(bad, index=False)
    with pytest.raises(ValueError, match="columns"):
        load_records([bad])


def test_records_of_either_layout_are_read_and_a_mix_is_refused(tmp_path):
    two = _records(_values())
    k = k_class_records(two)
    write_csv(tmp_path / "two.csv", two)
    write_csv(tmp_path / "k.csv", k)
    assert list(read_records(tmp_path / "two.csv").columns) == list(COLUMNS[TWO_CLASS])
    loaded = read_records(tmp_path / "k.csv")
    assert list(loaded.columns) == list(COLUMNS[K_CLASS])
    # the vectors stay text (JSON), the numbers are numbers
    assert loaded["true_prevalence"].iloc[0] == json.dumps([1 / 3] * 3)
    assert loaded["n_classes"].dtype.kind in "iu" and loaded["ae"].dtype.kind == "f"
    assert len(load_records([tmp_path / "k.csv", tmp_path / "k.csv"])) == 2 * len(k)
    with pytest.raises(ValueError, match=r"mix the record layouts \['k_class', 'two_class'\]"):
        load_records([tmp_path / "two.csv", tmp_path / "k.csv"])
    # the tables do not depend on the layout: the same errors give the same numbers
    from_two = compute_table(two, "cap", "label", list(INFO), method_info=INFO)
    from_k = compute_table(loaded, "cap", "label", list(INFO), method_info=INFO)
    np.testing.assert_array_equal(from_two.means, from_k.means)
    assert render_table_tex(from_two) == render_table_tex(from_k)


def test_columns_of_no_layout_are_refused(tmp_path):
    k = k_class_records(_records(_values()))
    k.drop(columns="rae").to_csv(tmp_path / "k.csv", index=False)
    with pytest.raises(DamagedFileError, match="are not those of a record layout"):
        read_records(tmp_path / "k.csv")
    k[list(reversed(COLUMNS[K_CLASS]))].to_csv(tmp_path / "order.csv", index=False)
    with pytest.raises(DamagedFileError, match="are not those of a record layout"):
        read_records(tmp_path / "order.csv")


def test_brier_metric_uses_brier_column():
    records = _records(_values())
    records["brier"] = 0.25
    records.loc[records.method == "A1", "brier"] = 0.1
    result = compute_table(records, "cap", "label", list(INFO), method_info=INFO, metric="brier")
    assert result.means[:, result.names.index("A1")].tolist() == pytest.approx([0.1] * 4)


PAPER_UCI = """\
\\texttt{cmc.3} & 0.663 & 0.683 & 0.649 & 0.667 \\\\
\\texttt{yeast} & 0.771 & 0.769 & 0.300 & 0.749 \\\\"""


def test_accuracy_label_table_matches_paper_layout():
    frame = pd.DataFrame(
        [
            ("LR", "yeast", 0.771), ("MLP", "yeast", 0.769), ("NB", "yeast", 0.3), ("kNN", "yeast", 0.749),
            ("LR", "cmc.3", 0.663), ("MLP", "cmc.3", 0.683), ("NB", "cmc.3", 0.649), ("kNN", "cmc.3", 0.667),
        ],
        columns=["classifier", "dataset", "accuracy"],
    )  # fmt: skip
    tex = render_accuracy_label_tex(frame)
    assert (
        " & Logistic Regression & Multi-layer Perceptron & Naïve Bayes & k Nearest Neighbor \\\\"
        in tex
    )
    assert PAPER_UCI in tex


def test_accuracy_covariate_table():
    frame = pd.DataFrame(
        [(m, s, t, 0.5 + 0.01 * i) for i, (m, s, t) in enumerate(
            (m, s, t) for m in ("RoBERTa", "BERT") for s in ("imdb", "rt") for t in ("imdb", "rt"))],
        columns=["model", "source", "target", "accuracy"],
    )  # fmt: skip
    tex = render_accuracy_covariate_tex(frame).splitlines()
    assert tex[5] == r"\multirow{2}{*}{BERT} & \texttt{imdb} & 0.540 & 0.550 \\"
    assert tex[7] == r"\cline{1-4}"
    assert tex[8] == r"\multirow{2}{*}{RoBERTa} & \texttt{imdb} & 0.500 & 0.510 \\"
