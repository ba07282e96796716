import os
import shutil
import sys
from pathlib import Path

from snakemake.utils import validate

from unishift.evaluation.records import TWO_CLASS
from unishift.methods.base import SHIFTS, TASKS
from unishift.methods.registry import get_method
from unishift.report.regimes import SELECTION_GROUP, SELECTOR
from unishift.report.summary import run_summary
from unishift.report.table_specs import TABLE_KINDS
from unishift.workflow.code_version import library_version, method_code_version
from unishift.workflow.config_access import record_layout, reproduction_caveat
from unishift.workflow.prepare import end_run, prepare_run, start_run
from unishift.workflow.provenance import config_hash

# Every check, the plugins, the CPU kernels and the scan of the results folder: before any job
# (unishift.workflow.prepare).
RUN = prepare_run(
    config,
    config_files=workflow.overwrite_configfiles or workflow.configfiles,
    schema=Path(workflow.current_basedir).parent / "schemas" / "config.schema.yaml",
    validate=validate,
    repository=workflow.basedir,
    main_process=workflow.is_main_process,
)
RESULTS = RUN.results
PAPER_CONFIG = RUN.paper_config


include: "code_version.smk"
include: "results_layout.smk"
# the helpers of the covariate-shift and domain-weight rules, defined before any stage's rules
include: "covariate_common.smk"
include: "weights_common.smk"


onstart:
    start_run(
        RESULTS,
        lock=workflow.execution_settings.lock,
        job_server=config["job_server"],
        local=workflow.local_exec,
        n_jobs=len(workflow.dag),
    )


onsuccess:
    end_run()
    print(
        run_summary(
            RESULTS,
            [(t, s) for s in enabled_shifts() for t in TASKS if methods_of(s, t)],
        ),
        file=sys.stderr,
    )


onerror:
    end_run()


# (task, method, shift) -> code version: Snakemake evaluates a job's params more than once (planning,
# execution, metadata), and the hashing walks the method's modules each time (about 0.3 CPU s)
EVALUATION_CODE_VERSIONS = {}


def evaluation_code_version(wildcards):
    key = (wildcards.task, wildcards.method, wildcards.shift)
    if key not in EVALUATION_CODE_VERSIONS:
        EVALUATION_CODE_VERSIONS[key] = method_code_version(
            *key,
            SCRIPTS / "evaluate.py",
            method_params(wildcards.task, wildcards.method),
        )
    return EVALUATION_CODE_VERSIONS[key]


wildcard_constraints:
    shift="|".join(SHIFTS),
    task="|".join(TASKS),
    method=r"[A-Za-z0-9_]+",
    dataset=r"[A-Za-z0-9_.\-]+",
    classifier=r"[A-Za-z0-9_]+",
    setup=r"[^/]+/[^/]+|all",


def enabled_shifts():
    return [s for s in config["shifts"]]


def methods_of(shift, task):
    return list(config["methods"].get(shift, {}).get(task, []))


def method_params(task, method):
    return dict(config["method_params"].get(f"{task}/{method}", {}))


def layout(shift):
    """The record layout of a shift's per-sample files: two_class or k_class (the data decide)."""
    return record_layout(config, shift)


def method_info(shift, task):
    """name -> [display, group] of the columns of a table (the Selector's included): a parameter of
    the report rules, whose jobs then import no method (and re-run when a display name or group
    changes)."""
    info = {
        name: [
            get_method(task, name, shift).display,
            get_method(task, name, shift).group,
        ]
        for name in methods_of(shift, task)
    }
    if selector_on(shift, task):
        info[SELECTOR] = [SELECTOR, SELECTION_GROUP]
    return info


def selector_on(shift, task):
    """The Selector is a column of the (shift, task) tables (config key selector)."""
    return bool(config["selector"]) and bool(methods_of(shift, task))


def table_methods(shift, task):
    """The columns of a table: the configured methods, then the Selector (docs/regimes.md §5.4)."""
    return methods_of(shift, task) + ([SELECTOR] if selector_on(shift, task) else [])


