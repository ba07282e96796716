from unishift.workflow.job_server import run_in_server

run_in_server(snakemake, __file__)  # returns where no job server runs it (docs/evaluation-jobs.md)

from pathlib import Path

from unishift.report.pipeline import build_error_by_shift
from unishift.workflow.jobs import start_job

start_job(snakemake)
params = snakemake.params
build_error_by_shift(
    snakemake.input,
    snakemake.wildcards.task,
    snakemake.wildcards.shift,
    Path(snakemake.output.pdf).parent,
    methods=params.methods,
    classifiers=params.classifiers,
    datasets=params.datasets,
    n_samples=params.n_samples,
    method_info={name: tuple(info) for name, info in params.method_info.items()},
)
