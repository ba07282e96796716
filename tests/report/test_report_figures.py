import shutil

import numpy as np
import pandas as pd
import pytest

from tests.report.test_report_tables import k_class_records
from unishift.evaluation.records import COLUMNS, TWO_CLASS
from unishift.report import document
from unishift.report.appendix import write_accuracy_tex
from unishift.report.cd import cd_groups_frame, latex_to_mathtext, write_cd, xticks
from unishift.report.document import ReportContent, build_report_pdf
from unishift.report.paper import load_paper
from unishift.report.plots import density, error_by_shift, plot_error_by_shift, shift_bins
from unishift.report.tables import compute_table, write_table_tex

INFO = {
    "B": ("Platt", "baseline"),
    "R1": ("TransCal", "reference"),
    "R2": ("LasCal", "reference"),
    "A1": (r"$\text{PCC}^{5\text{B}}_{\rho 2\zeta}$", "adapted"),
    "A2": (r"LEAP$_{\alpha 2\zeta}^{\text{PCC}-6\text{B}}$", "adapted"),
}


def _records(shift="label", n=40, seed=0):
    rng = np.random.default_rng(seed)
    offsets = {"A1": 0.0, "R1": 0.3, "B": 0.3, "R2": 0.6, "A2": 0.9}
    rows = []
    for clf in ("LR", "NB"):
        for ds in ("cmc.3", "yeast"):
            base = rng.uniform(0, 1, n)
            intensity = rng.uniform(0, 1, n)
            for m, off in offsets.items():
                err = base + off + rng.normal(0, 0.05, n)
                for s in range(n):
                    rows.append(
                        {"shift": shift, "task": "calibration", "method": m, "classifier": clf, "dataset": ds,
                             "sample_id": s, "shift_intensity": intensity[s], "true_value": 0.5, "estimate": 0.5,
                             "error": err[s], "ece": err[s], "ece_positive": err[s], "brier": 0.2, "status": "ok",
                             "reason": ""}
                    )  # fmt: skip
    return pd.DataFrame(rows, columns=COLUMNS[TWO_CLASS])


def test_write_cd_outputs(tmp_path):
    result = compute_table(_records(), "calibration", "label", list(INFO), method_info=INFO)
    cd = write_cd(result, tmp_path / "cd.tex", tmp_path / "cd.png")
    # ranks come from the same matrix as the table's Ave Rank row
    assert np.allclose(cd.avg_ranks, result.avg_ranks)
    assert [set(g) for g in cd.groups] == [{"R1", "B"}]
    tex = (tmp_path / "cd.tex").read_text()
    assert r"title={Calibration under Label Shift}," in tex
    assert r"node[treatment label, anchor=west] {\textbf{LasCal}};" in tex
    assert "] {Platt};" in tex and r"anchor=east] {$\text{PCC}" in tex
    assert tex.count(r"\draw[group line]") == 1
    assert (tmp_path / "cd.png").read_bytes()[:4] == b"\x89PNG"
    write_cd(result, tmp_path / "cd2.tex", tmp_path / "cd2.png")
    assert (tmp_path / "cd.png").read_bytes() == (tmp_path / "cd2.png").read_bytes()
    frame = cd_groups_frame(cd)
    assert (
        frame["method"].tolist()[0] == "A1"
        and frame.loc[frame.method == "A1", "groups"].item() == ""
    )


@pytest.mark.parametrize(
    "k, ticks, minor",
    [(6, [1, 2, 3, 4, 5, 6], 3), (8, list(range(1, 9)), 1), (10, [1, 2.5, 4, 5.5, 7, 8.5, 10], 1),
     (13, [1, 4, 7, 10, 13], 1), (11, [1, 3, 5, 7, 9, 11], 1), (12, None, None), (18, None, None)],
)  # fmt: skip
def test_xticks(k, ticks, minor):
    assert xticks(k) == (ticks, minor)


def test_every_paper_label_renders_in_matplotlib():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = sorted(set(load_paper("cd")["display"].dropna()))
    fig, ax = plt.subplots()
    for i, label in enumerate(labels):
        text, bold = latex_to_mathtext(label)
        assert r"\text" not in text
        ax.text(0, i, text, fontweight="bold" if bold else "normal")
    fig.canvas.draw()  # raises on mathtext that matplotlib cannot parse
    plt.close(fig)


def test_shift_bins_edges():
    assert shift_bins(np.array([0.0, 0.05, 0.1, 0.95, 1.0])).tolist() == [0, 0, 1, 9, 9]


def test_error_by_shift_points_and_density(tmp_path):
    records = _records()
    points = error_by_shift(records, ["B", "A1"])
    assert points["method"].unique().tolist() == ["B", "A1"]
    sel = records[(records.method == "B") & (shift_bins(records.shift_intensity.to_numpy()) == 3)]
    row = points[(points.method == "B") & (points.bin == 3)].iloc[0]
    assert row["shift"] == pytest.approx(
        sel.shift_intensity.mean()
    )  # x = mean shift, not bin centre
    assert row["error"] == pytest.approx(sel.error.mean())
    # the records of the k-class layout give the same points
    k_class = k_class_records(records)
    pd.testing.assert_frame_equal(error_by_shift(k_class, ["B", "A1"]), points)
    dens = density(records, "label")
    assert dens.sum() == pytest.approx(1.0) and len(dens) == 10
    assert density(records, "covariate").tolist() == [0.1] * 10
    out = plot_error_by_shift(
        records, "calibration", "label", [tmp_path / "p.png", tmp_path / "p.pdf"],
        methods=[("B", "black"), ("A1", "gray")], method_info=INFO,
    )  # fmt: skip
    assert len(out) > 0 and (tmp_path / "p.pdf").read_bytes()[:4] == b"%PDF"
    plot_error_by_shift(
        records, "calibration", "label", [tmp_path / "q.png", tmp_path / "q.pdf"],
        methods=[("B", "black"), ("A1", "gray")], method_info=INFO,
    )  # fmt: skip
    for ext in ("png", "pdf"):
        assert (tmp_path / f"p.{ext}").read_bytes() == (tmp_path / f"q.{ext}").read_bytes()


