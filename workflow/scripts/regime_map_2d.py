from unishift.workflow.job_server import run_in_server

run_in_server(snakemake, __file__)  # returns where no job server runs it (docs/evaluation-jobs.md)

from pathlib import Path

from unishift.report.regimes import build_regime_map_2d
from unishift.workflow.jobs import start_job

log = start_job(snakemake)
params = snakemake.params
rmap, undefined = build_regime_map_2d(
    snakemake.input.records,
    snakemake.wildcards.task,
    params.methods,
    Path(snakemake.output.csv).with_suffix(""),
    n_bins=params.n_bins,
    scheme=params.scheme,
    trivial_files=snakemake.input.trivial,
    seed=params.seed,
    n_bootstrap=params.n_bootstrap,
    alpha=params.alpha,
)
cells = rmap.cells.drop_duplicates(["x_bin", "y_bin"])
log.info(
    "%d cells: %s; degenerate %s; %d samples without every method's error, %d without both "
    "descriptors left out",
    len(cells),
    dict(cells["verdict"].value_counts()),
    rmap.degenerate,
    rmap.n_dropped,
    undefined,
)
