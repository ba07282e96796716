from unishift.data.hub_access import download_dataset, download_model, use_cache_dir
from unishift.io import write_json
from unishift.workflow.jobs import start_job

log = start_job(snakemake)
use_cache_dir(snakemake.params.cache)
entry = snakemake.params.entry
download = download_model if snakemake.wildcards.kind == "models" else download_dataset
log.info(
    "downloading %s %s at revision %s", snakemake.wildcards.kind, entry["id"], entry["revision"]
)
record = download(entry["id"], entry["revision"])
log.info("resolved to commit %s", record["commit"])
write_json(snakemake.output[0], record)
