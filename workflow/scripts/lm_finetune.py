import sys
from pathlib import Path

import torch

from unishift.data.text import read_split
from unishift.io import read_npz, write_json, write_npz
from unishift.jobs import start_job
from unishift.lm.cache import pack, unpack
from unishift.lm.finetune import FinetuneSettings
from unishift.lm.models import choose_device
from unishift.lm.pipeline import run_finetune, save_head

log = start_job(snakemake.log[0], snakemake.threads)
# the Trainer prints its metrics to stdout; keep them in the rule's log
sys.stdout = sys.stderr
torch.set_num_threads(snakemake.threads)
settings = FinetuneSettings.from_config(snakemake.params.settings)
device = choose_device(settings.device)
targets = snakemake.params.targets
if settings.mode == "cached":
    inputs = unpack(read_npz(snakemake.input.source))
    target_inputs = {
        t: unpack(read_npz(path))["test"] for t, path in zip(targets, snakemake.input.targets)
    }
else:
    inputs = {name: read_split(snakemake.input[name]) for name in ("train", "validation", "test")}
    target_inputs = {t: read_split(path) for t, path in zip(targets, snakemake.input.targets)}
log.info(
    "%s on %s (%s mode, %s, %s): targets %s",
    snakemake.params.model_path,
    snakemake.wildcards.source,
    settings.mode,
    device,
    settings.precision,
    targets,
)
workdir = Path(snakemake.output.outputs).parent
workdir.mkdir(parents=True, exist_ok=True)
sets, model, report = run_finetune(
    snakemake.params.model_path,
    snakemake.wildcards.source,
    inputs,
    target_inputs,
    settings,
    device,
    workdir,
)
report["model_name"] = snakemake.wildcards.model
write_npz(snakemake.output.outputs, **pack(sets))
save_head(model, snakemake.output.head)
write_json(snakemake.output.report, report)
