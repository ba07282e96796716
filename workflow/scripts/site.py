from pathlib import Path

from unishift.jobs import start_job
from unishift.report.site import TableSpec, build_site

log = start_job(snakemake)
specs = [
    TableSpec(task, shift, methods, {name: tuple(info) for name, info in infos.items()}, selector)
    for task, shift, methods, infos, selector in snakemake.params.tables
]
pages = build_site(snakemake.params.results, Path(snakemake.output.index).parent, specs)
log.info("%d pages in %s", len(pages), Path(snakemake.output.index).parent)
