"""Bad configs are rejected before any job, naming the file or key and the fix: unit checks of the
parse-time checks (two-class and k-class data: a binary-only method with the reason it has no k-class
form, too few supported classes, the ECE each record layout stores, posteriors whose columns are not
the data set's classes), then the same cases through ``snakemake -n`` on a copy of the workflow."""

from __future__ import annotations

import copy
import re
from pathlib import Path

import numpy as np
import pytest
import yaml
from snakemake.utils import validate

from tests.conftest import REPO
from unishift.evaluation.records import K_CLASS, TWO_CLASS
from unishift.io import write_npz
from unishift.methods.registry import get_method
from unishift.output_records import write_record
from unishift.workflow.checks import (
    MAX_REGIME_BINS,
    ConfigError,
    DamagedIntermediatesError,
    check_config,
    check_intermediates,
    load_config_file,
    main,
    posterior_column_problems,
)
from unishift.workflow.config_access import record_layout, results_folder

SCHEMA = str(REPO / "workflow" / "schemas" / "config.schema.yaml")
BASE = yaml.safe_load((REPO / ".test" / "config.yaml").read_text())
# check_config runs on the validated config, whose defaults the schema fills in (as common.smk does)
validate(BASE, SCHEMA)


def config_with(**changes):
    config = copy.deepcopy(BASE)
    for dotted, value in changes.items():
        node = config
        *parents, last = dotted.split("__")
        for key in parents:
            node = node.setdefault(key, {})
        node[last] = value
    return config


def test_the_test_config_passes():
    check_config(config_with())


@pytest.mark.parametrize(
    "changes, message",
    [
        (
            {"methods": {"label": {"calibration": []}}},
            "methods.label names no method, so that branch would produce no result table",
        ),
        (
            {"shifts": ["label", "covariate"]},
            "shifts lists 'covariate' but methods.covariate names no method",
        ),
        ({"data_root": "no/such/folder"}, "data_root: 'no/such/folder' is not a folder"),
        (
            {"label_shift__classifiers": ["SVM"]},
            r"label_shift.classifiers: unknown classifier 'SVM'; valid ones are \['LR'",
        ),
        (
            {"label_shift__sample_size": 500},
            "label_shift.sample_size: .*cmc.3: sample_size=500 is larger than the test pool "
            r"\(442 items\).*allow_sample_larger_than_pool",
        ),
        (
            {"method_params": {"calibration/DMCal": {"n_binz": 10}}},
            r"method_params.'calibration/DMCal': 'n_binz' is not a parameter of calibration method "
            r"DMCal; its parameters are \['abscissa', 'cells', 'monotone', 'n_bins', 'smooth'\]",
        ),
        (
            {"method_params": {"calibration/DMCal": {"monotone": "isotonic"}}},
            r"method_params.'calibration/DMCal' \(under label shift\): monotone='isotonic'",
        ),
        (
            {"method_params": {"calibrate/DMCal": {}}},
            r"method_params.'calibrate/DMCal': keys read '<task>/<method>'",
        ),
        (
            {"methods": {"label": {"cap": ["Naive", "LEAP_PCC"]}}},
            "does not run under label shift",
        ),
        # was "unknown Platt method ''"
        (
            {"method_params": {"Platt": {}}},
            r"method_params.'Platt': keys read '<task>/<method>'.*e.g. 'calibration/Platt'",
        ),
        # each of these crashed in a job (seeds past 32 bits in uci_dataset, a MemoryError of
        # 3.28 TiB in the samples job, another in the regime maps), or with a WildcardError
        ({"seed": 2**32}, "config key seed: 4294967296 is out of range.*0 to 4294967295"),
        ({"seed": 10**12}, "config key seed: 1000000000000 is out of range"),
        ({"seed": -1}, "config key seed: -1 is out of range"),
        (
            {
                "label_shift__sample_size": 10**12,
                "label_shift__allow_sample_larger_than_pool": True,
            },
            r"label_shift.sample_size \(1000000000000\) and label_shift.n_samples \(10\) draw 1e\+13",
        ),
        ({"regimes__n_bins": 10**12}, "config key regimes.n_bins: 1000000000000 bins"),
        ({"results": "res{shift}"}, r"config key results: 'res\{shift\}' holds a brace"),
        (
            {
                "covariate_shift__tweets__validation_fraction": 0.5,
                "covariate_shift__tweets__test_fraction": 0.5,
            },
            r"covariate_shift.tweets.validation_fraction \(0.5\) and .*test_fraction \(0.5\) sum to 1",
        ),
        (
            {"covariate_shift__offline__test_fraction": 0.9},
            r"covariate_shift.offline.validation_fraction \(0.2\) .* sum to 1.1",
        ),
    ],
)
def test_bad_configs_name_the_key_and_the_fix(changes, message):
    with pytest.raises(ConfigError, match=message):
        check_config(config_with(**changes))


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"shifts": []}, r"\[\] should be non-empty|\[\] is too short"),
        ({"covariate_shift__domains": ["airline"]}, r"\['airline'\] is too short"),
    ],
)
def test_the_schema_refuses_what_check_config_takes_as_given(changes, message):
    """No shift, or one domain (no source->target pair): refused by the schema, before check_config."""
    with pytest.raises(Exception, match=message):
        validate(config_with(**changes), SCHEMA)


