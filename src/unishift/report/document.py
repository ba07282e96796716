"""``results/report.pdf``: every table, CD diagram and figure in one LaTeX document."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from unishift.report.render import render_template


@dataclass
class ReportContent:
    """Paths of the pieces to include, each with a caption, in order of appearance."""

    tables: list[tuple[str, Path]] = field(default_factory=list)  # result/Brier tables (.tex)
    cd: list[tuple[str, Path]] = field(default_factory=list)  # CD tikzpictures (.tex)
    # error-by-shift plots (.pdf/.png)
    figures: list[tuple[str, Path]] = field(default_factory=list)
    # regime maps (docs/regimes.md §3): their tabulars (.tex) and panels (.png)
    regimes: list[tuple[str, Path]] = field(default_factory=list)
    regime_figures: list[tuple[str, Path]] = field(default_factory=list)
    appendix: list[tuple[str, Path]] = field(default_factory=list)  # accuracy tables (.tex)
    # the calibrators' reliability diagrams (.png, unishift.report.reliability)
    reliability: list[tuple[str, Path]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # free text paragraphs (LaTeX)


# A reliability figure this many times wider than tall (a column per band: two classes) takes half
# a page; a taller one (a row per band and a column per class: k classes) a whole page
WIDE_FIGURE = 1.6


def reliability_pages(items: list[tuple[str, Path]]) -> list[list[tuple[str, str, str]]]:
    """The reliability figures by page, each as (caption, path, share of the text height): two
    wide figures to a page, a tall one alone; the section's first page holds one figure, under its
    text. Every page is cleared before the next (report.tex.j2: so that LaTeX never queues more
    than a page of floats)."""
    from PIL import Image

    pages: list[list[tuple[str, str, str]]] = []
    for caption, path in items:
        with Image.open(path) as image:
            wide = image.width >= WIDE_FIGURE * image.height
        figure = (caption, Path(path).resolve().as_posix(), "0.4" if wide else "0.8")
        last = pages[-1] if pages else []
        if len(pages) > 1 and len(last) == 1 and wide and last[0][2] == "0.4":
            last.append(figure)
        else:
            pages.append([figure])
    return pages


def report_tex(content: ReportContent) -> str:
    """The document source; pieces are inlined so that the .tex compiles on its own."""

    def read(items):
        return [(caption, Path(p).read_text(encoding="utf-8")) for caption, p in items]

    return render_template(
        "report.tex.j2",
        tables=read(content.tables),
        cds=read(content.cd),
        figures=[(caption, Path(p).resolve().as_posix()) for caption, p in content.figures],
        regimes=read(content.regimes),
        regime_figures=[
            (caption, Path(p).resolve().as_posix()) for caption, p in content.regime_figures
        ],
        appendix=read(content.appendix),
        reliability=reliability_pages(content.reliability),
        notes=content.notes,
    )


def overflowing_floats(latex_log: str) -> list[str]:
    """LaTeX's warnings about floats taller than the page: what does not fit is cut off at the
    page's foot, silently but for this line of the log."""
    return re.findall(r"LaTeX Warning: Float too large for page by [^\n]*", latex_log)


def build_report_pdf(content: ReportContent, pdf_path: str | Path) -> Path | None:
    """Write ``<pdf stem>.tex`` next to ``pdf_path`` and compile it; returns the PDF path, or None
    (with a message on stderr) when pdflatex is not installed. A failed compilation raises with the
    end of the LaTeX log; a float too large for its page is reported on stderr (the job's log)."""
    pdf_path = Path(pdf_path)
    pdf_path.parent.mkdir(parents=True, exist_ok=True)
    tex_path = pdf_path.with_suffix(".tex")
    tex_path.write_text(report_tex(content), encoding="utf-8")
    exe = shutil.which("pdflatex")
    if exe is None:
        print(f"pdflatex not found: wrote {tex_path}, skipped building {pdf_path}", file=sys.stderr)
        return None
    # Fixed dates and IDs so that the same sources give the same PDF bytes.
    env = dict(os.environ, SOURCE_DATE_EPOCH="0", FORCE_SOURCE_DATE="1")
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copy(tex_path, Path(tmp) / "report.tex")
        run = subprocess.run(
            [exe, "-interaction=nonstopmode", "-halt-on-error", "report.tex"],
            check=False,
            cwd=tmp,
            env=env,
            capture_output=True,
            text=True,
            errors="replace",
        )
        if run.returncode != 0:
            raise RuntimeError(f"pdflatex failed on {tex_path}:\n{run.stdout[-3000:]}")
        log = (Path(tmp) / "report.log").read_text(encoding="utf-8", errors="replace")
        for warning in overflowing_floats(log):
            print(f"{pdf_path}: {warning}", file=sys.stderr)
        shutil.copy(Path(tmp) / "report.pdf", pdf_path)
    return pdf_path
