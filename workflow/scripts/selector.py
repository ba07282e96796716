from unishift.workflow.job_server import run_in_server

run_in_server(snakemake, __file__)  # returns where no job server runs it (docs/evaluation-jobs.md)

from unishift.report.regimes import build_selection
from unishift.workflow.jobs import start_job

log = start_job(snakemake)
params, wildcards, output = snakemake.params, snakemake.wildcards, snakemake.output
result = build_selection(
    snakemake.input.records,
    wildcards.task,
    wildcards.shift,
    params.methods,
    params.layout,
    params.seed,
    output.records,
    output.summary,
    output.choices,
    tex_path=output.tex,
    trivial_files=snakemake.input.trivial,
    gains_path=output.gains,
    n_bootstrap=params.n_bootstrap,
    alpha=params.alpha,
)
for row in result["summary"].itertuples():
    log.info(
        "%s: mean error %.6g on %d samples (%s)", row.method, row.mean_error, row.n_finite, row.note
    )
