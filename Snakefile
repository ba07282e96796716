# unishift: calibration, quantification and classifier accuracy prediction under dataset shift.
# Reproduces Moreo, "On the Interconnections of Calibration, Quantification, and Classifier
# Accuracy Prediction under Dataset Shift". See README.md and config/README.md.
import os
import sys

from snakemake.utils import min_version

min_version("9.0")

# The rules' scripts import the unishift library of this checkout, whichever environment runs them:
# the planning process (below), jobs in the calling environment and jobs in the conda environments
# of envs/, which hold the library's dependencies but not the library itself.
LIBRARY = os.path.join(workflow.basedir, "src")
sys.path.insert(0, LIBRARY)
os.environ.update(
    PYTHONPATH=os.pathsep.join(
        [LIBRARY] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    )
)

from unishift.workflow.checks import check_config_files

# The embedded default is read only when no --configfile is given: a config file passed on the
# command line replaces it instead of being merged into it (merging would, e.g., add the default's
# language model to the paper's three).
if not workflow.overwrite_configfiles:
    # Snakemake's own message for a YAML error names neither the file nor the line; ours does.
    check_config_files(["config/config.yaml"])

    configfile: "config/config.yaml"


report: "workflow/report/workflow.rst"


# One rule set for any number of classes: the data decide it (config/multiclass.yaml runs the same
# rules on k-class data into results/multiclass/, docs/multiclass.md).
include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/classifiers.smk"
include: "workflow/rules/samples.smk"
include: "workflow/rules/text.smk"
include: "workflow/rules/lm.smk"
include: "workflow/rules/weights.smk"
include: "workflow/rules/evaluate.smk"
include: "workflow/rules/regimes.smk"
include: "workflow/rules/report.smk"
include: "workflow/rules/site.smk"


rule all:
    default_target: True
    input:
        all_outputs(),
