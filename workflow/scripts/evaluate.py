from unishift.workflow.job_server import run_in_server

run_in_server(snakemake, __file__)  # returns where no job server runs it (docs/evaluation-jobs.md)

from unishift.data.covariate import load_covariate_setup
from unishift.data.label_shift import read_label_setup
from unishift.evaluation.evaluate import evaluate_method
from unishift.evaluation.records import check_not_all_failed, join_descriptors, read_descriptors
from unishift.evaluation.reliability import ReliabilityCollector
from unishift.io import write_csv
from unishift.workflow.domain_weight_artifacts import attach_domain_weights
from unishift.workflow.jobs import start_job

log = start_job(snakemake)
shift, task, method = (
    snakemake.wildcards.shift,
    snakemake.wildcards.task,
    snakemake.wildcards.method,
)
params, inputs = snakemake.params, snakemake.input


def setup_input(name: str, index: int) -> str:
    """The input file `name` of the job's index-th setup (rules/common.smk: evaluation_setup_inputs)."""
    return inputs[f"{name}_{index}"]


def load_setups():
    """The job's setups in table order, one at a time (a per-method job holds one in memory)."""
    for index, fields in enumerate(params.setups):
        if shift == "label":
            yield read_label_setup(
                setup_input("split", index),
                setup_input("posteriors", index),
                setup_input("samples", index),
                fields["dataset"],
                fields["classifier"],
                params.seed,
                sample_posteriors=params.sample_posteriors,
            )
        else:
            yield load_covariate_setup(
                setup_input("lm_outputs", index),
                setup_input("samples", index),
                fields["model"],
                fields["source"],
                fields["target"],
                params.seed,
                shift=shift,
            )


setups = load_setups()
if hasattr(inputs, "domain_weights"):  # weights computed once upstream (rules/weights.smk)
    setups = attach_domain_weights(setups, inputs.domain_weights)
# the bin statistics of a calibrator's posteriors (none for the other tasks: a header only)
reliability = ReliabilityCollector()
records, timings = evaluate_method(
    task,
    method,
    shift,
    setups,
    params=params.method_params,
    ece=params.ece,
    ece_precision=params.ece_precision,
    domain_stream=params.domain_stream,
    layout=params.layout,
    observe=reliability,
)
# the shift descriptors of each sample, computed once per setup (rule descriptors)
records = join_descriptors(
    records, [read_descriptors(setup_input("descriptors", i)) for i in range(len(params.setups))]
)
counts = records["status"].value_counts().to_dict()
log.info(
    "%s/%s/%s on %s (%d setups): %d sample records, status counts %s",
    shift,
    task,
    method,
    params.setup_name,
    len(params.setups),
    len(records),
    counts,
)
for reason, n in records.loc[records["status"] != "ok", "reason"].value_counts().items():
    log.info("%d samples: %s", n, reason)
if params.setup_name == "all" and not params.allow_failed:
    # the method's record files come from this one job (evaluation_jobs: per_method)
    check_not_all_failed(records, method, f"{task} under {shift} shift")
write_csv(snakemake.output.records, records)
write_csv(snakemake.output.runtime, timings)
write_csv(snakemake.output.reliability, reliability.frame())
