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
params, inputs, fields = snakemake.params, snakemake.input, snakemake.params.setup

if shift == "label":
    setup = read_label_setup(
        inputs.split,
        inputs.posteriors,
        inputs.samples,
        fields["dataset"],
        fields["classifier"],
        params.seed,
        sample_posteriors=params.sample_posteriors,
    )
else:
    setup = load_covariate_setup(
        inputs.lm_outputs,
        inputs.samples,
        fields["model"],
        fields["source"],
        fields["target"],
        params.seed,
    )
setups = [setup]
if hasattr(inputs, "domain_weights"):  # weights computed once upstream (rules/weights.smk)
    setups = attach_domain_weights(setups, [inputs.domain_weights])
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
log.info(
    "%s/%s/%s on %s: %d sample records, status counts %s",
    shift,
    task,
    method,
    snakemake.wildcards.setup,
    len(records),
    counts,
)
for reason, n in records.loc[records["status"] != "ok", "reason"].value_counts().items():
    log.info("%d samples: %s", n, reason)
write_csv(snakemake.output.records, records)
write_csv(snakemake.output.runtime, timings)
