from pathlib import Path

from unishift.report.document import ReportContent, build_report_pdf
from unishift.workflow.jobs import start_job


def captioned(paths):
    return [(Path(p).stem.replace("_", " "), Path(p)) for p in paths]


log = start_job(snakemake)
content = ReportContent(
    tables=captioned(snakemake.input.tables),
    cd=captioned(snakemake.input.cd),
    figures=captioned(snakemake.input.figures),
    regimes=captioned(snakemake.input.regimes),
    regime_figures=captioned(snakemake.input.regime_figures),
    appendix=captioned(snakemake.input.appendix),
    reliability=captioned(snakemake.input.reliability),
)
if build_report_pdf(content, snakemake.output[0]) is None:
    raise RuntimeError("pdflatex is not installed; set report_pdf: false or install TeX Live")
