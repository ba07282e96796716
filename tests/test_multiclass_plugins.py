"""Multiclass methods are plugins of the same kind as the binary ones: the multiclass catalogue finds
every method class of its packages by scanning them (adding a method is adding a file) and takes the
multiclass method classes of the binary registry's plugin sources (the ``unishift.methods`` entry
points, ``UNISHIFT_PLUGINS`` / the ``plugins:`` key). The example plugin package brings MLPE."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest
import quapy as qp

from tests.conftest import REPO
from tests.test_multiclass_evaluation import toy_setup
from tests.test_plugins import NEW, PLUGIN, installed, plugin_site  # noqa: F401 (fixtures)
from unishift import codeversion, registry
from unishift.multiclass import catalogue
from unishift.multiclass.evaluation import evaluate_multiclass_method

MODULE = "unishift_plugin_example.multiclass_methods"


def forget_plugin_modules():
    for name in [m for m in sys.modules if m.startswith("unishift_plugin_example")]:
        del sys.modules[name]


@pytest.fixture
def on_the_path(monkeypatch):
    """The example plugin importable (not installed) and named in UNISHIFT_PLUGINS."""
    monkeypatch.syspath_prepend(str(PLUGIN / "src"))
    monkeypatch.setenv(registry.PLUGINS_VARIABLE, MODULE)
    yield
    monkeypatch.undo()
    forget_plugin_modules()
    registry.reload()


def test_the_installed_plugin_brings_its_multiclass_method(installed):  # noqa: F811
    spec = catalogue.get_method("quantification", "MLPE")
    assert spec.factory.__module__ == MODULE
    assert (spec.group, spec.display, spec.shifts) == ("baseline", "MLPE", ("label", "covariate"))
    assert "MLPE" in catalogue.method_names("quantification")
    # the binary registry takes the plugin's binary methods only
    assert NEW <= set(registry.all_methods())
    assert ("quantification", "MLPE") not in registry.all_methods()


def test_without_the_plugin_mlpe_is_unknown():
    with pytest.raises(ValueError, match="unknown multiclass quantification method 'MLPE'"):
        catalogue.get_method("quantification", "MLPE")


def test_a_plugin_module_named_in_the_variable_is_evaluated_like_a_builtin(on_the_path):
    setup, _, labels = toy_setup(k=3, n=90, seed=4)
    validation = setup.setting.validation.labels
    records, _ = evaluate_multiclass_method("quantification", "MLPE", "label", [setup])
    expected = np.bincount(validation, minlength=3) / len(validation)
    assert len(records) == len(setup.sample_indices)
    for (_, record), index in zip(records.iterrows(), setup.sample_indices):
        truth = np.bincount(labels[index], minlength=3) / len(index)
        np.testing.assert_allclose(json.loads(record["estimated_prevalence"]), expected)
        assert record["status"] == "ok"
        assert record["error"] == pytest.approx(qp.error.ae(truth, expected))


def test_adding_a_multiclass_method_is_adding_a_file(tmp_path, monkeypatch):
    package = tmp_path / "extra_multiclass_methods"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "uniform.py").write_text(
        "import numpy as np\n"
        "from unishift.multiclass.base import MulticlassQuantifier\n\n\n"
        "class _Helper(MulticlassQuantifier):\n"
        "    def fit(self, setting):\n"
        "        self.k_ = setting.n_classes\n"
        "        return self\n\n\n"
        "class Uniform(_Helper):\n"
        '    name, group, shifts = "Uniform", "baseline", ("label",)\n\n'
        "    def quantify(self, sample, context):\n"
        "        return np.full(self.k_, 1 / self.k_)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(catalogue, "METHOD_PACKAGES", (*catalogue.METHOD_PACKAGES, package.name))
    monkeypatch.setattr(registry, "scans", registry.scans + 1)  # what reload() does
    spec = catalogue.get_method("quantification", "Uniform")
    assert (spec.group, spec.shifts) == ("baseline", ("label",))
    # the helper class sets no name and is not listed
    assert not any(s.factory.__name__ == "_Helper" for s in catalogue.all_methods())
    monkeypatch.undo()
    sys.modules.pop(f"{package.name}.uniform", None)
    sys.modules.pop(package.name, None)
    assert ("quantification", "Uniform") not in {(s.task, s.name) for s in catalogue.all_methods()}


def test_a_plugin_cannot_take_the_name_of_a_builtin_method(tmp_path, monkeypatch):
    (tmp_path / "shadowing_plugin.py").write_text(
        "from unishift.multiclass.quantification import PCC\n\n\n"
        "class MyPCC(PCC):\n"
        '    name = "PCC"\n'
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv(registry.PLUGINS_VARIABLE, "shadowing_plugin")
    with pytest.raises(ValueError, match="'PCC' listed twice for task 'quantification'"):
        catalogue.get_method("quantification", "CC")
    monkeypatch.undo()
    sys.modules.pop("shadowing_plugin", None)
    assert catalogue.get_method("quantification", "PCC").factory.__module__.startswith("unishift.")


def test_the_catalogue_lists_every_method_class_of_its_packages():
    # the scan finds exactly the classes that set a name in the three packages (nothing else listed
    # by hand besides the adapted table), and each class describes itself
    scanned = {(cls.task, cls.name) for cls in catalogue.scanned_classes()}
    adapted = {(s.task, s.name) for s in catalogue.all_methods() if s.group == "adapted"}
    own = {(s.task, s.name) for s in catalogue.all_methods()} - adapted
    assert own <= scanned
    assert ("cap", "DoC") in scanned and ("calibration", "TS") in scanned
    doc = catalogue.get_method("cap", "DoC")
    assert doc.params("covariate")["protocol"] == "npp" and doc.params("label")["protocol"] == "upp"


def test_the_multiclass_code_version_follows_a_plugin_method(on_the_path, monkeypatch, tmp_path):
    script = REPO / "workflow" / "scripts" / "multiclass_evaluate.py"
    codeversion.clear_caches()
    with_plugin = codeversion.multiclass_code_version(script)
    # an edited copy of the plugin's method module gives another version
    copy = tmp_path / "src" / "unishift_plugin_example"
    copy.mkdir(parents=True)
    for path in (PLUGIN / "src" / "unishift_plugin_example").glob("*.py"):
        text = path.read_text()
        (copy / path.name).write_text(text.replace("minlength=setting.n_classes", "minlength=3"))
    forget_plugin_modules()
    monkeypatch.syspath_prepend(str(tmp_path / "src"))
    registry.reload()
    edited = codeversion.multiclass_code_version(script)
    monkeypatch.delenv(registry.PLUGINS_VARIABLE)
    without = codeversion.multiclass_code_version(script)
    assert len({with_plugin, edited, without}) == 3
