from unishift.workflow.job_server import run_in_server

run_in_server(snakemake, __file__)  # returns where no job server runs it (docs/evaluation-jobs.md)

from pathlib import Path

from unishift.report.pipeline import build_cd, build_table
from unishift.workflow.jobs import start_job

log = start_job(snakemake)
params, wildcards = snakemake.params, snakemake.wildcards
result = build_table(
    snakemake.input.records,
    wildcards.task,
    wildcards.shift,
    methods=params.methods,
    out_dir=Path(snakemake.output.cells).parent,
    classifiers=params.classifiers,
    datasets=params.datasets,
    n_samples=params.n_samples,
    alpha=params.alpha,
    method_info={name: tuple(info) for name, info in params.method_info.items()},
    trivial_files=snakemake.input.trivial,
    seed=params.seed,
    n_bootstrap=params.n_bootstrap,
)
build_cd(result, Path(snakemake.output.cd_tex).parent, alpha=params.alpha)
log.info("table and CD diagram of %s under %s shift written", wildcards.task, wildcards.shift)
