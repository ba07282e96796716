"""What the workflow checks before any job runs: the config beyond its schema, and the intermediate
files a previous run left. Every error names the config file or key (or the file) and the fix.

    python -m unishift.workflow.checks my_config.yaml   # YAML syntax and duplicate keys, with lines
"""

from __future__ import annotations

import argparse
import inspect
import json
import math
import re
import shlex
import sys
from collections.abc import Iterable
from pathlib import Path

import yaml

from unishift.classifiers.specs import check_classifier
from unishift.data.datasets import check_dataset_names
from unishift.data.label_shift import check_sample_size, pool_size_of
from unishift.data.uci import DataUnavailableError, kept_classes
from unishift.evaluation.records import ECE_CHOICES, TWO_CLASS
from unishift.io import REBUILD, DamagedFileError, csv_problem, npz_problem, one_line, read_npz
from unishift.methods.base import TASKS
from unishift.methods.registry import all_methods, get_method
from unishift.methods.spec import constructor_defaults
from unishift.option_checks import check_like_default
from unishift.output_records import problem_of as made_from_problem
from unishift.report.regimes import PSEUDO_METHODS
from unishift.results_layout import LAYOUT, folder_of, results_path
from unishift.workflow.config_access import config_value, record_layout
from unishift.workflow.config_docs import load_schema, resolve


class ConfigError(ValueError):
    """A config that would fail in a job, or silently produce nothing or something else."""


class DamagedIntermediatesError(ValueError):
    """Files of a previous run that are cut or corrupt."""


# YAML files


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader that refuses duplicate keys (PyYAML silently keeps the last one)."""

    def construct_mapping(self, node, deep=False):
        seen = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue  # a merge key (<<: *anchor): its keys may be overridden here, by design
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                mark = key_node.start_mark
                raise ConfigError(
                    f"line {mark.line + 1}, column {mark.column + 1}: key {key!r} appears twice "
                    f"(first on line {seen[key] + 1}); YAML keeps only the last one, so delete one"
                )
            seen[key] = key_node.start_mark.line
        return super().construct_mapping(node, deep=deep)


def load_config_file(path: str | Path) -> dict:
    """A YAML config file; syntax errors and duplicate keys name the file, line and column."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        line = Path(path).read_bytes()[: err.start].count(b"\n") + 1
        raise ConfigError(
            f"{path}, line {line}: not UTF-8 text (byte {err.object[err.start]:#04x} at offset "
            f"{err.start}); save the file as UTF-8"
        ) from None
    try:
        content = yaml.load(text, Loader=_StrictLoader)
    except ConfigError as err:
        raise ConfigError(f"{path}, {err}") from None
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "unknown line"
        problem = str(err.problem or "")
        if err.context and err.context_mark:
            problem += f"; {err.context} started on line {err.context_mark.line + 1}"
        raise ConfigError(
            f"{path}, {where}: not valid YAML ({problem}); fix the syntax there "
            "(indentation, a missing ':' or an unclosed bracket or quote)"
        ) from None
    if content is None:
        return {}
    if not isinstance(content, dict):
        raise ConfigError(f"{path}: a config is a mapping of keys, not a {type(content).__name__}")
    return content


def check_config_files(paths: Iterable[str | Path]) -> None:
    for path in paths:
        load_config_file(path)


# The config's meaning


def _check_branches(config: dict) -> None:
    for shift in config["shifts"]:  # the schema requires one at least
        tasks = (config.get("methods") or {}).get(shift) or {}
        if not any(tasks.get(task) for task in ("calibration", "quantification", "cap")):
            raise ConfigError(
                f"config key shifts lists {shift!r} but methods.{shift} names no method, so that "
                f"branch would produce no result table; add methods under methods.{shift}.<task> "
                f"or remove {shift!r} from shifts"
            )


def _check_data_root(config: dict) -> None:
    root = config.get("data_root")
    if root is not None and not Path(root).is_dir():
        raise ConfigError(
            f"config key data_root: {root!r} is not a folder (it resolves to {Path(root).resolve()}"
            "); point it at the folder holding the offline copies (uci/, text/) or set it to null"
        )


