"""The contract every registered method keeps (docs/methods.md, "Adding a method"), checked on every
(task, method, shift) the registry lists, adaptations and plugins included, for two and for three
classes: it builds from its class's description, fits on a small setting, returns what its task
promises (calibrated posteriors: one row per item and one column per class, each in [0, 1], rows
summing to 1; a prevalence vector on the simplex; an accuracy in [0, 1]), follows the data (the
sample rich in a class gets the higher estimate of that class), gives the same numbers when run
again, and, for two classes, goes through the evaluation driver without an error. A binary-only
method refuses three classes with its reason instead."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression

from tests.calibration_settings import make_setting
from tests.conftest import REPO
from unishift.data.containers import LabelledSet, Setting
from unishift.data.setups import SetupData
from unishift.evaluation.evaluate import evaluate_setup
from unishift.evaluation.metrics import check_prevalence
from unishift.methods import registry
from unishift.methods.base import DERIVED_SHIFTS, SHIFTS, Method, Quantifier, SampleContext
from unishift.methods.registry import all_methods, get_method


def _own_parameters(spec, shift) -> bool:
    """A derived shift (compound) is a case of its own only where its parameters differ from its
    base shift's (tests/methods/test_compound_methods.py checks that none does today)."""
    base = DERIVED_SHIFTS.get(shift)
    if base is None:
        return True
    classes = (2,) if spec.binary_only else (2, 3)
    return any(spec.params(shift, k) != spec.params(base, k) for k in classes)


CASES = sorted(
    (task, name, shift)
    for (task, name), spec in all_methods().items()
    for shift in spec.shifts
    if _own_parameters(spec, shift)
)


def _binary_setup(shift: str) -> SetupData:
    setting, _, draw = make_setting(seed=7, shift=shift, logits=shift != "label")
    pool, pool_labels = draw(500, 0.5, shift_x=0.3)
    pool = LabelledSet(pool.posteriors, pool_labels, pool.features, pool.logits)
    rng = np.random.default_rng(7)
    # one sample rich in positives, one poor in them: the estimates must follow the data
    positives, negatives = np.flatnonzero(pool_labels == 1), np.flatnonzero(pool_labels == 0)
    indices = np.array(
        [
            np.concatenate([rng.choice(positives, 90), rng.choice(negatives, 30)]),
            np.concatenate([rng.choice(positives, 20), rng.choice(negatives, 100)]),
        ]
    )
    stream = np.random.RandomState(7).get_state()
    return SetupData(shift, "LR", "toy", setting, pool, indices, np.zeros(2), stream_state=stream)


def _three_class_setup(shift: str) -> SetupData:
    """Three Gaussian classes, a multinomial logistic regression (its logits under covariate
    shift); one sample rich in class 2, one poor in it."""
    rng = np.random.default_rng(8)
    centres = rng.normal(0, 1.2, (3, 5))

    def draw(n, shift_x=0.0):
        y = np.arange(n) % 3
        return centres[y] + rng.normal(size=(n, 5)) + shift_x, y

    x_train, y_train = draw(450)
    model = LogisticRegression(max_iter=500).fit(x_train, y_train)

    def labelled(x, y):
        logits = model.decision_function(x) if shift != "label" else None
        return LabelledSet(model.predict_proba(x), y, features=x, logits=logits)

    setting = Setting(labelled(*draw(300)), labelled(x_train, y_train), shift, "toy3/LR", seed=7)
    pool = labelled(*draw(600, 0.3))
    by_class = [np.flatnonzero(pool.labels == c) for c in range(3)]
    indices = np.array(
        [
            np.concatenate([rng.choice(by_class[0], 15), rng.choice(by_class[1], 15),
                            rng.choice(by_class[2], 90)]),
            np.concatenate([rng.choice(by_class[0], 55), rng.choice(by_class[1], 55),
                            rng.choice(by_class[2], 10)]),
        ]
    )  # fmt: skip
    return SetupData(shift, "LR", "toy3", setting, pool, indices, np.zeros(2))


SETUPS = {
    (shift, k): (_binary_setup if k == 2 else _three_class_setup)(shift)
    for shift in SHIFTS
    for k in (2, 3)
}


def _outputs(spec, shift, k):
    setup = SETUPS[shift, k]
    method = spec.build(shift, k).fit(setup.setting)
    outputs = []
    for sample_id in range(len(setup.sample_indices)):
        sample, _ = setup.sample(sample_id)
        context = SampleContext(setup.key, sample_id, seed=setup.setting.seed)
        outputs.append(method.apply(sample, context))
    return method, outputs, setup