def table_columns(shift, task, kind=None):
    """The columns of a table of a kind (unishift.report.table_specs): its configured methods, then
    the Selector unless the kind reads the methods only."""
    if kind is not None and kind.columns == "methods":
        return methods_of(shift, task)
    return table_methods(shift, task)


def table_files(shift, task, kind=None):
    """The per-sample record files a table reads: one per column."""
    return expand(
        results_file("records"),
        shift=shift,
        task=task,
        method=table_columns(shift, task, kind),
    )


def table_param(kind, value):
    """An input or params function of the rule of a kind of table, made in report.smk; it returns
    value(shift, task, kind) of the job's wildcards; ``kind`` is bound here, not read from the loop
    that makes the rules."""
    return lambda wildcards: value(
        wildcards.shift, kind.task_of(dict(wildcards.items())), kind
    )


def table_inputs(kind):
    """The named inputs of a kind's jobs: the records of its columns and, for a kind that says
    whether its task and shift is degenerate (docs/reporting.md §2.7), the trivial answers' files
    (the Selector's job reads the same)."""

    def inputs(wildcards):
        files = {"records": table_param(kind, table_files)(wildcards)}
        if kind.trivial:
            files["trivial"] = trivial_files(wildcards.shift)
        return files

    return inputs


def table_outputs(kind):
    """The named outputs of a kind's rule: its layout entries' patterns, those it shows in
    Snakemake's report wrapped with their caption."""
    paths = kind.paths(RESULTS)
    category = "{task}" if "{task}" in paths["cells"] else kind.tasks[0]
    captions = {"cells": kind.caption, "cd_png": "cd.rst" if kind.cd else None}
    outputs = {}
    for role, path in paths.items():
        caption = captions.get(role)
        outputs[role] = path if caption is None else in_report(path, caption, category)
    return outputs


def in_report(path, caption, category):
    """``path`` shown in Snakemake's report with ``workflow/report/<caption>``."""
    return snakemake_report(
        path,
        caption=f"../report/{caption}",
        category=category,
        subcategory="{shift} shift",
    )


# Snakemake's report() under a name its parser does not take for the report keyword
snakemake_report = report


def label_datasets():
    return list(config["label_shift"]["datasets"])


def label_classifiers():
    return list(config["label_shift"]["classifiers"])


def quapy_home():
    return config["quapy_home"]


def label_posterior_files():
    """The cached posteriors of every (data set, classifier)."""
    return expand(
        results_file("posteriors"),
        dataset=label_datasets(),
        classifier=label_classifiers(),
    )


def row_orders(shift):
    """Row blocks (classifiers or models) and rows (data sets or source->target pairs) of a table."""
    if shift == "label":
        return label_classifiers(), label_datasets()
    return covariate_row_orders()


def samples_per_setup(shift):
    if shift == "label":
        return config["label_shift"]["n_samples"]
    if shift == "compound":
        return COVARIATE["compound"]["n_samples"]
    return COVARIATE["mixture"]["n_samples"]


def samples_file(shift, source, target):
    """The persisted samples of a source->target pair: mixture (covariate) or compound samples."""
    return results_file("pair_samples", shift=shift, source=source, target=target)


def eval_files(shift, task):
    return expand(
        results_file("records"),
        shift=shift,
        task=task,
        method=methods_of(shift, task),
    )


def pdflatex_available():
    return shutil.which("pdflatex") is not None


def build_report_pdf():
    wanted = config["report_pdf"]
    if wanted == "auto":
        if not pdflatex_available():
            print(
                "pdflatex not found: results/report.pdf is skipped (install TeX Live or set "
                "report_pdf: false to silence this)",
                file=sys.stderr,
            )
        return pdflatex_available()
    return bool(wanted)