def test_density_fills_empty_bins():
    records = _records()
    records = records.assign(shift_intensity=0.05)
    assert density(records, "label").tolist() == [1.0] + [0.0] * 9


needs_pdflatex = pytest.mark.skipif(
    shutil.which("pdflatex") is None, reason="pdflatex is not installed"
)


def _content(tmp_path):
    records = _records()
    result = compute_table(records, "calibration", "label", list(INFO), method_info=INFO)
    write_table_tex(result, tmp_path / "t.tex")
    write_cd(result, tmp_path / "cd.tex", tmp_path / "cd.png")
    plot_error_by_shift(records, "calibration", "label", [tmp_path / "p.pdf"],
                        methods=[("B", "black"), ("A1", "gray")], method_info=INFO)  # fmt: skip
    acc = pd.DataFrame(
        {"classifier": ["LR", "NB"], "dataset": ["my_data", "my_data"], "accuracy": [0.9, 0.8]}
    )
    acc.to_csv(tmp_path / "acc.csv", index=False)
    write_accuracy_tex(tmp_path / "acc.csv", tmp_path / "acc.tex", "label")
    return ReportContent(
        tables=[("Calibration under label shift (ECE)", tmp_path / "t.tex")],
        cd=[("CD diagram", tmp_path / "cd.tex")],
        figures=[("ECE by shift", tmp_path / "p.pdf")],
        appendix=[("Accuracy", tmp_path / "acc.tex")],
    )


def test_report_skips_without_pdflatex(tmp_path, monkeypatch, capsys):
    content = _content(tmp_path)
    monkeypatch.setattr(document.shutil, "which", lambda name: None)
    assert build_report_pdf(content, tmp_path / "out" / "report.pdf") is None
    assert "pdflatex not found" in capsys.readouterr().err
    tex = (tmp_path / "out" / "report.tex").read_text()
    assert r"\begin{tikzpicture}" in tex and r"\texttt{my\_data}" in tex
    assert not (tmp_path / "out" / "report.pdf").exists()


@needs_pdflatex
def test_report_compiles(tmp_path):
    pdf = build_report_pdf(_content(tmp_path), tmp_path / "report.pdf")
    assert pdf is not None and pdf.read_bytes()[:4] == b"%PDF"
    assert pdf.stat().st_size > 10_000


# QuaPy's quapy/plot.py sets these global settings when imported, and the job server imports QuaPy
QUAPY_PLOT_SETTINGS = {
    "figure.figsize": (10, 6),
    "figure.dpi": 200,
    "savefig.dpi": 200,
    "font.size": 18,
    "font.family": ["serif"],
}


def _every_figure(folder):
    """Each kind of figure the workflow writes: a CD diagram, an error-by-shift plot, a regime map,
    a compound-shift 2-D map and a reliability diagram."""
    from tests.evaluation.test_reliability import _posteriors, _setup
    from tests.regimes.test_regimes_maps import _compound_records
    from tests.regimes.test_regimes_maps import _records as regime_records
    from unishift.evaluation.reliability import ReliabilityCollector
    from unishift.regimes.maps import (
        regime_map,
        regime_map_2d,
        write_regime_map_2d,
        write_regime_maps,
    )
    from unishift.report.reliability import plot_reliability

    result = compute_table(_records(), "calibration", "label", list(INFO), method_info=INFO)
    write_cd(result, folder / "cd.tex", folder / "cd.png")
    plot_error_by_shift(
        _records(), "calibration", "label", [folder / "plot.png"], [("A1", "red"), ("B", "blue")],
        method_info=INFO,
    )  # fmt: skip
    write_regime_maps([regime_map(regime_records(), "domain_auc", n_bins=4)], folder / "map")
    compound = regime_map_2d(_compound_records(), n_bins=2, scheme="width", n_bootstrap=20)
    write_regime_map_2d(compound, folder / "map_2d")
    rng, collector = np.random.default_rng(1), ReliabilityCollector()
    for sample_id in (0, 1):
        collector(_setup([0.9, 0.1]), sample_id, *_posteriors(rng, 10, 2))
    plot_reliability(collector.frame(), "M", "M", [folder / "reliability.png"])
    return {p.name: p.read_bytes() for p in sorted(folder.glob("*.png"))}


def test_figures_ignore_the_global_settings_of_whoever_imported_quapy_plot(tmp_path):
    """The same bytes whether the process (the job server) imported quapy.plot or not: each figure
    draws with its own settings. Before they did, the plot came out at 200 dpi instead of 150."""
    import matplotlib

    (tmp_path / "plain").mkdir()
    (tmp_path / "quapy").mkdir()
    with matplotlib.rc_context():
        matplotlib.rcdefaults()
        plain = _every_figure(tmp_path / "plain")
    with matplotlib.rc_context(QUAPY_PLOT_SETTINGS):
        with_quapy = _every_figure(tmp_path / "quapy")
        assert (
            matplotlib.rcParams["figure.dpi"] == 200
        )  # the caller's settings are left as they were
    assert set(plain) == {"cd.png", "plot.png", "map.png", "map_2d.png", "reliability.png"}
    assert plain == with_quapy
    import quapy.plot  # noqa: F401  (what the job server imports)

    assert _every_figure(tmp_path / "quapy") == plain
