"""KDEy with its other two losses (Moreo et al. 2025): the Cauchy-Schwarz divergence (closed form)
and the Hellinger distance (Monte-Carlo, ``montecarlo_trials`` draws seeded by ``seed``), QuaPy's
KDEyCS and KDEyHD on the validation posteriors (docs/methods.md §0.5, §6.1). A class without
validation items (e.g. in a predicted-class part of an adaptation) gets KDEy's uniform-point kernel
(``empty_class``, recorded as a fallback), QuaPy's error with ``"raise"``."""

from __future__ import annotations

from unishift.methods.quantification.aggregative import KDEy


class KDEyCS(KDEy):
    name, group, description = "KDEyCS", "field", "KDEy-CS, bandwidth 0.1"
    display = r"KDEy$_{\text{CS}}$"
    quapy_class = "KDEyCS"
    adaptations = None

    def __init__(self, bandwidth: float = 0.1, empty_class: str = "uniform_kernel"):
        self.bandwidth = bandwidth
        self.empty_class = empty_class

    @property
    def quapy_options(self):
        return {"val_split": None, "bandwidth": self.bandwidth}


class KDEyHD(KDEy):
    """QuaPy draws ``montecarlo_trials`` reference points from the class kernels with ``seed`` (its
    ``random_state``, None by default there: a seed here so that reruns give the same bytes)."""

    name, group, description = "KDEyHD", "field", "KDEy-HD, bandwidth 0.1, 10,000 Monte-Carlo draws"
    display = r"KDEy$_{\text{HD}}$"
    quapy_class = "KDEyHD"
    adaptations = None

    def __init__(
        self,
        bandwidth: float = 0.1,
        montecarlo_trials: int = 10000,
        seed: int = 0,
        empty_class: str = "uniform_kernel",
    ):
        self.bandwidth = bandwidth
        self.montecarlo_trials = montecarlo_trials
        self.seed = seed
        self.empty_class = empty_class

    @property
    def quapy_options(self):
        return {
            "val_split": None,
            "bandwidth": self.bandwidth,
            "montecarlo_trials": self.montecarlo_trials,
            "random_state": self.seed,
        }