def table_targets(shift):
    """Every table, diagram and plot of one shift, grouped by kind (for rule all and the PDF)."""
    kinds = (
        "tables",
        "cd",
        "figures",
        "regimes",
        "regime_figures",
        "appendix",
        "reliability",
        "other",
    )
    targets = {kind: [] for kind in kinds}
    for task in TASKS:
        if not methods_of(shift, task):
            continue
        for kind in TABLE_KINDS.values():
            if kind.has(task, shift):
                # the LaTeX table and diagram go into the PDF; every file is a target
                for role, path in kind.paths(RESULTS, task, shift).items():
                    section = {"tex": kind.section, "cd_tex": "cd"}.get(role, "other")
                    targets[section].append(path)
        targets["figures"].append(
            results_file("error_by_shift_pdf", task=task, shift=shift)
        )
        targets["regimes"].append(results_file("regime_tex", task=task, shift=shift))
        targets["regime_figures"].append(
            results_file("regime_png", task=task, shift=shift)
        )
        targets["other"].append(results_file("regime_csv", task=task, shift=shift))
        if shift == "compound":
            targets["other"] += [
                results_file("regime_2d_csv", task=task),
                results_file("regime_2d_png", task=task),
            ]
        if selector_on(shift, task):
            targets["other"].append(
                results_file("selection_csv", task=task, shift=shift)
            )
            targets["regimes"].append(
                results_file("selection_tex", task=task, shift=shift)
            )
        # the paper's tables have two classes and no compound shift
        if layout(shift) == TWO_CLASS and shift in PAPER_SHIFTS:
            targets["other"].append(
                results_file("reproduction_md", task=task, shift=shift)
            )
        if task == "calibration":
            targets["reliability"] += [
                results_file("reliability_png", shift=shift, method=method)
                for method in methods_of(shift, task)
            ]
        targets["other"] += companion_outputs(shift, task)
    # compound shift runs the covariate-shift setups: their accuracy is the covariate appendix's
    if shift in PAPER_SHIFTS:
        targets["appendix"].append(results_file("accuracy_tex", shift=shift))
        targets["other"].append(results_file("accuracy_cells", shift=shift))
        targets["other"].append(results_file("accuracy_reproduction", shift=shift))
    return targets


def companion_outputs(shift, task):
    """The report files written beside a target by the same job (a PNG beside its PDF, a summary
    beside its table): targets too, because Snakemake rebuilds a deleted output of a finished job
    only when something asks for it."""
    files = [results_file("error_by_shift_png", task=task, shift=shift)]
    if selector_on(shift, task):
        files.append(results_file("selection_choices", task=task, shift=shift))
        files.append(results_file("records", shift=shift, task=task, method=SELECTOR))
    if layout(shift) == TWO_CLASS and shift in PAPER_SHIFTS:
        files.append(results_file("reproduction_csv", task=task, shift=shift))
    if task == "calibration":
        files += [
            results_file("reliability_csv", shift=shift, method=method)
            for method in methods_of(shift, task)
        ]
    return files


# The shifts of the paper (reproduction reports, accuracy appendix).
PAPER_SHIFTS = ("label", "covariate")


def report_pdf_inputs(section):
    return [
        path for shift in enabled_shifts() for path in table_targets(shift)[section]
    ]


def setup_by_name(shift, name):
    """The named fields of the setup whose {setup} wildcard is ``name`` (classifier/data set or
    model/source__target), looked up among the configured setups."""
    keys = (
        ("dataset", "classifier") if shift == "label" else ("model", "source", "target")
    )
    for setup in evaluation_setups(shift):
        if setup_name(shift, setup) == name:
            return dict(zip(keys, setup))
    raise ValueError(
        f"{name!r} is not a {shift}-shift setup of this config; its setups are "
        f"{[setup_name(shift, s) for s in evaluation_setups(shift)]}"
    )


def descriptor_file(shift, setup):
    """The shift descriptors of one setup's samples (rule descriptors)."""
    return results_file("descriptors", shift=shift, setup=setup_name(shift, setup))


