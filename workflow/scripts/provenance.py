from unishift.workflow.job_server import run_in_server

run_in_server(snakemake, __file__)  # returns where no job server runs it (docs/evaluation-jobs.md)

from unishift.io import write_json
from unishift.workflow.jobs import start_job
from unishift.workflow.provenance import deployment, provenance

start_job(snakemake)
record = provenance(dict(snakemake.config), code_version=snakemake.params.code)
record.update(
    deployment(
        snakemake.params.repository,
        snakemake.params.lock_file,
        hub_manifests=snakemake.input.hub,
        lm_reports=snakemake.input.lm_reports,
    )
)
write_json(snakemake.output[0], record)
