"""Sampling protocols that generate the test (and DoC validation) samples as persisted indices."""
