"""Damaged and partial intermediate files: every reader names the file and the fix, nothing partial is
turned into a table, QuaPy's cache is verified (rebuilt from the verified copy where there is one) and
whatever QuaPy loads must match the content checksum of the exact UCI copy."""

from __future__ import annotations

import json
import os
import pickle
import shutil
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.report.test_report_tables import INFO, _records, _values, k_class_records
from unishift.data import uci
from unishift.data.containers import LabelledSet, Setting
from unishift.data.datasets import OFFLINE_FILES
from unishift.data.label_shift import (
    label_pool_size,
    label_shift_samples,
    prepare_splits,
    read_label_setup,
    train_and_predict,
)
from unishift.data.setups import SetupData
from unishift.evaluation.evaluate import evaluate_setup
from unishift.evaluation.records import COLUMNS, TWO_CLASS
from unishift.io import DamagedFileError, csv_problem, npz_problem, read_npz, write_csv, write_npz
from unishift.methods.base import Quantifier
from unishift.output_records import write_record
from unishift.report.pipeline import build_error_by_shift, build_table
from unishift.report.tables import check_complete, load_records
from unishift.workflow.checks import DamagedIntermediatesError, check_intermediates

FIX = "delete it and rerun"


def truncate(path, keep=0.6, drop=None):
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - drop] if drop else data[: int(len(data) * keep)])


# ------------------------------------------------------------------------------------------------
# npz


def test_a_truncated_npz_names_the_file_and_the_fix(tmp_path):
    path = tmp_path / "samples" / "cmc.3.npz"
    write_npz(path, indices=np.arange(5000).reshape(50, 100), prevalence=np.ones(50))
    assert read_npz(path, ("indices",))["indices"].shape == (50, 100)
    assert npz_problem(path) is None
    truncate(path)
    assert npz_problem(path)
    with pytest.raises(DamagedFileError, match=rf"{path}.*{FIX}"):
        read_npz(path)


def test_an_npz_without_a_required_array_is_refused(tmp_path):
    path = tmp_path / "x.npz"
    write_npz(path, indices=np.zeros(3))
    with pytest.raises(DamagedFileError, match="no array named shift_intensity"):
        read_npz(path, ("indices", "shift_intensity"))


@pytest.fixture(scope="module")
def cmc_files(tmp_path_factory):
    root = tmp_path_factory.mktemp("cmc")
    splits, _ = prepare_splits("cmc.3", root / "home")
    samples = label_shift_samples(splits, 50, 4, 0)
    _, posteriors = train_and_predict(splits, "LR", 0, samples=samples)
    paths = {name: root / f"{name}.npz" for name in ("splits", "posteriors", "samples")}
    for name, arrays in (("splits", splits), ("posteriors", posteriors), ("samples", samples)):
        write_npz(paths[name], **arrays)
    return paths, splits


def test_a_setup_from_damaged_or_mismatched_files_names_the_file(cmc_files, tmp_path):
    paths, splits = cmc_files
    setup = read_label_setup(
        paths["splits"], paths["posteriors"], paths["samples"], "cmc.3", "LR", 0
    )
    assert len(setup.pool) == label_pool_size(1473) == len(splits["y_test"]) == 442
    bad = tmp_path / "samples.npz"
    bad.write_bytes(paths["samples"].read_bytes()[:300])
    with pytest.raises(DamagedFileError, match=str(bad)):
        read_label_setup(paths["splits"], paths["posteriors"], bad, "cmc.3", "LR", 0)
    # samples drawn from a larger pool (another split): refused, naming the samples file
    other = tmp_path / "other.npz"
    write_npz(
        other, indices=np.full((4, 50), 1000), prevalence=np.ones(4), shift_intensity=np.ones(4)
    )
    with pytest.raises(DamagedFileError, match=rf"{other}.*another split"):
        read_label_setup(paths["splits"], paths["posteriors"], other, "cmc.3", "LR", 0)


# ------------------------------------------------------------------------------------------------
# per-sample CSVs


def write_records(path, frame):
    columns = COLUMNS[TWO_CLASS] if "ece_positive" in frame else frame.columns
    write_csv(path, frame[list(columns)].sort_values(["classifier", "dataset", "sample_id"]))