def test_a_larger_sample_is_accepted_when_asked_for():
    check_config(
        config_with(label_shift__sample_size=500, label_shift__allow_sample_larger_than_pool=True)
    )


def test_yaml_errors_name_the_file_and_the_line(tmp_path, capsys):
    broken = tmp_path / "broken.yaml"
    broken.write_text("seed: 0\nlabel_shift:\n  datasets: [cmc.3\n  n_samples: 3\n")
    with pytest.raises(ConfigError, match=rf"{broken}, line 4, column \d+: not valid YAML"):
        load_config_file(broken)
    twice = tmp_path / "twice.yaml"
    twice.write_text("seed: 0\nalpha: 0.05\nseed: 1\n")
    with pytest.raises(ConfigError, match=rf"{twice}, line 3, column 1: key 'seed' appears twice"):
        load_config_file(twice)
    assert main([str(broken)]) == 1 and "line 4" in capsys.readouterr().err
    assert main([str(REPO / "config" / "config.yaml")]) == 0
    for name in ("config/config.yaml", "config/paper.yaml", "config/sentences.yaml"):
        load_config_file(REPO / name)


def test_the_largest_seed_and_sample_pass():
    check_config(config_with(seed=2**32 - 1))
    check_config(config_with(regimes__n_bins=MAX_REGIME_BINS))


def test_the_checks_bin_limit_is_the_schemas():
    """One limit whichever refuses first (config/README.md states it once)."""
    schema = yaml.safe_load(Path(SCHEMA).read_text())
    n_bins = schema["properties"]["regimes"]["properties"]["n_bins"]
    assert n_bins["maximum"] == MAX_REGIME_BINS
    with pytest.raises(ConfigError, match="regimes.n_bins"):
        check_config(config_with(regimes__n_bins=MAX_REGIME_BINS + 1))
    assert (
        f"`regimes.n_bins` above {MAX_REGIME_BINS:,}" in (REPO / "config" / "README.md").read_text()
    )


def test_a_float_too_large_for_an_integer_is_not_written_out(tmp_path):
    """seed: 1e300 suggested writing a 301-digit integer."""
    from unishift.workflow.checks import check_integers

    with pytest.raises(ConfigError, match="1e[+]300 is not an integer; write a whole number in"):
        check_integers(config_with(seed=1e300), SCHEMA)
    with pytest.raises(ConfigError, match="3.0 is not an integer; write 3$"):
        check_integers(config_with(seed=3.0), SCHEMA)


