from unishift.workflow.job_server import run_in_server

run_in_server(snakemake, __file__)  # returns where no job server runs it (docs/evaluation-jobs.md)

from pathlib import Path

from unishift.report.regimes import build_regime_maps
from unishift.workflow.jobs import start_job

log = start_job(snakemake)
params, wildcards = snakemake.params, snakemake.wildcards
output = Path(snakemake.output.csv)
maps, undefined = build_regime_maps(
    snakemake.input.records,
    wildcards.task,
    wildcards.shift,
    params.methods,
    output.with_suffix(""),
    n_bins=params.n_bins,
    scheme=params.scheme,
    trivial_files=snakemake.input.trivial,
    seed=params.seed,
    n_bootstrap=params.n_bootstrap,
    alpha=params.alpha,
)
for rmap in maps:
    log.info(
        "%s: %d regions from %d bins, winners %s (empty: no clear winner); degenerate %s; %d "
        "samples without every method's error, %d without the descriptor left out",
        rmap.descriptor,
        len(rmap.bins),
        len(rmap.edges) - 1,
        list(rmap.bins["winner"]),
        rmap.degenerate,
        rmap.n_dropped,
        undefined[rmap.descriptor],
    )
