from unishift.workflow.job_server import run_in_server

run_in_server(snakemake, __file__)  # returns where no job server runs it (docs/evaluation-jobs.md)

from unishift.data.covariate import load_covariate_setup
from unishift.data.label_shift import read_label_setup
from unishift.io import write_csv
from unishift.report.trivial import trivial_errors
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
frame = trivial_errors(setup, params.layout, params.ece, params.ece_precision)
log.info("%s (%s shift): trivial answers of %d samples", setup.key, shift, len(frame))
write_csv(snakemake.output[0], frame)
