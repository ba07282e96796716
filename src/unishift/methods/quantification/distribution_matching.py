"""HDy, DyS, SMM and DMy: QuaPy's distribution-matching quantifiers (González-Castro et al. 2013,
Maletzke et al. 2019, Hassan et al. 2020, and QuaPy's generic DMy), fitted on the validation
posteriors and labels like the paper's QuaPy quantifiers (docs/methods.md §0.5, §6.1)."""

from __future__ import annotations

from unishift.methods.quantification.aggregative import _PaperQuantifier

_BINARY = "QuaPy implements it for two classes only (it matches distributions of p_1)"


class HDy(_PaperQuantifier):
    """Hellinger-distance matching of the histograms of p_1 (QuaPy's historical HDy: bins 10 to
    110 by 10, the median of the estimates)."""

    name, group, description = "HDy", "field", "HDy, Hellinger distance on p_1 histograms"
    binary_only = _BINARY
    quapy_class = "HDy"


class DyS(_PaperQuantifier):
    """DyS with QuaPy's defaults: 8 bins, the Topsøe / Hellinger divergence ``divergence``, a
    ternary search to ``tol``."""

    name, group, description = "DyS", "field", "DyS, 8 bins, Hellinger distance"
    binary_only = _BINARY
    quapy_class = "DyS"

    def __init__(self, n_bins: int = 8, divergence: str = "HD", tol: float = 1e-5):
        self.n_bins = n_bins
        self.divergence = divergence
        self.tol = tol

    @property
    def quapy_options(self):
        return {
            "val_split": None,
            "n_bins": self.n_bins,
            "divergence": self.divergence,
            "tol": self.tol,
            "n_jobs": 1,
        }


class SMM(_PaperQuantifier):
    """Sample-mean matching: the PACC adjustment of the mean p_1."""

    name, group, description = "SMM", "field", "SMM, mean-p_1 matching"
    binary_only = _BINARY
    quapy_class = "SMM"


class DMy(_PaperQuantifier):
    """QuaPy's DMy for any number of classes: per-class histograms of ``nbins`` bins of each
    posterior column, matched by ``divergence`` (on the cumulative histograms if ``cdf``)."""

    name, group, description = "DMy", "field", "DMy, 8 bins, Hellinger distance"
    quapy_class = "DMy"

    def __init__(self, nbins: int = 8, divergence: str = "HD", cdf: bool = False):
        self.nbins = nbins
        self.divergence = divergence
        self.cdf = cdf

    @property
    def quapy_options(self):
        return {
            "val_split": None,
            "nbins": self.nbins,
            "divergence": self.divergence,
            "cdf": self.cdf,
            "n_jobs": 1,
        }
