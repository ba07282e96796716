"""Sampling protocols that generate the test (and DoC validation) samples as persisted indices."""

from unishift.protocols.sampling import app_indices, npp_indices, upp_indices

__all__ = ["app_indices", "npp_indices", "upp_indices"]
