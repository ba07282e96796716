from unishift.workflow.job_server import run_in_server

run_in_server(snakemake, __file__)  # returns where no job server runs it (docs/evaluation-jobs.md)

import pandas as pd

from unishift.evaluation.records import check_not_all_failed, read_records
from unishift.io import concat_csv
from unishift.workflow.jobs import start_job

log = start_job(snakemake)
wildcards = snakemake.wildcards
# every per-setup file whole and in one layout before anything is written; a damaged one is named
records = pd.concat([read_records(path) for path in snakemake.input.records], ignore_index=True)
if not snakemake.params.allow_failed:
    check_not_all_failed(
        records, wildcards.method, f"{wildcards.task} under {wildcards.shift} shift"
    )
for kind in ("records", "runtime"):
    rows = concat_csv(snakemake.input[kind], snakemake.output[kind])
    log.info("%s: %d rows from %d setups", snakemake.output[kind], rows, len(snakemake.input[kind]))
