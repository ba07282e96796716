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
    """Load the setups a finished run persisted under ``results``, in table order.

    A label-shift setup is one (classifier, data set); a covariate- or compound-shift setup is one
    (language model, source->target pair). Each file is checked as the workflow's jobs check it
    (docs/api.md; docs/evaluation-jobs.md, "What made a file").

    Parameters
    ----------
    results : str or pathlib.Path, default "results"
        The run's results folder.
    shift : {"label", "covariate", "compound"}, default "label"
        The kind of dataset shift whose setups to load.
    datasets : iterable of str, optional
        Label shift: the data sets; covariate and compound shift: the ``"source->target"`` pairs.
        By default those of the run's config (``provenance.json``), else every one found.
    classifiers : iterable of str, optional
        Label shift: the classifiers; covariate and compound shift: the language models. By
        default those of the run's config, else every one found.
    seed : int, default 0
        The run's ``seed`` (the samples' random streams continue from it).
    sample_posteriors : {"per_sample", "pool"}, default "per_sample"
        The run's ``label_shift.sample_posteriors``; ``"pool"`` for a k-class run.

    Returns
    -------
    list of unishift.data.setups.SetupData
        The setups, classifier-major (label shift) or one per (model, source->target).

    Raises
    ------
    ValueError
        If ``shift`` is not a known shift.
    FileNotFoundError
        If ``results`` is not a folder, a file of a requested setup is missing (named), or no
        setup matches.
    unishift.io.DamagedFileError
        If a file is damaged or incomplete.
    unishift.output_records.ProvenanceError
        If a file is not what its job wrote (edited, or copied over another setup's).

    See Also
    --------
    evaluate : score a method on the loaded setups.

    Examples
    --------
    >>> setups = load_setups("results", shift="label")  # doctest: +SKIP
    >>> [(s.classifier, s.dataset) for s in setups]  # doctest: +SKIP
    [('LR', 'cmc.3'), ('LR', 'yeast'), ('kNN', 'cmc.3'), ('kNN', 'yeast')]
    """
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
    """The task of a method object: its ``task`` attribute, else the entry point it has.

    Parameters
    ----------
    method : object
        A unishift method, or any object with one of ``calibrate``, ``quantify`` or
        ``predict_accuracy``.

    Returns
    -------
    str
        ``"calibration"``, ``"quantification"`` or ``"cap"``.

    Raises
    ------
    TypeError
        If ``method`` has none, or several, of the three entry points.
    """
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
    """``method`` itself when it is a unishift method, else wrapped as one of its task.

    Parameters
    ----------
    method : object
        A unishift method, or an object with ``fit(setting)`` and one task's entry point.
    task : {"calibration", "quantification", "cap"}, optional
        The task to wrap it for; by default :func:`task_of` ``method``.

    Returns
    -------
    unishift.methods.base.Method
        ``method``, or a method that fits a clone of it and calls its entry point.
    """
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
    """Score one method on every sample of every setup: its per-sample records.

    The method is fitted afresh on each setup (a ``sklearn.base.clone`` of it, or a new instance
    of a registered method); a registered method gives exactly the workflow's records
    (docs/api.md). A warning names how many samples the method failed on, if any.

    Parameters
    ----------
    method : str or object
        A registered method's name (then ``task`` is needed), or any object with
        ``fit(setting)`` and one of ``calibrate`` / ``quantify`` / ``predict_accuracy(sample,
        context)`` (:mod:`unishift.methods.base`).
    setups : iterable of unishift.data.setups.SetupData
        The setups to score it on, e.g. from :func:`load_setups`.
    name : str, optional
        The method's name in the records (letters, digits and underscores); by default the
        registered name, the object's ``name`` attribute, or its class name.
    task : {"calibration", "quantification", "cap"}, optional
        The task; needed with a registered name, else taken from the object (:func:`task_of`).
    params : dict, optional
        Hyper-parameters overriding a registered method's defaults (not for an object).
    ece : str, default "top_label"
        The ECE notion of the calibration records (the config key ``ece``).
    ece_precision : {"float32", "float64"}, default "float32"
        The ECE arithmetic; ``"float32"`` is the reference implementation's.
    domain_stream : {"reference", "per_sample"}, default "reference"
        The random stream of the domain classifier's draws (config/README.md).
    layout : {"two_class", "k_class"}, optional
        The records' columns; by default ``"two_class"`` when every setup has two classes.

    Returns
    -------
    pandas.DataFrame
        One row per (setup, sample), the columns of ``results/eval``; a failed sample has
        ``status == "error"``, its reason, and a NaN ``error``.

    Raises
    ------
    ValueError
        If a registered name comes without ``task``, ``params`` comes with an object, or ``name``
        has characters other than letters, digits and underscores.
    TypeError
        If an object has none, or several, of the three entry points.

    See Also
    --------
    load_setups : the setups to score on.
    table : a result table from the records.

    Examples
    --------
    >>> import numpy as np
    >>> class MeanPosterior:
    ...     def fit(self, setting):
    ...         return self
    ...     def quantify(self, sample, context):
    ...         return np.asarray(sample.posteriors).mean(axis=0)
    >>> records = evaluate(MeanPosterior(), setups, name="Mine")  # doctest: +SKIP
    >>> pcc = evaluate("PCC", setups, task="quantification")  # doctest: +SKIP
    """
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
    """Read the per-sample records a run wrote for one shift and task.

    By default the methods of the run's config (``methods.<shift>.<task>`` in
    ``results/provenance.json``), in config order; the files of methods an earlier config named
    are left out with a warning. Without ``provenance.json`` every file is read, with a warning
    (docs/api.md).

    Parameters
    ----------
    results : str or pathlib.Path, default "results"
        The run's results folder.
    shift : {"label", "covariate", "compound"}, default "label"
        The shift whose records to read.
    task : {"calibration", "quantification", "cap"}, default "quantification"
        The task whose records to read.
    methods : iterable of str, optional
        Exactly these methods' records, in this order.

    Returns
    -------
    pandas.DataFrame
        The records of every method, one row per (method, setup, sample).

    Raises
    ------
    FileNotFoundError
        If no records are there, or a requested (or configured) method's file is missing.
    ValueError
        If ``provenance.json`` does not hold a run's config.
    unishift.io.DamagedFileError
        If a record file is damaged or cut.
    unishift.output_records.ProvenanceError
        If a record file is not what its job wrote.

    Examples
    --------
    >>> paper = load_records("results", "label", "quantification")  # doctest: +SKIP
    >>> paper.groupby("method")["error"].mean()  # doctest: +SKIP
    """
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
    trivial: pd.DataFrame | None = None,
    seed: int = 0,
    n_bootstrap: int | None = None,
):
    """Compute one result table (means, ranks, win rates, significance) from per-sample records.

    A method's group decides numbers: every non-reference method's win rates are counted against
    the reference methods. A method the registry does not know therefore needs its group in
    ``groups`` or ``display``; a registered method keeps its own unless ``groups`` names it
    (docs/api.md).

    Parameters
    ----------
    records : pandas.DataFrame
        Per-sample records (:func:`evaluate`, :func:`load_records`); the rows of ``task`` and
        ``shift`` are used.
    task : {"calibration", "quantification", "cap"}
        The table's task.
    shift : {"label", "covariate", "compound"}
        The table's shift.
    methods : iterable of str, optional
        The columns, in order; by default every method of the records, in order of appearance.
    metric : str, default "error"
        The records' column to tabulate.
    groups : dict of str to str, optional
        A method's group: ``"reference"``, ``"adapted"``, ``"baseline"``, ...
        (:data:`unishift.methods.registry.GROUPS`).
    display : dict of str to (str, str), optional
        A method's (LaTeX column head, group).
    alpha : float, default 0.05
        The significance level of the tests, in (0, 1).
    min_coverage : float, default 0.9
        The share of a cell's samples a method must be scored on to be bold there, in (0, 1]
        (docs/reporting.md §2.1.1).
    trivial : pandas.DataFrame, optional
        The trivial answer's error per sample (columns classifier, dataset, sample_id, error): the
        degenerate flag (docs/reporting.md §2.7); without it the flag is unknown (empty).
    seed : int, default 0
        The seed of the cluster-bootstrap intervals.
    n_bootstrap : int, optional
        Their number of resamples (1000 by default).

    Returns
    -------
    unishift.report.tables.TableResult
        The table's numbers; :func:`table_tex` renders it, :func:`cd_diagram` draws its
        critical-difference diagram; ``table_frame`` and ``summary_frame`` of
        :mod:`unishift.report.tables` give the workflow's CSV columns (intervals, coverage flags,
        Holm-corrected tests, degenerate flag: docs/reporting.md §2.7).

    Raises
    ------
    ValueError
        If ``task`` or ``shift`` is unknown, ``alpha`` or ``min_coverage`` lies outside its
        range (NaN and booleans included), or a method has no group.

    Examples
    --------
    >>> result = table(records, "quantification", "label", groups={"Mine": "adapted"})  # doctest: +SKIP
    >>> print(table_tex(result))  # doctest: +SKIP
    """
    from unishift.methods.registry import GROUPS, all_methods
    from unishift.regimes.references import N_BOOTSTRAP
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
        trivial=trivial,
        seed=seed,
        n_bootstrap=N_BOOTSTRAP if n_bootstrap is None else n_bootstrap,
    )


