"""The PDF report compiles where pdflatex is installed (docs/reporting.md, "The PDF report"; the tests skip with
the reason elsewhere, .ci/run installs no TeX): a tall regime table fits its page, and the report of
the .test run has one reliability figure per calibrator of the run, each embedded in the PDF."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import yaml

from unishift.report.document import (
    ReportContent,
    build_report_pdf,
    overflowing_floats,
    report_tex,
)

needs_pdflatex = pytest.mark.skipif(
    shutil.which("pdflatex") is None,
    reason="pdflatex is not installed (the PDF report is optional; Debian: texlive-latex-base "
    "texlive-latex-recommended texlive-latex-extra texlive-pictures)",
)


def test_overflowing_floats_reads_latex_warnings():
    log = (
        "[37] [38]\nLaTeX Warning: Float too large for page by 80.20433pt on input line 669.\n\n"
        "Overfull \\hbox (3.0pt too wide) in paragraph at lines 5--6\n"
    )
    assert overflowing_floats(log) == [
        "LaTeX Warning: Float too large for page by 80.20433pt on input line 669."
    ]
    assert overflowing_floats("LaTeX Warning: No \\author given.") == []


def _tall_regime_table(path: Path, descriptors: int = 6, bins: int = 12) -> Path:
    """The layout of results/regimes/<task>_<shift>.tex: one headed tabular per descriptor, stacked
    (taller than a landscape page at these sizes)."""
    blocks = []
    for d in range(descriptors):
        rows = "\n".join(f"$[{b}, {b + 1})$ & 4 & 0.{b:04d} & 0.5000 & A \\\\" for b in range(bins))
        blocks.append(
            f"\\noindent\\textbf{{descriptor {d}}} (0 samples left out)\\\\\n"
            "\\resizebox{\\textwidth}{!}{%\n\\begin{tabular}{lrrrl}\n\\hline\n"
            f"bin & $n$ & A & B & winner \\\\\n\\hline\n{rows}\n\\hline\n\\end{{tabular}}}}\n"
            "\\par\\medskip\n"
        )
    path.write_text("\n".join(blocks), encoding="utf-8")
    return path


@needs_pdflatex
def test_a_regime_table_taller_than_the_page_is_scaled_to_fit(tmp_path, capsys):
    """Before the report scaled them, LaTeX cut the last descriptors of a regime table off at the
    page's foot (and said so only in its log)."""
    table = _tall_regime_table(tmp_path / "regime.tex")
    content = ReportContent(regimes=[("regimes", table)])
    assert build_report_pdf(content, tmp_path / "report.pdf") is not None
    assert "Float too large" not in capsys.readouterr().err


@needs_pdflatex
def test_the_test_runs_report_has_one_reliability_figure_per_calibrator(
    finished_test_run, tmp_path
):
    from tests.workflow.test_workflow import snakemake

    work = tmp_path / "wf"
    shutil.copytree(finished_test_run[0], work, symlinks=True)
    (work / "pdf.yaml").write_text("report_pdf: true\n")
    snakemake(
        "--cores", "1", "results/report.pdf", "--configfile", ".test/config.yaml", "pdf.yaml",
        cwd=work,
    )  # fmt: skip
    results = work / "results"
    assert (results / "report.pdf").read_bytes()[:5] == b"%PDF-"
    assert "Float too large" not in (results / "logs" / "report_pdf.log").read_text()
    config = yaml.safe_load((work / ".test" / "config.yaml").read_text())
    tex = (results / "report.tex").read_text()
    section = tex.split(r"\section{Reliability diagrams}")[1].split(r"\section{")[0]
    included = [Path(p) for p in re.findall(r"\\includegraphics\[[^]]*\]\{([^}]*)\}", section)]
    calibrators = config["methods"]["label"]["calibration"]
    assert [p.name for p in included] == [
        f"calibration_label_reliability_{method}.png" for method in calibrators
    ]
    assert all(p.is_file() for p in included)
    # every PNG of the document is embedded once: an image XObject each, and one soft mask (the
    # alpha channel) each; pdfTeX never packs a stream's dictionary into a compressed object stream
    pngs = set(re.findall(r"\\includegraphics\[[^]]*\]\{([^}]*\.png)\}", tex))
    pdf = (results / "report.pdf").read_bytes()
    images = len(re.findall(rb"/Subtype\s*/Image", pdf)) - len(re.findall(rb"/SMask\s", pdf))
    assert images == len(pngs) >= len(calibrators)


