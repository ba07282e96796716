"""Quantifiers (the registry scans every module of this package)."""