def table_tex(result) -> str:
    """The LaTeX of a computed table, as the workflow writes it (docs/reporting.md §2.6).

    Parameters
    ----------
    result : unishift.report.tables.TableResult
        A table from :func:`table`.

    Returns
    -------
    str
        The table environment, followed by a note on fallbacks and errors if any.
    """
    from unishift.report.tables import render_table_tex

    return render_table_tex(result)


def cd_diagram(result, tex_path: str | Path, png_path: str | Path | None = None, alpha=ALPHA):
    """Write the critical-difference diagram of a table, as TikZ and as PNG.

    Parameters
    ----------
    result : unishift.report.tables.TableResult
        A table from :func:`table`.
    tex_path : str or pathlib.Path
        Where to write the tikzpicture (to ``\\input`` inside a figure).
    png_path : str or pathlib.Path, optional
        Where to write the image; by default ``tex_path`` with the suffix ``.png``.
    alpha : float, default 0.05
        The significance level of the Friedman and the pairwise tests, in (0, 1).

    Returns
    -------
    unishift.evaluation.stats.CDResult
        The analysis drawn: average ranks, the Friedman test, the pairwise p-values and the
        groups of methods not told apart.

    Raises
    ------
    ValueError
        If ``alpha`` does not lie in (0, 1).

    Examples
    --------
    >>> cd = cd_diagram(result, "cd.tex")  # doctest: +SKIP
    >>> cd.groups  # doctest: +SKIP
    """
    from unishift.report.cd import write_cd

    alpha = check_share("alpha", alpha)
    tex_path = Path(tex_path)
    return write_cd(result, tex_path, png_path or tex_path.with_suffix(".png"), alpha)