def test_a_row_cut_mid_field_is_refused_not_misread(tmp_path):
    path = tmp_path / "A1.csv"
    records = _records(_values())
    write_records(path, records[records.method == "A1"])
    assert csv_problem(path) is None and len(load_records([path])) == 120
    truncate(path, drop=7)  # the last row loses the end of its error value and what follows
    assert csv_problem(path) == "the last line is cut off (no final newline)"
    with pytest.raises(DamagedFileError, match=rf"{path}.*last line is cut off.*{FIX}"):
        load_records([path])


@pytest.mark.parametrize(
    "column, value",
    [("status", "done"), ("status", None), ("error", None), ("sample_id", "x"), ("method", None)],
)
def test_a_row_without_a_required_field_is_refused(tmp_path, column, value):
    records = _records(_values())
    frame = records[records.method == "A1"].copy()
    frame[column] = frame[column].astype(object)
    frame.iloc[7, frame.columns.get_loc(column)] = value
    path = tmp_path / "A1.csv"
    write_records(path, frame)
    with pytest.raises(DamagedFileError, match=rf"{path}.*line \d+ lacks a required field"):
        load_records([path])


@pytest.mark.parametrize("layout", ["two_class", "k_class"])
def test_a_scored_calibration_record_without_its_layouts_values_is_refused(tmp_path, layout):
    """A calibration record stores the top-label ECE, brier and the other ECE of its layout (the
    positive-class one for two classes, the class-wise one for more): all must be numbers."""
    records = _records(_values())
    frame = records[records.method == "A1"].assign(
        task="calibration", ece=1.5, ece_positive=2.5, brier=0.25
    )
    if layout == "k_class":
        frame = k_class_records(frame)
    path = tmp_path / "A1.csv"
    write_records(path, frame)
    assert len(load_records([path])) == 120
    other = "ece_positive" if layout == "two_class" else "ece_classwise"
    for column in ("ece", "brier", other):
        broken = frame.copy()
        broken.iloc[7, broken.columns.get_loc(column)] = np.nan
        write_records(path, broken)
        with pytest.raises(DamagedFileError, match=rf"{path}.*line \d+ lacks a required field"):
            load_records([path])
    # an errored record has no values, only its reason
    errored = frame.copy()
    for column in ("ece", "brier", other, "error"):
        errored.iloc[7, errored.columns.get_loc(column)] = np.nan
    errored.iloc[7, errored.columns.get_loc("status")] = "error"
    errored.iloc[7, errored.columns.get_loc("reason")] = "fit failed"
    write_records(path, errored)
    assert load_records([path])["status"].tolist().count("error") == 1


def test_incomplete_results_are_refused_before_any_table(tmp_path):
    records = _records(_values())
    paths = []
    for method in INFO:
        path = tmp_path / "eval" / f"{method}.csv"
        part = records[records.method == method]
        if method == "R2":  # one sample of one setup missing (a whole line lost at a line end)
            part = part[
                ~((part.classifier == "NB") & (part.dataset == "yeast") & (part.sample_id == 3))
            ]
        write_records(path, part)
        paths.append(path)
    kwargs = {"classifiers": ["LR", "NB"], "datasets": ["cmc.3", "yeast"], "n_samples": 30}
    with pytest.raises(DamagedFileError, match=r"R2.csv.*NB/yeast has 29 records"):
        build_table(paths, "cap", "label", list(INFO), tmp_path / "tables", **kwargs)
    assert not (tmp_path / "tables").exists()
    with pytest.raises(DamagedFileError, match="R2.csv"):
        build_error_by_shift(paths, "cap", "label", tmp_path / "plots", list(INFO), **kwargs)
    assert not (tmp_path / "plots").exists()


def test_check_complete_names_missing_setups_and_duplicates():
    records = _records(_values())
    setups = [("LR", "cmc.3"), ("LR", "yeast"), ("NB", "cmc.3"), ("NB", "yeast")]
    check_complete(records, list(INFO), setups, 30)
    with pytest.raises(DamagedFileError, match="no records of setup kNN/yeast"):
        check_complete(records, list(INFO), [*setups, ("kNN", "yeast")], 30)
    doubled = pd.concat([records, records[(records.method == "B") & (records.sample_id == 0)]])
    with pytest.raises(DamagedFileError, match="expected samples 0..29 once each"):
        check_complete(doubled, list(INFO), setups, 30, {"B": "results/eval/B.csv"})


