from unishift.workflow.job_server import run_in_server

run_in_server(snakemake, __file__)  # returns where no job server runs it (docs/evaluation-jobs.md)

import itertools

import pandas as pd

from unishift.data.label_shift import read_posteriors
from unishift.io import write_csv
from unishift.workflow.jobs import start_job

start_job(snakemake)
datasets, classifiers = snakemake.params.datasets, snakemake.params.classifiers
pairs = list(itertools.product(datasets, classifiers))
rows = [
    {"classifier": c, "dataset": d, "accuracy": float(read_posteriors(path)["test_accuracy"])}
    for (d, c), path in zip(pairs, snakemake.input.posteriors)
]
write_csv(snakemake.output[0], pd.DataFrame(rows))
