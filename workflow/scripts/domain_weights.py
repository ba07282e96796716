from unishift.workflow.job_server import run_in_server

run_in_server(snakemake, __file__)  # returns where no job server runs it (docs/evaluation-jobs.md)

from unishift.data.covariate import load_covariate_setup
from unishift.data.label_shift import read_label_setup
from unishift.workflow.domain_weight_artifacts import compute_domain_weights, write_domain_weights
from unishift.workflow.jobs import start_job

log = start_job(snakemake)
params, inputs, wildcards = snakemake.params, snakemake.input, snakemake.wildcards

if snakemake.rule == "domain_weights_label":
    setup = read_label_setup(
        inputs.splits,
        inputs.posteriors,
        inputs.samples,
        wildcards.dataset,
        wildcards.classifier,
        params.seed,
        sample_posteriors=params.sample_posteriors,
    )
else:
    setup = load_covariate_setup(
        inputs.lm_outputs,
        inputs.samples,
        wildcards.model,
        wildcards.source,
        wildcards.target,
        params.seed,
        shift=wildcards.shift,
    )
memo, errors = compute_domain_weights(setup, wildcards.plan, params.domain_stream)
log.info(
    "%s, plan %s, domain_stream %s: %d domain-classifier calls",
    setup.key,
    wildcards.plan,
    params.domain_stream,
    len(memo.entries),
)
for error in errors:
    # left to the evaluation jobs, which fit (and fail) themselves and record the error per sample
    log.warning("not precomputed: %s", error)
write_domain_weights(snakemake.output[0], memo, setup, wildcards.plan, params.domain_stream)
