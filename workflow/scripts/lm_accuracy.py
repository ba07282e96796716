from unishift.workflow.job_server import run_in_server

run_in_server(snakemake, __file__)  # returns where no job server runs it (docs/evaluation-jobs.md)

from unishift.data.covariate import lm_accuracies
from unishift.io import write_csv
from unishift.workflow.jobs import start_job

log = start_job(snakemake)
caches = {tuple(key): path for key, path in zip(snakemake.params.pairs, snakemake.input)}
table = lm_accuracies(caches, snakemake.params.domains)
log.info("\n%s", table.to_string(index=False))
write_csv(snakemake.output[0], table)