def _check_outputs(task, name, outputs, setup, k):
    for sample_id, output in enumerate(outputs):
        n = len(setup.sample_indices[sample_id])
        if task == "calibration":
            output = np.asarray(output)
            assert output.shape == (n, k)
            assert np.all((output >= 0) & (output <= 1))
            np.testing.assert_allclose(output.sum(axis=1), 1.0, atol=1e-9)
        elif task == "quantification":
            check_prevalence(output, k, name)
        else:
            assert 0.0 <= float(output) <= 1.0
    if task == "quantification":
        # the sample rich in the last class gets the higher estimate of it
        assert np.asarray(outputs[0])[-1] > np.asarray(outputs[1])[-1]


def test_the_registry_lists_every_task_and_shift():
    assert {task for task, _, _ in CASES} == {"calibration", "quantification", "cap"}
    assert {shift for _, _, shift in CASES} == {"label", "covariate"}


@pytest.mark.parametrize("task, name, shift", CASES, ids=["/".join(case) for case in CASES])
def test_method_contract(task, name, shift):
    spec = get_method(task, name, shift)
    assert isinstance(spec.build(shift, 2), Method)
    if spec.inner is None:
        assert (spec.factory.name, spec.factory.task) == (name, task)  # it describes itself
    method, outputs, setup = _outputs(spec, shift, 2)
    assert method.task == task
    _check_outputs(task, name, outputs, setup, 2)
    records, timing = evaluate_setup(
        task, name, lambda: spec.build(shift, 2), setup, domain_stream="per_sample"
    )
    assert timing["n_samples"] == len(records) == len(outputs)
    for record, output in zip(records, outputs):
        assert record["status"] in ("ok", "fallback"), record["reason"]
        assert (record["task"], record["method"], record["shift"]) == (task, name, shift)
        if task == "calibration":
            estimate = np.asarray(output)[:, 1].mean()
        elif task == "quantification":
            estimate = np.asarray(output)[1]
        else:
            estimate = float(output)
        assert record["estimate"] == pytest.approx(estimate, abs=1e-12)  # deterministic rerun


@pytest.mark.parametrize("task, name, shift", CASES, ids=["/".join(case) for case in CASES])
def test_method_contract_for_three_classes(task, name, shift):
    spec = get_method(task, name, shift)
    if spec.binary_only:
        with pytest.raises(ValueError, match=f"'{name}' is binary-only in unishift: .+3 classes"):
            spec.build(shift, 3)
        assert spec.binary_only in str(pytest.raises(ValueError, spec.build, shift, 3).value)
        return
    method, outputs, setup = _outputs(spec, shift, 3)
    assert method.task == task
    _check_outputs(task, name, outputs, setup, 3)
    _, again, _ = _outputs(spec, shift, 3)
    for first, second in zip(outputs, again):
        np.testing.assert_array_equal(np.asarray(first), np.asarray(second))


def test_binary_only_methods_say_why_and_the_others_do_not():
    reasons = {key: spec.binary_only for key, spec in all_methods().items() if spec.binary_only}
    assert ("calibration", "Platt") in reasons and "sigmoid on p_1" in reasons[
        "calibration", "Platt"
    ]
    for name in ("PCC_q2c_5B", "ATC_a2c_6B", "LEAP_PCC_a2c_6B"):
        assert "p_1" in reasons["calibration", name]
    # the field's binary quantifiers (docs/methods.md §6.1) and their adaptations
    field_binary = ("HDy", "DyS", "SMM", "MAX", "X", "T50", "MS", "MS2")
    assert set(reasons) == {
        (task, name)
        for task, name in all_methods()
        if name == "Platt"
        or name.endswith(("_q2c_5B", "_a2c_6B"))
        or name.split("_")[0] in field_binary
    }


def test_a_binary_only_method_refuses_a_three_class_setting_when_built_directly():
    from unishift.methods.calibration.platt import Platt

    with pytest.raises(ValueError, match="Platt is binary-only"):
        Platt().fit(SETUPS["label", 3].setting)


def test_unknown_names_and_shifts_list_the_valid_ones():
    with pytest.raises(KeyError, match="unknown cap method 'Oracle'; valid cap methods are"):
        get_method("cap", "Oracle")
    with pytest.raises(KeyError, match="does not run under label shift"):
        get_method("calibration", "EMQ_TransCal", "label")


def test_a_stale_call_without_the_number_of_classes_is_refused():
    spec = get_method("calibration", "DMCal")
    with pytest.raises(TypeError, match="n_classes"):
        spec.build("label", {"n_bins": 10})
    with pytest.raises(TypeError, match="n_classes"):
        spec.params("label", {"n_bins": 10})


