from unishift.workflow.job_server import run_in_server

run_in_server(snakemake, __file__)  # returns where no job server runs it (docs/evaluation-jobs.md)

from unishift.report.reliability import build_reliability
from unishift.workflow.jobs import start_job

log = start_job(snakemake)
for diagram in snakemake.params.diagrams:
    frame = build_reliability(
        diagram["inputs"],
        diagram["csv"],
        diagram["png"],
        diagram["method"],
        diagram["display"],
        diagram["shift"],
    )
    log.info(
        "%s under %s shift: %d predictions in %d bin rows",
        diagram["method"],
        diagram["shift"],
        int(frame.loc[frame["target"] == "top_label", "n"].sum()),
        len(frame),
    )
