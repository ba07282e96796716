from unishift.workflow.job_server import run_in_server

run_in_server(snakemake, __file__)  # returns where no job server runs it (docs/evaluation-jobs.md)

from unishift.data.label_shift import prepare_splits
from unishift.io import write_npz
from unishift.workflow.jobs import start_job

log = start_job(snakemake)
arrays, source = prepare_splits(
    snakemake.wildcards.dataset,
    data_home=snakemake.params.data_home,
    # Not a tracked param: offline copies are verified to equal the originals, so where the data
    # came from must not invalidate the results.
    data_root=snakemake.config["data_root"],
    seed=snakemake.params.seed,
    collection=snakemake.params.collection,
    min_class_support=snakemake.params.min_class_support,
)
log.info("%s (%s) from %s", snakemake.wildcards.dataset, snakemake.params.collection, source)
log.info(
    "classifier-training %d, validation %d, test pool %d items; prevalence of the 70%% portion %s",
    len(arrays["y_h"]),
    len(arrays["y_val"]),
    len(arrays["y_test"]),
    arrays["prevalence_full"].round(4).tolist(),
)
write_npz(snakemake.output[0], **arrays)
