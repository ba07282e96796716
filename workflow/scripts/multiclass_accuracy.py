import itertools

import pandas as pd

from unishift.data.covariate import lm_accuracies
from unishift.io import read_npz, write_csv
from unishift.jobs import start_job
from unishift.multiclass.report import write_accuracy_tex

log = start_job(snakemake.log[0])
shift, params = snakemake.wildcards.shift, snakemake.params
if shift == "label":
    pairs = itertools.product(params.datasets, params.classifiers)
    table = pd.DataFrame(
        [
            {"classifier": c, "dataset": d, "accuracy": float(read_npz(path)["test_accuracy"])}
            for (d, c), path in zip(pairs, snakemake.input)
        ],
        columns=["classifier", "dataset", "accuracy"],
    )
else:
    caches = {tuple(key): path for key, path in zip(params.pairs, snakemake.input)}
    table = lm_accuracies(caches, params.domains)
log.info("\n%s", table.to_string(index=False))
write_csv(snakemake.output.csv, table)
write_accuracy_tex(snakemake.output.csv, snakemake.output.tex, shift)