def test_a_config_that_is_not_utf8_names_the_file_and_line(tmp_path, capsys):
    """Snakemake reads a --configfile in its command line, before the workflow, and stops there with
    a raw UnicodeDecodeError (Snakemake 9); this check is the one `python -m
    unishift.workflow.checks` and the workflow (the embedded config, every config file) make."""
    latin = tmp_path / "latin1.yaml"
    latin.write_bytes("seed: 0\n# r\u00e9sultats\nalpha: 0.05\n".encode("latin-1"))
    with pytest.raises(
        ConfigError, match=rf"{latin}, line 2: not UTF-8 text.*save the file as UTF-8"
    ):
        load_config_file(latin)
    assert main([str(latin)]) == 1 and "not UTF-8" in capsys.readouterr().err


def test_yaml_merge_keys_are_read_and_duplicates_still_refused(tmp_path):
    merged = tmp_path / "merged.yaml"
    merged.write_text(
        "defaults: &size {sample_size: 50, n_samples: 10}\n"
        "label_shift:\n  <<: *size\n  n_samples: 20\n  datasets: [cmc.3]\n"
    )
    loaded = load_config_file(merged)
    assert loaded["label_shift"] == {"sample_size": 50, "n_samples": 20, "datasets": ["cmc.3"]}
    twice = tmp_path / "twice.yaml"
    twice.write_text("a: &x {b: 1}\nc:\n  <<: *x\n  d: 1\n  d: 2\n")
    with pytest.raises(ConfigError, match="key 'd' appears twice"):
        load_config_file(twice)


# ------------------------------------------------------------------------------------------------
# the same through the run's preparation, and through snakemake on a copy of the workflow:
# rejected while planning, before any job

DUPLICATE = "seed: 0\nshifts: [label]\nseed: 1\n"


# the two cases snakemake itself is run on: a config file's YAML, and a check of its meaning
DUPLICATE_KEY = (DUPLICATE, r"bad.yaml, line 3, column 1: key 'seed' appears twice")
# issue 32: a "Missing files" failure after 30 s before, and ignored on a finished run
BAD_INNER_PARAMETER = (
    {"method_params": {"cap/EMQ_q2a": {"inner_params": {"train_prevalence": "bogus"}}}},
    r"inner_params.*train_prevalence='bogus' is not valid",
)
BAD_CONFIGS = [
    ({"label_shift__n_samples": 1}, r"1 is less than the minimum of 2[\s\S]*n_samples"),
    ({"label_shift__sample_size": 500}, "larger than the test pool"),
    ({"methods": {"label": {}}}, "would produce no result table"),
    ({"data_root": "missing/folder"}, "data_root: 'missing/folder' is not a folder"),
    (
        {"method_params": {"quantification/KDEy": {"bandwith": 0.2}}},
        "'bandwith' is not a parameter of quantification method KDEy",
    ),
    DUPLICATE_KEY,
    BAD_INNER_PARAMETER,
    ({"alpha": float("nan")}, r"config key alpha: nan is not a finite number"),
    ({"results": "res{shift}"}, r"config key results: 'res\{shift\}' holds a brace"),
]


def _config_text(changes) -> str:
    return changes if isinstance(changes, str) else yaml.safe_dump(config_with(**changes))


@pytest.mark.parametrize("changes, message", BAD_CONFIGS)
def test_the_run_s_preparation_rejects_bad_configs(tmp_path, monkeypatch, changes, message):
    """What ``snakemake -n --configfile bad.yaml`` does before any job (``common.smk`` calls
    :func:`prepare_run` with Snakemake's ``validate``), in this process: the snakemake processes
    below show the call is made, for a config file's YAML and for a check of its meaning."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.yaml").write_text(_config_text(changes))
    config = yaml.safe_load((tmp_path / "bad.yaml").read_text())
    with pytest.raises(Exception, match=message):
        prepare_in_this_process(config, ["bad.yaml"])
    assert not (tmp_path / "results").exists()


def prepare_in_this_process(config: dict, config_files: list) -> None:
    """The call ``common.smk`` makes before any job, with Snakemake's ``validate``."""
    from unishift.workflow.prepare import prepare_run

    prepare_run(
        config,
        config_files=config_files,
        schema=SCHEMA,
        validate=validate,
        repository=REPO,
        main_process=True,
    )


