import sys
import time

import torch

from unishift.data.text import read_split
from unishift.io import write_npz
from unishift.jobs import start_job
from unishift.lm.cache import pack
from unishift.lm.finetune import FinetuneSettings
from unishift.lm.models import choose_device
from unishift.lm.pipeline import encode_domain

log = start_job(snakemake.log[0], snakemake.threads)
# the Trainer prints its metrics to stdout; keep them in the rule's log
sys.stdout = sys.stderr
torch.set_num_threads(snakemake.threads)
settings = FinetuneSettings.from_config(snakemake.params.settings)
device = choose_device(settings.device)
splits = {name: read_split(snakemake.input[name]) for name in ("train", "validation", "test")}
log.info(
    "encoding %s with %s on %s", snakemake.wildcards.domain, snakemake.params.model_path, device
)
started = time.perf_counter()
sets, info = encode_domain(snakemake.params.model_path, splits, settings, device)
log.info("encoded in %.1f s: %s", time.perf_counter() - started, info)
write_npz(snakemake.output[0], **pack(sets))
