# Shared part of the multiclass branch (rules in multiclass.smk, which includes this file): schema,
# parse-time checks, paths and the helpers of its rules.
# The multiclass branch (docs/multiclass.md), selected by `regime: multiclass` in the config
# (config/multiclass.yaml): its own schema and parse-time checks, data, classifiers, samples, text
# domains, language-model heads with one output per class, per-sample evaluation and the reports,
# all under results/multiclass/ so that the binary branch's files are never touched. The reports
# are drawn by the binary reporting code (unishift.multiclass.report).

from snakemake.utils import validate

from unishift.codeversion import library_version
from unishift.kernels import pin as pin_kernels
from unishift.codeversion import multiclass_code_version as _multiclass_code_version
from unishift.methods.base import SHIFTS, TASKS
from unishift.registry import use_plugins
from unishift.multiclass.checks import (
    check_multiclass_config,
    check_multiclass_intermediates,
)
from unishift.workflow_checks import check_config_files, check_intermediates

check_config_files(workflow.overwrite_configfiles or workflow.configfiles)
validate(config, schema="../schemas/multiclass.schema.yaml")
# plugin modules (multiclass method classes too) are registered before the methods are checked
use_plugins(config["plugins"])
check_multiclass_config(config)
# the same CPU kernels on any machine (docs/determinism.md)
pin_kernels(config["cpu_kernels"])


include: "code_version.smk"


RESULTS = "results/multiclass"

if workflow.is_main_process:
    check_intermediates(RESULTS)
    check_multiclass_intermediates(RESULTS)


include: "covariate_common.smk"


def multiclass_code_version(script):
    """Every library module the script reaches and every catalogued multiclass method's module (a
    plugin's as its source), so that any change to a method re-runs the multiclass evaluations.
    """
    return _multiclass_code_version(SCRIPTS / script)


wildcard_constraints:
    shift="|".join(SHIFTS),
    task="|".join(TASKS),
    method=r"[A-Za-z0-9_]+",
    dataset=r"[A-Za-z0-9_.\-]+",
    classifier=r"[A-Za-z0-9_]+",


N_CLASSES_COVARIATE = 3  # the tweets' negative, neutral, positive


def display_info(task, names):
    """name -> [display, group] of the catalogue: a parameter of the report rules, whose jobs then
    import no method (and re-run when a display name changes)."""
    from unishift.registry import method_info

    return {name: list(info) for name, info in method_info(task, names).items()}


def enabled_shifts():
    return list(config["shifts"])


def methods_of(shift, task):
    return list(config["methods"].get(shift, {}).get(task, []))


def method_params(task, method):
    return dict(config["method_params"].get(f"{task}/{method}", {}))


def label_datasets():
    return list(config["label_shift"]["datasets"])


def label_classifiers():
    return list(config["label_shift"]["classifiers"])


def row_orders(shift):
    if shift == "label":
        return label_classifiers(), label_datasets()
    return covariate_models(), [f"{s}->{t}" for s, t in covariate_pairs()]


def samples_per_setup(shift):
    if shift == "label":
        return config["label_shift"]["n_samples"]
    return COVARIATE["mixture"]["n_samples"]


def evaluation_setups(shift):
    if shift == "label":
        return [[d, c] for c in label_classifiers() for d in label_datasets()]
    return [list(setup) for setup in covariate_setups()]


def evaluation_inputs(wildcards):
    if wildcards.shift == "label":
        return {
            "splits": expand(
                f"{RESULTS}/data/label/{{dataset}}/split.npz", dataset=label_datasets()
            ),
            "samples": expand(
                f"{RESULTS}/samples/label/{{dataset}}.npz", dataset=label_datasets()
            ),
            "posteriors": expand(
                f"{RESULTS}/posteriors/label/{{dataset}}/{{classifier}}.npz",
                dataset=label_datasets(),
                classifier=label_classifiers(),
            ),
        }
    return covariate_setup_inputs()


def eval_files(shift, task):
    return expand(
        f"{RESULTS}/eval/{{shift}}/{{task}}/{{method}}.csv",
        shift=shift,
        task=task,
        method=methods_of(shift, task),
    )


def accuracy_inputs(wildcards):
    if wildcards.shift == "label":
        return expand(
            f"{RESULTS}/posteriors/label/{{dataset}}/{{classifier}}.npz",
            dataset=label_datasets(),
            classifier=label_classifiers(),
        )
    return [lm_outputs(m, s) for m in covariate_models() for s in covariate_domains()]


def all_outputs():
    outputs = []
    for shift in enabled_shifts():
        for task in TASKS:
            if not methods_of(shift, task):
                continue
            outputs += eval_files(shift, task)
            outputs += [
                f"{RESULTS}/tables/{task}_{shift}.tex",
                f"{RESULTS}/cd/{task}_{shift}.tex",
                f"{RESULTS}/plots/{task}_{shift}_err_by_shift.pdf",
            ]
        outputs.append(f"{RESULTS}/tables/classifier_accuracy_{shift}.tex")
    outputs.append(f"{RESULTS}/provenance.json")
    return outputs
