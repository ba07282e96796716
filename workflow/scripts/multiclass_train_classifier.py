import pickle

from unishift.data.label_shift import train_and_predict
from unishift.io import atomic_path, read_npz, write_npz
from unishift.jobs import start_job

log = start_job(snakemake.log[0], snakemake.threads)
splits = read_npz(snakemake.input.splits, required=("X_h", "y_h", "n_classes"))
model, posteriors = train_and_predict(splits, snakemake.wildcards.classifier, snakemake.params.seed)
log.info(
    "%s on %s (%d classes): test-pool accuracy %.4f",
    snakemake.wildcards.classifier,
    snakemake.wildcards.dataset,
    int(splits["n_classes"]),
    float(posteriors["test_accuracy"]),
)
with atomic_path(snakemake.output.model) as partial, open(partial, "wb") as handle:
    pickle.dump(model, handle, protocol=pickle.HIGHEST_PROTOCOL)
write_npz(snakemake.output.posteriors, **posteriors)
