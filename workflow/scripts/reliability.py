from unishift.workflow.job_server import run_in_server

run_in_server(snakemake, __file__)  # returns where no job server runs it (docs/evaluation-jobs.md)

from unishift.report.reliability import build_reliability
from unishift.workflow.jobs import start_job

log = start_job(snakemake)
frame = build_reliability(
    snakemake.input,
    snakemake.output.csv,
    snakemake.output.png,
    snakemake.wildcards.method,
    snakemake.params.display,
    snakemake.wildcards.shift,
)
log.info(
    "%d predictions in %d bin rows",
    int(frame.loc[frame["target"] == "top_label", "n"].sum()),
    len(frame),
)