@pytest.mark.workflow
@pytest.mark.parametrize("changes, message", [DUPLICATE_KEY, BAD_INNER_PARAMETER])
def test_snakemake_rejects_bad_configs_before_any_job(tmp_path, changes, message):
    from tests.workflow.test_workflow import copy_workflow, snakemake

    work = copy_workflow(tmp_path / "wf")
    (work / "bad.yaml").write_text(_config_text(changes))
    result = snakemake("-n", "--configfile", "bad.yaml", cwd=work, check=False)
    assert result.returncode != 0
    assert re.search(message, result.stdout + result.stderr), result.stdout + result.stderr
    assert not (work / "results").exists()


@pytest.mark.workflow
def test_a_yaml_error_in_the_embedded_config_names_its_line(tmp_path):
    from tests.workflow.test_workflow import copy_workflow, snakemake

    work = copy_workflow(tmp_path / "wf")
    path = work / "config" / "config.yaml"
    text, unclosed = re.subn(r"^shifts: \[(.*)\]$", r"shifts: [\1", path.read_text(), flags=re.M)
    assert unclosed == 1
    path.write_text(text)
    result = snakemake("-n", cwd=work, check=False)
    assert result.returncode != 0
    assert re.search(
        r"config/config.yaml, line \d+, column \d+: not valid YAML", result.stdout + result.stderr
    )


# ------------------------------------------------------------------------------------------------
# data of more than two classes (.test/multiclass.yaml): a binary-only method refused with its reason,
# a data set with fewer than three classes of the minimum support, the ECE each layout stores, and
# posteriors whose columns are not the data set's classes

MULTICLASS = yaml.safe_load((REPO / ".test" / "multiclass.yaml").read_text())
validate(MULTICLASS, SCHEMA)


@pytest.fixture
def k_class_config(tmp_path):
    config = copy.deepcopy(MULTICLASS)
    config["quapy_home"] = str(tmp_path / "quapy")
    return config


def test_the_tiny_and_the_embedded_multiclass_configs_pass(k_class_config):
    check_config(k_class_config)
    embedded = yaml.safe_load((REPO / "config" / "multiclass.yaml").read_text())
    validate(embedded, SCHEMA)
    embedded["quapy_home"] = k_class_config["quapy_home"]
    check_config(embedded)
    # the data decide the record layout; the multiclass configs keep their results apart
    assert {record_layout(embedded, s) for s in ("label", "covariate")} == {K_CLASS}
    assert {record_layout(BASE, s) for s in ("label", "covariate")} == {TWO_CLASS}
    assert results_folder(embedded) == results_folder(k_class_config) == "results/multiclass"
    assert results_folder(BASE) == results_folder({}) == "results"


@pytest.mark.parametrize("name", ["Platt", "LEAP_PCC_a2c_6B", "PACC_q2c_5B", "ATC_a2c_6B"])
def test_a_binary_only_method_is_rejected_with_its_reason(k_class_config, name):
    shift = "covariate" if name == "LEAP_PCC_a2c_6B" else "label"
    k_class_config["methods"][shift]["calibration"].append(name)
    with pytest.raises(ConfigError) as err:
        check_config(k_class_config)
    reason = get_method("calibration", name, shift).binary_only
    assert reason  # the registry says why it has no k-class form
    assert f"methods.{shift}.calibration" in str(err.value)
    assert f"{name!r} is binary-only ({reason})" in str(err.value)
    assert "more than two classes; remove it" in str(err.value)
    # the same method is fine where the data have two classes
    if shift == "label":
        config = config_with()
        config["methods"]["label"]["calibration"].append(name)
        check_config(config)


