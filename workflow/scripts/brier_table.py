from unishift.workflow.job_server import run_in_server

run_in_server(snakemake, __file__)  # returns where no job server runs it (docs/evaluation-jobs.md)

from pathlib import Path

from unishift.report.pipeline import build_table
from unishift.workflow.jobs import start_job

start_job(snakemake)
params = snakemake.params
build_table(
    snakemake.input,
    "calibration",
    snakemake.wildcards.shift,
    methods=params.methods,
    out_dir=Path(snakemake.output.cells).parent,
    metric="brier",
    classifiers=params.classifiers,
    datasets=params.datasets,
    n_samples=params.n_samples,
    alpha=params.alpha,
    method_info={name: tuple(info) for name, info in params.method_info.items()},
    seed=params.seed,
    n_bootstrap=params.n_bootstrap,
)