def trivial_files(shift):
    """The trivial answers' errors of every setup of one shift (rule descriptors), in table order."""
    return [
        results_file("trivial", shift=shift, setup=setup_name(shift, setup))
        for setup in evaluation_setups(shift)
    ]


def setup_files(shift, fields):
    """The files one setup is read from, by kind: split, samples and posteriors (label shift), or
    the (model, source) cache and the pair's samples (covariate and compound shift)."""
    if shift == "label":
        dataset, classifier = fields["dataset"], fields["classifier"]
        return {
            "split": results_file("split", dataset=dataset),
            "samples": results_file("label_samples", dataset=dataset),
            "posteriors": results_file(
                "posteriors", dataset=dataset, classifier=classifier
            ),
        }
    return {
        "lm_outputs": lm_outputs(fields["model"], fields["source"]),
        "samples": samples_file(shift, fields["source"], fields["target"]),
    }


def descriptor_inputs(wildcards):
    return setup_files(wildcards.shift, setup_by_name(wildcards.shift, wildcards.setup))


def evaluation_setups(shift):
    """Setups in table order: (data set, classifier) under label shift, classifier-major; (model,
    source, target) under covariate shift, model-major. The order of the rows of the aggregated
    per-method record file (docs/evaluation-jobs.md)."""
    if shift == "label":
        return [(d, c) for c in label_classifiers() for d in label_datasets()]
    return [tuple(setup) for setup in covariate_setups()]


def setup_name(shift, setup):
    """The {setup} wildcard of one setup: classifier/data set, or model/source__target."""
    if shift == "label":
        dataset, classifier = setup
        return f"{classifier}/{dataset}"
    model, source, target = setup
    return f"{model}/{source}__{target}"


# The {setup} wildcard of the one evaluation job per method under `evaluation_jobs: per_method`.
ALL_SETUPS = "all"


def job_setups(shift):
    """The {setup} wildcards of a method's evaluation jobs, in table order: one per setup
    (`evaluation_jobs: per_setup`) or the single `all` (`per_method`, docs/evaluation-jobs.md).
    """
    if config["evaluation_jobs"] == "per_method":
        return [ALL_SETUPS]
    return [setup_name(shift, setup) for setup in evaluation_setups(shift)]


def job_setup(wildcards):
    """The {setup} wildcard of an evaluation job: `all` for a per-method job, which has none."""
    return wildcards.get("setup", ALL_SETUPS)


def setup_fields(wildcards):
    """The named fields of each setup the job evaluates, in table order: the setup of the {setup}
    wildcard, looked up among the configured setups (a name is never split on separators that a
    data set or domain name could contain), or every setup for `all`."""
    job = job_setup(wildcards)
    if job not in job_setups(wildcards.shift):
        raise ValueError(
            f"{job!r} is not a {wildcards.shift}-shift evaluation job of this config "
            f"(evaluation_jobs: {config['evaluation_jobs']}); its jobs are "
            f"{job_setups(wildcards.shift)}"
        )
    chosen = [
        setup
        for setup in evaluation_setups(wildcards.shift)
        if job in (ALL_SETUPS, setup_name(wildcards.shift, setup))
    ]
    keys = (
        ("dataset", "classifier")
        if wildcards.shift == "label"
        else ("model", "source", "target")
    )
    return [dict(zip(keys, setup)) for setup in chosen]


def evaluation_setup_inputs(wildcards):
    """The input files of one evaluation job, by name: `{kind}_{i}` belongs to the job's i-th
    setup (`params.setups[i]`)."""
    inputs = {}
    for index, setup in enumerate(setup_fields(wildcards)):
        for kind, path in setup_files(wildcards.shift, setup).items():
            inputs[f"{kind}_{index}"] = path
        inputs[f"descriptors_{index}"] = descriptor_file(
            wildcards.shift, tuple(setup.values())
        )
    return inputs