def _check_data(config: dict) -> None:
    """Data-set, classifier and domain names, classes left after ``min_class_support``, and the
    sample size against each data set's test pool."""
    shifts = config["shifts"]
    if "label" in shifts:
        label = config["label_shift"]
        collection = label["benchmark"]
        try:
            check_dataset_names(collection, label["datasets"], "config key label_shift.datasets")
        except ValueError as err:
            raise ConfigError(f"{err} (label_shift.benchmark: {collection})") from None
        if config.get("selector", True) and len(label["datasets"]) < 2:
            raise ConfigError(
                "config key selector: the Selector is trained leave one data set out, and "
                "label_shift.datasets names one (docs/regimes.md §4); add one or set selector: false"
            )
        for name in label["classifiers"]:
            try:
                check_classifier(name)
            except ValueError as err:
                raise ConfigError(f"config key label_shift.classifiers: {err}") from None
        # the config was validated with the schema's defaults filled in (they live only there)
        support, home, root = label["min_class_support"], config["quapy_home"], config["data_root"]
        size, allow_larger = label["sample_size"], label["allow_sample_larger_than_pool"]
        for name in label["datasets"]:
            try:
                if collection != "uci_binary":
                    kept_classes(name, support, home, root)
                pool = pool_size_of(name, collection, home, root, support)
            except DataUnavailableError:
                continue  # neither cached nor offline: the data job checks it once QuaPy has it
            except DamagedFileError as err:  # a damaged or foreign QuaPy cache, not the config
                raise ConfigError(str(err)) from None
            except ValueError as err:
                raise ConfigError(f"config key label_shift.min_class_support: {err}") from None
            try:
                check_sample_size(size, pool, allow_larger, f"label_shift.datasets {name}")
            except ValueError as err:
                raise ConfigError(f"config key label_shift.sample_size: {err}") from None
    if "covariate" in shifts or "compound" in shifts:  # compound shift uses the covariate data
        covariate = config["covariate_shift"]
        source, domains = covariate["text_source"], covariate["domains"]
        try:
            check_dataset_names(source, domains, "config key covariate_shift.domains")
        except ValueError as err:
            raise ConfigError(f"{err} (covariate_shift.text_source: {source})") from None


def _check_ece(config: dict) -> None:
    ece = config.get("ece", "top_label")
    for shift in config.get("shifts") or []:
        layout = record_layout(config, shift)
        if ece not in ECE_CHOICES[layout]:
            needs = "two classes" if ece == "positive_class" else "more than two classes"
            raise ConfigError(
                f"config key ece: {ece!r} needs data with {needs}, and the {shift}-shift data of "
                f"this config have {'two' if layout == TWO_CLASS else 'more'}; choose one of "
                f"{list(ECE_CHOICES[layout])}"
            )


def _check_methods(config: dict) -> None:
    """Method names per shift and task, and each ``method_params`` entry built once."""
    listed: dict[tuple[str, str], list[str]] = {}
    for shift, tasks in (config.get("methods") or {}).items():
        for task, names in (tasks or {}).items():
            for name in names:
                where = f"config methods.{shift}.{task}"
                if config.get("selector", True) and name in PSEUDO_METHODS:
                    raise ConfigError(
                        f"{where}: {name!r} is the name of the selector's column or of its "
                        f"references ({list(PSEUDO_METHODS)}); rename the method or set "
                        "selector: false"
                    )
                try:
                    spec = get_method(task, name, shift)
                except KeyError as err:
                    raise ConfigError(f"{where}: {err.args[0]}") from None
                binary = shift not in config["shifts"] or record_layout(config, shift) == TWO_CLASS
                if not binary and spec.skip(3):
                    raise ConfigError(
                        f"{where}: {name!r} is binary-only ({spec.binary_only}), and the {shift}-shift "
                        "data of this config have more than two classes; remove it"
                    )
                listed.setdefault((task, name), []).append(shift)
    for key, params in (config.get("method_params") or {}).items():
        task, _, name = key.partition("/")
        where = f"config method_params.{key!r}"
        if not name:
            tasks = [t for t in TASKS if (t, key) in all_methods()]
            example = f"'{tasks[0] if tasks else 'calibration'}/{key}'"
            raise ConfigError(
                f"{where}: keys read '<task>/<method>' (task calibration, quantification or cap), "
                f"e.g. {example}" + (f"; {key} is a method of {', '.join(tasks)}" if tasks else "")
            )
        try:
            spec = get_method(task, name)
        except KeyError as err:
            raise ConfigError(
                f"{where}: keys read '<task>/<method>' with task calibration, quantification or "
                f"cap; {err.args[0]}"
            ) from None
        # each shift whose tables list the method, built with 2 classes or the smallest k > 2
        shifts = listed.get((task, name)) or [spec.shifts[0]]
        classes = {s: 2 if record_layout(config, s) == TWO_CLASS else 3 for s in shifts}
        check_method_params(spec, params, where, classes)


