from unishift.data.label_shift import label_shift_samples
from unishift.io import read_npz, write_npz
from unishift.jobs import start_job

log = start_job(snakemake.log[0])
samples = label_shift_samples(
    read_npz(snakemake.input.splits, required=("y_test", "n_classes", "prevalence_full")),
    sample_size=snakemake.params.sample_size,
    n_samples=snakemake.params.n_samples,
    seed=snakemake.params.seed,
)
log.info(
    "%d samples of %d items; shift intensity %.3f..%.3f",
    *samples["indices"].shape,
    samples["shift_intensity"].min(),
    samples["shift_intensity"].max(),
)
write_npz(snakemake.output[0], **samples)