def test_a_method_of_the_other_shift_and_an_unknown_name_are_rejected(k_class_config):
    k_class_config["methods"]["label"]["calibration"].append("PCC_q2c_3B")  # covariate shift only
    with pytest.raises(ConfigError, match="'PCC_q2c_3B' does not run under label shift"):
        check_config(k_class_config)
    k_class_config["methods"]["label"]["calibration"][-1] = "Platypus"
    with pytest.raises(ConfigError, match="unknown calibration method 'Platypus'"):
        check_config(k_class_config)


def test_a_data_set_with_too_few_supported_classes_is_rejected(k_class_config):
    # cmc's classes have 629, 333 and 511 items: at 400 only two survive
    k_class_config["label_shift"]["min_class_support"] = 400
    with pytest.raises(ConfigError) as err:
        check_config(k_class_config)
    message = str(err.value)
    assert "label_shift.min_class_support" in message
    assert "cmc: only 2 classes have at least min_class_support=400" in message
    assert "[629, 333, 511]" in message and "Lower" in message


def test_a_data_set_name_is_looked_up_in_the_chosen_collection(k_class_config):
    bad = copy.deepcopy(k_class_config)
    bad["label_shift"]["datasets"] = ["cmc.3"]  # a data set of uci_binary
    with pytest.raises(ConfigError, match=r"'cmc.3'[\s\S]*label_shift.benchmark: uci_multiclass"):
        check_config(bad)
    binary = config_with(label_shift__datasets=["cmc"])  # a data set of uci_multiclass
    with pytest.raises(ConfigError, match=r"'cmc'[\s\S]*label_shift.benchmark: uci_binary"):
        check_config(binary)
    # yeast is in both collections: two classes in one, four in the other (one data set leaves the
    # Selector nothing to train on: it is switched off)
    check_config(config_with(label_shift__datasets=["yeast"], selector=False))


@pytest.mark.parametrize(
    "shift_data, ece, message",
    [
        ("k_class", "positive_class", "'positive_class' needs data with two classes"),
        ("two_class", "classwise", "'classwise' needs data with more than two classes"),
        ("mixed", "classwise", "the covariate-shift data of this config have two"),
        ("mixed", "positive_class", "the label-shift data of this config have more"),
    ],
)
def test_the_ece_must_be_one_the_data_of_every_shift_store(
    k_class_config, shift_data, ece, message
):
    if shift_data == "two_class":
        config = config_with(ece=ece)
    else:
        config = k_class_config
        config["ece"] = ece
        if shift_data == "mixed":  # three-class label data, two-class tweets
            config["covariate_shift"]["tweets"] = {"classes": 2}
    with pytest.raises(ConfigError, match=message):
        check_config(config)


def test_the_eces_of_each_layout_pass(k_class_config):
    for ece in ("top_label", "classwise"):
        check_config(dict(k_class_config, ece=ece))
    for ece in ("top_label", "positive_class"):
        check_config(config_with(ece=ece))


def test_posteriors_without_one_column_per_class_are_refused_before_planning(tmp_path):
    results = tmp_path / "results"

    def written(path, **arrays):  # as a job writes it: the file and its record
        write_npz(path, **arrays)
        write_record(path, "test", {}, [])

    written(results / "data/label/cmc/split.npz", n_classes=np.array(3))
    good = {key: np.full((4, 3), 1 / 3) for key in ("P_h", "P_val", "P_test")}
    written(results / "posteriors/label/cmc/LR.npz", **good)
    assert posterior_column_problems(results) == []
    check_intermediates(results)
    written(results / "posteriors/label/cmc/kNN.npz", **{**good, "P_test": np.full((4, 2), 0.5)})
    problems = posterior_column_problems(results)
    assert [p for p, _ in problems] == [str(results / "posteriors/label/cmc/kNN.npz")]
    assert "'P_test': (4, 2)" in problems[0][1] and "3 classes" in problems[0][1]
    with pytest.raises(DamagedIntermediatesError, match="no job was started"):
        check_intermediates(results)
    # a two-class data set's split has no n_classes: its posteriors must have two columns
    written(results / "data/label/cmc.3/split.npz", prevalence_full=np.array(0.4))
    written(results / "posteriors/label/cmc.3/LR.npz", **good)
    problems = posterior_column_problems(results)
    assert [p for p, _ in problems] == [
        str(results / "posteriors/label/cmc/kNN.npz"),
        str(results / "posteriors/label/cmc.3/LR.npz"),
    ]
    assert "for a data set of 2 classes" in problems[1][1]