def check_method_params(spec, params, where: str, classes=None) -> None:
    """One ``method_params`` entry built by ``spec`` (a registry entry) under each shift of
    ``classes`` (shift -> number of classes; by default its first shift, two classes)."""
    if not isinstance(params, dict):
        raise ConfigError(f"{where} must map parameter names to values, got {params!r}")
    signature = inspect.signature(spec.factory)
    accepts_any = any(p.kind is p.VAR_KEYWORD for p in signature.parameters.values())
    unknown = sorted(set(params) - set(signature.parameters))
    if unknown and not accepts_any:
        raise ConfigError(
            f"{where}: {', '.join(map(repr, unknown))} is not a parameter of {spec.task} method "
            f"{spec.name}; "
            f"its parameters are {sorted(signature.parameters)}"
        )
    defaults = constructor_defaults(spec.factory)
    for name, value in params.items():
        try:
            check_like_default(name, value, defaults.get(name))
        except ValueError as err:
            raise ConfigError(f"{where}: {err}") from None
    inner_params = params.get("inner_params")
    if spec.inner is not None and inner_params is not None:
        # the inner method is built only when the adapter is fitted: check its parameters now, so
        # that a wrong one fails before any job (and on a finished run) rather than in a job
        check_method_params(spec.inner, inner_params, f"{where}.inner_params", classes)
    for shift, n_classes in (classes or {spec.shifts[0]: 2}).items():
        if spec.skip(n_classes):
            continue
        try:
            spec.build(shift, n_classes, params)
        except (TypeError, ValueError) as err:
            raise ConfigError(f"{where} (under {shift} shift): {err}") from None


def _schema_integers(schema: dict, root: dict, path: tuple = ()):
    """The key paths a JSON schema types as integers."""
    schema = resolve(schema, root)
    kinds = schema.get("type")
    if kinds == "integer" or (isinstance(kinds, list) and "integer" in kinds):
        yield path
    for name, child in (schema.get("properties") or {}).items():
        yield from _schema_integers(child, root, (*path, name))


def _non_finite(value, path: tuple = ()):
    """(key path, value) of the NaN and infinite numbers in a parsed config."""
    if isinstance(value, float) and not math.isfinite(value):
        yield path, value
    elif isinstance(value, dict):
        for key, child in value.items():
            yield from _non_finite(child, (*path, str(key)))
    elif isinstance(value, list | tuple):
        for index, child in enumerate(value):
            yield from _non_finite(child, (*path, str(index)))


def check_integers(config: dict, schema_path: str | Path) -> None:
    """Refuse a NaN or infinite number anywhere (JSON Schema's bounds let ``.nan`` through, and
    ``method_params`` has none), and a float where the schema says integer (JSON Schema accepts
    3.0, ``range`` does not)."""
    for path, value in _non_finite(config):
        raise ConfigError(
            f"config key {'.'.join(path)}: {value!r} is not a finite "
            "number; write a number (every numeric key and method parameter must be finite)"
        )
    schema = load_schema(schema_path)
    for path in _schema_integers(schema, schema):
        value = config_value(config, ".".join(path))
        if isinstance(value, float):
            # a float past 2**53 is no exact integer: suggest none (1e300 has 301 digits)
            exact = value.is_integer() and abs(value) < 2**53
            raise ConfigError(
                f"config key {'.'.join(path)}: {value!r} is not an integer; write "
                f"{int(value) if exact else 'a whole number in digits'}"
            )


