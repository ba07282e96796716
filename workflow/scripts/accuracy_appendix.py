from unishift.jobs import start_job
from unishift.report.pipeline import build_accuracy

log = start_job(snakemake)
comparison = build_accuracy(
    snakemake.input[0], snakemake.wildcards.shift, snakemake.output.tex, snakemake.output.csv
)
log.info("verdicts against the paper: %s", comparison["verdict"].value_counts().to_dict())