# -- the scikit-learn estimator contract (docs/methods.md, "Adding a method") ---------------------
# Over every registered method, the adaptations and the example package's plugins included: the
# constructor stores each hyper-parameter as given; get_params gives back what the registry built
# it with; set_params (nested inner__<name> for an adaptation), clone and repr follow; fit owns the
# fallback notes.

EXAMPLE_PLUGINS = "unishift_plugin_example.methods,unishift_plugin_example.multiclass_methods"
PLUGIN_SOURCE = REPO / "examples" / "unishift-plugin-example" / "src"


@pytest.fixture(scope="module")
def with_example_plugins():
    """The registry with the example package's modules as plugins (its methods and adaptations)."""
    sys.path.insert(0, str(PLUGIN_SOURCE))
    before = os.environ.get(registry.PLUGINS_VARIABLE)
    os.environ[registry.PLUGINS_VARIABLE] = EXAMPLE_PLUGINS
    try:
        registry.reload()
        yield registry.all_methods()
    finally:
        if before is None:
            os.environ.pop(registry.PLUGINS_VARIABLE)
        else:
            os.environ[registry.PLUGINS_VARIABLE] = before
        sys.path.remove(str(PLUGIN_SOURCE))
        for module in [m for m in sys.modules if m.startswith("unishift_plugin_example")]:
            del sys.modules[module]
        registry.reload()


PLUGIN_KEYS = [
    ("calibration", "HistBin"),
    ("quantification", "HistBin_c2q"),
    ("cap", "HistBin_c2a"),
    ("quantification", "MLPE"),
]
ESTIMATOR_KEYS = sorted(all_methods()) + PLUGIN_KEYS


class _Stored:
    """A value no constructor could produce by itself: stored as given, it stays this object."""

    def __repr__(self):
        return "<stored>"


def _built(specs, key):
    spec = specs[key]
    return spec, spec.shifts[0], spec.build(spec.shifts[0], 2)


@pytest.mark.parametrize("task, name", ESTIMATOR_KEYS, ids=["/".join(k) for k in ESTIMATOR_KEYS])
def test_every_method_is_a_scikit_learn_estimator(with_example_plugins, task, name):
    spec, shift, method = _built(with_example_plugins, (task, name))
    params = method.get_params(deep=False)
    expected = spec.params(shift, 2)
    if spec.inner is not None:
        # the registry hands an adaptation its inner method built, which it clones for each fit
        assert expected.pop("inner") == spec.inner.name == type(params.pop("inner")).name
        assert expected.pop("inner_params") == spec.params(shift, 2)["inner_params"]
        assert params.pop("inner_params") is None
        inner = method.inner
        deep = method.get_params(deep=True)
        assert {f"inner__{p}": v for p, v in inner.get_params().items()}.items() <= deep.items()
    assert params == expected  # every hyper-parameter, under its own name, as the registry gave it

    # the constructor stores each hyper-parameter as given: no check, no conversion
    for parameter in method.get_params(deep=False):
        stored = _Stored()
        assert getattr(type(method)(**{parameter: stored}), parameter) is stored, parameter
        assert f"{parameter}=<stored>" in repr(type(method)(**{parameter: stored}))

    copy = clone(method)  # clone itself refuses a constructor that changes what it is given
    assert type(copy) is type(method) and copy is not method
    assert repr(copy) == repr(method) and repr(method).startswith(f"{type(method).__name__}(")
    assert method.set_params(**method.get_params(deep=False)) is method
    assert repr(method) == repr(copy)
    if spec.inner is not None:
        assert copy.inner is not method.inner and repr(copy.inner) == repr(method.inner)
        for parameter in method.inner.get_params(deep=False):
            stored = _Stored()
            copy.set_params(**{f"inner__{parameter}": stored})
            assert getattr(copy.inner, parameter) is stored
            assert getattr(method.inner, parameter) is not stored  # the clone's own inner


def _setting_without_positives(shift):
    """The binary setting of ``shift`` whose validation set lost its positives: a fit that runs on
    it records why it fell back (an absent class)."""
    setting = SETUPS[shift, 2].setting
    return setting.restrict_validation(setting.validation.labels == 0, "no-positives")


