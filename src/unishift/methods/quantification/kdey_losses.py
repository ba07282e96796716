"""KDEy with its other two losses (Moreo et al. 2025): the Cauchy-Schwarz divergence (closed form)
and the Hellinger distance (Monte-Carlo, ``montecarlo_trials`` draws seeded by ``seed``), QuaPy's
KDEyCS and KDEyHD on the validation posteriors (docs/methods.md §0.5, §6.1)."""

from __future__ import annotations

from unishift.methods.quantification.aggregative import _QuaPyQuantifier


class KDEyCS(_QuaPyQuantifier):
    name, group, description = "KDEyCS", "field", "KDEy-CS, bandwidth 0.1"
    display = r"KDEy$_{\text{CS}}$"
    quapy_class = "KDEyCS"

    def __init__(self, bandwidth: float = 0.1):
        self.bandwidth = bandwidth

    @property
    def quapy_options(self):
        return {"val_split": None, "bandwidth": self.bandwidth}


class KDEyHD(_QuaPyQuantifier):
    """QuaPy draws ``montecarlo_trials`` reference points from the class kernels with ``seed`` (its
    ``random_state``, None by default there: a seed here so that reruns give the same bytes)."""

    name, group, description = "KDEyHD", "field", "KDEy-HD, bandwidth 0.1, 10,000 Monte-Carlo draws"
    display = r"KDEy$_{\text{HD}}$"
    quapy_class = "KDEyHD"

    def __init__(self, bandwidth: float = 0.1, montecarlo_trials: int = 10000, seed: int = 0):
        self.bandwidth = bandwidth
        self.montecarlo_trials = montecarlo_trials
        self.seed = seed

    @property
    def quapy_options(self):
        return {
            "val_split": None,
            "bandwidth": self.bandwidth,
            "montecarlo_trials": self.montecarlo_trials,
            "random_state": self.seed,
        }