# NumPy's and scikit-learn's seeds are 32-bit.
MAX_SEED = 2**32 - 1
# Items drawn per setup (sample_size x n_samples): their int64 indices alone take 8 GB at this count.
MAX_SAMPLED_ITEMS = 10**9
# Bins per descriptor of a regime map: past this every bin of the paper's grid is all but empty
# (the schema's maximum of regimes.n_bins, for callers that check a config without the schema).
MAX_REGIME_BINS = 1000
# The sample settings of each shift: (sample_size key, n_samples key, allow-larger key).
SAMPLE_KEYS = (
    ("label_shift.sample_size", "label_shift.n_samples"),
    ("covariate_shift.mixture.sample_size", "covariate_shift.mixture.n_samples"),
    ("covariate_shift.compound.sample_size", "covariate_shift.compound.n_samples"),
)


def _check_results(config: dict) -> None:
    results = config.get("results")
    if isinstance(results, str) and re.search(r"[{}]", results):
        raise ConfigError(
            f"config key results: {results!r} holds a brace, which the workflow would read as a "
            "wildcard of its file names; name the folder without { and }"
        )


def _check_ranges(config: dict) -> None:
    """Values the schema types but the code cannot take: seeds past 32 bits, samples too large to
    allocate, regime maps of more bins than any run has samples."""
    for key in ("seed", "covariate_shift.lm.seed"):
        value = config_value(config, key)
        if isinstance(value, int) and not 0 <= value <= MAX_SEED:
            raise ConfigError(
                f"config key {key}: {value} is out of range; NumPy and scikit-learn take seeds from "
                f"0 to {MAX_SEED}"
            )
    for size_key, count_key in SAMPLE_KEYS:
        size, count = config_value(config, size_key), config_value(config, count_key)
        if isinstance(size, int) and isinstance(count, int) and size * count > MAX_SAMPLED_ITEMS:
            raise ConfigError(
                f"config keys {size_key} ({size}) and {count_key} ({count}) draw {size * count:.3g} "
                f"items per setup, more than {MAX_SAMPLED_ITEMS:.0e} (their indices alone would "
                f"take {size * count * 8 / 2**30:.3g} GiB); lower {size_key}"
            )
    bins = config_value(config, "regimes.n_bins")
    if isinstance(bins, int) and bins > MAX_REGIME_BINS:
        raise ConfigError(
            f"config key regimes.n_bins: {bins} bins per descriptor; at most {MAX_REGIME_BINS} "
            "(a map of more bins than samples is empty; the default is 10)"
        )


def _check_fractions(config: dict) -> None:
    covariate = config.get("covariate_shift") or {}
    for source in ("tweets", "offline"):
        options = covariate.get(source) or {}
        validation, test = options.get("validation_fraction"), options.get("test_fraction")
        if isinstance(validation, float | int) and isinstance(test, float | int):
            if validation + test >= 1:
                key = f"covariate_shift.{source}"
                raise ConfigError(
                    f"config keys {key}.validation_fraction ({validation}) and "
                    f"{key}.test_fraction ({test}) sum to {validation + test:g}, leaving no item "
                    "to train on; lower one so that they sum to less than 1"
                )


def check_config(config: dict) -> None:
    """Everything a valid schema does not guarantee; raises :class:`ConfigError`."""
    checks = (
        _check_results,
        _check_ranges,
        _check_fractions,
        _check_branches,
        _check_data_root,
        _check_data,
        _check_ece,
        _check_methods,
    )
    for check in checks:
        check(config)


# Intermediate files of a previous run


def parquet_problem(path) -> str | None:
    """A parquet file starts and ends with the magic bytes PAR1; a cut file does not end with them."""
    with open(path, "rb") as handle:
        head = handle.read(4)
        handle.seek(0, 2)
        if handle.tell() < 12:
            return "too short to be a parquet file"
        handle.seek(-4, 2)
        tail = handle.read(4)
    return None if head == tail == b"PAR1" else "not a complete parquet file"


def _no_check(path) -> None:
    return None