def from_quapy(quantifier: Any, *, name: str | None = None) -> QuaPyQuantifier:
    """Wrap a QuaPy aggregative quantifier as a unishift quantifier.

    The quantifier is fitted on the validation set's classifier posteriors (its own classifier is
    unused); the threshold methods sweep the positive posterior as their classifier's score. It is
    checked now, so that a quantifier that cannot be wrapped fails here rather than in a fit
    (docs/api.md).

    Parameters
    ----------
    quantifier : quapy.method.aggregative.AggregativeQuantifier
        An unfitted QuaPy aggregative quantifier (``ACC()``, ``MAX()``, ...).
    name : str, optional
        Its name in the records; by default its QuaPy class's name.

    Returns
    -------
    unishift.methods.quantification.aggregative.QuaPyQuantifier
        A quantifier with ``fit(setting)`` and ``quantify(sample, context)``.

    Raises
    ------
    ValueError
        If ``quantifier`` does not aggregate a classifier's outputs
        (``MaximumLikelihoodPrevalenceEstimation``, ``DMx``, ``ReadMe``, ...).

    Examples
    --------
    >>> from quapy.method.aggregative import ACC
    >>> from_quapy(ACC()).name
    'ACC'
    """
    check_aggregative(quantifier)
    return QuaPyQuantifier(quantifier, name=name or type(quantifier).__name__)


def adapt(method: Method, kind: str, **params) -> Method:
    """Apply the paper's adaptation ``kind`` to a method object, with the adaptation's defaults.

    Parameters
    ----------
    method : object
        The inner method: a unishift method, or an object with one task's interface.
    kind : str
        ``"c2q"``, ``"c2a"``, ``"q2a"``, ``"a2q"``, ``"q2c"`` or ``"a2c"`` (the binary tables'
        binnings of p_1, ``q2c_5B`` and ``a2c_6B``: two classes only), or any kind of
        :data:`unishift.methods.adapt.table.KINDS` (``"q2c_3B"`` / ``"a2c_3B"``: the top-label
        binnings for k classes).
    **params
        The adapter's hyper-parameters, overriding its defaults.

    Returns
    -------
    unishift.methods.base.Method
        The adapted method, of the task ``kind`` adapts to.

    Raises
    ------
    ValueError
        If ``kind`` is unknown, or adapts a method of another task than ``method``'s.

    Examples
    --------
    >>> from quapy.method.aggregative import ACC
    >>> adapt(from_quapy(ACC()), "q2c").task
    'calibration'
    """
    from unishift.methods.adapt.table import KINDS

    kind = {"q2c": "q2c_5B", "a2c": "a2c_6B"}.get(kind, kind)  # the paper's (two-class) binnings
    check_choice("kind", kind, KINDS)
    spec = KINDS[kind]
    if task_of(method) != spec.source:
        raise ValueError(f"{kind} adapts a {spec.source} method, not a {task_of(method)} one")
    return spec.adapter(inner=as_method(method, spec.source), **params)


__all__ = [*API, "AccuracyPredictor", "Calibrator", "QuaPyQuantifier", "Quantifier", "task_of"]
