from unishift.workflow.job_server import run_in_server

run_in_server(snakemake, __file__)  # returns where no job server runs it (docs/evaluation-jobs.md)

from unishift.data.covariate import load_covariate_setup
from unishift.data.label_shift import read_label_setup, read_splits
from unishift.evaluation.trivial import trivial_errors
from unishift.io import read_npz, write_csv
from unishift.regimes.setups import describe_setup, full_prevalence
from unishift.workflow.jobs import start_job

log = start_job(snakemake)
shift, params, inputs = snakemake.wildcards.shift, snakemake.params, snakemake.input
fields = params.setup
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
    # pi: the 70 % training portion's prevalence, from which the tables' shift intensity is measured
    train_prevalence = full_prevalence(read_splits(inputs.split)["prevalence_full"])
    n_source = None
else:
    setup = load_covariate_setup(
        inputs.lm_outputs,
        inputs.samples,
        fields["model"],
        fields["source"],
        fields["target"],
        params.seed,
        shift=shift,
    )
    train_prevalence = None  # the methods' training set (Setting.train_prevalence)
    n_source = int(read_npz(inputs.samples, ("n_source",))["n_source"])
frame, reasons = describe_setup(setup, params.seed, train_prevalence, n_source)
for reason in reasons:
    log.warning(reason)
log.info("%s (%s shift): descriptors of %d samples", setup.key, shift, len(frame))
write_csv(snakemake.output.descriptors, frame)
# the trivial answers of the same samples (docs/regimes.md §4.4), which need the same
# setup: one job reads it once for both
trivial = trivial_errors(setup, params.layout, params.ece, params.ece_precision)
log.info("%s (%s shift): trivial answers of %d samples", setup.key, shift, len(trivial))
write_csv(snakemake.output.trivial, trivial)
