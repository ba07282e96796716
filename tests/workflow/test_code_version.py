"""Code versions (docs/code-version.md): what a change to the library's source does to the version of
each workflow step, on a private copy of the package."""

from __future__ import annotations

import ast
import json
import shutil

import pytest

from tests.conftest import REPO
from unishift.workflow import code_version

SCRIPTS = REPO / "workflow" / "scripts"
EVALUATE = SCRIPTS / "evaluate.py"
METHODS = [
    ("calibration", "PacCal_sigma"),
    ("calibration", "DMCal"),
    ("calibration", "CPCS"),
    ("calibration", "Platt"),
    ("quantification", "CC"),
    ("quantification", "CPCS_c2q"),
    ("cap", "DMCal_c2a"),
    ("cap", "Naive"),
]


def clear_caches():
    """Forget what the hashing read (the tests edit the sources it hashes)."""
    for cached in (
        code_version._module_file,
        code_version._analyse,
        code_version._script_source,
        code_version._package_data,
        code_version.version_of,
    ):
        cached.cache_clear()


def versions():
    clear_caches()
    steps = {
        name: code_version.script_code_version(SCRIPTS / f"{name}.py")
        for name in ("uci_dataset", "train_classifier", "label_samples", "provenance")
    }
    steps["tables"] = code_version.script_code_version(SCRIPTS / "tables.py", registry=True)
    steps.update({m: code_version.method_code_version(t, m, "label", EVALUATE) for t, m in METHODS})
    steps["library"] = code_version.library_version()
    return steps


@pytest.fixture
def library_copy(tmp_path, monkeypatch):
    """Point the hashing at a copy of the package (the imported registry stays the real one)."""
    copy = tmp_path / "unishift"
    shutil.copytree(code_version.ROOT, copy, ignore=shutil.ignore_patterns("__pycache__"))

    monkeypatch.setattr(code_version, "ROOT", copy)
    yield copy
    clear_caches()


def edit(path, old, new):
    text = path.read_text()
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new))


def changed(before, after):
    return {k for k in before if before[k] != after[k]}


def test_comments_docstrings_and_layout_do_not_count():
    code = "def f(x):\n    return x + 1\n"
    same = '# a comment\ndef f( x ):\n    """Add one."""\n    return (x\n            + 1)  # why\n'

    def normalise(source):
        return code_version._normalised(ast.parse(source))

    assert normalise(code) == normalise(same)
    assert normalise(code) != normalise(code.replace("+ 1", "+ 2"))


@pytest.mark.parametrize(
    "module, old, new, expected",
    [
        # one file per calibrator: a change to PacCal re-runs PacCal only (it has no adaptation) ...
        (
            "paccal_sigma.py",
            "                positive = (positive - self.fpr_) / (self.tpr_ - self.fpr_)",
            "                positive = 0.5 * (positive - self.fpr_) / (self.tpr_ - self.fpr_)",
            {"PacCal_sigma", "library"},
        ),
        # ... and a change to DMCal re-runs DMCal and the adaptation built on it
        (
            "dmcal.py",
            "        ratio = positive / (negative + positive)",
            "        ratio = 0.5 * positive / (negative + positive)",
            {"DMCal", "DMCal_c2a", "library"},
        ),
    ],
)
def test_a_real_change_to_a_method_changes_the_versions_that_run_it(
    library_copy, module, old, new, expected
):
    before = versions()
    edit(library_copy / "methods" / "calibration" / module, old, new)
    # the tables re-run anyway, from the re-evaluated methods' new files
    assert changed(before, versions()) == expected


def test_comment_only_changes_change_no_version(library_copy):
    before = versions()
    path = library_copy / "methods" / "calibration" / "paccal_sigma.py"
    edit(
        path,
        "    def adjusted(self, posteriors: np.ndarray) -> np.ndarray:\n",
        "    def adjusted(self, posteriors: np.ndarray) -> np.ndarray:\n        # see the paper\n",
    )
    edit(path, '"""PacCal^σ (docs/methods.md §2.9', '"""PacCal-sigma (docs/methods.md, section 2.9')
    assert changed(before, versions()) == set()


