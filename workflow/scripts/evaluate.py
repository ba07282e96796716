from unishift.data.covariate import load_covariate_setup
from unishift.data.domain_weights import attach_domain_weights
from unishift.data.label_shift import read_label_setup
from unishift.evaluation import evaluate_method
from unishift.io import write_csv
from unishift.jobs import start_job

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
        yield read_label_setup(
            splits[dataset],
            posteriors[dataset, classifier],
            samples[dataset],
            dataset,
            classifier,
            params.seed,
            sample_posteriors=params.sample_posteriors,
        )


def covariate_setups():
    for (model, source, target), outputs, samples in zip(
        params.setups, inputs.lm_outputs, inputs.samples
    ):
        yield load_covariate_setup(outputs, samples, model, source, target, params.seed)


setups = label_setups() if shift == "label" else covariate_setups()
if hasattr(inputs, "domain_weights"):  # weights computed once upstream (rules/weights.smk)
    setups = attach_domain_weights(setups, inputs.domain_weights)
records, timings = evaluate_method(
    task,
    method,
    shift,
    setups,
    params=params.method_params,
    ece=params.ece,
    ece_precision=params.ece_precision,
    domain_stream=params.domain_stream,
)
counts = records["status"].value_counts().to_dict()
log.info("%s/%s/%s: %d sample records, status counts %s", shift, task, method, len(records), counts)
for reason, n in records.loc[records["status"] != "ok", "reason"].value_counts().items():
    log.info("%d samples: %s", n, reason)
write_csv(snakemake.output.records, records)
write_csv(snakemake.output.runtime, timings)