# ------------------------------------------------------------------------------------------------
# every number finite and in range, every method parameter of its constructor's kind (issue 32)


@pytest.mark.parametrize(
    "changes, key",
    [
        ({"alpha": float("nan")}, "alpha"),  # changed the bolding before
        ({"covariate_shift__lm__epochs": float("nan")}, "covariate_shift.lm.epochs"),
        (
            {"method_params": {"cap/DoC": {"sample_size": float("inf")}}},
            "method_params.cap/DoC.sample_size",
        ),
    ],
)
def test_nan_and_infinity_are_refused_wherever_they_are(changes, key):
    from unishift.workflow.checks import check_integers

    config = config_with(**changes)
    validate(config, SCHEMA)  # JSON Schema's bounds let NaN through: the check below must not
    with pytest.raises(ConfigError, match=rf"config key {re.escape(key)}: (nan|inf).*finite"):
        check_integers(config, SCHEMA)


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"seed": 2**32}, "is greater than the maximum of 4294967295"),
        ({"label_shift__sample_size": 10**12}, "is greater than the maximum of 1000000"),
        ({"label_shift__n_samples": 10**9}, "is greater than the maximum of 100000"),
        ({"regimes": {"n_bins": 10**12}}, "is greater than the maximum of 1000"),
        ({"alpha": True}, "True is not of type 'number'"),
    ],
)
def test_the_schema_bounds_seeds_sizes_and_bins(changes, message):
    with pytest.raises(Exception, match=message):
        validate(config_with(**changes), SCHEMA)
    validate(config_with(seed=2**32 - 1), SCHEMA)


@pytest.mark.parametrize(
    "params, message",
    [
        # before: True taken as 1 (the cell moved 0.1464 -> 0.1384), 0 and -1 failed in the job
        ({"sample_size": True}, "sample_size=True is not valid; it takes an integer"),
        ({"repeats": 0}, "repeats=0 is not valid; choose a positive integer"),
        ({"seed": -1}, "seed=-1 is not valid; choose an integer seed"),
        ({"seed": 2**32}, "seed=4294967296 is not valid; choose an integer seed"),
        ({"clip": 1}, "clip=1 is not valid; it takes true or false"),
    ],
)
def test_doc_parameters_are_checked_before_any_job(params, message):
    with pytest.raises(ConfigError, match=re.escape(message)):
        check_config(config_with(method_params={"cap/DoC": params}))


@pytest.mark.parametrize(
    "inner, message",
    [
        ({"train_prevalence": "bogus"}, "train_prevalence='bogus' is not valid"),
        ({"no_such_key": 1}, "'no_such_key' is not a parameter of quantification method EMQ"),
    ],
)
def test_an_inner_methods_parameters_are_checked_before_any_job(inner, message):
    """Before: ignored on a finished run, and on a fresh one a failure after 30 s reading "Missing
    files" (the inner method was built only when the adapter was fitted)."""
    with pytest.raises(ConfigError, match=r"cap/EMQ_q2a'\.inner_params.*" + re.escape(message)):
        check_config(config_with(method_params={"cap/EMQ_q2a": {"inner_params": inner}}))
    check_config(config_with(method_params={"cap/EMQ_q2a": {"inner_params": {}}}))
