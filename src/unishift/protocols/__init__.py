"""Sampling protocols that generate the test (and DoC validation) samples as persisted indices."""

from unishift.protocols.sampling import npp_indices, upp_indices

__all__ = ["npp_indices", "upp_indices"]
