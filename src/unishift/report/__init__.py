"""Paper-grade outputs: result tables (CSV + LaTeX), CD diagrams, error-by-shift plots, appendix
tables, the comparison with the published numbers and the PDF report. No Snakemake in here: the
workflow's rules call :mod:`unishift.report.pipeline`."""