def setup_evaluation_files(kind):
    """Input function of the aggregation: the files of one method's evaluation jobs, in table
    order (kind: eval or runtime)."""

    def files(wildcards):
        return [
            results_file(
                {"eval": "setup_records", "runtime": "setup_runtime"}[kind],
                shift=wildcards.shift,
                task=wildcards.task,
                method=wildcards.method,
                setup=setup,
            )
            for setup in job_setups(wildcards.shift)
        ]

    return files


def covariate_row_orders():
    """Models are the row blocks; source->target pairs the rows (source-major)."""
    return covariate_models(), [f"{s}->{t}" for s, t in covariate_pairs()]


REPOSITORY = str(Path(workflow.basedir))


def reliability_diagrams():
    """Each calibrator's reliability diagram of the run, in target order: its shift, method,
    display name, the per-job bin statistics it pools (table order) and its two files.
    """
    return [
        {
            "shift": shift,
            "method": method,
            "display": method_info(shift, "calibration")[method][0],
            "inputs": [
                results_file(
                    "setup_reliability",
                    shift=shift,
                    task="calibration",
                    method=method,
                    setup=setup,
                )
                for setup in job_setups(shift)
            ],
            "csv": results_file("reliability_csv", shift=shift, method=method),
            "png": results_file("reliability_png", shift=shift, method=method),
        }
        for shift in enabled_shifts()
        for method in methods_of(shift, "calibration")
    ]


RELIABILITY_DIAGRAMS = reliability_diagrams()


def provenance_inputs(wildcards):
    """The hub_download records and fine-tuning reports (resolved commits, GPUs) of the run."""
    files = {"hub": [], "lm_reports": []}
    if not {"covariate", "compound"} & set(enabled_shifts()):
        return files
    if COVARIATE["text_source"] == "hf":
        files["hub"] += [hub_manifest("datasets", d) for d in covariate_domains()]
    for model in covariate_models():
        if is_hub_model(model_entry(model)["id"]):
            files["hub"].append(hub_manifest("models", model))
        files["lm_reports"] += [
            results_file("lm_training", model=model, source=source)
            for source in covariate_domains()
        ]
    return files


def all_outputs():
    outputs = []
    for shift in enabled_shifts():
        for paths in table_targets(shift).values():
            outputs += paths
        for task in TASKS:
            # targets themselves, so that a plain rerun regenerates a missing per-sample file
            outputs += eval_files(shift, task)
    if build_report_pdf():
        outputs.append(results_file("report_pdf"))
    outputs.append(results_file("provenance"))
    if config["site"]:
        outputs.append(results_file("site_index"))
    return outputs


def site_tables():
    """[task, shift, methods, method_info, selector] of every table of the run (the site's pages)."""
    return [
        [
            task,
            shift,
            table_methods(shift, task),
            method_info(shift, task),
            selector_on(shift, task),
        ]
        for shift in enabled_shifts()
        for task in TASKS
        if methods_of(shift, task)
    ]


def site_inputs(wildcards):
    """Every file the pages read: the tables' and figures' targets, the per-sample records and
    the reliability statistics, the CD and regime PNGs, and the provenance."""
    files = {"provenance": results_file("provenance"), "targets": [], "records": []}
    for shift in enabled_shifts():
        for paths in table_targets(shift).values():
            files["targets"] += paths
        for task in TASKS:
            if not methods_of(shift, task):
                continue
            files["records"] += [
                results_file("records", shift=shift, task=task, method=method)
                for method in table_methods(shift, task)
            ]
            if layout(shift) == TWO_CLASS and shift in PAPER_SHIFTS:
                files["targets"].append(
                    results_file("reproduction_csv", task=task, shift=shift)
                )
            if selector_on(shift, task):
                files["targets"].append(
                    results_file("selection_choices", task=task, shift=shift)
                )
            if task == "calibration":
                files["targets"] += [
                    results_file("reliability_csv", shift=shift, method=method)
                    for method in methods_of(shift, task)
                ]
    return files