@pytest.mark.parametrize("task, name", ESTIMATOR_KEYS, ids=["/".join(k) for k in ESTIMATOR_KEYS])
def test_fit_owns_the_notes_of_the_last_fit(with_example_plugins, task, name):
    spec, shift, method = _built(with_example_plugins, (task, name))
    assert method.fit_notes == []  # readable before any fit
    for setting in (_setting_without_positives(shift), SETUPS[shift, 2].setting):
        try:
            first = list(method.fit(setting).fit_notes)
        except Exception:  # noqa: BLE001 (a setting without positives may not fit; the next must)
            continue
        assert method.fit(setting).fit_notes == first  # a second fit does not add to the first's
        assert clone(method).fit_notes == []  # a clone is unfitted: no notes
    assert list(method.fit(SETUPS[shift, 2].setting).fit_notes) == list(
        clone(method).fit(SETUPS[shift, 2].setting).fit_notes
    )


def test_the_setting_without_positives_makes_fits_fall_back():
    """The notes test above is not vacuous: on this setting these fits record a fallback."""
    for task, name in [("quantification", "KDEy"), ("cap", "DoC"), ("cap", "LEAP"),
                       ("quantification", "DoC_a2q"), ("cap", "KDEy_q2a")]:  # fmt: skip
        spec = get_method(task, name)
        method = spec.build("label", 2).fit(_setting_without_positives("label"))
        assert method.fit_notes and all(s == "fallback" for s, _ in method.fit_notes), name


class _ShrunkPrevalence(Quantifier):
    """A plugin written as an ordinary scikit-learn estimator: ``__init__`` stores, ``fit`` (its
    own, not Method's hook) learns and returns self; it records a fallback without creating the
    notes, and its entry point takes no context."""

    name, group, description, adaptations = "Shrunk", "baseline", "shrunk validation prior", ()

    def __init__(self, weight=0.5, floor=0.0):
        self.weight = weight
        self.floor = floor

    def fit(self, setting):
        if not 0 <= self.weight <= 1:
            raise ValueError(f"weight={self.weight!r} is not in [0, 1]")
        counts = np.bincount(setting.validation.labels, minlength=setting.n_classes)
        if (counts == 0).any():
            self.fit_fallback("Shrunk: a class is absent from validation")
        self.prior_ = counts / counts.sum()
        return self

    def quantify(self, sample, context=None):
        observed = np.bincount(sample.predictions, minlength=len(self.prior_)) / len(sample)
        mixed = self.weight * self.prior_ + (1 - self.weight) * observed
        return np.maximum(mixed, self.floor) / np.maximum(mixed, self.floor).sum()


@pytest.fixture
def shrunk_registered(monkeypatch):
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry.all_methods()))
    registry.register_class(_ShrunkPrevalence)
    return registry.get_method("quantification", "Shrunk")


def test_a_scikit_learn_style_plugin_works_unchanged(shrunk_registered):
    spec = shrunk_registered
    assert spec.defaults == {"floor": 0.0, "weight": 0.5}
    method = spec.build("label", 3, {"weight": 0.25})
    assert repr(method) == "_ShrunkPrevalence(weight=0.25)"
    assert clone(method).get_params() == {"floor": 0.0, "weight": 0.25}
    assert method.fit_notes == []
    setup = SETUPS["label", 3]
    no_class_2 = setup.setting.restrict_validation(setup.setting.validation.labels != 2, "no-2")
    assert method.fit(no_class_2).fit_notes == [
        ("fallback", "Shrunk: a class is absent from validation")
    ]
    sample, _ = setup.sample(0)
    observed = np.bincount(sample.predictions, minlength=3) / len(sample)
    labels = no_class_2.validation.labels
    prior = np.bincount(labels, minlength=3) / len(labels)
    np.testing.assert_allclose(method.quantify(sample), 0.25 * prior + 0.75 * observed)
    records, _ = evaluate_setup(
        "quantification",
        "Shrunk",
        lambda: spec.build("label", 3),
        setup,
        domain_stream="per_sample",
    )
    assert [r["status"] for r in records] == ["ok", "ok"]  # its fit on a full setting: no notes
    with pytest.raises(ValueError, match="weight=2"):
        spec.build("label", 3, {"weight": 2}).fit(setup.setting)


def test_context_is_optional_and_a_fresh_one_gives_the_drivers_numbers():
    """Without a context a method makes a fresh one of its fitted setting: the numbers of the
    driver's context of sample 0 (LasCal shares its per-sample search through the context)."""
    setup = SETUPS["label", 2]
    sample, _ = setup.sample(0)
    for task, name in [("calibration", "LasCal"), ("cap", "LasCal_c2a"), ("calibration", "TS")]:
        method = get_method(task, name).build("label", 2).fit(setup.setting)
        given = method.apply(sample, SampleContext(setup.key, 0, seed=setup.setting.seed))
        np.testing.assert_array_equal(np.asarray(method.apply(sample)), np.asarray(given))