def json_problem(path) -> str | None:
    try:
        json.loads(Path(path).read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as err:
        return f"not complete JSON ({type(err).__name__}: {one_line(str(err))})"
    return None


# (cheap check, file suffix, folders under results/): the intermediates, then the final tables,
# diagrams, plots and reports, which a job reads too (the reproduction reads its table) and which
# Snakemake would otherwise take as finished.
def _top_folders(*entries: str) -> tuple[str, ...]:
    """The folders under results/ that hold the files of these results-layout entries."""
    return tuple(dict.fromkeys(LAYOUT[entry].split("/", 1)[0] for entry in entries))


INTERMEDIATES = (
    (
        npz_problem,
        "npz",
        _top_folders("split", "posteriors", "label_samples", "lm_outputs", "weights"),
    ),
    (parquet_problem, "parquet", _top_folders("text_split")),
    (csv_problem, "csv", _top_folders("setup_records", "records", "descriptors")),
)
FINAL_OUTPUTS = (
    (
        csv_problem,
        "csv",
        _top_folders("table_cells", "reproduction_csv", "cd_groups", "regime_csv"),
    ),
    (_no_check, "tex", _top_folders("table_tex", "cd_tex", "regime_tex")),
    (_no_check, "md", _top_folders("reproduction_md")),
    (_no_check, "png", _top_folders("cd_png", "error_by_shift_png", "regime_png")),
    (_no_check, "pdf", _top_folders("error_by_shift_pdf")),
)
# single files at the top of the results folder
FINAL_FILES = ((json_problem, LAYOUT["provenance"]), (_no_check, LAYOUT["report_pdf"]))


def _checked_files(results: Path):
    for check, suffix, folders in INTERMEDIATES + FINAL_OUTPUTS:
        for folder in folders:
            for path in sorted((results / folder).glob(f"**/*.{suffix}")):
                if not path.name.startswith("."):
                    yield check, path
    for check, name in FINAL_FILES:
        if (results / name).is_file():
            yield check, results / name


def posterior_column_problems(results: str | Path, skip=()) -> list[tuple[str, str]]:
    """(path, problem) of each cached posteriors file whose columns are not its data set's classes
    (files in ``skip``, already found damaged, are not read)."""
    results = Path(results)
    found = []
    for path in sorted(Path(folder_of(results, "posteriors")).glob("*/*.npz")):
        split = Path(results_path(results, "split", dataset=path.parent.name))
        # a damaged or missing file is reported by check_intermediates
        if path.name.startswith(".") or {str(split), str(path)} & set(skip) or not split.is_file():
            continue
        try:
            k = int(read_npz(split).get("n_classes", 2))
            arrays = read_npz(path)
        except DamagedFileError as err:
            found.append((str(err.path), err.problem))
            continue
        shapes = {key: arrays[key].shape for key in ("P_h", "P_val", "P_test") if key in arrays}
        wrong = {key: shape for key, shape in shapes.items() if len(shape) != 2 or shape[1] != k}
        if wrong:
            found.append((str(path), f"posteriors of shape {wrong} for a data set of {k} classes"))
    return found


def intermediate_problems(results: str | Path) -> list[tuple[str, str]]:
    """(path, problem) of every file under ``results`` that is cut, corrupt, not what its job wrote
    (:mod:`unishift.output_records`), or posteriors of other classes."""
    results = Path(results)
    damaged = [
        (str(path), problem)
        for check, path in _checked_files(results)
        if (problem := check(path) or made_from_problem(path, results))
    ]
    damaged += posterior_column_problems(results, skip=[path for path, _ in damaged])
    return damaged


def check_intermediates(results: str | Path) -> None:
    """Refuse to plan on top of files of a previous run (intermediates and final outputs) that are
    cut, corrupt, not what their job wrote (:mod:`unishift.output_records`), or posteriors of other
    classes (docs/evaluation-jobs.md)."""
    damaged = intermediate_problems(results)
    if damaged:
        listing = "\n".join(f"  {path}: {problem}" for path, problem in damaged)
        paths = " ".join(shlex.quote(path) for path, _ in dict(damaged).items())
        raise DamagedIntermediatesError(
            f"damaged files under {results}/ (no job was started, no file was removed):\n"
            f"{listing}\nFix: {REBUILD}, e.g. rm {paths}"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Check config files' YAML and duplicate keys.")
    parser.add_argument("files", nargs="+")
    status = 0
    for path in parser.parse_args(argv).files:
        try:
            load_config_file(path)
            print(f"{path}: valid YAML, no duplicate keys")
        except (ConfigError, OSError) as err:
            print(err, file=sys.stderr)
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