def _blank_png(path: Path, size=(90, 40)) -> Path:
    from PIL import Image

    Image.new("RGB", size, "white").save(path)
    return path


@needs_pdflatex
def test_a_report_with_the_default_runs_many_figures_compiles(tmp_path, capsys):
    """The default run has a reliability diagram per calibrator and shift (18 x 3) and nine
    error-by-shift plots. While every figure waited for its section's closing \\clearpage, some
    fifty page-sized floats queued there made LaTeX's output routine loop ("Output loop---100
    consecutive dead cycles") and pdflatex stopped with no PDF; forty still compiled."""
    png = _blank_png(tmp_path / "diagram.png", (900, 400))
    content = ReportContent(
        figures=[(f"error by shift {i}", png) for i in range(9)],
        reliability=[(f"reliability {i}", png) for i in range(54)],
    )
    assert build_report_pdf(content, tmp_path / "report.pdf") is not None
    assert "Float too large" not in capsys.readouterr().err


def _compile(tex: str, folder: Path) -> str:
    """pdflatex's log of ``tex`` (which must compile)."""
    import subprocess

    (folder / "doc.tex").write_text(tex, encoding="utf-8")
    run = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "doc.tex"],
        cwd=folder, capture_output=True, text=True, errors="replace", check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-2000:]
    return (folder / "doc.log").read_text(encoding="utf-8", errors="replace")


@needs_pdflatex
def test_a_classifiers_label_fits_a_block_of_four_data_sets(tmp_path):
    """The default run's label-shift tables: four data sets per classifier. The classifier's name,
    turned on its side in one line, was taller than its block and ran into the next block's
    (LaTeX says "Overfull \\vbox" for each); broken into lines, it fits."""
    from unishift.report.render import render_template

    names = ["Logistic Regression", "Naïve Bayes", "k Nearest Neighbor", "Multi-layer Perceptron"]
    cells = ["0.100", "0.200"]
    blocks = [
        {
            "label": name,
            "rows": [{"dataset": rf"\texttt{{d{i}}}", "cells": cells} for i in range(4)],
        }
        for name in names
    ]
    table = render_template(
        "result_table.tex.j2", width=r"\textwidth", col_spec="cc|cc",
        group_cells=[r"\multicolumn{2}{c}{Methods}"], headers=["A", "B"], blocks=blocks,
        win_rows=[{"i": i, "cells": ["50.00\\%", "50.00\\%"]} for i in (1, 2, 3)],
        ranks=["1.50", "1.50"], notes=[], below_share=0, min_coverage="90\\%", na_cells=0,
        n_experiments=16, degenerate=False, trivial_answer="", trivial_mean="", n_beaten=0,
        n_judged=2,
    )  # fmt: skip
    (tmp_path / "table.tex").write_text(table, encoding="utf-8")
    tex = report_tex(ReportContent(tables=[("table", tmp_path / "table.tex")]))
    log = _compile(tex, tmp_path)
    assert "Overfull \\vbox" not in log
    for name in names:
        assert name in table


def test_wide_reliability_figures_go_two_to_a_page_and_tall_ones_alone(tmp_path):
    """Two classes draw a column per band (wide: half a page each); k classes a row per band and a
    column per class (tall: squeezed to half a page, its panels would be unreadable). The section's
    first page holds one figure under the section's text. A page of three floats, or a tall figure
    paired, would show in the pages' figure counts and heights."""
    wide = _blank_png(tmp_path / "wide.png", (900, 400))
    tall = _blank_png(tmp_path / "tall.png", (1200, 1100))
    order = [wide, wide, wide, wide, wide, tall, wide, wide]
    tex = report_tex(ReportContent(reliability=[(f"r{i}", p) for i, p in enumerate(order)]))
    section = tex.split(r"\section{Reliability diagrams}")[1]
    pages = [p for p in section.split(r"\clearpage") if r"\includegraphics" in p]
    heights = [re.findall(r"height=([0-9.]+)\\textheight", page) for page in pages]
    assert heights == [["0.4"], ["0.4", "0.4"], ["0.4", "0.4"], ["0.8"], ["0.4", "0.4"]]
    captions = [re.findall(r"\\caption\{(r\d)\}", page) for page in pages]
    assert captions == [["r0"], ["r1", "r2"], ["r3", "r4"], ["r5"], ["r6", "r7"]]
