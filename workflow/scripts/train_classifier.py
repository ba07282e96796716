from unishift.workflow.job_server import run_in_server

run_in_server(snakemake, __file__)  # returns where no job server runs it (docs/evaluation-jobs.md)

import pickle

from unishift.data.label_shift import read_samples, read_splits, train_and_predict
from unishift.io import atomic_path, write_npz
from unishift.workflow.jobs import start_job

log = start_job(snakemake)
splits = read_splits(snakemake.input.splits)
model, posteriors = train_and_predict(
    splits,
    snakemake.wildcards.classifier,
    snakemake.params.seed,
    samples=read_samples(snakemake.input.samples),
)
log.info(
    "%s on %s: test-pool accuracy %.4f",
    snakemake.wildcards.classifier,
    snakemake.wildcards.dataset,
    float(posteriors["test_accuracy"]),
)
with atomic_path(snakemake.output.model) as partial, open(partial, "wb") as handle:
    pickle.dump(model, handle, protocol=pickle.HIGHEST_PROTOCOL)
write_npz(snakemake.output.posteriors, **posteriors)
