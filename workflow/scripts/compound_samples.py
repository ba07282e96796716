from unishift.workflow.job_server import run_in_server

run_in_server(snakemake, __file__)  # returns where no job server runs it (docs/evaluation-jobs.md)

from unishift.data.covariate import compound_samples
from unishift.data.text_files import read_split
from unishift.io import write_npz
from unishift.workflow.jobs import start_job

log = start_job(snakemake)
params, wildcards = snakemake.params, snakemake.wildcards
samples = compound_samples(
    read_split(snakemake.input.source)["label"].to_numpy(),
    read_split(snakemake.input.target)["label"].to_numpy(),
    params.n_classes,
    wildcards.source,
    wildcards.target,
    params.seed,
    sample_size=params.sample_size,
    n_samples=params.n_samples,
    mixture=params.mixture,
    replace=params.replace,
)
log.info(
    "%s->%s: %d samples of %d items from pools of %d + %d; %d (sample, domain, class) cells drawn "
    "with replacement (%s mixture, replace %s)",
    wildcards.source,
    wildcards.target,
    *samples["indices"].shape,
    int(samples["n_source"]),
    int(samples["n_target"]),
    int(samples["short"].sum()),
    params.mixture,
    params.replace,
)
write_npz(snakemake.output[0], **samples)
