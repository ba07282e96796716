from unishift.workflow.job_server import run_in_server

run_in_server(snakemake, __file__)  # returns where no job server runs it (docs/evaluation-jobs.md)

from unishift.report.table_specs import TABLE_KINDS
from unishift.workflow.jobs import start_job

log = start_job(snakemake)
params = snakemake.params
kind = TABLE_KINDS[params.table]  # the rule's kind of table (workflow/rules/report.smk)
kind.render(
    kind,
    snakemake.input.records,
    {role: snakemake.output[role] for role in snakemake.output.keys()},
    params.task,
    snakemake.wildcards.shift,
    methods=params.methods,
    classifiers=params.classifiers,
    datasets=params.datasets,
    n_samples=params.n_samples,
    alpha=params.alpha,
    method_info={name: tuple(info) for name, info in params.method_info.items()},
    trivial_files=snakemake.input.get("trivial", ()),
    seed=params.seed,
    n_bootstrap=params.n_bootstrap,
)
log.info("%s of %s under %s shift written", kind.name, params.task, snakemake.wildcards.shift)
