"""CC, PCC, ACC, PACC and KDEy: QuaPy's aggregative quantifiers fitted on the validation posteriors
and labels (docs/methods.md §3.1, §0.5)."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from sklearn.base import clone

from unishift.data.containers import Sample, Setting
from unishift.data.quapy_loader import load_quapy
from unishift.methods.base import Quantifier, SampleContext
from unishift.methods.quapy_adapter import PosteriorPassthrough, quiet
from unishift.option_checks import check_choice


class QuaPyQuantifier(Quantifier):
    """A QuaPy aggregative quantifier fitted on the validation set's posteriors, which
    :class:`~unishift.methods.quapy_adapter.PosteriorPassthrough` hands it as its classifier's output
    (docs/methods.md §0.5): ``quantifier`` is rebuilt on the pass-through classifier (and with
    ``val_split=None``, fitted on the whole validation set as the paper's); ``name`` names it in the
    records (``unishift.api.from_quapy`` names it after its QuaPy class). The paper's quantifiers
    below name their QuaPy class in ``quapy_class`` instead."""

    assumption = "label"
    quapy_class: ClassVar[str] = ""
    quapy_options: ClassVar[dict] = {"val_split": None}

    def __init__(self, quantifier: Any = None, name: str | None = None):
        self.quantifier = quantifier
        self.name = name

    def check_params(self):
        check_aggregative(self.quantifier)

    def _new_quapy(self, n_classes: int):
        """The unfitted QuaPy quantifier, on the pass-through classifier of ``n_classes`` columns."""
        params = clone(self.quantifier).get_params(deep=False)
        params.update(classifier=PosteriorPassthrough(n_classes), fit_classifier=False)
        if "val_split" in params:
            params["val_split"] = None
        return type(self.quantifier)(**params)

    def _fit_data(self, setting: Setting):
        return setting.validation.posteriors, setting.validation.labels

    def _fit(self, setting: Setting) -> None:
        load_quapy()
        posteriors, labels = self._fit_data(setting)
        if self.binary_only and len(np.unique(labels)) < 2:
            # QuaPy's binary quantifiers need both classes to fit (docs/methods.md §6.1)
            from quapy.method import aggregative

            self.fit_fallback(
                f"{self.name}: validation holds class {np.unique(labels).tolist()} only; "
                "classify and count answers"
            )
            self.quantifier_ = aggregative.CC(
                PosteriorPassthrough(setting.n_classes), fit_classifier=False
            )
        else:
            self.quantifier_ = self._new_quapy(setting.n_classes)
        quiet(self.quantifier_.fit, posteriors, labels)

    def quantify(self, sample: Sample, context: SampleContext | None = None) -> np.ndarray:
        """The prevalence vector QuaPy estimates from the sample's posteriors (length k)."""
        return np.asarray(quiet(self.quantifier_.predict, sample.posteriors), dtype=float)


def check_aggregative(quantifier: Any) -> None:
    """Refuse what cannot be rebuilt on the pass-through classifier: a QuaPy quantifier that is not
    aggregative, or one without ``classifier`` / ``fit_classifier`` parameters."""
    load_quapy()
    from quapy.method.aggregative import AggregativeQuantifier

    kind = type(quantifier).__name__
    if not isinstance(quantifier, AggregativeQuantifier):
        raise ValueError(
            f"{kind} is not a QuaPy aggregative quantifier, so it cannot work from the setup's "
            "posteriors: wrap one of quapy.method.aggregative (CC, PCC, ACC, PACC, EMQ, ...)"
        )
    missing = [
        p for p in ("classifier", "fit_classifier") if p not in quantifier.get_params(deep=False)
    ]
    if missing:
        raise ValueError(
            f"{kind} takes no {' / '.join(missing)} parameter, so it cannot be rebuilt on the "
            "setup's classifier posteriors: wrap the aggregative quantifier it is built on"
        )


class _PaperQuantifier(QuaPyQuantifier):
    """One of the paper's quantifiers: the QuaPy class ``quapy_class`` with ``quapy_options``."""

    def __init__(self):  # no hyper-parameters of its own (KDEy declares its)
        pass

    def check_params(self):
        pass

    def _new_quapy(self, n_classes: int):
        from quapy.method import aggregative

        return getattr(aggregative, self.quapy_class)(
            PosteriorPassthrough(n_classes), fit_classifier=False, **self.quapy_options
        )


class CC(_PaperQuantifier):
    name, group, description = "CC", "baseline", "classify and count"
    adaptations = ()
    assumption = "none"
    quapy_class, quapy_options = "CC", {}


class PCC(_PaperQuantifier):
    name, description = "PCC", "probabilistic CC (exact when the posteriors are calibrated)"
    adaptations = ("q2c", "q2a")
    assumption = "covariate"
    quapy_class = "PCC"


class ACC(_PaperQuantifier):
    name, description = "ACC", "adjusted CC: inverts the validation confusion matrix"
    adaptations = ()
    quapy_class = "ACC"


class PACC(_PaperQuantifier):
    name, description = "PACC", "probabilistic adjusted CC"
    adaptations = ("q2c", "q2a")
    quapy_class = "PACC"


class KDEy(_PaperQuantifier):
    """KDEyML on the posterior vectors. A class without validation items gets one kernel at the
    uniform posterior (``empty_class="uniform_kernel"``: QuaPy 0.1.9, which produced the tables,
    recorded) or QuaPy 0.2.3's error (``"raise"``)."""

    name, description = "KDEy", "KDEy-ML, bandwidth 0.1"
    adaptations = ("q2c", "q2a")
    quapy_class = "KDEyML"

    EMPTY_CLASS_RULES = ("uniform_kernel", "raise")

    def __init__(self, bandwidth: float = 0.1, empty_class: str = "uniform_kernel"):
        self.bandwidth = bandwidth
        self.empty_class = empty_class

    def check_params(self):
        check_choice("empty_class", self.empty_class, self.EMPTY_CLASS_RULES)

    @property
    def quapy_options(self):
        return {"val_split": None, "bandwidth": self.bandwidth}

    def _fit_data(self, setting):
        check_choice("empty_class", self.empty_class, self.EMPTY_CLASS_RULES)
        posteriors, labels = setting.validation.posteriors, setting.validation.labels
        k = setting.n_classes
        missing = [c for c in range(k) if not np.any(labels == c)]
        if missing and self.empty_class == "uniform_kernel":
            posteriors = np.vstack([posteriors, np.full((len(missing), k), 1.0 / k)])
            labels = np.concatenate([labels, missing])
            self.fit_fallback(
                f"{self.name}: class {missing} absent from validation; uniform-point kernel used"
            )
        return posteriors, labels
