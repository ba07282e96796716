from unishift.data.label_shift import prepare_splits
from unishift.io import write_npz
from unishift.jobs import start_job

log = start_job(snakemake.log[0])
arrays, source = prepare_splits(
    snakemake.wildcards.dataset,
    data_home=snakemake.params.data_home,
    # Not a tracked param: offline copies are verified to equal the originals, so where the data
    # came from must not invalidate the results.
    data_root=snakemake.config["data_root"],
    seed=snakemake.params.seed,
)
log.info("%s from %s", snakemake.wildcards.dataset, source)
log.info(
    "classifier-training %d, validation %d, test pool %d items; positive prevalence of the 70%% portion %.4f",
    len(arrays["y_h"]),
    len(arrays["y_val"]),
    len(arrays["y_test"]),
    float(arrays["prevalence_full"]),
)
write_npz(snakemake.output[0], **arrays)
