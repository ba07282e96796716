from unishift.jobs import start_job
from unishift.report.pipeline import build_reproduction

log = start_job(snakemake)
table = build_reproduction(
    snakemake.input.cells,
    snakemake.input.summary,
    snakemake.wildcards.task,
    snakemake.wildcards.shift,
    snakemake.output.csv,
    snakemake.output.md,
    caveat=snakemake.params.caveat,
)
if len(table):
    log.info("verdicts: %s", table["verdict"].value_counts().to_dict())
