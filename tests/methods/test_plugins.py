"""Methods from outside the package (docs/methods.md): the example plugin package
(examples/unishift-plugin-example) is installed into a folder of this test environment; its entry
points register, once for any number of classes, HistBin (binary-only) with the adaptations the
registry derives for it (HistBin_c2q, HistBin_c2a, binary-only too) and MLPE (any k); the plugin's
methods keep the method contract; the ``plugins:`` config key imports a module from the path; adding
a method is adding a file; a plugin cannot take a built-in name; and the workflow, on top of a
finished run, puts the plugin's methods in its tables with the numbers the API computes for them
independently."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
import yaml

from tests.conftest import REPO
from tests.methods.test_method_contract import test_method_contract as method_contract
from tests.workflow.test_workflow import snakemake
from unishift.data.containers import LabelledSet, Sample, Setting
from unishift.methods import registry
from unishift.methods.base import as_posteriors, fresh_context
from unishift.workflow.provenance import plugin_records

PLUGIN = REPO / "examples" / "unishift-plugin-example"
NEW = {("calibration", "HistBin"), ("quantification", "HistBin_c2q"), ("cap", "HistBin_c2a")}


@pytest.fixture(scope="module")
def plugin_site(tmp_path_factory):
    """The plugin installed (with its entry point metadata) into a folder put on the path."""
    root = tmp_path_factory.mktemp("plugin")
    site = root / "site"
    # built from a copy: pip's build/ folder must not land in the checkout
    source = shutil.copytree(PLUGIN, root / "source", ignore=shutil.ignore_patterns("build"))
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
         "--target", str(site), str(source)],
        check=True, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    return site


@pytest.fixture
def installed(plugin_site):
    sys.path.insert(0, str(plugin_site))
    try:
        registry.reload()
        yield plugin_site
    finally:
        sys.path.remove(str(plugin_site))
        for name in [m for m in sys.modules if m.startswith("unishift_plugin_example")]:
            del sys.modules[name]
        registry.reload()


def test_the_entry_point_registers_the_method_and_its_adaptations(installed):
    methods = registry.all_methods()
    assert NEW <= set(methods)
    assert methods[("calibration", "HistBin")].group == "baseline"
    c2q = methods[("quantification", "HistBin_c2q")]
    assert (c2q.group, c2q.display, c2q.shifts) == (
        "adapted",
        r"HistBin$_{\zeta 2 \rho}$",
        ("label", "covariate", "compound"),  # compound follows covariate (docs/regimes.md §5.2.1)
    )
    assert c2q.params("label")["inner"] == "HistBin"


def test_without_the_plugin_its_methods_are_unknown():
    assert not (NEW | {("quantification", "MLPE")}) & set(registry.all_methods())


def test_one_registration_serves_any_number_of_classes(installed):
    methods = registry.all_methods()
    mlpe = methods[("quantification", "MLPE")]
    assert mlpe.factory.__module__ == "unishift_plugin_example.multiclass_methods"
    assert (mlpe.group, mlpe.display, mlpe.binary_only) == ("baseline", "MLPE", "")
    assert "MLPE" in registry.method_names("quantification", "label", n_classes=3)
    # HistBin bins p_1: binary-only, and so are its adaptations, which say why
    assert methods[("calibration", "HistBin")].binary_only == "bins the positive posterior p_1"
    for task, name in (("quantification", "HistBin_c2q"), ("cap", "HistBin_c2a")):
        assert "HistBin is binary-only" in methods[(task, name)].binary_only
        assert name not in registry.method_names(task, n_classes=3)
        with pytest.raises(ValueError, match=f"'{name}' is binary-only in unishift"):
            methods[(task, name)].build("label", 3)


def test_a_plugin_quantifier_estimates_a_prevalence_vector_for_k_classes(installed):
    rng = np.random.default_rng(4)
    labels = rng.integers(0, 3, 90)
    validation = LabelledSet(rng.dirichlet(np.ones(3), 90), labels)
    setting = Setting(validation, validation, "label", key="mlpe")
    method = registry.get_method("quantification", "MLPE", "label").build("label", 3).fit(setting)
    estimate = method.quantify(Sample(rng.dirichlet(np.ones(3), 30)), fresh_context(setting))
    np.testing.assert_allclose(estimate, np.bincount(labels, minlength=3) / 90)


def test_adding_a_method_is_adding_a_file(tmp_path, monkeypatch):
    package = tmp_path / "extra_methods"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "uniform.py").write_text(
        "import numpy as np\n"
        "from unishift.methods.base import Quantifier\n\n\n"
        "class _Helper(Quantifier):\n"
        "    def fit(self, setting):\n"
        "        self.k_ = setting.n_classes\n"
        "        return self\n\n\n"
        "class Uniform(_Helper):\n"
        '    name, group, shifts = "Uniform", "baseline", ("label",)\n\n'
        "    def quantify(self, sample, context):\n"
        "        return np.full(self.k_, 1 / self.k_)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(registry, "METHOD_PACKAGES", (*registry.METHOD_PACKAGES, package.name))
    registry.reload()
    try:
        methods = registry.all_methods()
        spec = methods[("quantification", "Uniform")]
        assert (spec.group, spec.shifts) == ("baseline", ("label",))
        # the helper class sets no name and is not listed; the adaptations are derived for it
        assert not any(s.factory.__name__ == "_Helper" for s in methods.values())
        assert {("calibration", "Uniform_q2c_3B"), ("cap", "Uniform_q2a")} <= set(methods)
    finally:
        monkeypatch.undo()
        sys.modules.pop(f"{package.name}.uniform", None)
        sys.modules.pop(package.name, None)
        registry.reload()
    assert ("quantification", "Uniform") not in registry.all_methods()


@pytest.mark.parametrize(
    "body, message",
    [
        (
            "from unishift.methods.quantification.aggregative import PCC\n\n\n"
            "class MyPCC(PCC):\n"
            '    name = "PCC"\n',
            r"quantification method 'PCC' is registered twice: by "
            r"unishift\.methods\.quantification\.aggregative\.PCC and by bad_plugin\.MyPCC",
        ),
        (
            "from unishift.methods.quantification.aggregative import PCC\n\n\n"
            "class Tuned(PCC):\n"
            '    name, defaults = "Tuned", {"bandwidth": 0.2}\n',
            "'defaults' attribute, which is not read",
        ),
        (
            "from unishift.methods.quantification.emq import EMQ\n\n\n"
            "class Typo(EMQ):\n"
            '    name, binary_defaults = "Typo", {"label": {"train_prevalance": "validation"}}\n',
            r"sets \['train_prevalance'\], which its constructor does not take",
        ),
    ],
    ids=["builtin-name", "defaults-dict", "misspelt-parameter"],
)
def test_a_plugin_that_misdescribes_itself_is_refused(tmp_path, monkeypatch, body, message):
    (tmp_path / "bad_plugin.py").write_text(body)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv(registry.PLUGINS_VARIABLE, "bad_plugin")
    with pytest.raises(ValueError, match=message):
        registry.reload()
    monkeypatch.undo()
    sys.modules.pop("bad_plugin", None)
    registry.reload()
    assert registry.get_method("quantification", "PCC").factory.__module__.startswith("unishift.")


@pytest.mark.parametrize("task, name", sorted(NEW))
@pytest.mark.parametrize("shift", ["label", "covariate"])
def test_plugin_methods_keep_the_method_contract(installed, task, name, shift):
    method_contract(task, name, shift)


def test_histogram_binning_against_a_loop(installed):
    from unishift_plugin_example.methods import HistogramBinning

    # validation posteriors on bin edges: 0.2 belongs to bin 2 of 10, 1.0 to the last bin
    p = np.array([0.05, 0.2, 0.2, 0.25, 0.99, 1.0, 0.55])
    y = np.array([0, 1, 0, 1, 1, 0, 1])
    setting = Setting(LabelledSet(as_posteriors(p), y), LabelledSet(as_posteriors(p), y), "label")
    test = np.array([0.0, 0.21, 0.5, 0.999, 0.6])
    out = (
        HistogramBinning(10)
        .fit(setting)
        .calibrate(Sample(as_posteriors(test)), fresh_context(setting))
    )
    expected = []
    for t in test:
        b = min(int(t * 10), 9)
        members = [label for q, label in zip(p, y) if min(int(q * 10), 9) == b]
        expected.append(np.mean(members) if members else (b + 0.5) / 10)
    np.testing.assert_array_equal(out[:, 1], expected)
    np.testing.assert_allclose(out.sum(axis=1), 1)


def test_the_plugins_key_imports_a_module_from_the_path(monkeypatch):
    monkeypatch.syspath_prepend(str(PLUGIN / "src"))
    # setenv (not delenv of an absent variable, which records nothing) makes monkeypatch restore the
    # variable's absence afterwards: use_plugins writes os.environ, which later tests' snakemake
    # processes would inherit
    monkeypatch.setenv(registry.PLUGINS_VARIABLE, "")
    try:
        registry.use_plugins(["unishift_plugin_example.methods"])
        registry.all_methods()
        assert NEW <= set(registry.all_methods())
        assert os.environ[registry.PLUGINS_VARIABLE] == "unishift_plugin_example.methods"
    finally:
        monkeypatch.delenv(registry.PLUGINS_VARIABLE, raising=False)
        for name in [m for m in sys.modules if m.startswith("unishift_plugin_example")]:
            del sys.modules[name]
        registry.reload()
    with monkeypatch.context() as patched:
        patched.setenv(registry.PLUGINS_VARIABLE, "no_such_plugin_module")
        with pytest.raises(ImportError, match="no_such_plugin_module.*install the package"):
            registry.reload()
    registry.reload()


def test_the_workflow_tables_the_plugin_and_its_adaptations(
    finished_test_run, plugin_site, tmp_path
):
    work = tmp_path / "wf"
    shutil.copytree(finished_test_run[0], work, symlinks=True)
    config = yaml.safe_load((work / ".test" / "config.yaml").read_text())
    label = config["methods"]["label"]
    label["calibration"].append("HistBin")
    label["quantification"].append("HistBin_c2q")
    label["cap"].append("HistBin_c2a")
    # no Selector: its three jobs (a minute of CPU) would check nothing here; that configured
    # methods outside the paper's enter its pool is test_field_workflow.py's
    config["selector"] = False
    (work / "plugin.yaml").write_text(yaml.safe_dump(config))
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join([str(plugin_site), os.environ.get("PYTHONPATH", "")])
    )
    # the three tables and what they read (the new records): what is checked below
    targets = [f"results/tables/{task}_label.csv" for task in label]
    # the targets before --configfile, which takes several values
    snakemake("--cores", "2", *targets, "--configfile", "plugin.yaml", cwd=work, env=env)

    from unishift.api import evaluate, load_setups

    sys.path.insert(0, str(plugin_site))
    try:
        registry.reload()
        from unishift_plugin_example.methods import HistogramBinning

        setups = load_setups(work / "results", "label")
        direct = evaluate(HistogramBinning(), setups, name="HistBin")
    finally:
        sys.path.remove(str(plugin_site))
        registry.reload()
    records = pd.read_csv(work / "results" / "eval" / "label" / "calibration" / "HistBin.csv")
    np.testing.assert_array_equal(records["ece"], direct["ece"])
    for task, name in sorted(NEW):
        cells = pd.read_csv(work / "results" / "tables" / f"{task}_label.csv")
        assert name in set(cells["method"]), (task, name)
        assert np.isfinite(cells.loc[cells["method"] == name, "mean_error"]).all()
        tex = (work / "results" / "tables" / f"{task}_label.tex").read_text()
        assert "HistBin" in tex


class _BrokenEntryPoint:
    """An installed entry point whose module fails to import (a missing dependency)."""

    name, value, group = "broken", "unishift_broken_plugin.methods", "unishift.methods"

    class dist:  # noqa: N801 - the attribute importlib.metadata gives an entry point
        name, version = "unishift-broken-plugin", "0.3"

    def load(self):
        raise ModuleNotFoundError("No module named 'torch_geometric'")


def test_a_broken_entry_point_is_named_with_its_package_and_blocks_nothing(monkeypatch):
    monkeypatch.setattr(registry, "entry_points", lambda group: [_BrokenEntryPoint()])
    try:
        with pytest.warns(UserWarning) as caught:
            registry.reload()
            spec = registry.get_method("calibration", "Platt")  # a config without it still runs
        message = " ".join(str(w.message) for w in caught)
        assert "entry point 'broken'" in message and "unishift-broken-plugin" in message
        assert "torch_geometric" in message
        assert spec.name == "Platt"
        (broken,) = [p for p in registry.plugins() if p.error]
        assert (broken.package, broken.version) == ("unishift-broken-plugin", "0.3")
        (record,) = plugin_records()
        assert (
            record["package"] == "unishift-broken-plugin" and "torch_geometric" in record["error"]
        )
        assert record["code_version"] is None
    finally:
        monkeypatch.undo()
        registry.reload()


def test_provenance_records_each_plugins_package_version_and_code_version(installed):
    records = [r for r in plugin_records() if r["module"].startswith("unishift_plugin_example")]
    assert records  # one per entry point of the package
    for record in records:
        assert record["package"] == "unishift-plugin-example" and record["version"] == "0.1.0"
        assert record["error"] is None and len(record["code_version"]) >= 12


def test_a_name_clash_names_both_classes():
    from unishift.methods.calibration.platt import Platt

    class OtherPlatt(Platt):
        name = "Platt"

    with pytest.raises(ValueError, match=r"registered twice: by .*\.Platt and by .*OtherPlatt"):
        registry.register_class(OtherPlatt)
