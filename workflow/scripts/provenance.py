from unishift.io import write_json
from unishift.jobs import start_job
from unishift.provenance import provenance

start_job(snakemake.log[0])
record = provenance(dict(snakemake.params.config), code_version=snakemake.params.code)
write_json(snakemake.output[0], record)
