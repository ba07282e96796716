from unishift.workflow.job_server import run_in_server

run_in_server(snakemake, __file__)  # returns where no job server runs it (docs/evaluation-jobs.md)

from unishift.report.pipeline import build_reproduction
from unishift.workflow.jobs import start_job

log = start_job(snakemake)
table = build_reproduction(
    snakemake.input.cells,
    snakemake.input.summary,
    snakemake.wildcards.task,
    snakemake.wildcards.shift,
    snakemake.output.csv,
    snakemake.output.md,
    caveat=snakemake.params.caveat,
)
if len(table):
    log.info("verdicts: %s", table["verdict"].value_counts().to_dict())