def test_registering_a_new_method_touches_no_other_method(library_copy, monkeypatch):
    from unishift.methods import registry
    from unishift.methods.calibration.platt import Platt

    before = versions()
    # adding a method is adding a file that describes it (docs/methods.md)
    (library_copy / "methods" / "calibration" / "platt2.py").write_text(
        "from unishift.methods.calibration.platt import Platt\n\n\n"
        "class Platt2(Platt):\n"
        '    name, group, display = "Platt2", "baseline", "Platt 2"\n'
    )

    class Platt2(Platt):
        name, group, display = "Platt2", "baseline", "Platt 2"

    # what scanning the edited package would do in the workflow's process
    monkeypatch.setitem(
        registry._REGISTRY, ("calibration", "Platt2"), registry.MethodSpec.of(Platt2)
    )
    assert changed(before, versions()) == {"tables", "library"}


def test_a_change_every_step_imports_changes_every_version(library_copy):
    before = versions()
    edit(library_copy / "io.py", 'lineterminator="\\n"', 'lineterminator="\\r\\n"')
    assert changed(before, versions()) == set(before)


def test_data_files_of_a_package_count(library_copy):
    before = versions()
    template = library_copy / "report" / "templates" / "result_table.tex.j2"
    template.write_text(template.read_text() + "%\n")
    assert changed(before, versions()) == {"tables", "library"}


def test_the_evaluation_of_a_method_follows_its_inner_method_overrides():
    plain = code_version.method_code_version("quantification", "CPCS_c2q", "label", EVALUATE)
    other = code_version.method_code_version(
        "quantification", "CPCS_c2q", "label", EVALUATE, {"inner": "Platt"}
    )
    assert plain != other
    modules, _ = code_version.method_modules(
        "quantification", "CPCS_c2q", "label", {"inner": "Platt"}
    )
    assert "unishift.methods.calibration.platt" in modules


def test_the_cache_gives_the_versions_computed_without_it(tmp_path, monkeypatch):
    """Cold (the entries written), warm (read back: a changed entry shows through, which proves it)
    and without a usable folder, the same versions; a malformed entry is analysed again and
    rewritten."""
    folder = tmp_path / "cache"
    monkeypatch.setenv(code_version.CACHE_VARIABLE, str(folder))
    cold = versions()
    entries = sorted(folder.glob("*.json"))
    # every module of the package, and the workflow scripts those versions read
    assert len(entries) > len(list(code_version.ROOT.rglob("*.py")))
    assert versions() == cold

    planted = entries[0]
    imports, normalised = json.loads(planted.read_text())
    planted.write_text(json.dumps([imports, normalised + "x"]))
    assert versions() != cold

    planted.write_text('{"not": "an analysis"}')
    assert versions() == cold
    assert json.loads(planted.read_text()) == [imports, normalised]

    monkeypatch.setenv(code_version.CACHE_VARIABLE, str(tmp_path / "a-file"))
    (tmp_path / "a-file").write_text("not a folder")
    assert versions() == cold


def test_an_edited_module_is_analysed_afresh(tmp_path, monkeypatch, library_copy):
    """An edited module's text has an entry of its own (the old one stays, unused)."""
    monkeypatch.setenv(code_version.CACHE_VARIABLE, str(tmp_path / "cache"))
    before = versions()
    count = len(list((tmp_path / "cache").glob("*.json")))
    metrics = library_copy / "evaluation" / "metrics.py"
    metrics.write_text(metrics.read_text() + "\nANSWER = 42\n")
    after = versions()
    assert len(list((tmp_path / "cache").glob("*.json"))) == count + 1
    assert after["library"] != before["library"]


def test_without_a_home_folder_the_versions_are_computed_uncached(monkeypatch):
    """A container's user without a passwd entry and HOME unset: Path.home() raises, and every
    snakemake process would have failed at its rules' code versions."""
    cold = versions()

    def no_home():
        raise RuntimeError("Could not determine home directory.")

    for variable in (code_version.CACHE_VARIABLE, "XDG_CACHE_HOME", "HOME"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setattr(code_version.Path, "home", staticmethod(no_home))
    assert code_version.cache_folder() is None
    assert versions() == cold
