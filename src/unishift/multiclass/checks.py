"""What the multiclass workflow checks when it is parsed, before any job runs (the multiclass half of
:mod:`unishift.workflow_checks`): method names in their multiclass forms (a binary-only name fails
with the reason it has no multiclass form), data-set names and their minimum class support, the tweet
source, and posteriors of a previous run whose column count differs from the data set's classes.

Every error names the config key (or the file), the problem and the fix.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from unishift.workflow_checks import (
    ConfigError,
    DamagedIntermediatesError,
    _check_branches,
    _check_data_root,
    check_method_params,
)

REGIMES = ("binary", "multiclass")


def regime_of(config: dict) -> str:
    """The config's regime; binary configs have no ``regime`` key."""
    regime = config.get("regime", "binary")
    if regime not in REGIMES:
        raise ConfigError(f"config key regime: {regime!r} is not one of {REGIMES}")
    return regime


def _check_methods(config: dict) -> None:
    from unishift.registry import get_method

    listed: dict[tuple[str, str], list[str]] = {}
    for shift, tasks in (config.get("methods") or {}).items():
        for task, names in (tasks or {}).items():
            for name in names:
                try:
                    spec = get_method(task, name)
                    if spec.binary_only:
                        spec.build(shift, 3)  # refused with its reason
                except (KeyError, ValueError) as err:
                    raise ConfigError(
                        f"config methods.{shift}.{task} (regime multiclass): {err}"
                    ) from None
                if shift not in spec.shifts:
                    raise ConfigError(
                        f"config methods.{shift}.{task}: multiclass method {name!r} is meant for "
                        f"{' and '.join(spec.shifts)} shift only (its assumption: "
                        f"{spec.assumption}); remove it from methods.{shift}.{task}"
                    )
                listed.setdefault((task, name), []).append(shift)
    for key, params in (config.get("method_params") or {}).items():
        task, _, name = key.partition("/")
        where = f"config method_params.{key!r}"
        try:
            spec = get_method(task, name)
        except (KeyError, ValueError) as err:
            raise ConfigError(f"{where}: keys read '<task>/<method>'; {err}") from None
        check_method_params(
            spec, params, where, f"multiclass {task} method {name}", listed.get((task, name)), 3
        )


def _check_datasets(config: dict) -> None:
    """QuaPy's names, and at least three classes with ``min_class_support`` items each. Reads (and,
    from an offline copy, writes) the same QuaPy cache pickle the data job reads; a data set that is
    neither cached nor available offline is left to the data job (QuaPy downloads it)."""
    from unishift.data import uci
    from unishift.data.uci_multiclass import check_min_class_support, check_multiclass_name

    if "label" not in (config.get("shifts") or []):
        return
    label = config.get("label_shift") or {}
    support = label.get("min_class_support", 100)
    for name in label.get("datasets", []):
        try:
            check_multiclass_name(name)
        except ValueError as err:
            raise ConfigError(f"config key label_shift.datasets: {err}") from None
        try:
            check_min_class_support(name, support, config["quapy_home"], config.get("data_root"))
        except uci.DataUnavailableError:
            continue
        except ValueError as err:
            raise ConfigError(f"config key label_shift.min_class_support: {err}") from None


def _check_covariate(config: dict) -> None:
    if "covariate" not in (config.get("shifts") or []):
        return
    source = (config.get("covariate_shift") or {}).get("text_source", "tweets")
    if source != "tweets":
        raise ConfigError(
            f"config key covariate_shift.text_source: {source!r} has two classes only; the "
            "multiclass branch's covariate shift is the tweets' three classes (text_source: tweets)"
        )


def check_multiclass_config(config: dict) -> None:
    """Everything the multiclass schema does not guarantee; raises :class:`ConfigError`."""
    if regime_of(config) != "multiclass":
        raise ConfigError("check_multiclass_config needs a config with regime: multiclass")
    _check_branches(config)
    _check_data_root(config)
    _check_covariate(config)
    _check_methods(config)
    _check_datasets(config)


def posterior_column_problems(results: str | Path) -> list[tuple[str, str]]:
    """(path, problem) of every cached multiclass posteriors file whose column count differs from
    its data set's number of classes (e.g. left by a run with another ``min_class_support``)."""
    results = Path(results)
    found = []
    for path in sorted((results / "posteriors" / "label").glob("*/*.npz")):
        split = results / "data" / "label" / path.parent.name / "split.npz"
        if path.name.startswith(".") or not split.is_file():
            continue
        with np.load(split) as arrays:
            k = int(arrays["n_classes"])
        with np.load(path) as arrays:
            shapes = {key: arrays[key].shape for key in ("P_h", "P_val", "P_test") if key in arrays}
        wrong = {key: shape for key, shape in shapes.items() if len(shape) != 2 or shape[1] != k}
        if wrong:
            found.append((str(path), f"posteriors of shape {wrong} for a data set of {k} classes"))
    return found


def check_multiclass_intermediates(results: str | Path) -> None:
    """Refuse to plan on posteriors that do not have one column per class of their data set."""
    problems = posterior_column_problems(results)
    if problems:
        listing = "\n".join(f"  {path}: {problem}" for path, problem in problems)
        paths = " ".join(path for path, _ in problems)
        raise DamagedIntermediatesError(
            f"multiclass posteriors under {results}/ that do not match their data set (no job was "
            f"started):\n{listing}\nFix: delete them and rerun, e.g. rm {paths}"
        )


__all__ = [
    "REGIMES",
    "check_multiclass_config",
    "check_multiclass_intermediates",
    "posterior_column_problems",
    "regime_of",
]