def test_fallback_and_error_reasons_are_one_line(tmp_path):
    class Chatty(Quantifier):
        def fit(self, setting):
            self.fit_notes = [("fallback", "solver gave up:\n  line two\n  line three")]
            return self

        def quantify(self, sample, context):
            if context.sample_id == 1:
                raise ValueError("first line\nsecond line")
            return np.array([0.5, 0.5])

    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 40)
    pool = LabelledSet(np.column_stack([1 - y * 0.8, y * 0.8 + 0.0]), y)
    setup = SetupData(
        "label", "LR", "toy", Setting(pool, pool, "label", "toy/LR"), pool,
        rng.integers(0, 40, (3, 10)), np.zeros(3),
    )  # fmt: skip
    records, _ = evaluate_setup("quantification", "Chatty", Chatty, setup)
    assert [r["reason"] for r in records] == [
        "solver gave up: ...",
        "ValueError: first line ...",
        "solver gave up: ...",
    ]
    path = tmp_path / "Chatty.csv"
    write_csv(path, pd.DataFrame.from_records(records, columns=list(COLUMNS[TWO_CLASS])))
    assert len(path.read_text().splitlines()) == 4


def test_emq_bcts_fallback_reason_is_one_line():
    from unishift.methods.quantification.emq import EMQBCTS

    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 60)
    P = np.column_stack([1.0 - y, y.astype(float)])  # exact 0/1 posteriors: BCTS fails
    P[:30] = rng.dirichlet([2, 2], 30)
    model = EMQBCTS().fit(Setting(LabelledSet(P, y), LabelledSet(P, y), "label", "k"))
    [(status, reason)] = model.fit_notes
    assert status == "fallback" and "\n" not in reason and len(reason) < 220


# ------------------------------------------------------------------------------------------------
# parse-time scan of a results folder


def test_the_results_scan_lists_every_damaged_intermediate(tmp_path):
    results = tmp_path / "results"
    write_npz(results / "samples" / "label" / "cmc.3.npz", indices=np.zeros((3, 4)))
    write_npz(results / "posteriors" / "label" / "cmc.3" / "LR.npz", P_val=np.zeros((3, 2)))
    records = _records(_values())
    write_records(results / "eval" / "label" / "cap" / "A1.csv", records[records.method == "A1"])
    for path in (p for p in results.rglob("*") if p.is_file()):  # as the jobs record them
        write_record(path, "test", {}, [])
    check_intermediates(results)
    truncate(results / "samples" / "label" / "cmc.3.npz")
    truncate(results / "eval" / "label" / "cap" / "A1.csv", drop=3)
    with pytest.raises(DamagedIntermediatesError) as caught:
        check_intermediates(results)
    message = str(caught.value)
    assert "samples/label/cmc.3.npz" in message and "eval/label/cap/A1.csv" in message
    assert "posteriors" not in message.split("Fix")[0]
    assert "rm " in message and "rerun" in message


# ------------------------------------------------------------------------------------------------
# QuaPy's cache and the content checksum


def test_a_truncated_quapy_cache_is_rebuilt_from_the_verified_copy(tmp_path):
    cache = uci.cache_path(uci.uci_spec("cmc.3"), tmp_path)
    uci.seed_quapy_cache("cmc.3", tmp_path, None)
    good = cache.read_bytes()
    truncate(cache)
    source = uci.seed_quapy_cache("cmc.3", tmp_path, None)
    assert "was damaged" in source and "rebuilt" in source
    assert pickle.loads(cache.read_bytes()).keys() == pickle.loads(good).keys()
    assert uci.seed_quapy_cache("cmc.3", tmp_path, None).startswith("existing QuaPy cache")


def test_a_quapy_cache_that_differs_from_the_verified_copy_is_rebuilt(tmp_path):
    cache = uci.cache_path(uci.uci_spec("cmc.3"), tmp_path)
    uci.seed_quapy_cache("cmc.3", tmp_path, None)
    content = pickle.loads(cache.read_bytes())
    content["X"][0, 0] += 1
    cache.write_bytes(pickle.dumps(content))
    assert "differed from" in uci.seed_quapy_cache("cmc.3", tmp_path, None)
    assert pickle.loads(cache.read_bytes())["X"][0, 0] == content["X"][0, 0] - 1


