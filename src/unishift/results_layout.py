"""The layout of a run's results folder, spelled once: the rules' inputs and outputs
(``workflow/rules``), the Python API (:mod:`unishift.api`), the workflow's checks and the run summary
read their paths from here.

Each entry names one kind of file by a template relative to the results folder; its ``{fields}`` are
the rules' wildcards. :func:`results_path` fills in the fields it is given and leaves the others as
``{wildcards}``, so one template serves a rule's output pattern and a concrete file alike::

    results_path("results", "records")  # 'results/eval/{shift}/{task}/{method}.csv'
    results_path("results", "records", shift="label", task="cap", method="ATC")
"""

from __future__ import annotations

import os
import string

LAYOUT = {
    # label shift: a data set's split, a classifier on it, its posteriors and the samples drawn
    "split": "data/label/{dataset}/split.npz",
    "classifier": "classifiers/label/{dataset}/{classifier}.pkl",
    "posteriors": "posteriors/label/{dataset}/{classifier}.npz",
    "label_samples": "samples/label/{dataset}.npz",
    # covariate and compound shift: text domains, language-model outputs, source->target samples
    "hub_manifest": "hub/{kind}/{name}.json",
    "text_split": "text/{domain}/{split}.parquet",
    "text_summary": "text/{domain}/summary.json",
    "lm_encoded": "lm/{model}/encoded/{domain}.npz",
    "lm_outputs": "lm/{model}/{source}/outputs.npz",
    "lm_training": "lm/{model}/{source}/training.json",
    "lm_head": "lm/{model}/{source}/head.safetensors",
    "pair_samples": "samples/{shift}/{source}__{target}.npz",
    # domain-weight plans of one setup
    "label_weights": "weights/label/{dataset}/{classifier}/{plan}.npz",
    "pair_weights": "weights/{shift}/{model}/{source}__{target}/{plan}.npz",
    "weights": "weights/{folder}/{plan}.npz",
    # shift descriptors of one setup's samples; {setup}: classifier/data set or model/source__target
    "descriptors": "descriptors/{shift}/{setup}.csv",
    # the trivial answers' errors of one setup's samples (docs/regimes.md §4.4)
    "trivial": "regimes/trivial/{shift}/{setup}.csv",
    # per-sample records: one evaluation job's, then one method's (what the tables read)
    "setup_records": "eval_setups/{shift}/{task}/{method}/{setup}.csv",
    "setup_runtime": "runtime_setups/{shift}/{task}/{method}/{setup}.csv",
    # a calibrator's reliability-diagram bin statistics: one evaluation job's, then pooled
    "setup_reliability": "reliability_setups/{shift}/{task}/{method}/{setup}.csv",
    "reliability_csv": "reliability/{shift}/{method}.csv",
    "reliability_png": "plots/calibration_{shift}_reliability_{method}.png",
    "records": "eval/{shift}/{task}/{method}.csv",
    "runtime": "runtime/{shift}/{task}/{method}.csv",
    # the report: tables, critical-difference diagrams, plots, regime maps, reproduction pages
    "table_cells": "tables/{task}_{shift}.csv",
    "table_summary": "tables/{task}_{shift}_summary.csv",
    "table_tex": "tables/{task}_{shift}.tex",
    "brier_cells": "tables/calibration_brier_{shift}.csv",
    "brier_summary": "tables/calibration_brier_{shift}_summary.csv",
    "brier_tex": "tables/calibration_brier_{shift}.tex",
    "accuracy_cells": "tables/classifier_accuracy_{shift}.csv",
    "accuracy_tex": "tables/classifier_accuracy_{shift}.tex",
    "accuracy_reproduction": "reproduction/classifier_accuracy_{shift}.csv",
    "cd_tex": "cd/{task}_{shift}.tex",
    "cd_png": "cd/{task}_{shift}.png",
    "cd_groups": "cd/{task}_{shift}_groups.csv",
    "error_by_shift_pdf": "plots/{task}_{shift}_err_by_shift.pdf",
    "error_by_shift_png": "plots/{task}_{shift}_err_by_shift.png",
    "regime_tex": "regimes/{task}_{shift}.tex",
    "regime_png": "regimes/{task}_{shift}.png",
    "regime_csv": "regimes/{task}_{shift}.csv",
    # compound shift's two-dimensional maps: label-shift intensity x mixture
    "regime_2d_csv": "regimes/{task}_compound_2d.csv",
    "regime_2d_png": "regimes/{task}_compound_2d.png",
    "selection_tex": "regimes/{task}_{shift}_selection.tex",
    "selection_csv": "regimes/{task}_{shift}_selection.csv",
    "selection_choices": "regimes/{task}_{shift}_choices.csv",
    "selection_gains": "regimes/{task}_{shift}_gains.csv",
    "reproduction_md": "reproduction/{task}_{shift}.md",
    "reproduction_csv": "reproduction/{task}_{shift}.csv",
    "report_pdf": "report.pdf",
    "provenance": "provenance.json",
    # the browsable results site (its other pages and assets lie beside it)
    "site_index": "site/index.html",
}


def fields_of(entry: str) -> tuple[str, ...]:
    """The fields (wildcards) of a layout entry, in the order they appear."""
    return tuple(f for _, f, _, _ in string.Formatter().parse(LAYOUT[entry]) if f)


def results_path(results: str | os.PathLike, entry: str, /, **fields) -> str:
    """``results/<template of entry>`` with ``fields`` filled in; a field not given stays a
    ``{wildcard}``. A field the template does not have is an error (a misspelt one would otherwise
    leave a wildcard where a value was meant)."""
    if entry not in LAYOUT:
        raise KeyError(f"{entry!r} is no entry of the results layout; entries: {sorted(LAYOUT)}")
    unknown = set(fields) - set(fields_of(entry))
    if unknown:
        raise ValueError(
            f"{entry} ({LAYOUT[entry]}) has no field {sorted(unknown)}; its fields: "
            f"{list(fields_of(entry))}"
        )
    filled = "".join(
        literal + ("" if field is None else str(fields.get(field, "{" + field + "}")))
        for literal, field, _, _ in string.Formatter().parse(LAYOUT[entry])
    )
    return f"{os.fspath(results)}/{filled}"


def folder_of(results: str | os.PathLike, entry: str, /, **fields) -> str:
    """The folder that holds an entry's files up to its first field not given (e.g. the records of
    one shift and task: ``folder_of(results, "records", shift="label", task="cap")``)."""
    path = results_path(results, entry, **fields)
    return path.split("{", 1)[0].rstrip("/") if "{" in path else os.path.dirname(path)


# the top folders of the layout: what a scan of a results folder (workflow checks) looks into
TOP_FOLDERS = tuple(sorted({t.split("/", 1)[0] for t in LAYOUT.values() if "/" in t}))
