"""The workbench from Python (a notebook, a script; docs/api.md, ``examples/notebook_api.py``): load
the setups a finished run persisted, score any method on exactly the same samples, and build the
table and the critical-difference diagram from the records. Importing it warns when NumPy runs with
other CPU kernels than the workflow's (docs/api.md).
"""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import clone

from unishift import API
from unishift.cpu_kernels import warn_if_unpinned
from unishift.data.covariate import load_covariate_setup
from unishift.data.label_shift import read_label_setup
from unishift.data.setups import SetupData
from unishift.evaluation.evaluate import evaluate_setups
from unishift.evaluation.records import layout_of
from unishift.evaluation.stats import ALPHA, MIN_COVERAGE, check_share
from unishift.io import DamagedFileError, csv_problem, npz_problem
from unishift.methods.base import (
    SHIFTS,
    TASKS,
    AccuracyPredictor,
    Calibrator,
    Method,
    Quantifier,
    Sample,
    SampleContext,
    Setting,
)
from unishift.methods.domain_weights import domain_weight_plan
from unishift.methods.quantification.aggregative import QuaPyQuantifier, check_aggregative
from unishift.option_checks import check_choice
from unishift.results_layout import LAYOUT, folder_of, results_path

warn_if_unpinned()

# Where a run records its config (workflow/scripts/provenance.py), which names its methods.
PROVENANCE = LAYOUT["provenance"]

_ENTRY_POINTS = {
    "calibration": "calibrate",
    "quantification": "quantify",
    "cap": "predict_accuracy",
}


def _names_in(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.glob("*")) if folder.is_dir() else []


def load_setups(
    results: str | Path = "results",
    shift: str = "label",
    *,
    datasets: Iterable[str] | None = None,
    classifiers: Iterable[str] | None = None,
    seed: int = 0,
    sample_posteriors: str = "per_sample",
) -> list[SetupData]:
    """The setups a run persisted under ``results``, in table order; ``seed`` and
    ``sample_posteriors`` must be the run's config values (docs/api.md)."""
    check_choice("shift", shift, SHIFTS)
    results = Path(results)
    if not results.is_dir():
        raise FileNotFoundError(f"{results} is not a folder: run the workflow first (README.md)")
    if shift == "label":
        found = list(_label_setups(results, datasets, classifiers, seed, sample_posteriors))
    else:
        found = list(_covariate_setups(results, datasets, classifiers, seed, shift))
    if not found:
        raise FileNotFoundError(
            f"no {shift}-shift setup under {results}: the workflow has not produced its samples "
            f"and posteriors (or none match datasets={datasets}, classifiers={classifiers})"
        )
    return found


