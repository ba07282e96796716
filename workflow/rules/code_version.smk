# Code versions of the rules (docs/code-version.md). Included by common.smk and by
# covariate_common.smk (the covariate rules are also used on their own); a second include is ignored.
from pathlib import Path

from unishift.workflow.code_version import script_code_version

SCRIPTS = Path(workflow.current_basedir).parent / "scripts"


def code_version(script, registry=False):
    """Content hash of the library modules a script runs (comments and docstrings excluded): a
    params entry, so that Snakemake re-runs the jobs whose code changed. registry=True for the
    rules that read method names, display names or column groups."""
    return script_code_version(SCRIPTS / script, registry)
