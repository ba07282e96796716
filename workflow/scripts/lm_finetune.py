from unishift.workflow.lm_jobs import start_lm_job

# first: the hub goes offline before anything imports the Hugging Face libraries
job = start_lm_job(snakemake)

from pathlib import Path  # noqa: E402

from unishift.data.text_files import read_split  # noqa: E402
from unishift.io import read_npz, write_json, write_npz  # noqa: E402
from unishift.lm.cache import pack, unpack  # noqa: E402
from unishift.lm.device import choose_device, gpu_description  # noqa: E402
from unishift.lm.pipeline import finetune_workload, run_finetune, save_head  # noqa: E402

log, settings, model, revision = job.log, job.settings, job.model, job.revision
targets = snakemake.params.targets
if settings.mode == "cached":
    inputs = unpack(read_npz(snakemake.input.source))
    target_inputs = {
        t: unpack(read_npz(path))["test"] for t, path in zip(targets, snakemake.input.targets)
    }
else:
    inputs = {name: read_split(snakemake.input[name]) for name in ("train", "validation", "test")}
    target_inputs = {t: read_split(path) for t, path in zip(targets, snakemake.input.targets)}
if settings.mode == "cached" and settings.device == "auto":
    # the head trains on encoder outputs: small work, and the rule holds no GPU of the scheduler's
    device = "cpu"
else:
    device = choose_device(
        settings.device, finetune_workload(model, inputs, target_inputs, settings, revision)
    )
log.info(
    "%s (revision %s) on %s (%s mode, %s, %s): targets %s",
    model,
    revision,
    snakemake.wildcards.source,
    settings.mode,
    device,
    settings.precision,
    targets,
)
gpu = gpu_description() if device == "cuda" else None
if gpu:
    log.info("GPU: %s", gpu)
workdir = Path(snakemake.output.outputs).parent
workdir.mkdir(parents=True, exist_ok=True)
sets, model_object, report = run_finetune(
    model,
    snakemake.wildcards.source,
    inputs,
    target_inputs,
    settings,
    device,
    workdir,
    revision=revision,
    # the multiclass branch's rule passes its number of classes; the binary rule has two
    num_labels=snakemake.params.num_labels,
)
report["model_name"] = snakemake.wildcards.model
report["gpu"] = gpu
write_npz(snakemake.output.outputs, **pack(sets))
save_head(model_object, snakemake.output.head)
write_json(snakemake.output.report, report)