@pytest.fixture
def no_offline_copy(monkeypatch):
    """As on a machine without the offline copy: QuaPy's cache (or a download) is the only source."""
    monkeypatch.setattr(uci, "locate_offline_files", lambda spec, data_root: None)


def test_without_an_offline_copy_a_damaged_cache_names_the_file(tmp_path, no_offline_copy):
    cache = uci.cache_path(uci.uci_spec("cmc.3"), tmp_path)
    cache.parent.mkdir(parents=True)
    cache.write_bytes(b"\x80\x05\x95garbage")
    with pytest.raises(DamagedFileError, match=rf"{cache}.*QuaPy cache unreadable.*delete it"):
        uci.fetch_dataset("cmc.3", tmp_path)


def test_downloaded_or_cached_data_must_match_the_content_checksum(tmp_path, monkeypatch):
    uci.seed_quapy_cache("cmc.3", tmp_path, None)  # an exact cache, as a correct download leaves
    monkeypatch.setattr(uci, "locate_offline_files", lambda spec, data_root: None)
    dataset, source = uci.fetch_dataset("cmc.3", tmp_path)
    assert source.startswith("existing QuaPy cache") and len(dataset.test) == 442
    cache = uci.cache_path(uci.uci_spec("cmc.3"), tmp_path)
    content = pickle.loads(cache.read_bytes())
    content["y"] = content["y"][::-1].copy()  # e.g. a download with the rows in another order
    cache.write_bytes(pickle.dumps(content))
    with pytest.raises(uci.ChecksumError, match=rf"cmc.3: the data QuaPy loaded.*delete {cache}"):
        uci.fetch_dataset("cmc.3", tmp_path)


def test_a_modified_package_copy_fails_its_checksum(tmp_path, monkeypatch):
    source = uci._package_root() / OFFLINE_FILES["cmc"][0].path
    fake = tmp_path / OFFLINE_FILES["cmc"][0].path
    fake.parent.mkdir(parents=True)
    fake.write_bytes(
        source.read_bytes().replace(b"24,2,3,3,1,1,2,3,0,1", b"24,2,3,3,1,1,2,3,0,2", 1)
    )
    assert fake.read_bytes() != source.read_bytes()
    monkeypatch.setattr(uci, "_package_root", lambda: tmp_path)
    with pytest.raises(uci.ChecksumError, match="contraceptive.dat has sha256"):
        uci.seed_quapy_cache("cmc.3", tmp_path / "home", None)


# ------------------------------------------------------------------------------------------------
# final outputs, the place of a file in its results folder, the size-and-mtime shortcut


def _written(results, relative, content: bytes):
    """A file as a job of the run writes it: the file, then its record."""
    path = results / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    write_record(path, "test", {}, [], results)
    return path


FINAL_FILES = {
    "tables/cap_label.csv": b"classifier,dataset,method,mean\nLR,cmc.3,ATC,0.0712\n",
    "reproduction/cap_label.md": b"| cell | ours |\n",
    "reproduction/cap_label.csv": b"cell,ours\nLR,0.0712\n",
    "cd/cap_label.tex": b"\\begin{tikzpicture}\\end{tikzpicture}\n",
    "cd/cap_label.png": b"\x89PNG\r\n\x1a\nfigure",
    "plots/cap_label_err_by_shift.png": b"\x89PNG\r\n\x1a\nplot",
    "regimes/cap_label.csv": b"descriptor,bin\nx,0\n",
    "provenance.json": b'{"config": {"seed": 0}}\n',
}


@pytest.mark.parametrize(
    "name, damage",
    [
        ("tables/cap_label.csv", lambda b: b.replace(b"0.0712", b"0.0172")),
        ("tables/cap_label.csv", lambda b: b[:-3]),
        ("reproduction/cap_label.md", lambda b: b + b"| edited | 1 |\n"),
        ("cd/cap_label.tex", lambda b: b.replace(b"tikz", b"TIKZ", 1)),
        ("plots/cap_label_err_by_shift.png", lambda b: b[:-1] + b"!"),
        ("provenance.json", lambda b: b[:10]),
    ],
)
def test_edited_or_cut_final_outputs_are_refused_before_planning(tmp_path, name, damage):
    """Before, only the intermediates were checked: an edited table went to the reproduction job,
    which Snakemake had emptied of its good files before the job refused the table."""
    results = tmp_path / "results"
    for relative, content in FINAL_FILES.items():
        _written(results, relative, content)
    check_intermediates(results)
    path = results / name
    path.write_bytes(damage(path.read_bytes()))
    with pytest.raises(DamagedIntermediatesError) as caught:
        check_intermediates(results)
    listing = str(caught.value).split("Fix")[0]
    assert [line.split(": ")[0].strip() for line in listing.splitlines()[1:]] == [str(path)]
    assert "no file was removed" in str(caught.value) and f"rm {path}" in str(caught.value)


