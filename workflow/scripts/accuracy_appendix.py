from unishift.workflow.job_server import run_in_server

run_in_server(snakemake, __file__)  # returns where no job server runs it (docs/evaluation-jobs.md)

from unishift.report.pipeline import build_accuracy
from unishift.workflow.jobs import start_job

log = start_job(snakemake)
comparison = build_accuracy(
    snakemake.input[0], snakemake.wildcards.shift, snakemake.output.tex, snakemake.output.csv
)
log.info("verdicts against the paper: %s", comparison["verdict"].value_counts().to_dict())
