import itertools

from unishift.data.label_shift import load_label_setup
from unishift.evaluation import evaluate_method
from unishift.io import read_npz, write_csv
from unishift.jobs import start_job

log = start_job(snakemake.log[0], snakemake.threads)
shift, task, method = (
    snakemake.wildcards.shift,
    snakemake.wildcards.task,
    snakemake.wildcards.method,
)
params = snakemake.params


def label_setups():
    """Setups in table order: classifier blocks, data sets within each block."""
    splits = dict(zip(params.datasets, map(read_npz, snakemake.input.splits)))
    samples = dict(zip(params.datasets, map(read_npz, snakemake.input.samples)))
    posteriors = dict(
        zip(itertools.product(params.datasets, params.classifiers), snakemake.input.posteriors)
    )
    for classifier in params.classifiers:
        for dataset in params.datasets:
            yield load_label_setup(
                splits[dataset],
                read_npz(posteriors[dataset, classifier]),
                samples[dataset],
                dataset,
                classifier,
                params.seed,
            )


records, timings = evaluate_method(
    task, method, shift, label_setups(), params=params.method_params, ece=params.ece
)
counts = records["status"].value_counts().to_dict()
log.info("%s/%s/%s: %d sample records, status counts %s", shift, task, method, len(records), counts)
for reason, n in records.loc[records["status"] != "ok", "reason"].value_counts().items():
    log.info("%d samples: %s", n, reason)
write_csv(snakemake.output.records, records)
write_csv(snakemake.output.runtime, timings)
