from pathlib import Path

from unishift.report.site import TableSpec, build_site
from unishift.workflow.jobs import start_job

log = start_job(snakemake)
specs = [
    TableSpec(task, shift, methods, {name: tuple(info) for name, info in infos.items()}, selector)
    for task, shift, methods, infos, selector in snakemake.params.tables
]
# the run's folder: where its provenance is
results = Path(snakemake.input.provenance).parent
pages = build_site(results, Path(snakemake.output.index).parent, specs)
log.info("%d pages in %s", len(pages), Path(snakemake.output.index).parent)
