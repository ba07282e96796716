# unishift: calibration, quantification and classifier accuracy prediction under dataset shift.
# Reproduces Moreo, "On the Interconnections of Calibration, Quantification, and Classifier
# Accuracy Prediction under Dataset Shift". See README.md and config/README.md.
from snakemake.utils import min_version

from unishift.workflow_checks import check_config_files

min_version("9.0")


# The embedded default is read only when no --configfile is given: a config file passed on the
# command line replaces it instead of being merged into it (merging would, e.g., add the default's
# language model to the paper's three).
if not workflow.overwrite_configfiles:
    # Snakemake's own message for a YAML error names neither the file nor the line; ours does.
    check_config_files(["config/config.yaml"])

    configfile: "config/config.yaml"


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/classifiers.smk"
include: "workflow/rules/samples.smk"
include: "workflow/rules/text.smk"
include: "workflow/rules/lm.smk"
include: "workflow/rules/evaluate.smk"
include: "workflow/rules/report.smk"


rule all:
    default_target: True
    input:
        all_outputs(),
