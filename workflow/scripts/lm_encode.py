from unishift.data.hub_access import use_offline_hub

# before anything imports the Hugging Face libraries: hub files come from the download stage only
use_offline_hub(snakemake.params.cache)

import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

from unishift.data.text import read_split  # noqa: E402
from unishift.io import write_npz  # noqa: E402
from unishift.lm.cache import pack  # noqa: E402
from unishift.lm.device import choose_device, gpu_description  # noqa: E402
from unishift.lm.finetune import FinetuneSettings  # noqa: E402
from unishift.lm.pipeline import encode_domain, encode_workload  # noqa: E402
from unishift.workflow.jobs import start_job  # noqa: E402

log = start_job(snakemake)
# the Trainer prints its metrics to stdout; keep them in the rule's log
sys.stdout = sys.stderr
settings = FinetuneSettings.from_config(snakemake.params.settings)
hub = snakemake.input.get("hub")
revision = json.loads(open(hub).read())["commit"] if hub else None
model = snakemake.params.model_path
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
