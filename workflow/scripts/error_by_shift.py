from pathlib import Path

from unishift.jobs import start_job
from unishift.report.pipeline import build_error_by_shift

start_job(snakemake.log[0])
build_error_by_shift(
    snakemake.input,
    snakemake.wildcards.task,
    snakemake.wildcards.shift,
    Path(snakemake.output.pdf).parent,
)
