import sys
from pathlib import Path

from snakemake.utils import validate

from unishift.classifiers import CLASSIFIERS
from unishift.data.uci import DATASETS
from unishift.methods.base import SHIFTS, TASKS
from unishift.registry import get_method

validate(config, schema="../schemas/config.schema.yaml")


def _check_methods():
    """Unknown method names fail before any job runs, naming the valid ones."""
    for shift, tasks in config["methods"].items():
        for task, names in tasks.items():
            for name in names:
                try:
                    get_method(task, name, shift)
                except KeyError as err:
                    raise ValueError(f"config methods.{shift}.{task}: {err.args[0]}") from None
    for key in config["method_params"]:
        task, _, name = key.partition("/")
        if task not in TASKS:
            raise ValueError(f"config method_params key {key!r} must read '<task>/<method>'")
        get_method(task, name)


_check_methods()

RESULTS = "results"


wildcard_constraints:
    shift="|".join(SHIFTS),
    task="|".join(TASKS),
    method=r"[A-Za-z0-9_]+",
    dataset=r"[A-Za-z0-9_.\-]+",
    classifier=r"[A-Za-z0-9_]+",


def enabled_shifts():
    return [s for s in config["shifts"]]


def methods_of(shift, task):
    return list(config["methods"].get(shift, {}).get(task, []))


def method_params(task, method):
    return dict(config["method_params"].get(f"{task}/{method}", {}))


def label_datasets():
    return list(config["label_shift"]["datasets"])


def label_classifiers():
    return list(config["label_shift"]["classifiers"])


def quapy_home():
    return config["quapy_home"]


def label_setup_files():
    """Input files of every label-shift setup, in table order (classifier-major, then data set)."""
    return {
        "splits": expand(f"{RESULTS}/data/label/{{dataset}}/split.npz", dataset=label_datasets()),
        "samples": expand(f"{RESULTS}/samples/label/{{dataset}}.npz", dataset=label_datasets()),
        "posteriors": expand(
            f"{RESULTS}/posteriors/label/{{dataset}}/{{classifier}}.npz",
            dataset=label_datasets(),
            classifier=label_classifiers(),
        ),
    }


def evaluation_inputs(wildcards):
    if wildcards.shift == "label":
        return label_setup_files()
    return covariate_setup_files()


def covariate_setup_files():
    raise ValueError("the covariate-shift branch is not configured in this workflow yet")


def all_outputs():
    outputs = []
    for shift in enabled_shifts():
        for task in TASKS:
            if methods_of(shift, task):
                outputs.append(f"{RESULTS}/tables/{task}_{shift}.csv")
                outputs.append(f"{RESULTS}/tables/{task}_{shift}.tex")
        outputs.append(f"{RESULTS}/tables/classifier_accuracy_{shift}.csv")
    return outputs