def test_the_damage_message_states_what_a_rerun_rebuilds():
    """A deleted intermediate is not rebuilt by a plain rerun (Snakemake keeps what was made from it):
    the fix says so instead of promising a rebuild."""
    from unishift.io import REBUILD

    assert "rebuilds it (and what is computed from it)" not in REBUILD
    assert "when a job needs it again" in REBUILD and "snakemake <its path>" in REBUILD


def test_a_results_folder_named_absolutely_or_moved_keeps_its_files(tmp_path, monkeypatch):
    from unishift.output_records import problem_of

    monkeypatch.chdir(tmp_path)
    results = Path("results")
    npz = results / "samples" / "label" / "cmc.3.npz"
    write_npz(npz, indices=np.arange(6).reshape(2, 3))
    write_record(npz, "label_samples", {"dataset": "cmc.3"}, [], results)
    assert problem_of(npz, results) is None
    # the same folder by its absolute path (the job's or the API's)
    assert problem_of(tmp_path / npz, tmp_path / "results") is None
    assert problem_of(tmp_path / npz) is None
    check_intermediates(tmp_path / "results")
    # the whole folder moved elsewhere
    moved = tmp_path / "elsewhere" / "run1"
    moved.parent.mkdir()
    Path("results").rename(moved)
    assert problem_of(moved / "samples" / "label" / "cmc.3.npz", moved) is None
    check_intermediates(moved)
    # but another setup's file copied over this one is still refused
    write_npz(moved / "samples" / "label" / "yeast.npz", indices=np.arange(6).reshape(3, 2))
    write_record(moved / "samples" / "label" / "yeast.npz", "label_samples", {}, [], moved)
    for suffix in ("", ".made.json"):
        shutil.copy(
            moved / "samples" / "label" / f"{'.' if suffix else ''}yeast.npz{suffix}",
            moved / "samples" / "label" / f"{'.' if suffix else ''}cmc.3.npz{suffix}",
        )
    problem = problem_of(moved / "samples" / "label" / "cmc.3.npz", moved)
    assert "written as samples/label/yeast.npz" in problem and "another setup" in problem
    with pytest.raises(DamagedIntermediatesError, match="another setup"):
        check_intermediates(moved)


def test_an_untouched_file_is_not_hashed_again(tmp_path, monkeypatch):
    """The record's size and mtime match the file, so the planning check spares its sha256; before,
    Snakemake's touch of a job's outputs left no record of a run matching its file (0 of 246 in a
    run of .test/config.yaml), so every check hashed every file."""
    from unishift import output_records as made_from

    results = tmp_path / "results"
    path = _written(results, "eval/label/cap/ATC.csv", b"a,b\n1,2\n")
    record = made_from.read_record(path)
    assert [record["size"], record["mtime_ns"]] == [path.stat().st_size, path.stat().st_mtime_ns]
    hashed = []
    sha256 = made_from.file_sha256
    monkeypatch.setattr(made_from, "file_sha256", lambda p: hashed.append(p) or sha256(p))
    assert made_from.problem_of(path, results) is None and hashed == []
    # Snakemake touches a job's outputs once the job ends: hashed once, then spared again
    os.utime(path, ns=(record["mtime_ns"] + 10**9, record["mtime_ns"] + 10**9))
    assert made_from.problem_of(path, results) is None and hashed == [path]
    assert made_from.problem_of(path, results) is None and hashed == [path]
    path.write_bytes(b"a,b\n1,3\n")  # edited: hashed, and refused
    assert "content changed" in made_from.problem_of(path, results) and hashed == [path, path]


