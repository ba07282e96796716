from unishift.workflow.lm_jobs import start_lm_job

# first: the hub goes offline before anything imports the Hugging Face libraries
job = start_lm_job(snakemake)

import time  # noqa: E402

from unishift.data.text_files import read_split  # noqa: E402
from unishift.io import write_npz  # noqa: E402
from unishift.lm.cache import pack  # noqa: E402
from unishift.lm.device import choose_device, gpu_description  # noqa: E402
from unishift.lm.pipeline import encode_domain, encode_workload  # noqa: E402

log, settings, model, revision = job.log, job.settings, job.model, job.revision
splits = {name: read_split(snakemake.input[name]) for name in ("train", "validation", "test")}
device = choose_device(settings.device, encode_workload(model, splits.values(), settings, revision))
log.info(
    "encoding %s with %s (revision %s) on %s", snakemake.wildcards.domain, model, revision, device
)
if device == "cuda":
    log.info("GPU: %s", gpu_description())
started = time.perf_counter()
sets, info = encode_domain(model, splits, settings, device, revision=revision)
log.info("encoded in %.1f s: %s", time.perf_counter() - started, info)
write_npz(snakemake.output[0], **pack(sets))
