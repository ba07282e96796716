from unishift.workflow.job_server import run_in_server

run_in_server(snakemake, __file__)  # returns where no job server runs it (docs/evaluation-jobs.md)

from unishift.data.label_shift import check_sample_size
from unishift.data.text_files import read_split
from unishift.io import write_npz
from unishift.protocols.mixture import mixture_indices
from unishift.workflow.jobs import start_job

log = start_job(snakemake)
n_source = len(read_split(snakemake.input.source))
n_target = len(read_split(snakemake.input.target))
for pool in (n_source, n_target):
    check_sample_size(
        snakemake.params.sample_size,
        pool,
        snakemake.params.allow_larger,
        "covariate_shift.mixture",
    )
samples = mixture_indices(
    n_source,
    n_target,
    sample_size=snakemake.params.sample_size,
    repeats=snakemake.params.n_samples,
    seed=snakemake.params.seed,
    counts=snakemake.params.counts,
)
log.info(
    "%s->%s: %d samples of %d items from pools of %d + %d; target counts %s ... %s (%s rule)",
    snakemake.wildcards.source,
    snakemake.wildcards.target,
    *samples["indices"].shape,
    n_source,
    n_target,
    samples["target_counts"][:4].tolist(),
    samples["target_counts"][-2:].tolist(),
    snakemake.params.counts,
)
write_npz(snakemake.output[0], **samples)
