import pandas as pd

from unishift.io import write_csv, write_text
from unishift.jobs import start_job
from unishift.registry import get_method
from unishift.report.summary import plain_latex, summary_table

start_job(snakemake.log[0])
task = snakemake.wildcards.task
methods = snakemake.params.methods
frames = [pd.read_csv(path, keep_default_na=False, na_values=[""]) for path in snakemake.input]
table = summary_table(frames, snakemake.params.classifiers, snakemake.params.datasets, methods)
write_csv(snakemake.output.csv, table)
displays = {m: get_method(task, m).display for m in methods}
write_text(snakemake.output.tex, plain_latex(table, displays))
