from unishift.data.covariate import load_covariate_setup
from unishift.data.label_shift import load_label_setup
from unishift.io import read_npz, write_csv
from unishift.jobs import start_job
from unishift.multiclass.evaluation import evaluate_multiclass_method

log = start_job(snakemake.log[0], snakemake.threads)
shift, task, method = (
    snakemake.wildcards.shift,
    snakemake.wildcards.task,
    snakemake.wildcards.method,
)
params, inputs = snakemake.params, snakemake.input


def label_setups():
    """(data set, classifier) setups in table order; inputs are lined up per data set / pair."""
    datasets = list(dict.fromkeys(d for d, _ in params.setups))
    classifiers = list(dict.fromkeys(c for _, c in params.setups))
    splits = dict(zip(datasets, inputs.splits))
    samples = dict(zip(datasets, inputs.samples))
    posteriors = dict(zip([(d, c) for d in datasets for c in classifiers], inputs.posteriors))
    for dataset, classifier in params.setups:
        yield load_label_setup(
            read_npz(splits[dataset]),
            read_npz(posteriors[dataset, classifier]),
            read_npz(samples[dataset]),
            dataset,
            classifier,
            params.seed,
            sample_posteriors="pool",
        )


def covariate_setups():
    for (model, source, target), outputs, samples in zip(
        params.setups, inputs.lm_outputs, inputs.samples
    ):
        yield load_covariate_setup(
            outputs, samples, model, source, target, params.seed, n_classes=params.n_classes
        )


setups = label_setups() if shift == "label" else covariate_setups()
records, timings = evaluate_multiclass_method(
    task,
    method,
    shift,
    setups,
    params=params.method_params,
    ece=params.ece,
    arithmetic=params.ece_precision,
)
counts = records["status"].value_counts().to_dict()
log.info("%s/%s/%s: %d sample records, status counts %s", shift, task, method, len(records), counts)
for reason, n in records.loc[records["status"] != "ok", "reason"].value_counts().items():
    log.info("%d samples: %s", n, reason)
write_csv(snakemake.output.records, records)
write_csv(snakemake.output.runtime, timings)
