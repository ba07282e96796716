from unishift.workflow.job_server import run_in_server

run_in_server(snakemake, __file__)  # returns where no job server runs it (docs/evaluation-jobs.md)

from unishift.data.label_shift import label_shift_samples, read_splits
from unishift.io import write_npz
from unishift.workflow.jobs import start_job

log = start_job(snakemake)
samples = label_shift_samples(
    read_splits(snakemake.input.splits),
    sample_size=snakemake.params.sample_size,
    n_samples=snakemake.params.n_samples,
    seed=snakemake.params.seed,
    allow_larger=snakemake.params.allow_larger,
)
log.info(
    "%d samples of %d items; shift intensity %.3f..%.3f",
    *samples["indices"].shape,
    samples["shift_intensity"].min(),
    samples["shift_intensity"].max(),
)
write_npz(snakemake.output[0], **samples)
