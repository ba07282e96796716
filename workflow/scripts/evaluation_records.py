from unishift.io import concat_csv
from unishift.jobs import start_job

log = start_job(snakemake.log[0], snakemake.threads)
for kind in ("records", "runtime"):
    rows = concat_csv(snakemake.input[kind], snakemake.output[kind])
    log.info("%s: %d rows from %d setups", snakemake.output[kind], rows, len(snakemake.input[kind]))