def _run_config(results: Path) -> dict | None:
    """The config a finished run recorded (``provenance.json``), or None before it finished."""
    try:
        config = json.loads((results / PROVENANCE).read_text(encoding="utf-8"))["config"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return config if isinstance(config, dict) else None


def _checked(results: Path, setups: list[tuple[Any, tuple[Path, ...]]]):
    """The setups' files as the workflow's jobs read them: every file present (a missing one is
    named, not skipped) and what its job wrote (:mod:`unishift.output_records`)."""
    from unishift.io import REBUILD
    from unishift.output_records import verify

    missing = [str(f) for _, files in setups for f in files if not f.is_file()]
    if missing:
        raise FileNotFoundError(
            f"{len(missing)} file(s) of the requested setups are missing under {results}: "
            f"{', '.join(dict.fromkeys(missing))}; rebuild them with `snakemake <path>` (or run "
            "the workflow), or leave their setups out (datasets=, classifiers=)"
        )
    for _, files in setups:
        verify(files, results)
        for path in files:
            if path.suffix == ".npz" and (problem := npz_problem(path)):
                raise DamagedFileError(path, problem, REBUILD)
    return setups


def _label_setups(results, datasets, classifiers, seed, sample_posteriors):
    posteriors = Path(folder_of(results, "posteriors"))
    run = (_run_config(results) or {}).get("label_shift") or {}
    if datasets is None:
        datasets = run.get("datasets") or _names_in(posteriors)
    datasets = list(datasets)
    if classifiers is None:
        classifiers = run.get("classifiers") or sorted(
            {p.stem for d in datasets for p in (posteriors / d).glob("*.npz")}
        )
    setups = [
        (
            (dataset, classifier),
            (
                Path(results_path(results, "split", dataset=dataset)),
                Path(results_path(results, "posteriors", dataset=dataset, classifier=classifier)),
                Path(results_path(results, "label_samples", dataset=dataset)),
            ),
        )
        for classifier in classifiers
        for dataset in datasets
    ]
    for (dataset, classifier), files in _checked(results, setups):
        yield read_label_setup(
            *files, dataset, classifier, seed, sample_posteriors=sample_posteriors
        )


def _covariate_setups(results, pairs, models, seed, shift):
    lm = Path(folder_of(results, "lm_outputs"))
    run = (_run_config(results) or {}).get("covariate_shift") or {}
    if models is None:
        models = list(run.get("models") or {}) or _names_in(lm)
    models = list(models)
    samples = Path(folder_of(results, "pair_samples", shift=shift))
    if pairs is None:
        pairs = [p.stem.replace("__", "->") for p in sorted(samples.glob("*__*.npz"))]
    setups = []
    for model in models:
        for pair in pairs:
            source, _, target = pair.partition("->")
            files = (
                Path(results_path(results, "lm_outputs", model=model, source=source)),
                Path(
                    results_path(results, "pair_samples", shift=shift, source=source, target=target)
                ),
            )
            setups.append(((model, source, target), files))
    for (model, source, target), (outputs, pair_samples) in _checked(results, setups):
        yield load_covariate_setup(outputs, pair_samples, model, source, target, seed, shift=shift)


def task_of(method: Any) -> str:
    """The task of a method object: its ``task`` attribute, else the entry point it has."""
    task = getattr(method, "task", None)
    if task in TASKS:
        return task
    found = [t for t, entry in _ENTRY_POINTS.items() if callable(getattr(method, entry, None))]
    if len(found) != 1:
        raise TypeError(
            f"{method!r} has none (or several) of calibrate / quantify / predict_accuracy: "
            "give an object with the interface of one task (unishift.methods.base)"
        )
    return found[0]


class _Wrapped(Method):
    """Gives an object that has ``fit`` and one task's entry point (not a unishift method) the
    interface of a method of that task: ``apply``, the entry point and ``fit_notes``."""

    def __init__(self, method: Any = None, task: str = "quantification"):
        self.method = method
        self.task = task

    @property
    def entry_point(self) -> str:
        return _ENTRY_POINTS[self.task]

    def domain_weight_plan(self):
        return domain_weight_plan(self.method)

    def _fit(self, setting: Setting) -> None:
        self.method_ = clone(self.method, safe=False)
        self.method_.fit(setting)
        # an object of its own kind may keep no notes: it has none
        self.fit_notes.extend(getattr(self.method_, "fit_notes", None) or [])

    def apply(self, sample: Sample, context: SampleContext | None = None):
        return getattr(self.method_, self.entry_point)(sample, self.context_for(context))

    calibrate = quantify = predict_accuracy = apply


def as_method(method: Any, task: str | None = None) -> Method:
    """``method`` itself when it is a unishift method, else wrapped as one of its task."""
    if isinstance(method, Method):
        return method
    return _Wrapped(method, task or task_of(method))


def evaluate(
    method: Any,
    setups: Iterable[SetupData],
    *,
    name: str | None = None,
    task: str | None = None,
    params: dict[str, Any] | None = None,
    ece: str = "top_label",
    ece_precision: str = "float32",
    domain_stream: str = "reference",
    layout: str | None = None,
) -> pd.DataFrame:
    """Per-sample records of one method on every setup: a registered name (with ``task``) or an
    object with one task's interface, fitted afresh (a clone) per setup (docs/api.md)."""
    setups = list(setups)
    if isinstance(method, str):
        from unishift.methods.registry import get_method

        if task is None:
            raise ValueError(f"evaluate({method!r}, ...) needs task= (one of {list(TASKS)})")
        spec = get_method(task, method, setups[0].shift if setups else None)
        name = name or method

        def build(setup):
            return spec.build(setup.shift, setup.n_classes, params)
    else:
        if params:
            raise ValueError("params= applies to a registered method name, not to an object")
        task = task or task_of(method)
        name = name or getattr(method, "name", "") or type(method).__name__
        method = as_method(method, task)

        def build(_setup):
            return clone(method)

    if not re.fullmatch(r"[A-Za-z0-9_]+", name):
        raise ValueError(f"method name {name!r}: use letters, digits and underscores")
    layout = layout or layout_of(setup.n_classes for setup in setups)
    records, _ = evaluate_setups(
        task,
        name,
        build,
        setups,
        ece=ece,
        ece_precision=ece_precision,
        domain_stream=domain_stream,
        layout=layout,
    )
    _warn_failures(records, name)
    return records


def _warn_failures(records: pd.DataFrame, name: str) -> None:
    """A warning naming how many samples ``name`` failed on: a mean of ``error`` averages the
    survivors only, and a method below the share is never declared best (docs/api.md)."""
    failed = int((records["status"] == "error").sum())
    if not failed:
        return
    total = len(records)
    first = records.loc[records["status"] == "error", "reason"].iloc[0]
    below = failed > total - np.ceil(np.round(MIN_COVERAGE * total, 9))
    warnings.warn(
        f"{name} failed on {failed} of {total} samples (first reason: {first}); their error is NaN "
        "and a mean over 'error' averages the other samples only"
        + (
            f"; scored on fewer than {MIN_COVERAGE:.0%} of them, it is never bold, chosen or "
            "ranked best in a table"
            if below
            else ""
        ),
        stacklevel=3,
    )


def load_records(
    results: str | Path = "results",
    shift: str = "label",
    task: str = "quantification",
    methods: Iterable[str] | None = None,
) -> pd.DataFrame:
    """The per-sample records a run wrote for ``(shift, task)`` of ``methods``, by default those of
    the run's config (docs/api.md)."""
    from unishift.report.tables import load_records as read_all

    folder = Path(folder_of(results, "records", shift=shift, task=task))
    provenance = Path(results) / PROVENANCE
    present = [p.stem for p in sorted(folder.glob("*.csv"))]
    if methods is not None:
        names = list(methods)
    elif not provenance.is_file():
        names = present
        if names:
            warnings.warn(
                f"{provenance} is missing (the run has not finished), so every method file under "
                f"{folder} is read: {names}; files of an earlier config may be among them (pass "
                "methods= to choose)",
                stacklevel=2,
            )
    else:
        try:
            config = json.loads(provenance.read_text())["config"]
            names = list(config.get("methods", {}).get(shift, {}).get(task, []))
        except (ValueError, KeyError, TypeError, AttributeError) as err:
            raise ValueError(
                f"{provenance} does not hold a run's config ({type(err).__name__}: {err}): rerun "
                "the workflow's provenance rule, or pass methods="
            ) from err
        if not names:
            raise FileNotFoundError(
                f"the run's config ({provenance}) names no {shift}/{task} methods (method files "
                f"under {folder}: {present}; pass methods= to read them)"
            )
        stale = [name for name in present if name not in names]
        if stale:
            warnings.warn(
                f"{folder} also holds the records of {stale}, which the run's config "
                f"({provenance}) does not name: left out (pass methods= to read them)",
                stacklevel=2,
            )
    if not names:
        raise FileNotFoundError(f"no per-sample records under {folder}")
    missing = [name for name in names if name not in present]
    if missing:
        raise FileNotFoundError(
            f"no per-sample records of {missing} under {folder} (methods there: {present}): "
            "run the workflow for them, or leave them out of methods="
        )
    paths = [folder / f"{name}.csv" for name in names]
    # the checks the workflow makes before a table job reads them
    from unishift.io import REBUILD
    from unishift.output_records import verify

    for path in paths:
        if problem := csv_problem(path):
            raise DamagedFileError(path, problem, REBUILD)
    verify(paths, Path(results))
    records = read_all(paths)
    for name, part in records.groupby("method", sort=False):
        _warn_failures(part, str(name))
    return records


def table(
    records: pd.DataFrame,
    task: str,
    shift: str,
    methods: Iterable[str] | None = None,
    *,
    metric: str = "error",
    groups: dict[str, str] | None = None,
    display: dict[str, tuple[str, str]] | None = None,
    alpha: float = ALPHA,
    min_coverage: float = MIN_COVERAGE,
):
    """One table's :class:`unishift.report.tables.TableResult` from per-sample records; a method the
    registry does not know needs its group in ``groups`` or ``display`` (docs/api.md). A method
    scored on fewer than ``min_coverage`` of a cell's samples is never bold there
    (docs/reporting.md §2.1.1)."""
    from unishift.methods.registry import GROUPS, all_methods
    from unishift.report.tables import compute_table

    check_choice("task", task, TASKS)
    check_choice("shift", shift, SHIFTS)
    alpha = check_share("alpha", alpha)
    min_coverage = check_share("min_coverage", min_coverage, low_open=False)

    records = records[(records["task"] == task) & (records["shift"] == shift)]
    methods = list(methods) if methods is not None else list(dict.fromkeys(records["method"]))
    known = all_methods()
    groups, display = dict(groups or {}), dict(display or {})
    info = {}
    for name in methods:
        spec = known.get((task, name))
        registered = spec is not None and shift in spec.shifts
        if name in display:
            info[name] = display[name]
        elif name in groups:
            info[name] = (spec.display if registered else name, groups[name])
        elif not registered:
            raise ValueError(
                f"table(): {name!r} is not a registered {task} method under {shift} shift, so its "
                f"group is unknown: give it, e.g. groups={{{name!r}: 'adapted'}} (one of "
                f"{list(GROUPS)}; 'reference' adds a win-rate row and changes the others' win "
                "rates)"
            )
    classifiers = list(dict.fromkeys(records["classifier"]))
    datasets = list(dict.fromkeys(records["dataset"]))
    return compute_table(
        records,
        task,
        shift,
        methods,
        metric,
        classifiers,
        datasets,
        alpha=alpha,
        method_info=info,
        min_coverage=min_coverage,
    )


def table_tex(result) -> str:
    from unishift.report.tables import render_table_tex

    return render_table_tex(result)


def cd_diagram(result, tex_path: str | Path, png_path: str | Path | None = None, alpha=ALPHA):
    """Write the critical-difference diagram of a table (TikZ and PNG); returns its CD result."""
    from unishift.report.cd import write_cd

    alpha = check_share("alpha", alpha)
    tex_path = Path(tex_path)
    return write_cd(result, tex_path, png_path or tex_path.with_suffix(".png"), alpha)


def from_quapy(quantifier: Any, *, name: str | None = None) -> QuaPyQuantifier:
    """A unishift quantifier from a QuaPy aggregative quantifier, named after its class by default
    (checked now, so that a quantifier that cannot be wrapped fails here rather than in a fit)."""
    check_aggregative(quantifier)
    return QuaPyQuantifier(quantifier, name=name or type(quantifier).__name__)


def adapt(method: Method, kind: str, **params) -> Method:
    """The paper's adaptation ``kind`` of a method object, with the adaptation's defaults."""
    from unishift.methods.adapt.table import KINDS

    kind = {"q2c": "q2c_5B", "a2c": "a2c_6B"}.get(kind, kind)  # the paper's (two-class) binnings
    check_choice("kind", kind, KINDS)
    spec = KINDS[kind]
    if task_of(method) != spec.source:
        raise ValueError(f"{kind} adapts a {spec.source} method, not a {task_of(method)} one")
    return spec.adapter(inner=as_method(method, spec.source), **params)


__all__ = [*API, "AccuracyPredictor", "Calibrator", "QuaPyQuantifier", "Quantifier", "task_of"]