def test_a_flipped_byte_in_posteriors_names_the_file_and_the_fix(tmp_path):
    """A flipped byte leaves the zip directory whole: reading the array raised a raw BadZipFile
    (a CRC error) that named neither the file nor the fix."""
    results = tmp_path / "results"
    split = results / "data" / "label" / "cmc.3" / "split.npz"
    posteriors = results / "posteriors" / "label" / "cmc.3" / "LR.npz"
    for path, arrays in (
        (split, {"y_h": np.zeros(4)}),
        (posteriors, {"P_test": np.full((50, 2), 0.5)}),
    ):
        write_npz(path, **arrays)
        write_record(path, "test", {}, [], results)
    check_intermediates(results)
    data = bytearray(posteriors.read_bytes())
    data[len(data) // 2] ^= 0xFF
    stat = posteriors.stat()
    posteriors.write_bytes(bytes(data))
    # even with the size and mtime of its record (so that the shortcut skips the hash)
    os.utime(posteriors, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert npz_problem(posteriors) is None  # the directory is intact
    with pytest.raises(DamagedIntermediatesError) as caught:
        check_intermediates(results)
    message = str(caught.value)
    assert (
        str(posteriors) in message and "BadZipFile" in message and "delete it and rerun" in message
    )
    with pytest.raises(DamagedFileError, match=rf"{posteriors}.*delete it and rerun"):
        read_npz(posteriors)


# ------------------------------------------------------------------------------------------------
# nothing in a results folder runs code


class _Planted:
    """A pickle that runs code when loaded: it creates the file named by its argument."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (Path.touch, (Path(self.marker),))


def _plant(cache, marker):
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_bytes(pickle.dumps({"X": _Planted(marker), "y": np.zeros(3)}))


def test_a_planted_quapy_cache_is_refused_unread(tmp_path, no_offline_copy):
    cache = uci.cache_path(uci.uci_spec("cmc.3"), tmp_path / "home")
    marker = tmp_path / "ran"
    _plant(cache, marker)
    with pytest.raises(DamagedFileError, match=rf"{cache}.*names pathlib.*could run code"):
        uci.fetch_dataset("cmc.3", tmp_path / "home")
    assert not marker.exists()


def test_a_planted_quapy_cache_is_replaced_by_the_verified_copy_unread(tmp_path):
    cache = uci.cache_path(uci.uci_spec("cmc.3"), tmp_path / "home")
    marker = tmp_path / "ran"
    _plant(cache, marker)
    source = uci.seed_quapy_cache("cmc.3", tmp_path / "home", None)
    assert "was damaged" in source and "rebuilt" in source and not marker.exists()
    assert set(uci.read_cache(cache)) == {"X", "y"}


def test_a_multiclass_dry_run_does_not_run_a_planted_cache(tmp_path, no_offline_copy):
    """The multiclass config check counts classes from QuaPy's cache: it unpickled a planted file
    (and so ran it) in a dry run."""
    import yaml
    from snakemake.utils import validate

    from tests.conftest import REPO
    from unishift.workflow.checks import ConfigError, check_config

    config = yaml.safe_load((REPO / ".test" / "multiclass.yaml").read_text())
    validate(config, str(REPO / "workflow" / "schemas" / "config.schema.yaml"))
    config["quapy_home"] = str(tmp_path / "home")
    name = config["label_shift"]["datasets"][0]
    marker = tmp_path / "ran"
    planted = uci.cache_path(uci.uci_spec(name, uci.MULTICLASS), tmp_path / "home")
    _plant(planted, marker)
    content = planted.read_bytes()
    with pytest.raises(ConfigError, match="could run code"):
        check_config(config)
    assert not marker.exists()
    assert planted.read_bytes() == content  # refused, not rewritten: the user sees what was there


def test_the_caches_quapy_and_the_offline_copies_write_are_read(tmp_path):
    """The restricted reader takes what a real cache holds: a binary group's arrays and a multiclass
    LabelledCollection (the latter as QuaPy's own loader then reads it)."""
    uci.seed_quapy_cache("cmc.3", tmp_path, None)
    assert set(uci.read_cache(uci.cache_path(uci.uci_spec("cmc.3"), tmp_path))) == {"X", "y"}
    dataset, _ = uci.fetch_dataset("cmc", tmp_path, collection=uci.MULTICLASS)
    arrays = uci.read_cache(uci.cache_path(uci.uci_spec("cmc", uci.MULTICLASS), tmp_path))
    assert len(arrays["y"]) == 1473 and len(dataset.training) > 0


# ------------------------------------------------------------------------------------------------
# the API reads a run with the workflow's checks


@pytest.fixture
def api_run(cmc_files, tmp_path):
    """A results folder as the workflow leaves it: cmc.3's split and samples, LR's and kNN's
    posteriors (here the same arrays, each with its own record), and a provenance naming both."""
    paths, _ = cmc_files
    results = tmp_path / "results"
    layout = {
        "data/label/cmc.3/split.npz": paths["splits"],
        "samples/label/cmc.3.npz": paths["samples"],
        "posteriors/label/cmc.3/LR.npz": paths["posteriors"],
        "posteriors/label/cmc.3/kNN.npz": paths["posteriors"],
    }
    for relative, source in layout.items():
        _written(results, relative, source.read_bytes())
    config = {"label_shift": {"datasets": ["cmc.3"], "classifiers": ["LR", "kNN"]}}
    _written(results, "provenance.json", json.dumps({"config": config}).encode())
    return results


def test_the_api_loads_a_checked_run(api_run):
    from unishift.api import load_setups

    setups = load_setups(api_run, "label")
    assert [(s.classifier, s.dataset) for s in setups] == [("LR", "cmc.3"), ("kNN", "cmc.3")]


def test_the_api_refuses_posteriors_copied_over_another_classifiers(api_run):
    from unishift.api import load_setups
    from unishift.output_records import ProvenanceError

    folder = api_run / "posteriors" / "label" / "cmc.3"
    for name in ("kNN.npz", ".kNN.npz.made.json"):  # the file and its record, copied together
        shutil.copy(folder / name, folder / name.replace("kNN", "LR"))
    with pytest.raises(ProvenanceError, match=r"LR.npz: its record says it was written as .*kNN"):
        load_setups(api_run, "label")


def test_the_api_names_a_missing_split_instead_of_skipping_its_setups(api_run):
    """Before, the setups without a split were left out silently (2 of 4 setups came back)."""
    from unishift.api import load_setups

    split = api_run / "data" / "label" / "cmc.3" / "split.npz"
    split.unlink()
    with pytest.raises(FileNotFoundError, match=rf"missing under .*{split}.*snakemake <path>"):
        load_setups(api_run, "label")


def test_the_api_refuses_an_edited_record_file(tmp_path):
    from unishift.api import load_records
    from unishift.output_records import ProvenanceError

    results = tmp_path / "results"
    records = _records(_values())
    path = results / "eval" / "label" / "cap" / "A1.csv"
    write_records(path, records[records.method == "A1"])
    write_record(path, "evaluation_records", {}, [], results)
    assert len(load_records(results, "label", "cap", methods=["A1"])) > 0
    text = path.read_text()
    path.write_text(text.replace("0.", "0.9", 1))
    with pytest.raises(ProvenanceError, match="A1.csv: its content changed"):
        load_records(results, "label", "cap", methods=["A1"])
    path.write_text(text[:-5])
    with pytest.raises(DamagedFileError, match="A1.csv.*cut off"):
        load_records(results, "label", "cap", methods=["A1"])


def test_the_api_warns_when_loaded_records_hold_failed_samples(tmp_path):
    """load_records says how many samples a method failed on, as evaluate does: a mean over
    'error' would average the survivors only (issue 32's probe: no warning when samples fail)."""
    from unishift.api import load_records

    results = tmp_path / "results"
    records = _records(_values())
    mine = records[records.method == "A1"].copy()
    failed = mine.index[:7]
    mine.loc[failed, ["status", "reason"]] = ["error", "ValueError: made to fail"]
    mine.loc[failed, "error"] = np.nan
    path = results / "eval" / "label" / "cap" / "A1.csv"
    write_records(path, mine)
    write_record(path, "evaluation_records", {}, [], results)
    with pytest.warns(UserWarning, match=rf"A1 failed on 7 of {len(mine)} samples .*made to fail"):
        loaded = load_records(results, "label", "cap", methods=["A1"])
    assert int((loaded.status == "error").sum()) == 7
    clean = records[records.method == "A2"]
    path = results / "eval" / "label" / "cap" / "A2.csv"
    write_records(path, clean)
    write_record(path, "evaluation_records", {}, [], results)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_records(results, "label", "cap", methods=["A2"])
