# The results folder's paths, from the one module that spells them (unishift.results_layout).
# Included by common.smk and by covariate_common.smk (the covariate rules are also used on their
# own); a second include is ignored. Needs RESULTS from the including Snakefile.
from unishift.results_layout import results_path


def results_file(entry, /, **fields):
    """The path of one kind of file of the results layout under this run's results folder; the
    fields not given stay wildcards."""
    return results_path(RESULTS, entry, **fields)
